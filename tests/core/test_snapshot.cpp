// The snapshot a loaded trace gets: built once, it holds every table, the
// explanation, the activity index and the engine metadata, and building it
// does each of those exactly once. Snapshots of one store built on several
// threads at once agree (the tsan preset runs this test).
#include <QDir>
#include <QtTest>
#include <thread>

#include "core/explain/explanation.h"
#include "core/read/trace_reader.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/store/work_counters.h"
#include "core/tables/table_format.h"

using namespace attnscope;

namespace {

struct Counts {
  uint64_t metadata, tables, explanations, indexes;
  static Counts now() {
    const WorkCounters& c = workCounters();
    return {c.engineMetadataParses.load(), c.keyAverageTables.load(), c.explanations.load(), c.activityIndexes.load()};
  }
  Counts operator-(const Counts& o) const {
    return {metadata - o.metadata, tables - o.tables, explanations - o.explanations, indexes - o.indexes};
  }
};

std::shared_ptr<const EventStore> load(const QString& path, QString* error) {
  LoadResult r = loadTrace(path.toStdString());
  if (!r.ok()) {
    *error = path + ": " + QString::fromStdString(r.error ? r.error->what() : "cannot load");
    return nullptr;
  }
  return std::make_shared<const EventStore>(std::move(*r.store));
}

QString tableText(const KeyAverages& ka) { return QString::fromStdString(renderTable(ka, {})); }

}  // namespace

class SnapshotTest : public QObject {
  Q_OBJECT

 private slots:
  void everyPieceOnce_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("engine");
    const QDir kineto(QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto"));
    const QStringList torch = kineto.entryList({"*_8x16x1024x64.json"}, QDir::Files, QDir::Name);
    QVERIFY2(torch.size() >= 4, qPrintable("expected the kineto captures in " + kineto.path()));
    for (const QString& f : torch) QTest::newRow(qPrintable(f)) << kineto.filePath(f) << false;
    const QDir h200(QStringLiteral(ATTNSCOPE_TEST_DATA "/h200"));
    for (const char* f : {"softmax_none_8x16x1024x64.json", "all_end_8x16x1024x64.json"})
      QTest::newRow(f) << h200.filePath(f) << true;
  }

  void everyPieceOnce() {
    QFETCH(QString, path);
    QFETCH(bool, engine);
    QString error;
    const auto store = load(path, &error);
    QVERIFY2(store, qPrintable(error));
    const Counts before = Counts::now();
    const auto snap = buildSnapshot(store);
    const Counts d = Counts::now() - before;
    QCOMPARE(d.metadata, engine ? uint64_t{1} : uint64_t{0});  // a torch trace has no object to parse
    QCOMPARE(d.tables, uint64_t{4});                           // 2 attributions x 2 groupings
    QCOMPARE(d.explanations, uint64_t{1});
    QCOMPARE(d.indexes, uint64_t{1});
    QCOMPARE(snap->engine.has_value(), engine);
    QCOMPARE(snap->explanation->stepSource == "engine", engine);  // the engine's steps when it has them
    for (Attribution a : {Attribution::Torch, Attribution::Corrected})
      for (GroupBy g : {GroupBy::Name, GroupBy::InputShape}) {
        QCOMPARE(snap->table(a, g)->attribution, a);
        QCOMPARE(snap->table(a, g)->groupBy, g);
        // The same table as computing it alone.
        QCOMPARE(tableText(*snap->table(a, g)), tableText(computeKeyAverages(*store, g, a)));
      }

    // Reading the snapshot again (explain's text, the ledger, a table) computes nothing.
    const Counts mid = Counts::now();
    (void)explainText(*store, *snap->explanation);
    (void)explainJson(*store, *snap->explanation);
    const Ledger l = computeLedger(*snap);
    QCOMPARE(l.gpuUnionNs, snap->explanation->ledger.gpuUnionNs);
    const Counts none = Counts::now() - mid;
    QCOMPARE(none.tables + none.explanations + none.indexes + none.metadata, uint64_t{0});
  }

  // The engine's metadata object parsed by the one parser: what the views read.
  void engineMetadataFields() {
    QString error;
    const auto store = load(QStringLiteral(ATTNSCOPE_TEST_DATA "/h200/softmax_none_8x16x1024x64.json"), &error);
    QVERIFY2(store, qPrintable(error));
    const auto m = readEngineRun(*store);
    QVERIFY(m && m->config);
    QCOMPARE(m->stepNames(), (std::vector<std::string>{"QK MATMUL", "SCALE", "SOFTMAX PASS", "AV MATMUL"}));
    QCOMPARE(m->wrapped(), (std::vector<bool>{false, false, true, false}));
    const std::vector<EngineStep> windows = m->windows();
    QCOMPARE(windows.size(), size_t{4});
    for (size_t i = 1; i < windows.size(); ++i) QVERIFY(windows[i - 1].hostStartNs <= windows[i].hostStartNs);
    QVERIFY(!m->timing.empty());
    QCOMPARE(m->timing.front().method, std::string("cupti"));
    QVERIFY(m->timingOf("host") && !m->timingOf("no such method"));
    QCOMPARE(m->collection.cupti, std::string("ok"));
    QVERIFY(!m->device.name.empty() && !m->device.isCpu());
    // Lenient where the UI's old parser was: a number with a fraction is still a time; no steps is still metadata.
    const auto lenient = parseEngineRun(
        R"({"steps": [{"name": "QK MATMUL", "wrapped": true, "iterations": [{"iteration": 0, "host_start_ns": 1.0e3,)"
        R"( "host_end_ns": 2500}]}], "collection": {"cupti": "unavailable: no GPU"}})");
    QVERIFY(lenient);
    QCOMPARE(lenient->steps.size(), size_t{1});
    QCOMPARE(lenient->windows().at(0).hostStartNs, int64_t{1000});
    QCOMPARE(missingCollection(*lenient),
             std::string("CUPTI unavailable: no GPU; GPU kernels, copies and memsets were not collected."));
    QVERIFY(parseEngineRun(R"({"config": {"args": "--device cpu"}})"));
    QVERIFY(!parseEngineRun("[1, 2]"));
    QVERIFY(!parseEngineRun("{not json"));
  }

  // One store read by several threads at once: every snapshot is the same.
  void concurrentSnapshotsAgree() {
    QString error;
    const auto store = load(QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_sync_8x16x1024x64.json"), &error);
    QVERIFY2(store, qPrintable(error));
    const std::string want = explainJson(*store, *buildSnapshot(store)->explanation);
    std::vector<std::string> got(4);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < got.size(); ++i)
      threads.emplace_back([&, i] { got[i] = explainJson(*store, *buildSnapshot(store)->explanation); });
    for (auto& t : threads) t.join();
    for (const std::string& g : got) QVERIFY(g == want);
  }
};

QTEST_APPLESS_MAIN(SnapshotTest)
#include "test_snapshot.moc"
