// The app at a laptop's size, driven by real input: what fits at 1280x800 (the timeline's lanes,
// the table's rows, the window never growing past the screen), each view tab and Compare filled
// and readable, and the keyboard (Tab out of a table, Ctrl+F from any tab, keyboard sort).
#include "app_harness.h"

using namespace apptest;

class LayoutTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { initSuite(); }

  // Finding 2: at 1280x800 with an overlay on, the timeline shows the CPU thread and the GPU
  // stream lanes; the legend is one line until asked; nothing is drawn over the timeline; the
  // Run dock stays away until the user asks to run.
  void layoutAt1280x800() {
    App app;
    QVERIFY(app.openSample());
    QCoreApplication::processEvents();
    TimelinePane* pane = app.w.timelinePane();
    QVERIFY(pane->explainByName(QStringLiteral("SOFTMAX PASS")));
    QCoreApplication::processEvents();
    TimelineView* v = pane->view();
    const auto& tracks = v->index().tracks();
    int cpu = -1, gpu = -1;
    for (size_t t = 0; t < tracks.size(); ++t) {
      if (tracks[t].kind == TrackKind::Cpu && cpu < 0) cpu = static_cast<int>(t);
      if (tracks[t].kind == TrackKind::Gpu && gpu < 0) gpu = static_cast<int>(t);
    }
    QVERIFY(cpu >= 0 && gpu >= 0);
    const QRect cpuRect = v->trackRectInView(static_cast<uint32_t>(cpu));
    const QRect gpuRect = v->trackRectInView(static_cast<uint32_t>(gpu));
    QVERIFY2(cpuRect.height() >= 40, "the CPU thread's track is on screen");
    QVERIFY2(gpuRect.height() >= 15,
             qPrintable(QString("the GPU stream's track is on screen (%1 px of it in a %2 px view)")
                            .arg(gpuRect.height())
                            .arg(v->viewport()->height())));
    auto* legend = pane->findChild<QLabel*>(QStringLiteral("overlayLegend"));
    QVERIFY(legend && legend->isVisible());
    QVERIFY2(legend->height() <= 3 * legend->fontMetrics().lineSpacing() + 12, "the legend is short");
    auto* more = pane->findChild<QToolButton*>(QStringLiteral("overlayLegendMore"));
    QVERIFY(more && more->isVisible());
    const QString shortText = legend->text();
    clickWidget(more);
    QVERIFY(legend->text().size() > shortText.size());
    QVERIFY(!pane->findChild<QLabel*>(QStringLiteral("eventDetails")));  // the label that overlapped is gone
    QVERIFY(!app.w.dock(QStringLiteral("runDock"))->isVisible());
    QVERIFY(app.w.dock(QStringLiteral("explainDock"))->isVisible());
    // The user asks to run: the Run dock comes forward.
    QAction* runAct = nullptr;
    for (QAction* a : app.w.menuBar()->actions())
      if (a->text().remove('&') == QLatin1String("Run")) runAct = a;
    QVERIFY(runAct && runAct->menu());
    runAct->menu()->actions().front()->trigger();  // "Run…"
    QVERIFY(app.w.dock(QStringLiteral("runDock"))->isVisible());
  }

  // At 1280x800 each part has room to be read: the Operators table shows a screenful of rows (it
  // showed 3-4), visiting a view and coming back leaves the timeline the height it had (it shrank to
  // about 110 px and stayed), and the Explanation's steps table shows each step's answer whole.
  void roomAt1280x800() {
    App app;
    QVERIFY(app.open(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/kineto_tb_resnet50_nw0.pt.trace.json.gz")));
    QVERIFY(QTest::qWaitForWindowExposed(&app.w));
    // The first show's proportions are set once the window has its size: wait until it settles.
    QWidget* timeline = app.w.timelinePane();
    int settled = -1;
    for (int i = 0; i < 50 && settled != timeline->height(); ++i) {
      settled = timeline->height();
      QTest::qWait(100);
    }
    showOperators(app.w);
    QTableView* ops = app.w.tablePane()->view();
    const int rowHeight = ops->verticalHeader()->defaultSectionSize();
    const int rows = ops->viewport()->height() / rowHeight;
    QVERIFY2(rows >= 7,
             qPrintable(
                 QString("%1 rows of %2 px in a %3 px table").arg(rows).arg(rowHeight).arg(ops->viewport()->height())));
    const int before = timeline->height();
    QVERIFY2(before >= 180, qPrintable(QString::number(before)));
    QTabWidget* tabs = app.w.viewTabs();
    auto clickTab = [&](int t) {
      QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, Qt::NoModifier, tabs->tabBar()->tabRect(t).center());
      QCoreApplication::processEvents();
    };
    auto* overview = qobject_cast<ViewPanel*>(app.w.overviewPanel());
    QVERIFY(overview);
    QSignalSpy ready(overview, &ViewPanel::ready);
    clickTab(tabs->indexOf(overview));
    QVERIFY(ready.size() > 0 || ready.wait(30000));
    QCoreApplication::processEvents();
    QVERIFY2(tabs->height() >= timeline->height(), "a view gets at least half the height");
    clickTab(tabs->indexOf(app.w.tablePane()));
    QTRY_VERIFY2_WITH_TIMEOUT(
        std::abs(timeline->height() - before) <= 2,
        qPrintable(QString("timeline %1 px before Overview, %2 px after").arg(before).arg(timeline->height())), 5000);
    // The steps table of the Explanation: step, host time and what cost it most, unclipped.
    auto* steps = app.w.explainPanel()->findChild<QTableView*>(QStringLiteral("stepsTable"));
    QVERIFY(steps && steps->model()->rowCount() > 0);
    for (int c = 0; c <= 2; ++c) {
      const int right = steps->horizontalHeader()->sectionViewportPosition(c) + steps->columnWidth(c);
      QVERIFY2(right <= steps->viewport()->width(),
               qPrintable(QString("column %1 ends at %2 px in a %3 px table")
                              .arg(steps->model()->headerData(c, Qt::Horizontal).toString())
                              .arg(right)
                              .arg(steps->viewport()->width())));
    }
  }

  // A trace whose lanes fit gets them all on screen at 1280x800 (the bundled sample: its CPU thread,
  // the GPU annotation and the GPU stream), while a long one (resnet, roomAt1280x800) leaves the
  // table its rows; until the user drags the splitter, which then stays where the user put it.
  void sampleShowsItsLanes() {
    App app;
    QVERIFY(app.openSample());
    QVERIFY(QTest::qWaitForWindowExposed(&app.w));
    QTest::qWait(100);
    TimelineView* v = app.w.timelinePane()->view();
    const auto& tracks = v->index().tracks();
    int gpu = -1;
    for (size_t t = 0; t < tracks.size(); ++t)
      if (tracks[t].kind == TrackKind::Gpu && gpu < 0) gpu = static_cast<int>(t);
    QVERIFY(gpu >= 0);
    const QRect r = v->trackRectInView(static_cast<uint32_t>(gpu));
    QVERIFY2(r.height() >= 15 && r.bottom() <= v->viewport()->height(),
             qPrintable(QString("the GPU stream at %1-%2 px in a %3 px view")
                            .arg(r.top())
                            .arg(r.bottom())
                            .arg(v->viewport()->height())));
  }

  // At 1280x800 the window never grows past its size, whatever the user opens: every view tab, the
  // Compare dock with a comparison in it, the Run panel.
  void windowStaysInside1280x800() {
    App app;
    QVERIFY(app.open(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/kineto_tb_resnet50_nw0.pt.trace.json.gz")));
    QVERIFY(QTest::qWaitForWindowExposed(&app.w));
    const QSize start = app.w.size();
    QCOMPARE(start, QSize(1280, 800));
    QTabWidget* tabs = app.w.viewTabs();
    QStringList grew;
    auto within = [&](const QString& what) {
      QCoreApplication::processEvents();
      if (app.w.width() > start.width() || app.w.height() > start.height())
        grew << QString("%1: %2x%3").arg(what).arg(app.w.width()).arg(app.w.height());
    };
    for (int t = 0; t < tabs->count(); ++t) {
      // Operators is the table itself; every other tab is a view that fills itself, then says ready.
      auto* panel = qobject_cast<ViewPanel*>(tabs->widget(t));
      std::optional<QSignalSpy> ready;
      if (panel) ready.emplace(panel, &ViewPanel::ready);
      QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, Qt::NoModifier, tabs->tabBar()->tabRect(t).center());
      if (ready) QVERIFY(ready->size() > 0 || ready->wait(30000));
      within(tabs->tabText(t));
    }
    QSignalSpy compared(app.w.compareView(), &CompareView::compared);
    app.w.compareFiles(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_trace_diff_control.json.gz"),
                       QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_trace_diff_test_v100.json.gz"), false);
    QVERIFY(compared.wait(60000));
    within("Compare");
    // Its tables keep the names to a fixed width (the whole name on pointing): the figures stay in view.
    auto* changes = app.w.compareView()->findChild<QTableView*>(QStringLiteral("compareChanges"));
    QVERIFY(changes && changes->model()->rowCount() > 0);
    for (int c = 0; c < changes->model()->columnCount(); ++c)
      QVERIFY2(changes->columnWidth(c) <= 400, qPrintable(changes->model()->headerData(c, Qt::Horizontal).toString()));
    app.w.dock(QStringLiteral("runDock"))->show();
    app.w.dock(QStringLiteral("runDock"))->raise();
    within("Run");
    QVERIFY2(grew.isEmpty(), qPrintable(grew.join(QStringLiteral("; "))));
    // The status bar keeps its figures in view, even in a narrower window (960 px): "loaded in … ms"
    // fits the label, which cuts only the path after it.
    app.w.resize(960, 800);
    QCoreApplication::processEvents();
    auto* summary = app.w.statusBar()->findChild<QLabel*>(QStringLiteral("summary"));
    QVERIFY(summary);
    const QString text = summary->text();
    const qsizetype loaded = text.indexOf(QStringLiteral(" ms"), text.indexOf(QStringLiteral("loaded in")));
    QVERIFY2(loaded > 0, qPrintable(text));
    QVERIFY2(summary->fontMetrics().horizontalAdvance(text.left(loaded + 3)) <= summary->width(),
             qPrintable(QString("%1 px of text in a %2 px label: %3")
                            .arg(summary->fontMetrics().horizontalAdvance(text.left(loaded + 3)))
                            .arg(summary->width())
                            .arg(text)));
  }

  // Tab leaves a table (the arrows move in it): from a cell of the Operators table, Tab takes the
  // focus out of the table, and Shift+Tab back into it.
  void tabLeavesTheTable() {
    App app;
    QVERIFY(app.openSample());
    QVERIFY(QTest::qWaitForWindowExposed(&app.w));
    showOperators(app.w);
    QTableView* view = app.w.tablePane()->view();
    view->setFocus();
    view->setCurrentIndex(view->model()->index(0, 0));
    QTRY_VERIFY(view->hasFocus());
    QTest::keyClick(view, Qt::Key_Right);
    QCOMPARE(view->currentIndex().column(), 1);  // the arrows move inside
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
    QWidget* after = QApplication::focusWidget();
    QVERIFY(after);
    QVERIFY2(after != view && !view->isAncestorOf(after), qPrintable(after->objectName()));
    QTest::keyClick(after, Qt::Key_Backtab);
    QCOMPARE(QApplication::focusWidget(), static_cast<QWidget*>(view));
  }

  // Ctrl+F searches where the user can see it: from the Overview tab it brings the Operators table
  // forward and types into its filter. Help > Keyboard Shortcuts (Ctrl+/) lists the menus' keys.
  void findFromAnyTabAndShortcutsListed() {
    App app;
    QVERIFY(app.openSample());
    QVERIFY(QTest::qWaitForWindowExposed(&app.w));
    QTabWidget* tabs = app.w.viewTabs();
    clickTabOf(app.w, app.w.overviewPanel());
    QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(app.w.overviewPanel()));
    QTest::keyClick(&app.w, Qt::Key_F, Qt::ControlModifier);
    QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(app.w.tablePane()));
    auto* filter = qobject_cast<QLineEdit*>(QApplication::focusWidget());
    QVERIFY2(filter && app.w.tablePane()->isAncestorOf(filter) && filter->isVisible(),
             qPrintable(QApplication::focusWidget() ? QApplication::focusWidget()->objectName() : QString("none")));
    QTest::keyClicks(filter, QStringLiteral("softmax"));
    QTRY_VERIFY(app.w.tablePane()->proxy()->rowCount() > 0);
    for (int r = 0; r < app.w.tablePane()->proxy()->rowCount(); ++r)
      QVERIFY(app.w.tablePane()->proxy()->index(r, 0).data().toString().contains(QStringLiteral("softmax"),
                                                                                 Qt::CaseInsensitive));
    QString listed;
    QTimer::singleShot(0, [&listed] {
      auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
      if (!box) return;
      listed = box->text();
      box->close();
    });
    QTest::keyClick(&app.w, Qt::Key_Slash, Qt::ControlModifier);
    QTRY_VERIFY(!listed.isEmpty());
    for (const char* key : {"Ctrl+F", "F5", "Ctrl+K", "Ctrl+Shift+S", "Tab"})
      QVERIFY2(listed.contains(QString::fromLatin1(key)), key);
  }

  // The Overview's bars are the diagnosis's split: one bar per step whose parts add up to the step's
  // wall time, a legend entry per cause that holds time; opened with a click on its tab.
  void overviewBarsAreTheDiagnosis() {
#if __has_include(<QtCharts/QChartView>)
    App app;
    QVERIFY(app.open(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/kineto_tb_resnet50_nw0.pt.trace.json.gz")));
    QTabWidget* tabs = app.w.viewTabs();
    ViewPanel* overview = app.w.overviewPanel();
    QVERIFY(overview && tabs->indexOf(overview) >= 0);
    QSignalSpy ready(overview, &ViewPanel::ready);
    clickTabOf(app.w, overview);
    QVERIFY(ready.size() > 0 || ready.wait(30000));
    auto* view = overview->findChild<QChartView*>(QStringLiteral("overviewChart"));
    QVERIFY(view);
    auto* bars = qobject_cast<QHorizontalStackedBarSeries*>(view->chart()->series().value(0));
    QVERIFY(bars);
    const Diagnosis& d = app.w.trace()->snapshot->explanation->diagnosis;
    const int n = static_cast<int>(d.steps.size());
    QVERIFY(n > 1);
    QStringList labels;
    for (QBarSet* set : bars->barSets()) {
      QCOMPARE(set->count(), n);
      labels << set->label();
    }
    for (int i = 0; i < n; ++i) {  // bottom-up on the axis: the last step first
      double sum = 0;
      for (QBarSet* set : bars->barSets()) sum += set->at(i);
      const StepWaits& st = d.steps[static_cast<size_t>(n - 1 - i)];
      QVERIFY2(std::abs(sum - static_cast<double>(st.spanNs()) / 1e6) < 1e-6, qPrintable(QString::number(sum)));
    }
    for (int c = 0; c < kCauseCount; ++c) {
      int64_t total = 0;
      for (const StepWaits& st : d.steps) total += st.parts[c];
      QCOMPARE(labels.contains(QString::fromStdString(causeLabel(static_cast<Cause>(c)))), total > 0);
    }
#else
    QSKIP("built without Qt Charts");
#endif
  }

  // Issue 20: two real runs of one model side by side. The button opens both timelines on one
  // axis, aligned at the median step; the wheel on one zooms both; a click on a change lights
  // its events in both; choosing another step in the box aligns there.
  void timelinesSideBySide() {
    App app;
    const QString a = QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_trace_diff_control.json.gz");
    const QString b = QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_trace_diff_test_v100.json.gz");
    QVERIFY(app.open(a));
    CompareView* cv = app.w.compareView();
    QSignalSpy compared(cv, &CompareView::compared);
    app.w.compareFiles(a, b, false);
    QVERIFY(compared.wait(60000));
    QVERIFY(cv->comparison() && cv->comparison()->stepPairing == "order");
    auto* open = cv->findChild<QPushButton*>(QStringLiteral("openTimelineDiff"));
    QVERIFY(open && open->isEnabled());
    QSignalSpy ready(cv, &CompareView::timelinesReady);
    app.w.dock(QStringLiteral("compareDock"))->raise();
    QCoreApplication::processEvents();
    clickWidget(open);
    QVERIFY(ready.size() > 0 || ready.wait(30000));
    TimelineDiff* diff = cv->timelines();
    QVERIFY(diff && diff->isVisible());
    QVERIFY(QTest::qWaitForWindowExposed(diff));
    TimelineView* va = diff->viewA();
    TimelineView* vb = diff->viewB();
    // Aligned at the median of the 6 pairs: ProfilerStep#1012, its start at one x in both.
    QCOMPARE(diff->alignedPair(), 3);
    const auto& pair = cv->comparison()->steps[3];
    QCOMPARE(diff->offsetNs(), pair.b->hostStartNs - pair.a->hostStartNs);
    QCOMPARE(va->xOf(pair.a->hostStartNs), vb->xOf(pair.b->hostStartNs));
    QCOMPARE(va->axis().span(), vb->axis().span());
    // The wheel over A zooms both.
    const int64_t span0 = va->axis().span();
    const QPoint at(va->viewport()->width() / 2, 120);
    QWheelEvent wheel(at, va->viewport()->mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(va->viewport(), &wheel);
    QVERIFY(va->axis().span() < span0);
    QCOMPARE(vb->axis().span(), va->axis().span());
    QCOMPARE(vb->axis().start(), va->axis().start() + diff->offsetNs());
    // Keys on B pan both.
    vb->setFocus();
    QTest::keyClick(vb, Qt::Key_D);
    QCOMPARE(va->axis().start() + diff->offsetNs(), vb->axis().start());
    // The top change (cudaMemcpyAsync, Self CPU) clicked: its calls lit in both timelines.
    QTableView* list = diff->changesView();
    clickRow(list, 0);
    const Change& top = cv->comparison()->changes[0];
    auto sorted = [](std::vector<EventId> v) {
      std::sort(v.begin(), v.end());
      return v;
    };
    QCOMPARE(sorted(va->highlighted()), sorted(top.evidenceA));
    QCOMPARE(sorted(vb->highlighted()), sorted(top.evidenceB));
    QVERIFY(!va->highlighted().empty() && !vb->highlighted().empty());
    QCOMPARE(va->store()->name(va->store()->event(va->selectedEvent())), std::string_view("cudaMemcpyAsync"));
    QCOMPARE(vb->store()->name(vb->store()->event(vb->selectedEvent())), std::string_view("cudaMemcpyAsync"));
    // Another step chosen in the box, by keyboard: aligned there.
    pickComboItem(diff->alignCombo(), 0);
    QCOMPARE(diff->alignedPair(), 0);
    const auto& first = cv->comparison()->steps[0];
    QCOMPARE(diff->offsetNs(), first.b->hostStartNs - first.a->hostStartNs);
    QCOMPARE(va->xOf(first.a->hostStartNs), vb->xOf(first.b->hostStartNs));
    // A click on an op in A selects the same op (same name, same occurrence in the step) in B.
    EventId op = kNoEvent;
    for (EventId id = 0; id < va->store()->events().size() && op == kNoEvent; ++id)
      if (va->store()->name(va->store()->event(id)) == "## backward ##" &&
          va->store()->event(id).start >= first.a->hostStartNs)
        op = id;
    QVERIFY(op != kNoEvent);
    va->selectEvent(op, false);
    QVERIFY(vb->selectedEvent() != kNoEvent);
    QCOMPARE(vb->store()->name(vb->store()->event(vb->selectedEvent())), std::string_view("## backward ##"));
    QVERIFY(vb->store()->event(vb->selectedEvent()).start >= first.b->hostStartNs &&
            vb->store()->event(vb->selectedEvent()).start < first.b->hostEndNs);
  }

  // Issue 16: the views as tabs, by real input. Clicking the Kernels tab computes it; a click on the
  // Total header sorts; a selected kernel lights its calls on the timeline; the Memory curve clicked
  // moves the timeline; the Modules tree of a with_stack trace sorts by its header.
  void viewsByInput() {
    App app;
    QVERIFY(app.open(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_spmd_dhen_rank1.json.gz")));
    QTabWidget* tabs = app.w.viewTabs();
    QCOMPARE(tabs->count(), 6);
    KernelsPanel* k = app.w.kernelsPanel();
    QSignalSpy kready(k, &ViewPanel::ready);
    clickTabOf(app.w, k);
    QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(k));
    QVERIFY(kready.size() > 0 || kready.wait(30000));
    QTableView* kt = k->table();
    QVERIFY(kt->model()->rowCount() > 10);
    // The Total column: a click sorts largest first (as profilers do), its arrow pointing down the way
    // the values go, as in the Operators table; a second click reverses.
    int total = -1;
    for (int c = 0; c < kt->model()->columnCount(); ++c)
      if (kt->model()->headerData(c, Qt::Horizontal).toString() == QLatin1String("Total")) total = c;
    QVERIFY(total >= 0);
    const auto headerX = [&](int c) { return kt->horizontalHeader()->sectionViewportPosition(c) + 5; };
    const auto sortValue = [&](int r) {
      return kt->model()->index(r, total).data(TableModelBase::SortRole).toLongLong();
    };
    auto* kh = qobject_cast<SortHeaderView*>(kt->horizontalHeader());
    QVERIFY(kh);
    QTest::mouseClick(kt->horizontalHeader()->viewport(), Qt::LeftButton, Qt::NoModifier, QPoint(headerX(total), 5));
    QCOMPARE(kt->horizontalHeader()->sortIndicatorSection(), total);
    QCOMPARE(kh->sortArrow(total), QStyleOptionHeader::SortDown);
    for (int r = 1; r < kt->model()->rowCount(); ++r) QVERIFY(sortValue(r - 1) >= sortValue(r));
    QTest::mouseClick(kt->horizontalHeader()->viewport(), Qt::LeftButton, Qt::NoModifier, QPoint(headerX(total), 5));
    QCOMPARE(kh->sortArrow(total), QStyleOptionHeader::SortUp);
    for (int r = 1; r < kt->model()->rowCount(); ++r) QVERIFY(sortValue(r - 1) <= sortValue(r));
    // Ctrl+Shift+S on a cell of the column sorts the other way again: largest first.
    kt->setFocus();
    kt->setCurrentIndex(kt->model()->index(0, total));
    QTest::keyClick(kt, Qt::Key_S, Qt::ControlModifier | Qt::ShiftModifier);
    QCOMPARE(kh->sortArrow(total), QStyleOptionHeader::SortDown);
    for (int r = 1; r < kt->model()->rowCount(); ++r) QVERIFY(sortValue(r - 1) >= sortValue(r));
    clickRow(kt, 0);
    const auto& lit = app.w.timelinePane()->view()->highlighted();
    QVERIFY(!lit.empty());
    QCOMPARE(static_cast<qulonglong>(lit.size()),
             kt->model()->index(0, 0).siblingAtColumn(2).data(TableModelBase::SortRole).toULongLong());
    // Grouped by the launching op, chosen with the keyboard in the Group box.
    QSignalSpy regrouped(k, &ViewPanel::ready);
    pickComboItem(k->grouping(), 1);
    QVERIFY(regrouped.size() > 0 || regrouped.wait(30000));
    QCOMPARE(kt->model()->headerData(2, Qt::Horizontal).toString(), QStringLiteral("Launched by"));
    // Memory: the curve clicked moves the timeline to that time.
    MemoryPanel* m = app.w.memoryPanel();
    QSignalSpy mready(m, &ViewPanel::ready);
    clickTabOf(app.w, m);
    QVERIFY(mready.size() > 0 || mready.wait(30000));
    QVERIFY(m->view() && !m->view()->devices.empty());
    QCOMPARE(m->view()->devices.front().label, std::string("GPU 1"));
    QWidget* chart = m->findChild<QWidget*>(QStringLiteral("memoryChart"));
    QVERIFY(chart);
    QCoreApplication::processEvents();
    auto* area = qobject_cast<QAbstractScrollArea*>(chart);
    QVERIFY(area);
    const QPoint at(area->viewport()->width() / 2, area->viewport()->height() / 2);
    const qint64 t = m->timeAtChartPoint(at);
    QVERIFY(t > 0);
    QTest::mouseClick(area->viewport(), Qt::LeftButton, Qt::NoModifier, at);
    const auto& ax = app.w.timelinePane()->view()->axis();
    QVERIFY2(std::llabs(ax.start() + ax.span() / 2 - t) <= ax.span() / 50 + 1000,
             "the timeline is centred on the click");
    // Modules: none in this trace, and it says how to get them.
    ModulesPanel* mod = app.w.modulesPanel();
    QSignalSpy modReady(mod, &ViewPanel::ready);
    clickTabOf(app.w, mod);
    QVERIFY(modReady.size() > 0 || modReady.wait(30000));
    QVERIFY(!mod->view()->present);
    // Overview: the parts of each step add up to its span in the table too.
    OverviewPanel* ov = app.w.overviewPanel();
    QSignalSpy oready(ov, &ViewPanel::ready);
    clickTabOf(app.w, ov);
    QVERIFY(oready.size() > 0 || oready.wait(30000));
    QAbstractItemModel* om = ov->table()->model();
    QCOMPARE(om->rowCount(), 6);  // five steps and all of them
    for (int r = 0; r < om->rowCount(); ++r) {
      qlonglong parts = 0;
      for (int c = 2; c < 2 + kOverviewParts; ++c) parts += om->index(r, c).data(TableModelBase::SortRole).toLongLong();
      QCOMPARE(parts, om->index(r, 1).data(TableModelBase::SortRole).toLongLong());
    }
  }

  void modulesTreeSortsByHeader() {
    App app;
    QVERIFY(app.open(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/tl_h100_owlv2.json.gz")));
    ModulesPanel* mod = app.w.modulesPanel();
    QSignalSpy ready(mod, &ViewPanel::ready);
    clickTabOf(app.w, mod);
    QVERIFY(ready.size() > 0 || ready.wait(30000));
    QVERIFY(mod->view()->present);
    QTreeView* tree = mod->tree();
    QVERIFY(tree->model()->rowCount() >= 1);
    // GPU time launched (column 4): clicked twice, descending among the top-level rows' children.
    const int x = tree->header()->sectionViewportPosition(4) + 5;
    QTest::mouseClick(tree->header()->viewport(), Qt::LeftButton, Qt::NoModifier, QPoint(x, 5));
    QTest::mouseClick(tree->header()->viewport(), Qt::LeftButton, Qt::NoModifier, QPoint(x, 5));
    QCOMPARE(tree->header()->sortIndicatorSection(), 4);
    const QModelIndex root = tree->model()->index(0, 0);
    const int n = tree->model()->rowCount(root);
    QVERIFY(n >= 2);
    for (int r = 1; r < n; ++r)
      QVERIFY(tree->model()->index(r - 1, 4, root).data(TableModelBase::SortRole).toLongLong() >=
              tree->model()->index(r, 4, root).data(TableModelBase::SortRole).toLongLong());
    // A module selected lights its calls.
    tree->setCurrentIndex(tree->model()->index(0, 0, root));
    QVERIFY(!app.w.timelinePane()->view()->highlighted().empty());
  }

  // Finding 4: Compare speaks one sign, B - A, in its summary and its tables.
  void compareOneSign() {
    App app;
    QVERIFY(app.open(kSoftmax));
    QVERIFY(app.open(kNone));
    QSignalSpy compared(app.w.compareView(), &CompareView::compared);
    QString err;
    QVERIFY2(app.w.compareRows(0, 1, &err), qPrintable(err));  // A: softmax, B: none
    QVERIFY(compared.wait(30000));
    const QString summary = app.w.compareView()->perturbationText();
    QVERIFY2(summary.contains(QStringLiteral("298.889 us in A vs 211.845 us in B (-87.044 us, B - A)")),
             qPrintable(summary));
    // The Steps tab: SCALE's host time delta has the same sign (B - A: shorter in B).
    CompareModel* steps = app.w.compareView()->stepsModel();
    int scale = -1;
    for (int r = 0; r < steps->rowCount(); ++r)
      if (steps->index(r, 0).data().toString().startsWith(QStringLiteral("SCALE"))) scale = r;
    QVERIFY(scale >= 0);
    const double a = steps->index(scale, 1).data(TableModelBase::SortRole).toDouble();
    const double b = steps->index(scale, 2).data(TableModelBase::SortRole).toDouble();
    const double d = steps->index(scale, 3).data(TableModelBase::SortRole).toDouble();
    QCOMPARE(d, b - a);
    QVERIFY(app.w.compareView()->headlineText().size() > 0);
  }
};

QTEST_MAIN(LayoutTest)
#include "test_layout.moc"
