// Each fix of the table (core/explain/fixes.h) with a trace where its conditions hold (it is offered)
// and one where they do not (it is not), the traces built by tests/common/kineto_gen.h; every fix of
// the table has its pair here and its row in docs/explain-schema.md. And the words that follow the
// evidence: the headline names the largest piece of it, set-up names each first-use call with its
// time, a CPU-only DDP rank names the rank it waited for and the `ranks` command.
#include <QFile>
#include <QtTest>

#include <functional>

#include "core/explain/explanation.h"
#include "core/explain/fixes.h"
#include "core/read/trace_reader.h"
#include "core/snapshot/trace_snapshot.h"
#include "kineto_gen.h"

using namespace attnscope;
using kgen::Builder;

namespace {

std::shared_ptr<const TraceSnapshot> snapshotOf(const std::string& json) {
  LoadResult lr = parseTrace(json, "built");
  if (!lr.ok()) return nullptr;
  return buildSnapshot(std::make_shared<const EventStore>(std::move(*lr.store)));
}

using Body = std::function<void(Builder&, int step)>;

// Each step opens with 0.2 ms of elementwise kernels on a device trace (the trace has a device; no
// fix's condition depends on them).
std::shared_ptr<const TraceSnapshot> build(int steps, const Body& body, bool cpu = false) {
  Builder b;
  if (cpu) b.setCpuOnly();
  for (int s = 0; s < steps; ++s) {
    b.beginStep();
    if (!cpu) b.compute(200'000, 2);
    body(b, s);
    b.endStep();
  }
  return snapshotOf(b.json());
}

// The causes (ranked and minor) offering this fix.
std::vector<Cause> offering(const Diagnosis& d, const std::string& code) {
  std::vector<Cause> out;
  for (const auto* list : {&d.causes, &d.minor})
    for (const DiagnosedCause& c : *list)
      for (const Fix& f : c.fixes)
        if (f.code == code) out.push_back(c.code);
  return out;
}

// Launch-bound dispatch inside a compiled region (torch.compile's "Torch-Compiled Region").
void compiledLaunches(Builder& b, int64_t L) {
  const int64_t start = b.now;
  b.launchBound(L);
  b.x("user_annotation", "Torch-Compiled Region: 0/0", start, b.now - start, Builder::kPid, Builder::kMain);
}

struct Case {
  const char* code;
  Cause cause;
  Body positive, negative;
  bool cpu = false;
  int steps = 3;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> k = {
      {"tensor_cores", Cause::GpuCompute, [](Builder& b, int) { b.compute(2'000'000, 0); },
       [](Builder& b, int) { b.compute(2'000'000, 1); }},
      {"fuse_small_kernels", Cause::GpuCompute,
       [](Builder& b, int) {
         b.launchBound(8000 * 90);
         b.compute(150'000, 2);
       },
       [](Builder& b, int) {
         b.launchBound(8000 * 20);
         b.compute(150'000, 2);
       }},
      {"ddp_buckets", Cause::Communication,
       [](Builder& b, int) {
         b.ddpMarker();
         b.comm(2'000'000, 0, 1, false);
       },
       [](Builder& b, int) { b.comm(2'000'000, 0, 1, false); }},
      {"fsdp_prefetch", Cause::Communication,
       [](Builder& b, int) {
         b.marker("FullyShardedDataParallel.forward");
         b.comm(2'000'000, 0, 1, false);
       },
       [](Builder& b, int) { b.comm(2'000'000, 0, 1, false); }},
      {"all_to_all", Cause::Communication, [](Builder& b, int) { b.comm(2'000'000, 1, 1, false); },
       [](Builder& b, int) {
         b.ddpMarker();
         b.comm(2'000'000, 0, 1, false);
       }},
      {"late_rank", Cause::Communication, [](Builder& b, int) { b.comm(2'000'000, 0, 1, true); },
       [](Builder& b, int) { b.comm(2'000'000, 0, 1, false); }},
      {"coalesce_collectives", Cause::Communication, [](Builder& b, int) { b.comm(1'000'000, 0, 25, false); },
       [](Builder& b, int) { b.comm(1'000'000, 0, 1, false); }},
      {"pin_memory", Cause::BlockingCopy, [](Builder& b, int) { b.copyH2D(2'000'000, false); },
       [](Builder& b, int) { b.copyH2D(2'000'000, true); }},
      {"read_back_less", Cause::BlockingCopy, [](Builder& b, int) { b.readBack(2'000'000); },
       [](Builder& b, int) { b.copyH2D(2'000'000, true); }},
      {"remove_sync", Cause::ExplicitSync, [](Builder& b, int) { b.userSync(2'000'000); },
       [](Builder& b, int s) {
         // Only once, in the first of three steps: not the loop's.
         if (s == 0) b.userSync(2'000'000);
         b.hostOps(200'000);
       }},
      {"empty_cache_untraced", Cause::Allocator, [](Builder& b, int) { b.alloc(3'000'000, 2); },
       [](Builder& b, int) { b.alloc(3'000'000, 1); }},
      {"empty_cache", Cause::Allocator, [](Builder& b, int) { b.alloc(3'000'000, 0); },
       [](Builder& b, int) { b.alloc(3'000'000, 1); }},
      {"allocator_cache", Cause::Allocator, [](Builder& b, int) { b.alloc(3'000'000, 1); },
       [](Builder& b, int) { b.alloc(3'000'000, 2); }},
      {"loader_workers", Cause::DataLoader, [](Builder& b, int) { b.loader(2'000'000, false); },
       [](Builder& b, int) { b.loader(2'000'000, true); }},
      {"loader_faster", Cause::DataLoader, [](Builder& b, int) { b.loader(2'000'000, true); },
       [](Builder& b, int) { b.loader(2'000'000, false); }},
      {"launch_blocking", Cause::LaunchBound, [](Builder& b, int) { b.launchBound(8000 * 50, true); },
       [](Builder& b, int) { b.launchBound(8000 * 50); }},
      {"fewer_launches", Cause::LaunchBound,
       [](Builder& b, int) {
         // One small compiled function in an eager model is not a compiled model.
         b.marker("Torch-Compiled Region: 0/0");
         b.launchBound(8000 * 200);
       },
       [](Builder& b, int) { compiledLaunches(b, 8000 * 200); }},
      {"graphs_when_compiled", Cause::LaunchBound, [](Builder& b, int) { compiledLaunches(b, 8000 * 200); },
       [](Builder& b, int) {
         b.marker("Torch-Compiled Region: 0/0");
         b.launchBound(8000 * 200);
       }},
      {"move_host_work", Cause::HostCompute, [](Builder& b, int) { b.hostGap(2'000'000); },
       [](Builder& b, int) { b.hostOps(2'000'000); }},
      {"host_ops", Cause::HostCompute, [](Builder& b, int) { b.hostOps(2'000'000); },
       [](Builder& b, int) { b.hostGap(2'000'000); }},
      {"capture_once", Cause::GraphCapture, [](Builder& b, int) { b.capture(1'000'000); },
       [](Builder& b, int s) {
         if (s == 0) b.capture(1'000'000);
         b.compute(1'000'000, 1);
       }},
      {"warm_up", Cause::OneTimeSetup,
       [](Builder& b, int s) {
         if (s == 0) b.setup(5'000'000, 0);
         b.compute(1'000'000, 1);
       },
       [](Builder& b, int) {
         b.setup(2'000'000, 2);
         b.compute(1'000'000, 1);
       }},
      {"fixed_shapes", Cause::OneTimeSetup,
       [](Builder& b, int) {
         b.setup(2'000'000, 2);
         b.compute(1'000'000, 1);
       },
       [](Builder& b, int s) {
         if (s == 0) b.setup(2'000'000, 2);
         b.compute(1'000'000, 1);
       }},
      {"recompiles", Cause::OneTimeSetup,
       [](Builder& b, int) {
         b.setup(2'000'000, 3);
         b.compute(1'000'000, 1);
       },
       [](Builder& b, int s) {
         if (s == 0) b.setup(2'000'000, 3);
         b.compute(1'000'000, 1);
       }},
      {"cpu_loader_workers", Cause::CpuOnly, [](Builder& b, int) { b.loader(2'000'000, false); },
       [](Builder& b, int) { b.loader(2'000'000, true); }, true},
      {"cpu_loader_faster", Cause::CpuOnly, [](Builder& b, int) { b.loader(2'000'000, true); },
       [](Builder& b, int) { b.loader(2'000'000, false); }, true},
      {"cpu_ranks", Cause::CpuOnly, [](Builder& b, int) { b.glooWait(2'000'000); },
       [](Builder& b, int) { b.hostOps(2'000'000); }, true},
      {"cpu_python", Cause::CpuOnly, [](Builder& b, int) { b.hostGap(2'000'000); },
       [](Builder& b, int) { b.hostOps(2'000'000); }, true},
      {"cpu_ops", Cause::CpuOnly, [](Builder& b, int) { b.hostOps(2'000'000); },
       [](Builder& b, int) { b.hostGap(2'000'000); }, true},
  };
  return k;
}

}  // namespace

class DiagnosisFixesTest : public QObject {
  Q_OBJECT

 private slots:
  // Every fix of the table has its pair of traces here (read_back_less twice: copies and synchronizes;
  // counter_profiling by itself below) and its row in the docs.
  void everyFixIsTestedAndDocumented() {
    QFile doc(QStringLiteral(ATTNSCOPE_SOURCE_DIR "/docs/explain-schema.md"));
    QVERIFY(doc.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(doc.readAll());
    for (const FixRule& r : fixTable()) {
      const std::string code(r.code);
      bool tested = code == "counter_profiling";
      for (const Case& c : cases()) tested |= c.code == code;
      QVERIFY2(tested, r.code.data());
      QVERIFY2(text.contains(QStringLiteral("| `%1` |").arg(QString::fromStdString(code))), r.code.data());
    }
  }

  void positiveAndNegative_data() {
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < cases().size(); ++i) QTest::newRow(cases()[i].code) << static_cast<int>(i);
  }

  void positiveAndNegative() {
    QFETCH(int, index);
    const Case& c = cases()[static_cast<size_t>(index)];
    const auto yes = build(c.steps, c.positive, c.cpu);
    const auto no = build(c.steps, c.negative, c.cpu);
    QVERIFY(yes && no);
    const std::vector<Cause> got = offering(yes->explanation->diagnosis, c.code);
    QVERIFY2(got.size() == 1 && got.front() == c.cause,
             qPrintable(QString::fromStdString(yes->explanation->diagnosis.headline)));
    QVERIFY2(offering(no->explanation->diagnosis, c.code).empty(),
             qPrintable(QString::fromStdString(no->explanation->diagnosis.headline)));
  }

  // Synchronizes inside a read-back op: read_back_less on explicit_sync, not remove_sync; a bare
  // torch.cuda.synchronize(): the other way round; a copy op moving an input to the device: neither.

  void readBackSynchronizes() {
    const auto yes = build(3, [](Builder& b, int) { b.readBackSync(2'000'000); });
    const auto no = build(3, [](Builder& b, int) { b.userSync(2'000'000); });
    QVERIFY(yes && no);
    // (Its 100 ns of copy call with the device idle are a small read behind queued work too.)
    const std::vector<Cause> got = offering(yes->explanation->diagnosis, "read_back_less");
    QVERIFY(std::find(got.begin(), got.end(), Cause::ExplicitSync) != got.end());
    QVERIFY(offering(yes->explanation->diagnosis, "remove_sync").empty());
    QVERIFY(offering(no->explanation->diagnosis, "read_back_less").empty());
    QCOMPARE(offering(no->explanation->diagnosis, "remove_sync"), std::vector<Cause>{Cause::ExplicitSync});
    // A copy op that synchronizes after moving an input to the device reads nothing back: neither fix.
    const auto toDevice = build(3, [](Builder& b, int) { b.readBackSync(2'000'000, false); });
    QVERIFY(toDevice);
    QVERIFY(offering(toDevice->explanation->diagnosis, "read_back_less").empty());
    QVERIFY(offering(toDevice->explanation->diagnosis, "remove_sync").empty());
  }

  // A counter-profiling trace is said to be one, its one fix is to profile without counters, and no
  // other fix is offered (its times are replay); the same trace without the range events is a
  // plain one.
  void counterProfiling() {
    Builder b;
    for (int s = 0; s < 3; ++s) {
      b.beginStep();
      b.launchBound(8000 * 50);
      b.endStep();
    }
    const std::string plain = b.json();
    b.profilerRanges(77, 1'000'000'000, b.now);
    const auto yes = snapshotOf(b.json());
    const auto no = snapshotOf(plain);
    QVERIFY(yes && no);
    const Diagnosis& d = yes->explanation->diagnosis;
    QCOMPARE(QString::fromStdString(d.traceKind), QStringLiteral("counter_profiling"));
    QVERIFY2(d.headline.rfind("A counter-profiling trace (CUPTI's range profiler, 77 kernel ranges)", 0) == 0,
             d.headline.c_str());
    int fixes = 0;
    for (const auto* list : {&d.causes, &d.minor})
      for (const DiagnosedCause& c : *list) fixes += static_cast<int>(c.fixes.size());
    QCOMPARE(fixes, 1);
    QCOMPARE(QString::fromStdString(d.causes.front().fixes.front().code), QStringLiteral("counter_profiling"));
    QCOMPARE(offering(no->explanation->diagnosis, "counter_profiling").size(), size_t{0});
    QVERIFY(no->explanation->diagnosis.traceKind.empty());
  }

  // A CPU-only DDP rank (gloo) that waits in the all-reduce for the other rank: communication leads
  // its steps' thread, the headline names the rank waited for and points to `ranks` on the job's
  // folder (a trace `record --nproc` wrote: an attnscope_record object, distributedInfo).
  void cpuDdpWaitNamesTheRank() {
    Builder b;
    b.setCpuOnly();
    b.extraKeys =
        "\"distributedInfo\":{\"backend\":\"gloo\",\"rank\":0,\"world_size\":2},"
        "\"attnscope_record\":{\"version\":1,\"rank\":0,\"world_size\":2},";
    for (int s = 0; s < 4; ++s) {
      b.beginStep();
      b.hostOps(1'000'000, "aten::addmm");
      b.glooWait(16'000'000);
      b.hostGap(500'000);
      b.endStep();
    }
    LoadResult lr = parseTrace(b.json(), "/tmp/job/rank-0.json");
    QVERIFY(lr.ok());
    auto store = std::make_shared<EventStore>(std::move(*lr.store));
    const auto snap = buildSnapshot(store);
    const Diagnosis& d = snap->explanation->diagnosis;
    QCOMPARE(d.causes.front().code, Cause::CpuOnly);
    const std::string& h = d.headline;
    QVERIFY2(h.find("communication 9") != std::string::npos, h.c_str());  // 16 of 17.5 ms: 91%
    QVERIFY2(h.find("waiting 63.998 ms for gloo:all_reduce") != std::string::npos, h.c_str());
    QVERIFY2(h.find("rank 0 waited for rank 1 in gloo:all_reduce") != std::string::npos, h.c_str());
    QVERIFY2(h.find("attnscope-cli ranks /tmp/job") != std::string::npos, h.c_str());
    QVERIFY2(h.find("aten::addmm") != std::string::npos, h.c_str());  // the hot op named
  }

  // Set-up is what the trace records as first use, each piece named with its time; the headline of
  // every other cause names its largest piece of evidence with its count, time and share.
  void setUpNamesItsCalls() {
    const auto snap = build(3, [](Builder& b, int s) {
      if (s == 0) b.setup(30'000'000, 0);
      if (s == 0) b.setup(4'000'000, 1);
      b.compute(1'000'000, 1);
    });
    const Diagnosis& d = snap->explanation->diagnosis;
    QCOMPARE(d.causes.front().code, Cause::OneTimeSetup);
    QVERIFY2(d.headline.find("cudaFree 30.000 ms (a first huge allocator call") != std::string::npos,
             d.headline.c_str());
    // (The launch call lasts 4 ms less 300 ns: "4.000 ms".)
    QVERIFY2(d.headline.find("cudaLaunchKernel 4.000 ms (lazy module and kernel loading") != std::string::npos,
             d.headline.c_str());
  }

  void headlineNamesTheLargestEvidence() {
    const auto snap = build(3, [](Builder& b, int) {
      b.alloc(9'000'000, 1);
      b.compute(1'000'000, 1);
    });
    const Diagnosis& d = snap->explanation->diagnosis;
    QCOMPARE(d.causes.front().code, Cause::Allocator);
    // 12 calls a step (ceil(8.999 ms / 0.8 ms)), 3 steps: 36 cudaFree calls inside the op.
    const EvidenceItem& top = d.causes.front().items.front();
    QCOMPARE(QString::fromStdString(top.name), QStringLiteral("cudaFree"));
    QCOMPARE(top.count, uint64_t{36});
    QCOMPARE(top.ns, int64_t{3 * (9'000'000 - 1000)});
    QCOMPARE(top.inside.front().first, std::string("aten::miopen_convolution"));
    QVERIFY2(d.headline.find("Largest: 36 cudaFree calls inside aten::miopen_convolution (36), 26.997 ms") !=
                 std::string::npos,
             d.headline.c_str());
  }
};

QTEST_GUILESS_MAIN(DiagnosisFixesTest)
#include "test_diagnosis_fixes.moc"
