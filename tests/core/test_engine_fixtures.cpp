// The engine's real H200 captures (tests/data/h200/, made with the device
// tool): CI checks what they prove without a GPU.
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "core/explain/explanation.h"
#include "core/read/trace_reader.h"
#include "core/run/engine_run.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/tables/key_averages.h"

using namespace attnscope;

// Declares `const EventStore& var` loaded from tests/data/h200/NAME, or fails the test.
#define LOAD(var, name)                                                     \
  QString var##Error;                                                       \
  const std::optional<EventStore> var##Loaded = tryLoad(name, &var##Error); \
  QVERIFY2(var##Loaded, qPrintable(var##Error));                            \
  const EventStore& var = *var##Loaded

namespace {

QString dataDir() { return QStringLiteral(ATTNSCOPE_TEST_DATA "/h200"); }

// The fixture tests/data/h200/NAME, or nullopt with *error saying why.
std::optional<EventStore> tryLoad(const QString& name, QString* error) {
  LoadResult r = loadTrace((dataDir() + "/" + name).toStdString());
  if (!r.ok()) {
    *error = name + ": " + QString::fromStdString(r.error ? r.error->what() : "cannot load");
    return std::nullopt;
  }
  return std::move(*r.store);
}

uint64_t count(const EventStore& s, std::string_view name) {
  uint64_t n = 0;
  for (const auto& e : s.events()) n += s.name(e) == name;
  return n;
}

}  // namespace

class EngineFixturesTest : public QObject {
  Q_OBJECT
 private slots:
  void everyCaptureIsComplete_data() {
    QTest::addColumn<QString>("file");
    const auto files = QDir(dataDir()).entryList({"*.json", "*.json.gz"}, QDir::Files, QDir::Name);
    int n = 0;
    for (const auto& f : files)
      if (!f.contains(".torch.")) {
        QTest::newRow(qPrintable(f)) << f;
        ++n;
      }
    QVERIFY2(n >= 14, "expected the engine's H200 captures in tests/data/h200");
  }
  void everyCaptureIsComplete() {
    QFETCH(QString, file);
    LOAD(s, file);
    const auto m = readEngineRun(s);
    QVERIFY(m.has_value());
    QCOMPARE(m->collection.cupti, std::string("ok"));
    QCOMPARE(m->collection.droppedRecords, uint64_t{0});
    QVERIFY(m->collection.assembled.markers == m->collection.nvtxRangesPushed);  // NVTX came back through CUPTI
    QVERIFY(m->config.has_value());
    QCOMPARE(m->windows().size(), size_t(4 * m->config->iters));  // four steps per iteration
    // Every kernel and copy links to its launch (correlation) and its op (External id).
    uint64_t gpu = 0, linked = 0;
    for (const Event& e : s.events()) {
      if (e.family != Family::Kernel && e.family != Family::GpuMemcpy) continue;
      ++gpu;
      bool launch = false, op = false;
      for (EventId id : s.byCorrelation(e.correlation)) launch |= s.event(id).family == Family::CudaRuntime;
      for (EventId id : s.byExternalId(e.externalId)) op |= s.event(id).family == Family::CpuOp;
      linked += launch && op;
    }
    QVERIFY(gpu >= 4);  // 2 GEMMs, scale, softmax (+ sqrt and the H2D copy with a device tensor)
    QCOMPARE(linked, gpu);
  }

  // A capture made after issue 17 (3 iterations, the collector started before
  // the warm-up): the warm-up's records were left out, no profiler overhead
  // record falls inside a step (before, a 2-3 ms Activity Buffer Request sat
  // in the first one), each iteration is marked ProfilerStep#N around its four
  // steps, and explain sets the steps' host time under the collector next to
  // the host pass's.
  void collectorLeavesNoArtefactInTheSteps() {
    LOAD(s, "softmax_none_iters3_1x8x64x64.json");
    const auto m = readEngineRun(s);
    QVERIFY(m && m->config);
    QCOMPARE(m->config->iters, 3);
    const QJsonObject c =
        QJsonDocument::fromJson(QByteArray::fromStdString(s.meta().attnscopeJson)).object()["collection"].toObject();
    QVERIFY(c["warmup_records_left_out"].toInt() > 0);
    QCOMPARE(c["buffers_added"].toInt(), 0);
    QCOMPARE(c["records_without_timestamps"].toInt(), 0);
    QVERIFY(c["errors"].toArray().isEmpty());
    QCOMPARE(c["clock"].toObject()["source"].toString(), QString("tsc"));
    std::vector<Event> marks;
    for (const Event& e : s.events()) {
      if (e.family == Family::UserAnnotation && s.name(e).starts_with("ProfilerStep#")) marks.push_back(e);
      if (e.family != Family::Overhead) continue;
      for (const EngineStep& st : m->windows())
        QVERIFY2(e.end() <= st.hostStartNs || e.start >= st.hostEndNs,
                 qPrintable(QString("%1 inside %2")
                                .arg(QString::fromStdString(std::string(s.name(e))), QString::fromStdString(st.name))));
    }
    QCOMPARE(marks.size(), size_t{3});
    const std::vector<EngineStep> windows = m->windows();
    for (size_t k = 0; k < windows.size(); ++k) {
      const Event& mark = marks[k / 4];
      QVERIFY(mark.start <= windows[k].hostStartNs && windows[k].hostEndNs <= mark.end());
    }
    const Explanation an = *snapshotOf(s)->explanation;
    QCOMPARE(an.inflation.size(), size_t{4});
    for (const ProfilerInflation& p : an.inflation) {
      QCOMPARE(p.collector.n, 3);
      QCOMPARE(p.noProfiler.n, 3);
      QCOMPARE(p.torch.n, 0);  // no torch pass in this run
    }
  }

  // record_function adds no synchronization: the same syncs whatever is wrapped.
  void wrappingAddsNoSync_data() {
    QTest::addColumn<QString>("sync");
    QTest::addColumn<int>("deviceSyncs");
    QTest::newRow("no sync") << "none" << 2;  // the engine's own: end of pass, CUPTI flush
    QTest::newRow("sync after block") << "end" << 3;
  }
  void wrappingAddsNoSync() {
    QFETCH(QString, sync);
    QFETCH(int, deviceSyncs);
    for (const char* wrap : {"none", "softmax", "qk+softmax", "all", "full"}) {
      LOAD(s, QString("%1_%2_8x16x1024x64.json").arg(wrap, sync));
      QCOMPARE(count(s, "cudaStreamSynchronize"), uint64_t{1});
      QCOMPARE(count(s, "cudaDeviceSynchronize"), uint64_t(deviceSyncs));
    }
  }

  // SCALE's host time (no sync) is mostly the QK GEMM finishing: the hidden
  // stream sync of torch.tensor(d, device=cuda). With a host scalar it is gone.
  void scaleHostTimeIsThePreviousStepsGpuTime() {
    LOAD(devStore, "softmax_none_8x16x1024x64.json");
    LOAD(hostStore, "softmax_none_hostscalar_8x16x1024x64.json");
    const auto dev = readEngineRun(devStore);
    const auto host = readEngineRun(hostStore);
    QVERIFY(dev && host);
    const int64_t scaleHost = dev->timingOf("host")->steps[0][1];
    const int64_t qkGpu = dev->timingOf("cupti")->steps[0][0];
    const int64_t qkHost = dev->timingOf("host")->steps[0][0];
    QVERIFY2(qkHost < qkGpu / 4, "QK MATMUL's host time is launch cost");
    QVERIFY2(scaleHost > qkGpu / 2, "SCALE's host time is the QK GEMM's GPU time");
    QVERIFY2(host->timingOf("host")->steps[0][1] < scaleHost / 5, "no hidden sync with a host scalar");
    const Explanation an = *snapshotOf(devStore)->explanation;
    QCOMPARE(an.stepSource, std::string("engine"));
    QCOMPARE(an.steps.size(), size_t{4});
    QCOMPARE(an.steps[1].name, std::string("SCALE"));
    QCOMPARE(an.steps[1].syncWaits.size(), size_t{1});
    const SyncWait& w = an.syncWaits[static_cast<size_t>(an.steps[1].syncWaits[0])];
    QCOMPARE(w.api, std::string("cudaStreamSynchronize"));
    QVERIFY(!w.awaited.empty());
    QVERIFY(w.opChain.size() >= 4);  // aten::to > aten::_to_copy > aten::copy_ > cudaMemcpyAsync > sync
    QVERIFY(an.steps[1].eventNs.has_value());
  }

  // Torch's own profiler, run by the engine on the same configuration in its
  // own process, shows the artifacts of the shared captures.
  void torchPassReproducesTorchsTable() {
    LOAD(s, "softmax_none_torch_8x16x1024x64.torch.json");
    const KeyAverages ka = computeKeyAverages(s, GroupBy::Name);
    int softmaxRows = 0;
    int64_t abrDevice = -1;
    for (const auto& r : ka.rows) {
      if (r.name == "SOFTMAX PASS") ++softmaxRows;
      if (r.name == "Activity Buffer Request") abrDevice = r.selfDeviceNs;
    }
    QCOMPARE(softmaxRows, 2);  // user_annotation and gpu_user_annotation
    QVERIFY(abrDevice > 0);    // the profiler's own event owns the first GEMM
  }
};

QTEST_GUILESS_MAIN(EngineFixturesTest)
#include "test_engine_fixtures.moc"
