// The viewer's models and tables on real captures: every model under QAbstractItemModelTester
// (runs, glossary, compare, top-N, the views' grid, the steps, the changes), the table options
// (top-N, attribution, time unit), exports (content, atomic, unwritable, the trace reloading),
// the copied selection, the glossary's coverage and the kernel histogram.
#include "viewer_fixture.h"

using namespace viewer_fixture;

class ModelsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void runsModelUnderTester();
  void glossaryModelUnderTester();
  void compareModelsUnderTester();
  void viewAndExplanationModelsUnderTester();
  void topNProxyUnderTester();
  void tableOptionsOnRealCapture();
  void exportTableContent();
  void exportUnwritableLeavesNoFile();
  void exportTraceReloads();
  void copySelection();
  void glossaryCoversColumnsAndFamilies();
  void kernelHistogramCountsKernels();

 private:
  std::shared_ptr<const EventStore> softmax_;
  QTemporaryDir tmp_;
};

void ModelsTest::initTestCase() { initViewerSuite(tmp_, &softmax_); }

void ModelsTest::runsModelUnderTester() {
  RunsModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
  RunEntry a;
  a.engine = true;
  a.config = RunConfig{};
  a.summary = RunsModel::configSummary(RunConfig{});
  const int id = m.addRun(a);
  RunEntry b;
  b.status = RunStatus::Opened;
  b.path = kSoftmax;
  b.summary = QStringLiteral("softmax");
  m.addRun(b);
  QCOMPARE(m.rowCount(), 2);
  RunOutcome o;
  o.status = RunStatus::Failed;
  o.exitCode = 2;
  o.message = QStringLiteral("bad");
  m.finishRun(id, o);
  QCOMPARE(m.data(m.index(0, RunsModel::Status)).toString(), QStringLiteral("failed"));
  QCOMPARE(m.rowOfPath(kSoftmax), 1);
  QVERIFY(m.data(m.index(0, RunsModel::Summary)).toString().contains(QStringLiteral("1x8x64x64 float32")));
}

void ModelsTest::glossaryModelUnderTester() {
  GlossaryDock dock;
  QAbstractItemModelTester t1(dock.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
  QAbstractItemModelTester t2(dock.proxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
  QVERIFY(dock.model()->rowCount() > 40);
  dock.setSearch(QStringLiteral("synchron"));
  QVERIFY(dock.proxy()->rowCount() > 0);
  dock.setSearch(QString());
  QCOMPARE(dock.proxy()->rowCount(), dock.model()->rowCount());
}

void ModelsTest::compareModelsUnderTester() {
  auto none = load(kNone);
  QVERIFY(none);
  const Comparison c = compareTraces(*snapshotOf(*none), *snapshotOf(*softmax_));
  CompareModel rows, steps;
  QAbstractItemModelTester t1(&rows, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QAbstractItemModelTester t2(&steps, QAbstractItemModelTester::FailureReportingMode::QtTest);
  rows.setFromRows(c);
  steps.setFromSteps(c);
  QCOMPARE(rows.rowCount(), static_cast<int>(c.rows.size()));
  QCOMPARE(steps.rowCount(), static_cast<int>(c.steps.size()));
  QCOMPARE(rows.columnCount(), 1 + 3 * 5);
  // SOFTMAX PASS is a record_function only in B: its rows are only in B.
  bool onlyB = false;
  for (int r = 0; r < rows.rowCount(); ++r)
    if (rows.data(rows.index(r, 0)).toString().startsWith(QStringLiteral("SOFTMAX PASS")))
      onlyB |= rows.data(rows.index(r, 0)).toString().contains(QStringLiteral("only in B")) &&
               rows.data(rows.index(r, 0), CompareModel::ChangedRole).toBool();
  QVERIFY(onlyB);
}

// The views' grid, the Explanation's steps and Compare's ranked changes under the model tester,
// filled from real captures and then refilled and cleared as a new trace does.
void ModelsTest::viewAndExplanationModelsUnderTester() {
  auto none = load(kNone);
  QVERIFY(none);
  const auto snapA = snapshotOf(*none);
  const auto snapB = snapshotOf(*softmax_);
  StepsModel steps;
  QAbstractItemModelTester t1(&steps, QAbstractItemModelTester::FailureReportingMode::QtTest);
  steps.setExplanation(snapB->explanation);
  QCOMPARE(steps.rowCount(), static_cast<int>(snapB->explanation->steps.size()));
  QCOMPARE(steps.columnCount(), static_cast<int>(StepsModel::ColumnCount));
  steps.setExplanation(snapA->explanation);
  steps.setExplanation(nullptr);
  QCOMPARE(steps.rowCount(), 0);
  ChangesModel changes;
  QAbstractItemModelTester t2(&changes, QAbstractItemModelTester::FailureReportingMode::QtTest);
  auto c = std::make_shared<const Comparison>(compareTraces(*snapA, *snapB));
  changes.setComparison(c);
  QVERIFY(changes.rowCount() > 0);
  for (int r = 0; r < changes.rowCount(); ++r) QVERIFY(changes.change(r));
  changes.setComparison(nullptr);
  QCOMPARE(changes.rowCount(), 0);
  GridModel grid;
  QAbstractItemModelTester t3(&grid, QAbstractItemModelTester::FailureReportingMode::QtTest);
  grid.setRows(
      {{QStringLiteral("name"), GridModel::Kind::Text, {}}, {QStringLiteral("time"), GridModel::Kind::Time, {}}},
      {{QStringLiteral("a"), QVariant::fromValue<qint64>(1500)},
       {QStringLiteral("b"), QVariant::fromValue<qint64>(20)}},
      {EventId{0}, EventId{1}});
  QCOMPARE(grid.rowCount(), 2);
  QCOMPARE(grid.index(1, 1).data(GridModel::EventRole).value<EventId>(), EventId{1});
  grid.setRows({}, {});
  QCOMPARE(grid.rowCount(), 0);
}

void ModelsTest::topNProxyUnderTester() {
  KeyAveragesModel model;
  KeyAveragesProxy proxy;
  QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
  proxy.setSourceModel(&model);
  auto ka = std::make_shared<const KeyAverages>(computeKeyAverages(*softmax_, GroupBy::Name));
  model.setData(ka);
  proxy.sort(KeyAveragesModel::columnOf(Column::SelfDevice), Qt::DescendingOrder);
  proxy.setTopN(5);
  QCOMPARE(proxy.rowCount(), 5);
  // The five largest Self CUDA rows, in order.
  auto sorted = sortedRows(*ka, Column::SelfDevice, false);
  for (int r = 0; r < 5; ++r)
    QCOMPARE(proxy.data(proxy.index(r, 0)).toString(), QString::fromStdString(sorted[static_cast<size_t>(r)]->name));
  // Top-N applies after the filter.
  proxy.setNameFilter(QStringLiteral("^aten::"), true);
  QCOMPARE(proxy.rowCount(), 5);
  for (int r = 0; r < proxy.rowCount(); ++r)
    QVERIFY(proxy.data(proxy.index(r, 0)).toString().startsWith(QStringLiteral("aten::")));
  proxy.setTopN(0);
  QVERIFY(proxy.rowCount() > 5);
  // Re-sorting recomputes which rows are the top ones.
  proxy.setNameFilter(QString(), false);
  proxy.setTopN(3);
  proxy.sort(KeyAveragesModel::columnOf(Column::Calls), Qt::DescendingOrder);
  QCOMPARE(proxy.rowCount(), 3);
  const auto byCalls = sortedRows(*ka, Column::Calls, false);
  QCOMPARE(proxy.data(proxy.index(0, KeyAveragesModel::columnOf(Column::Calls)), TableModelBase::SortRole).toLongLong(),
           static_cast<qlonglong>(byCalls.front()->calls));
}

void ModelsTest::tableOptionsOnRealCapture() {
  MainWindow w({false, false, false});
  QSignalSpy shown(&w, &MainWindow::traceShown);
  QVERIFY(openAndWait(w, shown, kSoftmax));
  auto selfDeviceOf = [&](const QString& name) -> qlonglong {
    for (int r = 0; r < w.tablePane()->model()->rowCount(); ++r)
      if (w.tablePane()->model()->rowAt(r)->name == name.toStdString())
        return w.tablePane()->model()->rowAt(r)->selfDeviceNs;
    return -1;
  };
  // torch lets the profiler's Activity Buffer Request own the first GEMM.
  QVERIFY(selfDeviceOf(QStringLiteral("Activity Buffer Request")) > 500000);
  w.findChild<QComboBox*>(QStringLiteral("attribution"))->setCurrentIndex(1);
  QCOMPARE(w.tablePane()->attribution(), Attribution::Corrected);
  QCOMPARE(w.tablePane()->model()->averages()->attribution, Attribution::Corrected);
  QCOMPARE(selfDeviceOf(QStringLiteral("Activity Buffer Request")), 0);
  // Grouping keeps the attribution.
  w.tablePane()->setGroupBy(GroupBy::InputShape);
  QCOMPARE(w.tablePane()->model()->averages()->attribution, Attribution::Corrected);
  QCOMPARE(w.tablePane()->model()->averages()->groupBy, GroupBy::InputShape);
  w.tablePane()->setGroupBy(GroupBy::Name);
  // Time unit: every time cell in ms.
  w.tablePane()->setTimeUnit(KeyAveragesModel::TimeUnit::Ms);
  const int selfCuda = KeyAveragesModel::columnOf(Column::SelfDevice);
  for (int r = 0; r < w.tablePane()->proxy()->rowCount(); ++r)
    QVERIFY(w.tablePane()
                ->proxy()
                ->data(w.tablePane()->proxy()->index(r, selfCuda))
                .toString()
                .endsWith(QStringLiteral("ms")));
  w.tablePane()->setTimeUnit(KeyAveragesModel::TimeUnit::Auto);
  // Top-N with the filter.
  w.tablePane()->setNameFilter(QStringLiteral("^aten::"), true);
  w.tablePane()->setTopN(3);
  QCOMPARE(w.tablePane()->proxy()->rowCount(), 3);
  w.tablePane()->setTopN(0);
  QVERIFY(w.tablePane()->proxy()->rowCount() > 3);
}

void ModelsTest::exportTableContent() {
  MainWindow w({false, false, false});
  QSignalSpy shown(&w, &MainWindow::traceShown);
  QVERIFY(openAndWait(w, shown, kSoftmax));
  w.tablePane()->setNameFilter(QStringLiteral("^aten::"), true);
  const int shown_ = w.tablePane()->proxy()->rowCount();
  QVERIFY(shown_ > 3);
  QString err;
  const QString csv = tmp_.filePath(QStringLiteral("t.csv"));
  QVERIFY2(w.exportTable(csv, &err), qPrintable(err));
  QFile f(csv);
  QVERIFY(f.open(QIODevice::ReadOnly));
  const QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  QCOMPARE(lines.size(), shown_ + 1);
  QVERIFY(lines[0].startsWith(QStringLiteral("name,")));
  for (int i = 1; i < lines.size(); ++i) QVERIFY(lines[i].startsWith(QStringLiteral("aten::")));
  // The first data row is the table's first row (sorted by Self CUDA, descending).
  QVERIFY(lines[1].startsWith(w.tablePane()->proxy()->data(w.tablePane()->proxy()->index(0, 0)).toString() +
                              QLatin1Char(',')));

  const QString json = tmp_.filePath(QStringLiteral("t.json"));
  QVERIFY2(w.exportTable(json, &err), qPrintable(err));
  QFile j(json);
  QVERIFY(j.open(QIODevice::ReadOnly));
  const QJsonObject o = QJsonDocument::fromJson(j.readAll()).object();
  QCOMPARE(o.value(QStringLiteral("rows")).toArray().size(), shown_);
  QCOMPARE(o.value(QStringLiteral("attribution")).toString(), QStringLiteral("torch"));

  const QString md = tmp_.filePath(QStringLiteral("t.md"));
  w.tablePane()->setTopN(2);
  QVERIFY2(w.exportTable(md, &err), qPrintable(err));
  QFile m(md);
  QVERIFY(m.open(QIODevice::ReadOnly));
  const QStringList mdLines = QString::fromUtf8(m.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  QVERIFY(mdLines[0].startsWith(QStringLiteral("| Name |")));
  int dataRows = 0;
  for (const QString& l : mdLines) dataRows += l.startsWith(QStringLiteral("| aten::"));
  QCOMPARE(dataRows, 2);
  QVERIFY(!w.exportTable(tmp_.filePath(QStringLiteral("t.xlsx")), &err));
  QVERIFY(err.contains(QStringLiteral("unknown table format")));
}

void ModelsTest::exportUnwritableLeavesNoFile() {
  MainWindow w({false, false, false});
  QSignalSpy shown(&w, &MainWindow::traceShown);
  QVERIFY(openAndWait(w, shown, kSoftmax));
  QString err;
  // A missing directory.
  QVERIFY(!w.exportTable(QStringLiteral("/nonexistent-dir-attnscope/t.csv"), &err));
  QVERIFY(err.contains(QStringLiteral("/nonexistent-dir-attnscope")));
  // A directory where the file should go (fails even as root): no temp file left behind.
  QTemporaryDir dir;
  const QString blocked = dir.filePath(QStringLiteral("t.csv"));
  QVERIFY(QDir().mkdir(blocked));
  QVERIFY(!w.exportTable(blocked, &err));
  QVERIFY2(err.contains(blocked), qPrintable(err));
  QCOMPARE(QDir(dir.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::Hidden),
           QStringList{QStringLiteral("t.csv")});
  // A read-only directory (not for root, who may write anyway).
  if (::geteuid() != 0) {
    QTemporaryDir ro;
    QVERIFY(QFile::setPermissions(ro.path(), QFileDevice::ReadOwner | QFileDevice::ExeOwner));
    const QString target = ro.filePath(QStringLiteral("t.csv"));
    const bool ok = w.exportTable(target, &err);
    QFile::setPermissions(ro.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    QVERIFY(!ok);
    QCOMPARE(QDir(ro.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::Hidden).size(), 0);
  }
  QVERIFY(!w.exportTrace(QStringLiteral("/nonexistent-dir-attnscope/t.json"), &err));
}

void ModelsTest::exportTraceReloads() {
  MainWindow w({false, false, false});
  QSignalSpy shown(&w, &MainWindow::traceShown);
  QVERIFY(openAndWait(w, shown, kSoftmax));
  const QString out = tmp_.filePath(QStringLiteral("export.json"));
  QString err;
  QVERIFY2(w.exportTrace(out, &err), qPrintable(err));
  auto back = load(out);
  QVERIFY(back);
  QCOMPARE(back->familyCount(Family::Kernel), softmax_->familyCount(Family::Kernel));
  const auto a = computeKeyAverages(*softmax_, GroupBy::Name);
  const auto b = computeKeyAverages(*back, GroupBy::Name);
  QCOMPARE(b.rows.size(), a.rows.size());
  QCOMPARE(b.sumSelfDeviceNs, a.sumSelfDeviceNs);
}

void ModelsTest::copySelection() {
  MainWindow w({false, false, false});
  QSignalSpy shown(&w, &MainWindow::traceShown);
  QVERIFY(openAndWait(w, shown, kSoftmax));
  w.show();
  w.dock(QStringLiteral("whyDock"))->raise();  // the Why panel answers while it is on screen
  QSignalSpy why(w.whyPanel(), &WhyPanel::shown);
  w.tablePane()->view()->selectRow(0);
  const QString text = w.copySelection();
  const QStringList lines = text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  QCOMPARE(lines.size(), 2);
  QVERIFY(lines[0].startsWith(QStringLiteral("Name\t")));
  QVERIFY(lines[1].startsWith(w.tablePane()->proxy()->data(w.tablePane()->proxy()->index(0, 0)).toString() +
                              QLatin1Char('\t')));
  // Selecting a row answers "why is this zero?" for it.
  QVERIFY(why.wait(30000));
  QVERIFY(w.whyPanel()->plainText().startsWith(
      w.tablePane()->proxy()->data(w.tablePane()->proxy()->index(0, 0)).toString()));
}

void ModelsTest::glossaryCoversColumnsAndFamilies() {
  GlossaryModel m;
  m.setItems(loadGlossary());
  for (int c = 0; c < static_cast<int>(Column::Count); ++c) {
    const QString title = QString::fromLatin1(columnTitle(static_cast<Column>(c)).data(),
                                              static_cast<qsizetype>(columnTitle(static_cast<Column>(c)).size()));
    const int row = m.find(title);
    QVERIFY2(row >= 0 && m.items()[static_cast<size_t>(row)].key.compare(title, Qt::CaseInsensitive) == 0,
             qPrintable(title));
  }
  const QStringList names = {QStringLiteral("aten::bmm"),
                             QStringLiteral("cudaLaunchKernel"),
                             QStringLiteral("cudaLaunchKernelExC"),
                             QStringLiteral("cudaStreamSynchronize"),
                             QStringLiteral("cudaMemcpyAsync (Pageable -> Device)"),
                             QStringLiteral("gpu_user_annotation"),
                             QStringLiteral("Activity Buffer Request"),
                             QStringLiteral("user_annotation"),
                             QStringLiteral("kernel"),
                             QStringLiteral("cuda_runtime"),
                             QStringLiteral("overhead")};
  for (const QString& n : names) QVERIFY2(m.find(n) >= 0, qPrintable(n));
  QCOMPARE(m.items()[static_cast<size_t>(m.find(QStringLiteral("cudaLaunchKernelExC")))].key,
           QStringLiteral("cudaLaunchKernel"));
  // A kernel name has no entry of its own: its family's.
  QCOMPARE(
      m.items()[static_cast<size_t>(m.find(QStringLiteral("sm80_xmma_gemm"), static_cast<int>(Family::Kernel)))].key,
      QStringLiteral("kernel"));
  GlossaryDock dock;
  QVERIFY(dock.lookup(QStringLiteral("Self CUDA %")));
  QVERIFY(dock.currentText().contains(QStringLiteral("100%")));
}

void ModelsTest::kernelHistogramCountsKernels() {
  const auto bins = kernelHistogram(*softmax_, ActivityIndex(*softmax_));
  int total = 0;
  for (const auto& b : bins) total += b.count;
  QCOMPARE(static_cast<uint64_t>(total), softmax_->familyCount(Family::Kernel));
  QVERIFY(!bins.isEmpty() && bins.front().count > 0 && bins.back().count > 0);
  PlotsPanel p;
  p.setTrace(loadedTraceOf(softmax_));
  QVERIFY(p.stepSeries().isEmpty());  // a torch.profiler capture has no per-method timings
}

QTEST_MAIN(ModelsTest)
#include "test_models.moc"
