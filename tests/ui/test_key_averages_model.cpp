// KeyAveragesModel + KeyAveragesProxy + TraceLoader + MainWindow on a real
// H200 capture (softmax_8x16x1024x64: MULTIHEAD_ATTENTION_FULL wrapping
// q@k^T, scale, softmax (SOFTMAX PASS), @v).
#include <QAbstractItemModelTester>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTableView>
#include <QtTest>
#include <cstdlib>
#include <memory>

#include "core/read/trace_reader.h"
#include "core/tables/key_averages.h"
#include "core/tables/table_format.h"
#include "ui/shell/bundled_sample.h"
#include "ui/shell/main_window.h"
#include "ui/shell/trace_loader.h"
#include "ui/table/key_averages_model.h"
#include "ui/table/key_averages_proxy.h"
#include "ui/table/table_pane.h"

using namespace attnscope;
using attnscope::ui::KeyAveragesModel;
using attnscope::ui::KeyAveragesProxy;
using attnscope::ui::TableModelBase;

Q_DECLARE_METATYPE(attnscope::GroupBy)

namespace {

const QString kTraceDir = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto");
const QString kTrace = kTraceDir + QStringLiteral("/softmax_8x16x1024x64.json");
const QString kOracle = kTraceDir + QStringLiteral("/softmax_8x16x1024x64.keyavg.json");

int col(Column c) { return KeyAveragesModel::columnOf(c); }

QString nameAt(const QAbstractItemModel& m, int row) { return m.data(m.index(row, col(Column::Name))).toString(); }

}  // namespace

class TestKeyAveragesModel : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void modelTester_data();
  void modelTester();
  void rowCountsMatchTorch_data();
  void rowCountsMatchTorch();
  void inputShapeGroupingHasMoreRows();
  void selfCudaDescendingPutsGpuAnnotationFirst();
  void sortRoleIsNumericForNumbers_data();
  void sortRoleIsNumericForNumbers();
  void callsSortNumerically_data();
  void callsSortNumerically();
  void filter_data();
  void filter();
  void invalidRegexKeepsFilter();
  void displayMatchesCliTable_data();
  void displayMatchesCliTable();
  void deviceRowsAreMarked();
  void setDataResetsModel();
  void loaderDeliversSnapshot();
  void loaderReportsMissingFile();
  void windowKeepsTraceAfterFailedLoad();
  void bundledSampleIsTheSharedCapture();

 private:
  std::shared_ptr<const KeyAverages> averages(GroupBy g) const { return g == GroupBy::Name ? byName_ : byShape_; }

  std::shared_ptr<const EventStore> store_;
  std::shared_ptr<const KeyAverages> byName_;
  std::shared_ptr<const KeyAverages> byShape_;
};

void TestKeyAveragesModel::initTestCase() {
  if (!QFileInfo::exists(kTrace)) {
    QFAIL(qPrintable(
        QStringLiteral("test trace missing: %1 (a copy of a shared H200 capture in tests/data)").arg(kTrace)));
  }
  LoadResult r = loadTrace(kTrace.toStdString());
  QVERIFY2(r.ok(), r.error ? r.error->what().c_str() : "load failed");
  store_ = std::make_shared<const EventStore>(std::move(*r.store));
  byName_ = std::make_shared<const KeyAverages>(computeKeyAverages(*store_, GroupBy::Name));
  byShape_ = std::make_shared<const KeyAverages>(computeKeyAverages(*store_, GroupBy::InputShape));
  QVERIFY(!byName_->rows.empty());
}

void TestKeyAveragesModel::modelTester_data() {
  QTest::addColumn<GroupBy>("groupBy");
  QTest::newRow("by name") << GroupBy::Name;
  QTest::newRow("by input shape") << GroupBy::InputShape;
}

void TestKeyAveragesModel::modelTester() {
  QFETCH(GroupBy, groupBy);
  KeyAveragesModel model;
  KeyAveragesProxy proxy;
  proxy.setSourceModel(&model);
  QAbstractItemModelTester modelTester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setData(averages(groupBy));
  QCOMPARE(model.columnCount(), static_cast<int>(Column::Count));
  QCOMPARE(model.rowCount(), static_cast<int>(averages(groupBy)->rows.size()));
  proxy.sort(col(Column::SelfDevice), Qt::DescendingOrder);
  proxy.setNameFilter(QStringLiteral("^aten::"), true);
  proxy.setNameFilter(QString(), false);
  model.setData(averages(groupBy == GroupBy::Name ? GroupBy::InputShape : GroupBy::Name));
  model.setData(nullptr);
  QCOMPARE(proxy.rowCount(), 0);
}

void TestKeyAveragesModel::rowCountsMatchTorch_data() {
  QTest::addColumn<GroupBy>("groupBy");
  QTest::addColumn<QString>("oracleKey");
  QTest::newRow("by name") << GroupBy::Name << QStringLiteral("by_name");
  QTest::newRow("by input shape") << GroupBy::InputShape << QStringLiteral("by_shape");
}

void TestKeyAveragesModel::rowCountsMatchTorch() {
  QFETCH(GroupBy, groupBy);
  QFETCH(QString, oracleKey);
  QFile f(kOracle);
  if (!f.open(QIODevice::ReadOnly)) QFAIL(qPrintable(QStringLiteral("oracle missing: ") + kOracle));
  const QJsonArray rows = QJsonDocument::fromJson(f.readAll()).object().value(oracleKey).toArray();
  QVERIFY(!rows.isEmpty());
  KeyAveragesModel model;
  model.setData(averages(groupBy));
  QCOMPARE(model.rowCount(), rows.size());
}

void TestKeyAveragesModel::inputShapeGroupingHasMoreRows() {
  KeyAveragesModel model;
  model.setData(byName_);
  const int byName = model.rowCount();
  model.setData(byShape_);
  const int byShape = model.rowCount();
  QVERIFY2(byShape > byName, qPrintable(QStringLiteral("by shape %1, by name %2").arg(byShape).arg(byName)));
  // Shapes are shown when grouping by shape.
  bool anyShape = false;
  for (int r = 0; r < model.rowCount(); ++r) {
    anyShape |= model.data(model.index(r, col(Column::InputShapes))).toString().startsWith('[');
  }
  QVERIFY(anyShape);
}

void TestKeyAveragesModel::selfCudaDescendingPutsGpuAnnotationFirst() {
  KeyAveragesModel model;
  KeyAveragesProxy proxy;
  proxy.setSourceModel(&model);
  model.setData(byName_);
  proxy.sort(col(Column::SelfDevice), Qt::DescendingOrder);
  QCOMPARE(nameAt(proxy, 0), QStringLiteral("MULTIHEAD_ATTENTION_FULL"));
  const KeyAverageRow* top = model.rowAt(proxy.mapToSource(proxy.index(0, 0)).row());
  QVERIFY(top);
  QCOMPARE(top->family, Family::GpuUserAnnotation);
  // torch's oracle says 1754.031 us; the exported JSON span has dur 1754.033
  // (torch rounds its in-memory times differently), so allow a few ns.
  QVERIFY2(std::abs(top->selfDeviceNs - int64_t{1754031}) <= 5, qPrintable(QString::number(top->selfDeviceNs)));
  QCOMPARE(proxy.data(proxy.index(0, col(Column::SelfDevice))).toString(), QStringLiteral("1.754ms"));
  QVERIFY(proxy.data(proxy.index(0, 0), KeyAveragesModel::IsDeviceRole).toBool());
  // Descending all the way down.
  for (int r = 1; r < proxy.rowCount(); ++r) {
    const double prev = proxy.data(proxy.index(r - 1, col(Column::SelfDevice)), TableModelBase::SortRole).toDouble();
    const double cur = proxy.data(proxy.index(r, col(Column::SelfDevice)), TableModelBase::SortRole).toDouble();
    QVERIFY2(prev >= cur, qPrintable(QStringLiteral("row %1").arg(r)));
  }
}

void TestKeyAveragesModel::sortRoleIsNumericForNumbers_data() {
  QTest::addColumn<int>("column");
  QTest::addColumn<int>("typeId");
  QTest::newRow("Name") << col(Column::Name) << int(QMetaType::QString);
  QTest::newRow("Self CPU %") << col(Column::SelfCpuPct) << int(QMetaType::Double);
  QTest::newRow("Self CUDA") << col(Column::SelfDevice) << int(QMetaType::Double);
  QTest::newRow("CUDA Mem") << col(Column::DeviceMem) << int(QMetaType::Double);
  QTest::newRow("# of Calls") << col(Column::Calls) << int(QMetaType::LongLong);
  QTest::newRow("Input Shapes") << col(Column::InputShapes) << int(QMetaType::QString);
}

void TestKeyAveragesModel::sortRoleIsNumericForNumbers() {
  QFETCH(int, column);
  QFETCH(int, typeId);
  KeyAveragesModel model;
  model.setData(byShape_);
  QCOMPARE(model.data(model.index(0, column), TableModelBase::SortRole).typeId(), typeId);
  const auto align = model.data(model.index(0, column), Qt::TextAlignmentRole).value<Qt::Alignment>();
  const bool numeric = typeId != int(QMetaType::QString);
  QCOMPARE(bool(align & Qt::AlignRight), numeric);
}

void TestKeyAveragesModel::callsSortNumerically_data() {
  QTest::addColumn<QList<qlonglong>>("calls");
  QTest::addColumn<Qt::SortOrder>("order");
  QTest::addColumn<QList<qlonglong>>("expected");
  // Lexically "10" < "9" and "100" < "25": a text sort would fail these.
  QTest::newRow("ascending") << QList<qlonglong>{9, 100, 10, 2, 25} << Qt::AscendingOrder
                             << QList<qlonglong>{2, 9, 10, 25, 100};
  QTest::newRow("descending") << QList<qlonglong>{9, 100, 10, 2, 25} << Qt::DescendingOrder
                              << QList<qlonglong>{100, 25, 10, 9, 2};
}

void TestKeyAveragesModel::callsSortNumerically() {
  QFETCH(QList<qlonglong>, calls);
  QFETCH(Qt::SortOrder, order);
  QFETCH(QList<qlonglong>, expected);
  auto ka = std::make_shared<KeyAverages>();
  for (qlonglong n : calls) {
    KeyAverageRow r;
    r.name = "op" + std::to_string(n);
    r.calls = static_cast<uint64_t>(n);
    ka->rows.push_back(r);
  }
  KeyAveragesModel model;
  KeyAveragesProxy proxy;
  proxy.setSourceModel(&model);
  model.setData(ka);
  proxy.sort(col(Column::Calls), order);
  QList<qlonglong> got;
  for (int r = 0; r < proxy.rowCount(); ++r) {
    got << proxy.data(proxy.index(r, col(Column::Calls))).toString().toLongLong();
  }
  QCOMPARE(got, expected);

  // And on the real trace: the order agrees with the integer counts.
  model.setData(byName_);
  proxy.sort(col(Column::Calls), order);
  for (int r = 1; r < proxy.rowCount(); ++r) {
    const qlonglong a = proxy.data(proxy.index(r - 1, col(Column::Calls))).toString().toLongLong();
    const qlonglong b = proxy.data(proxy.index(r, col(Column::Calls))).toString().toLongLong();
    QVERIFY(order == Qt::AscendingOrder ? a <= b : a >= b);
  }
}

void TestKeyAveragesModel::filter_data() {
  QTest::addColumn<QString>("pattern");
  QTest::addColumn<bool>("regex");
  QTest::addColumn<QString>("mustMatch");  // every shown name matches this regex, no hidden one does
  QTest::newRow("regex ^aten::") << QStringLiteral("^aten::") << true << QStringLiteral("^aten::");
  QTest::newRow("text softmax (any case)") << QStringLiteral("softmax") << false << QStringLiteral("(?i)softmax");
  QTest::newRow("text with regex chars") << QStringLiteral("(Pageable") << false << QStringLiteral("\\(Pageable");
  QTest::newRow("regex not aten") << QStringLiteral("^(?!aten::)") << true << QStringLiteral("^(?!aten::)");
}

void TestKeyAveragesModel::filter() {
  QFETCH(QString, pattern);
  QFETCH(bool, regex);
  QFETCH(QString, mustMatch);
  KeyAveragesModel model;
  KeyAveragesProxy proxy;
  proxy.setSourceModel(&model);
  model.setData(byName_);
  QString error;
  QVERIFY2(proxy.setNameFilter(pattern, regex, &error), qPrintable(error));
  const QRegularExpression re(mustMatch);
  QVERIFY(re.isValid());
  int expected = 0;
  for (int r = 0; r < model.rowCount(); ++r) expected += re.match(nameAt(model, r)).hasMatch();
  QVERIFY2(expected > 0, "the pattern should match some rows of this trace");
  QVERIFY(expected < model.rowCount());
  QCOMPARE(proxy.rowCount(), expected);
  for (int r = 0; r < proxy.rowCount(); ++r) {
    QVERIFY2(re.match(nameAt(proxy, r)).hasMatch(), qPrintable(nameAt(proxy, r)));
  }
}

void TestKeyAveragesModel::invalidRegexKeepsFilter() {
  KeyAveragesModel model;
  KeyAveragesProxy proxy;
  proxy.setSourceModel(&model);
  model.setData(byName_);
  QVERIFY(proxy.setNameFilter(QStringLiteral("^aten::"), true));
  const int before = proxy.rowCount();
  QString error;
  QVERIFY(!proxy.setNameFilter(QStringLiteral("aten::(["), true, &error));
  QVERIFY(!error.isEmpty());
  QCOMPARE(proxy.rowCount(), before);
  // The same text is fine as plain text.
  QVERIFY(proxy.setNameFilter(QStringLiteral("aten::(["), false));
  QCOMPARE(proxy.rowCount(), 0);
}

void TestKeyAveragesModel::displayMatchesCliTable_data() {
  QTest::addColumn<GroupBy>("groupBy");
  QTest::newRow("by name") << GroupBy::Name;
  QTest::newRow("by input shape") << GroupBy::InputShape;
}

// The cells must read exactly as the CLI's text table (torch's format).
void TestKeyAveragesModel::displayMatchesCliTable() {
  QFETCH(GroupBy, groupBy);
  const KeyAverages& ka = *averages(groupBy);
  TableOptions opt;
  opt.format = TableFormat::Text;
  opt.sortBy = Column::SelfDevice;
  opt.ascending = false;
  const QStringList lines = QString::fromStdString(renderTable(ka, opt)).split('\n');
  const auto order = sortedRows(ka, Column::SelfDevice, false);
  static const QRegularExpression sep(QStringLiteral("\\s{2,}"));
  QStringList titles;
  int row = 0;
  int checked = 0;
  for (const QString& line : lines) {
    const QString t = line.trimmed();
    if (t.isEmpty() || t.startsWith(QStringLiteral("---")) || t.startsWith(QStringLiteral("Self CPU time total")) ||
        t.startsWith(QStringLiteral("Self CUDA time total"))) {
      continue;
    }
    const QStringList cells = t.split(sep);
    if (titles.isEmpty()) {
      titles = cells;
      QCOMPARE(titles.front(), QStringLiteral("Name"));
      continue;
    }
    if (row >= static_cast<int>(order.size())) break;
    const KeyAverageRow& r = *order[static_cast<size_t>(row++)];
    // Input shapes may contain double spaces only in pathological cases; the
    // numeric columns come first, so compare those.
    for (int i = 1; i < titles.size() && i < cells.size(); ++i) {
      const auto c = parseColumn(titles[i].toStdString());
      QVERIFY2(c.has_value(), qPrintable(titles[i]));
      if (*c == Column::InputShapes) break;
      QCOMPARE(KeyAveragesModel::displayText(ka, r, *c), cells[i]);
      ++checked;
    }
  }
  QCOMPARE(row, static_cast<int>(order.size()));
  QVERIFY(checked > 0);
}

void TestKeyAveragesModel::deviceRowsAreMarked() {
  KeyAveragesModel model;
  model.setData(byName_);
  int device = 0;
  int host = 0;
  for (int r = 0; r < model.rowCount(); ++r) {
    const KeyAverageRow* row = model.rowAt(r);
    const bool isDevice = model.data(model.index(r, 0), KeyAveragesModel::IsDeviceRole).toBool();
    QCOMPARE(isDevice, isGpuFamily(row->family) || row->deviceType == DeviceType::Cuda);
    const QString tip = model.data(model.index(r, 0), Qt::ToolTipRole).toString();
    QVERIFY(tip.startsWith(QString::fromStdString(row->name)));
    QVERIFY(tip.contains(isDevice ? QStringLiteral("GPU") : QStringLiteral("CPU")));
    QVERIFY(model.data(model.index(r, 0), Qt::DecorationRole).isValid());
    QCOMPARE(model.data(model.index(r, 1), Qt::BackgroundRole).isValid(), isDevice);
    (isDevice ? device : host)++;
    if (row->name == "aten::bmm") QVERIFY(!isDevice);
  }
  QVERIFY(device >= 6);  // 5 kernels, a memcpy, 2 gpu_user_annotation spans
  QVERIFY(host > device);
}

void TestKeyAveragesModel::setDataResetsModel() {
  KeyAveragesModel model;
  QSignalSpy about(&model, &QAbstractItemModel::modelAboutToBeReset);
  QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
  model.setData(byName_);
  QCOMPARE(about.count(), 1);
  QCOMPARE(reset.count(), 1);
  QCOMPARE(model.averages().get(), byName_.get());
  model.setData(nullptr);
  QCOMPARE(reset.count(), 2);
  QCOMPARE(model.rowCount(), 0);
  QVERIFY(!model.data(model.index(0, 0)).isValid());
}

void TestKeyAveragesModel::loaderDeliversSnapshot() {
  ui::TraceLoader loader;
  QSignalSpy loaded(&loader, &ui::TraceLoader::loaded);
  QSignalSpy failed(&loader, &ui::TraceLoader::failed);
  loader.load(kTrace);
  QVERIFY(loader.isBusy());
  QVERIFY(loaded.wait(30000));
  QCOMPARE(failed.count(), 0);
  QVERIFY(!loader.isBusy());
  const auto trace = loaded.front().front().value<std::shared_ptr<const ui::LoadedTrace>>();
  QVERIFY(trace && trace->snapshot && trace->timeline);
  const TraceSnapshot& snap = *trace->snapshot;
  QVERIFY(snap.store && snap.torchByName && snap.torchByInputShape && snap.explanation);
  QCOMPARE(trace->path, kTrace);
  QCOMPARE(snap.torchByName->groupBy, GroupBy::Name);
  QCOMPARE(snap.torchByInputShape->groupBy, GroupBy::InputShape);
  QCOMPARE(snap.correctedByName->attribution, Attribution::Corrected);
  QCOMPARE(snap.torchByName->rows.size(), byName_->rows.size());
  QCOMPARE(snap.store->events().size(), store_->events().size());
}

void TestKeyAveragesModel::loaderReportsMissingFile() {
  ui::TraceLoader loader;
  QSignalSpy loaded(&loader, &ui::TraceLoader::loaded);
  QSignalSpy failed(&loader, &ui::TraceLoader::failed);
  const QString missing = QStringLiteral("/nonexistent/attnscope/no_such_trace.json");
  loader.load(missing);
  QVERIFY(failed.wait(30000));
  QCOMPARE(loaded.count(), 0);
  QVERIFY2(failed.front().front().toString().contains(missing), qPrintable(failed.front().front().toString()));
}

void TestKeyAveragesModel::windowKeepsTraceAfterFailedLoad() {
  ui::MainWindow w;
  QSignalSpy shown(&w, &ui::MainWindow::traceShown);
  QSignalSpy failed(&w, &ui::MainWindow::loadFailed);
  w.openTrace(kTrace);
  QVERIFY(shown.wait(30000));
  const auto before = w.trace();
  QVERIFY(before);
  const int rows = w.tablePane()->view()->model()->rowCount();
  QCOMPARE(rows, static_cast<int>(byName_->rows.size()));
  // Default sort: Self CUDA descending, like torch's table.
  QCOMPARE(nameAt(*w.tablePane()->view()->model(), 0), QStringLiteral("MULTIHEAD_ATTENTION_FULL"));

  const QString missing = QStringLiteral("/nonexistent/attnscope/missing.json");
  w.openTrace(missing);
  QVERIFY(failed.wait(30000));
  QCOMPARE(w.trace().get(), before.get());
  QCOMPARE(w.tablePane()->view()->model()->rowCount(), rows);
  auto* error = w.findChild<QLabel*>(QStringLiteral("errorText"));
  QVERIFY(error);
  QVERIFY(!error->isHidden());
  QVERIFY2(error->text().contains(missing), qPrintable(error->text()));

  // Group by and filter through the window.
  w.tablePane()->setGroupBy(GroupBy::InputShape);
  QCOMPARE(w.tablePane()->view()->model()->rowCount(), static_cast<int>(byShape_->rows.size()));
  QVERIFY(!w.tablePane()->view()->isColumnHidden(col(Column::InputShapes)));
  w.tablePane()->setNameFilter(QStringLiteral("^aten::"), true);
  for (int r = 0; r < w.tablePane()->view()->model()->rowCount(); ++r) {
    QVERIFY(nameAt(*w.tablePane()->view()->model(), r).startsWith(QStringLiteral("aten::")));
  }
  w.tablePane()->setGroupBy(GroupBy::Name);
  QVERIFY(w.tablePane()->view()->isColumnHidden(col(Column::InputShapes)));
}

// The capture compiled into the binary is the same file as the shared one.
void TestKeyAveragesModel::bundledSampleIsTheSharedCapture() {
  const QByteArray bundled = ui::bundledSampleJson();
  QVERIFY2(!bundled.isEmpty(), "resource :/traces/softmax_8x16x1024x64.json missing");
  QFile f(kTrace);
  QVERIFY(f.open(QIODevice::ReadOnly));
  QCOMPARE(bundled, f.readAll());
  QVERIFY(ui::bundledSampleNote().startsWith(QStringLiteral("Bundled sample: a real torch.profiler capture")));

  ui::MainWindow w;
  QSignalSpy shown(&w, &ui::MainWindow::traceShown);
  w.openBundledSample();
  QVERIFY(shown.wait(30000));
  QVERIFY(w.trace()->bundled);
  QCOMPARE(w.tablePane()->view()->model()->rowCount(), static_cast<int>(byName_->rows.size()));
  auto* note = w.findChild<QLabel*>(QStringLiteral("sampleNote"));
  QVERIFY(note && !note->isHidden());
  QVERIFY(note->text().contains(QStringLiteral("NVIDIA H200")));
}

QTEST_MAIN(TestKeyAveragesModel)
#include "test_key_averages_model.moc"
