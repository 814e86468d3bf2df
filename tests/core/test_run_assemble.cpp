// The engine's correlation logic on synthetic CUPTI-like records: no GPU needed.
#include <QtTest>

#include "core/run/run_capture.h"
#include "core/tables/key_averages.h"

using namespace attnscope;

namespace {

// aten::bmm (external id 11) launches a GEMM (correlation 990) inside a
// user scope "QK MATMUL" (external id 10); a cudaStreamSynchronize runs
// with no op (correlation 991); one kernel arrives with no launch record.
RunCapture capture() {
  RunCapture c;
  c.pid = 100;
  c.ops.push_back({"QK MATMUL", 1000, 9000, 100, 10, true, "", "", -1});
  c.ops.push_back(
      {"aten::bmm", 2000, 8000, 100, 11, false, "[[128, 1024, 64], [128, 64, 1024]]", "['float', 'float']", 3});
  ActivityRecord launch;
  launch.kind = ActivityKind::Runtime;
  launch.name = "cudaLaunchKernel";
  launch.startNs = 3000;
  launch.endNs = 4000;
  launch.correlation = 990;
  launch.tid = 100;
  ActivityRecord gemm;
  gemm.kind = ActivityKind::Kernel;
  gemm.name = "gemm";
  gemm.startNs = 5000;
  gemm.endNs = 15000;
  gemm.correlation = 990;
  gemm.device = 0;
  gemm.stream = 7;
  ActivityRecord sync = launch;
  sync.name = "cudaStreamSynchronize";
  sync.startNs = 9500;
  sync.endNs = 15100;
  sync.correlation = 991;
  ActivityRecord orphan = gemm;
  orphan.name = "orphan";
  orphan.startNs = 20000;
  orphan.endNs = 21000;
  orphan.correlation = 5;
  ActivityRecord marker;
  marker.kind = ActivityKind::Marker;
  marker.name = "QK MATMUL";
  marker.startNs = 1000;
  marker.endNs = 9000;
  marker.tid = 100;
  c.activities = {launch, gemm, sync, orphan, marker};
  c.externalCorrelations = {{990, 11}};
  c.memory.push_back({2500, 4096, 1, 0, 4096, 2 << 20, 100});
  return c;
}

}  // namespace

class RunAssembleTest : public QObject {
  Q_OBJECT
 private slots:
  void correlatesLaunchesKernelsAndOps() {
    AssembleStats st;
    const EventStore s = assembleRunStore(capture(), &st);
    QCOMPARE(st.gpuActivities, uint64_t{2});
    QCOMPARE(st.gpuLinkedToLaunch, uint64_t{1});
    QCOMPARE(st.gpuLinkedToOp, uint64_t{1});
    QCOMPARE(st.gpuUnlinked, uint64_t{1});
    QCOMPARE(st.runtimeCalls, uint64_t{2});
    QCOMPARE(st.runtimeWithoutOp, uint64_t{1});
    QCOMPARE(st.markers, uint64_t{1});
    // The kernel carries the op's External id, and is linked to its launch.
    const auto withExt = s.byExternalId(11);
    QCOMPARE(withExt.size(), size_t{3});  // the op, its launch, its kernel
    QCOMPARE(s.links().size(), size_t{1});
    QCOMPARE(s.name(s.event(s.links()[0].from)), std::string_view("cudaLaunchKernel"));
    QCOMPARE(s.name(s.event(s.links()[0].to)), std::string_view("gemm"));
    // The launch nests in bmm, which nests in the scope.
    for (const Event& e : s.events())
      if (s.name(e) == "cudaLaunchKernel") QCOMPARE(s.name(s.event(e.parent)), std::string_view("aten::bmm"));
  }

  // The engine pushes External ids for outermost ops only: CUPTI names
  // aten::matmul (20) for a launch made inside aten::bmm (11); the launch
  // and its kernel belong to bmm, the innermost op on the launching thread.
  // A call on a thread with no op keeps CUPTI's id.
  void innermostOpOnTheThreadOwnsTheCall() {
    RunCapture c = capture();
    c.ops.push_back({"aten::matmul", 1500, 8500, 100, 20, false, "", "", 2});
    c.externalCorrelations = {{990, 20}, {992, 20}};
    ActivityRecord other = c.activities[0];
    other.name = "cudaMemsetAsync";
    other.correlation = 992;
    other.tid = 555;  // no op ran on this thread
    c.activities.push_back(other);
    const EventStore s = assembleRunStore(c, nullptr);
    QCOMPARE(s.byExternalId(11).size(), size_t{3});  // bmm, its launch, its kernel
    for (const Event& e : s.events()) {
      if (s.name(e) == "gemm" || s.name(e) == "cudaLaunchKernel") QCOMPARE(e.externalId, int64_t{11});
      if (s.name(e) == "cudaMemsetAsync") QCOMPARE(e.externalId, int64_t{20});
      if (s.name(e) == "cudaStreamSynchronize") QCOMPARE(e.externalId, kNoId);  // after every op ended
    }
    const KeyAverages ka = computeKeyAverages(s, GroupBy::Name);
    for (const auto& r : ka.rows) {
      if (r.name == "aten::bmm") QCOMPARE(r.selfDeviceNs, int64_t{10000});
      if (r.name == "aten::matmul") QCOMPARE(r.selfDeviceNs, int64_t{0});
    }
  }

  // By default the engine pushes no op ids, only one id per call of the
  // block (CUPTI kind CUSTOM1): those are counted, and never taken for an
  // op's External id, even for a call no op contains.
  void callIdsAreCountedNotTakenForOps() {
    RunCapture c = capture();
    using K = ExternalCorrelationRecord::Kind;
    c.externalCorrelations = {{990, 1, K::Call}, {991, 1, K::Call}};
    AssembleStats st;
    const EventStore s = assembleRunStore(c, &st);
    QCOMPARE(st.apiCallsWithCallId, uint64_t{2});    // the launch and the sync
    QCOMPARE(s.byExternalId(11).size(), size_t{3});  // bmm, its launch (by containment), its kernel
    QVERIFY(s.byExternalId(1).empty());
    for (const Event& e : s.events())
      if (s.name(e) == "cudaStreamSynchronize") QCOMPARE(e.externalId, kNoId);  // no op contains it
  }

  void torchTableSeesTheRunLikeAKinetoTrace() {
    const EventStore s = assembleRunStore(capture(), nullptr);
    const KeyAverages ka = computeKeyAverages(s, GroupBy::Name);
    const KeyAverageRow* bmm = nullptr;
    const KeyAverageRow* scope = nullptr;
    for (const auto& r : ka.rows) {
      if (r.name == "aten::bmm") bmm = &r;
      if (r.name == "QK MATMUL" && r.deviceType == DeviceType::Cpu) scope = &r;
    }
    QVERIFY(bmm && scope);
    QCOMPARE(bmm->selfDeviceNs, int64_t{10000});  // the GEMM it launched
    QCOMPARE(scope->selfDeviceNs, int64_t{0});    // a scope launches nothing itself
    QCOMPARE(scope->deviceTotalNs, int64_t{10000});
    QCOMPARE(bmm->deviceMemBytes, int64_t{4096});
  }
};

QTEST_GUILESS_MAIN(RunAssembleTest)
#include "test_run_assemble.moc"
