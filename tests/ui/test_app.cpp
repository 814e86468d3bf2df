// The app as its users use it, driven by real input on the real widgets
// (QTest mouse and keyboard events on the main window, the menus, the dialogs):
// sort by clicking a column header and again for the other order; File > Export
// Table through its dialog; select rows and read the Why and Explanation panels;
// zoom and pan the timeline with the wheel and the keys; load, cancel, cut traces.
// The layout and keyboard suite is test_layout, the Run panel's test_run_ui.
#include "app_harness.h"

using namespace apptest;

class AppTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { initSuite(); }

  // Finding 1: clicking a column header sorts the table, clicking again reverses it, and the
  // arrow points down for a descending sort.
  void headerClickSorts() {
    App app;
    QVERIFY(app.openSample());
    showOperators(app.w);
    QTableView* view = app.w.tablePane()->view();
    auto* header = qobject_cast<TwoLineHeaderView*>(view->horizontalHeader());
    QVERIFY(header && header->sectionsClickable());
    const int selfCpu = KeyAveragesModel::columnOf(Column::SelfCpu);
    clickHeader(view, selfCpu);
    QCOMPARE(header->sortIndicatorSection(), selfCpu);
    const Qt::SortOrder first = header->sortIndicatorOrder();
    QCOMPARE(first, Qt::DescendingOrder);  // a time column: largest first on the first click
    QVERIFY(sortedBy(view->model(), selfCpu, first));
    clickHeader(view, selfCpu);
    const Qt::SortOrder second = header->sortIndicatorOrder();
    QVERIFY(second != first);
    QVERIFY(sortedBy(view->model(), selfCpu, second));
    QVERIFY(columnTexts(view->model(), selfCpu) != QStringList());
    // The arrow: down while the largest values come first.
    if (second != Qt::DescendingOrder) clickHeader(view, selfCpu);
    QCOMPARE(header->sortIndicatorOrder(), Qt::DescendingOrder);
    QCOMPARE(header->sortArrow(selfCpu), QStyleOptionHeader::SortDown);
    clickHeader(view, selfCpu);
    QCOMPARE(header->sortArrow(selfCpu), QStyleOptionHeader::SortUp);
  }

  // Finding 3: for the attention workload the Explanation opens with the answer: the four
  // steps' CUDA time by every method, then the four questions, in the user's words.
  void answersFirst() {
    App app;
    QVERIFY(app.openSample());
    const QString text = app.w.explainPanel()->plainText();
    const qsizetype answer = text.indexOf(QStringLiteral("The answer"));
    QVERIFY2(answer >= 0, qPrintable(text.left(400)));
    for (const char* q :
         {"Why does a step's CUDA time change when I wrap another step?", "Are the unwrapped steps really zero?",
          "How do I get every step's CUDA time?", "What do the events mean?"})
      QVERIFY2(text.indexOf(QString::fromUtf8(q)) > answer, q);
    QVERIFY(text.indexOf(QStringLiteral("Findings")) > text.indexOf(QStringLiteral("What do the events mean?")));
    for (const char* step : {"QK MATMUL", "SCALE", "SOFTMAX PASS", "AV MATMUL"}) QVERIFY(text.contains(step));
    QVERIFY(text.contains(QStringLiteral("540.410 us")));  // QK MATMUL's GEMM, unwrapped
    for (const char* internal : {"gpu_attributed_ns", "table --attribution", "step_source", "top_level_ops"})
      QVERIFY2(!text.contains(QString::fromUtf8(internal)), internal);
    // A number in the answer takes the user to that step on the timeline.
    QSignalSpy chosen(app.w.explainPanel(), &ExplainPanel::stepChosen);
    auto* details = app.w.explainPanel()->findChild<QTextBrowser*>(QStringLiteral("explainDetails"));
    QVERIFY(details);
    emit details->anchorClicked(QUrl(QStringLiteral("step:1")));
    QCOMPARE(chosen.size(), 1);
    QCOMPARE(app.w.timelinePane()->view()->overlay()->name, std::string("SCALE"));
  }

  // The Explanation dock opens with the diagnosis's headline, and its steps table says what cost each
  // step most: the largest part of that step (argmax over the parts, taken here from the parts).
  // A click on the column's header sorts the steps by it, largest first on the second click.
  void explanationOpensWithTheDiagnosis() {
    App app;
    QVERIFY(app.open(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/kineto_tb_resnet50_nw0.pt.trace.json.gz")));
    const Explanation& x = *app.w.trace()->snapshot->explanation;
    QVERIFY(!x.diagnosis.headline.empty());
    auto* header = app.w.explainPanel()->findChild<QLabel*>(QStringLiteral("explainHeader"));
    QVERIFY(header);
    QVERIFY2(header->text().startsWith(QStringLiteral("<b>What costs the most: ")), qPrintable(header->text()));
    QTableView* steps = app.w.explainPanel()->stepsView();
    const QAbstractItemModel* m = steps->model();
    int col = -1;
    for (int c = 0; c < m->columnCount(); ++c)
      if (m->headerData(c, Qt::Horizontal).toString() == QStringLiteral("Cost it most")) col = c;
    QVERIFY(col >= 0);
    QCOMPARE(m->rowCount(), static_cast<int>(x.diagnosis.steps.size()));
    for (int r = 0; r < m->rowCount(); ++r) {
      const StepWaits& st = x.diagnosis.steps[static_cast<size_t>(r)];
      int top = 0;
      for (int c = 1; c < kCauseCount; ++c)
        if (st.parts[c] > st.parts[top]) top = c;
      QCOMPARE(m->index(r, col).data().toString(),
               QString::fromStdString(causeLabel(static_cast<Cause>(top)) + " " + spanDurationText(st.parts[top])));
    }
    clickHeader(steps, col);
    clickHeader(steps, col);
    QVERIFY(sortedBy(m, col, Qt::DescendingOrder) || sortedBy(m, col, Qt::AscendingOrder));
  }

  // A trace recorded without input shapes (record_shapes=False) cannot be grouped by them: the
  // choice is greyed out and says why; a trace with shapes offers it again.
  void groupByShapeNeedsShapes() {
    App app;
    QVERIFY(app.open(QStringLiteral(ATTNSCOPE_TEST_DATA "/ext/hta_cp_alexnet.json.gz")));
    auto* group = app.w.tablePane()->findChild<QComboBox*>(QStringLiteral("groupBy"));
    QVERIFY(group);
    const int shapeItem = group->findData(static_cast<int>(GroupBy::InputShape));
    QVERIFY(group->itemText(shapeItem).contains(QStringLiteral("none recorded")));
    QVERIFY(group->itemData(shapeItem, Qt::ToolTipRole).toString().contains(QStringLiteral("record_shapes=True")));
    group->setFocus();
    QTest::keyClick(group, Qt::Key_Down);
    QCOMPARE(app.w.tablePane()->groupBy(), GroupBy::Name);
    QVERIFY(app.open(kSoftmax));
    QCOMPARE(group->itemText(shapeItem), QStringLiteral("Input shape"));
    group->setFocus();
    QTest::keyClick(group, Qt::Key_Down);
    QCOMPARE(app.w.tablePane()->groupBy(), GroupBy::InputShape);
  }

  // Finding 6: Why answers for the row selected (grouped by shape: that shape's row) and says
  // why torch's total and the GPU work its ops launched differ.
  void whyForTheSelectedRow() {
    App app;
    QVERIFY(app.openSample());
    app.w.dock(QStringLiteral("whyDock"))->raise();
    showOperators(app.w);
    auto* group = app.w.tablePane()->findChild<QComboBox*>(QStringLiteral("groupBy"));
    pickComboItem(group, 1);  // Input shape
    QCOMPARE(app.w.tablePane()->groupBy(), GroupBy::InputShape);
    QTableView* view = app.w.tablePane()->view();
    // The QK GEMM's aten::bmm row: one call, shapes [[8, 16, 1024, 64], [8, 16, 64, 1024]].
    int row = -1;
    const int shapes = KeyAveragesModel::columnOf(Column::InputShapes);
    for (int r = 0; r < view->model()->rowCount(); ++r)
      if (view->model()->index(r, 0).data().toString() == QLatin1String("aten::bmm") &&
          view->model()->index(r, shapes).data().toString().contains(
              QStringLiteral("[[128, 1024, 64], [128, 64, 1024]]")))
        row = r;
    QVERIFY(row >= 0);
    QSignalSpy why(app.w.whyPanel(), &WhyPanel::shown);
    clickRow(view, row);
    QVERIFY(why.wait(30000));
    const QString t = app.w.whyPanel()->plainText();
    QVERIFY2(t.contains(QStringLiteral("1 call,")), qPrintable(t));
    QVERIFY2(!t.contains(QStringLiteral("2 calls")), qPrintable(t));
    QVERIFY2(t.contains(QStringLiteral("counted twice")) && t.contains(QStringLiteral("Activity Buffer Request")),
             qPrintable(t));
  }

  // Finding 7: a cut trace says so where the explanation is read.
  // A load shows where it is in the status bar (the file's bytes, events, time
  // left) and its Cancel button stops it: the trace shown before stays, with
  // everything it had. The file: 4 GiB of blanks between two events in a
  // 4 MB .gz (inflating it takes seconds; nothing of it is kept).
  void loadProgressAndCancel() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("slow.json.gz"));
    const std::string a = R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1})";
    const std::string gz = inflatesTo("{\"traceEvents\": [" + a + ",", ' ', 4096, a + "]}");
    QFile out(file);
    QVERIFY(out.open(QIODevice::WriteOnly) && out.write(gz.data(), static_cast<qint64>(gz.size())) > 0);
    out.close();
    App app;
    QVERIFY(app.openSample());
    const QString title = app.w.windowTitle();
    const int rows = app.w.tablePane()->shownRowCount();
    auto* bar = app.w.findChild<LoadProgressBar*>(QStringLiteral("loadProgress"));
    auto* cancel = app.w.findChild<QPushButton*>(QStringLiteral("cancelLoad"));
    QVERIFY(bar && cancel);
    QVERIFY(!bar->isVisible());
    QSignalSpy stopped(&app.w, &MainWindow::loadCancelled);
    app.w.openTrace(file);
    QTRY_VERIFY_WITH_TIMEOUT(bar->isVisible() && bar->text().contains(QStringLiteral(" of ")), 10000);
    QVERIFY2(bar->text().startsWith(QStringLiteral("Reading slow.json.gz")), qPrintable(bar->text()));
    QVERIFY2(bar->text().contains(QStringLiteral("events")), qPrintable(bar->text()));
    QTest::mouseClick(cancel, Qt::LeftButton);
    QVERIFY(stopped.wait(60000));
    QVERIFY(!bar->isVisible());
    QCOMPARE(app.w.windowTitle(), title);
    QCOMPARE(app.w.tablePane()->shownRowCount(), rows);
    QVERIFY2(app.w.statusBar()->currentMessage().contains(QStringLiteral("Stopped loading slow.json.gz")),
             qPrintable(app.w.statusBar()->currentMessage()));
    // Esc cancels too.
    app.w.openTrace(file);
    QTRY_VERIFY_WITH_TIMEOUT(bar->isVisible(), 10000);
    QTest::keyClick(&app.w, Qt::Key_Escape);
    QVERIFY(stopped.wait(60000));
    QCOMPARE(app.w.windowTitle(), title);
  }

  void cutTraceSaysSo() {
    QTemporaryDir dir;
    QFile f(kSoftmax);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray all = f.readAll();
    const QString cut = dir.filePath(QStringLiteral("cut.json"));
    QFile out(cut);
    QVERIFY(out.open(QIODevice::WriteOnly) && out.write(all.left(all.size() * 2 / 3)) > 0);
    out.close();
    App app;
    QVERIFY(app.open(cut));
    const QString text = app.w.explainPanel()->plainText();
    QVERIFY2(text.contains(QStringLiteral("This trace was cut")), qPrintable(text.left(600)));
  }

  // Finding 8: the small ones. The Keys button shows the keys; the cursor's time readout
  // never covers a tick label; the glossary's definition gets the dock's height; --help
  // needs no display.
  void smallOnes() {
    App app;
    QVERIFY(app.openSample());
    TimelinePane* pane = app.w.timelinePane();
    auto* keys = pane->findChild<QToolButton*>(QStringLiteral("timelineKeys"));
    auto* help = pane->findChild<QLabel*>(QStringLiteral("timelineKeysHelp"));
    QVERIFY(keys && help && !help->isVisible());
    clickWidget(keys);
    QVERIFY(help->isVisible());
    QVERIFY(help->text().contains(QStringLiteral("zoom")));
    clickWidget(keys);
    QVERIFY(!help->isVisible());

    TimelineView* v = pane->view();
    for (int x = 250; x < v->viewport()->width() - 20; x += 37) {
      QTest::mouseMove(v->viewport(), QPoint(x, 100));
      const QRectF readout = v->hoverReadoutRect();
      if (readout.isEmpty()) continue;  // no hover under this platform
      QVERIFY(readout.top() >= 0 && readout.bottom() <= TimelineView::kRulerHeight);
      QVERIFY(readout.left() >= TimelineView::kHeaderWidth);
    }

    QDockWidget* gloss = app.w.dock(QStringLiteral("glossaryDock"));
    gloss->raise();
    QCoreApplication::processEvents();
    QVERIFY(app.w.glossary()->lookup(QStringLiteral("Self CUDA %")));
    auto* def = app.w.glossary()->findChild<QTextBrowser*>(QStringLiteral("glossaryText"));
    QVERIFY(def);
    QVERIFY2(def->height() >= gloss->height() * 6 / 10,
             qPrintable(QString("definition %1 px in a %2 px dock").arg(def->height()).arg(gloss->height())));

    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(ATTNSCOPE_GUI_EXE), {QStringLiteral("--help")});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 0);
    QVERIFY(p.readAllStandardOutput().contains("--screenshot"));
  }

  // File > Export Table, through the menu and its dialog.
  void exportThroughTheMenu() {
    App app;
    QVERIFY(app.openSample());
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("table.csv"));
    bool typed = false;
    QTimer::singleShot(0, [&] {
      // The dialog is modal: type the name into it once it is up.
      for (int i = 0; i < 100 && !qobject_cast<QFileDialog*>(QApplication::activeModalWidget()); ++i) QTest::qWait(50);
      auto* dlg = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
      if (!dlg) return;
      auto* name = dlg->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"));
      if (!name) return;
      // Keys reach the dialog only once its window is exposed.
      if (!QTest::qWaitForWindowExposed(dlg)) return;
      name->selectAll();
      QTest::keyClicks(name, path);
      QTest::qWait(100);  // let the dialog's completer settle
      QTest::keyClick(name, Qt::Key_Return);
      typed = true;
    });
    QMenu* file = nullptr;
    for (QAction* a : app.w.menuBar()->actions())
      if (a->text().remove('&') == QLatin1String("File")) file = a->menu();
    QVERIFY(file);
    QAction* exportAct = nullptr;
    for (QAction* a : file->actions())
      if (a->text().remove('&').startsWith(QLatin1String("Export Table"))) exportAct = a;
    QVERIFY(exportAct && exportAct->isEnabled());
    exportAct->trigger();
    QVERIFY(typed);
    QFile csv(path);
    QVERIFY2(csv.open(QIODevice::ReadOnly), qPrintable(path));
    const QList<QByteArray> lines = csv.readAll().split('\n');
    QVERIFY(lines.size() > 10);
    QVERIFY(lines[0].startsWith("name,"));
  }

  // Selecting rows answers in the Why panel (on screen) and the Explanation panel; clicking an
  // event shows its details and its links.
  void selectionAnswers() {
    App app;
    QVERIFY(app.openSample());
    app.w.dock(QStringLiteral("whyDock"))->raise();
    showOperators(app.w);
    QTableView* view = app.w.tablePane()->view();
    const int row = rowNamed(view->model(), QStringLiteral("SOFTMAX PASS"));
    QVERIFY(row >= 0);
    QSignalSpy why(app.w.whyPanel(), &WhyPanel::shown);
    clickRow(view, row);
    QVERIFY(why.wait(30000));
    QVERIFY(app.w.whyPanel()->plainText().startsWith(QStringLiteral("SOFTMAX PASS")));
    // The explanation's steps table: a click shows the step's card and its overlay.
    QTableView* steps = app.w.explainPanel()->stepsView();
    clickRow(steps, 2);
    QVERIFY(app.w.explainPanel()->plainText().contains(QStringLiteral("record_function")));
    QVERIFY(app.w.timelinePane()->view()->overlay().has_value());
    // An event on the timeline: its details, with the call that launched it.
    TimelineView* v = app.w.timelinePane()->view();
    EventId kernel = kNoEvent;
    for (EventId id = 0; id < v->store()->events().size(); ++id)
      if (v->store()->event(id).family == Family::Kernel) kernel = id;
    QVERIFY(kernel != kNoEvent);
    v->selectEvent(kernel, true);
    QVERIFY(app.w.dock(QStringLiteral("detailsDock"))->isVisible());
    const QString details = app.w.detailsPanel()->plainText();
    QVERIFY2(details.contains(QStringLiteral("Launched by cudaLaunchKernel")), qPrintable(details));
    QSignalSpy requested(app.w.detailsPanel(), &DetailsPanel::eventRequested);
    auto* text = app.w.detailsPanel()->findChild<QTextBrowser*>(QStringLiteral("detailsText"));
    const EventId launch = v->store()->callOfCorrelation(v->store()->event(kernel).correlation);
    emit text->anchorClicked(QUrl(QStringLiteral("event:%1").arg(launch)));
    QCOMPARE(requested.size(), 1);
    QCOMPARE(v->selectedEvent(), launch);
  }

  // The timeline by wheel and keys: zoom in at the cursor, pan, fit.
  void timelineWheelAndKeys() {
    App app;
    QVERIFY(app.openSample());
    TimelineView* v = app.w.timelinePane()->view();
    v->setFocus();
    QTest::keyClick(v, Qt::Key_F);  // the whole trace (it opens on the step that reads as zero)
    const int64_t span0 = v->axis().span();
    const QPoint at(v->viewport()->width() / 2, 120);
    QWheelEvent wheel(at, v->viewport()->mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(v->viewport(), &wheel);
    QVERIFY2(v->axis().span() < span0, "the wheel zooms in");
    const int64_t span1 = v->axis().span();
    QTest::keyClick(v, Qt::Key_W);
    QVERIFY(v->axis().span() < span1);
    const int64_t start = v->axis().start();
    QTest::keyClick(v, Qt::Key_D);
    QVERIFY(v->axis().start() > start);
    QTest::keyClick(v, Qt::Key_A);
    QTest::keyClick(v, Qt::Key_A);
    QVERIFY(v->axis().start() < start);
    QTest::keyClick(v, Qt::Key_F);
    QCOMPARE(v->axis().span(), span0);
  }
};

QTEST_MAIN(AppTest)
#include "test_app.moc"
