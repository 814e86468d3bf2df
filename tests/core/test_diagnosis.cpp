// The diagnosis's wait-for split on real traces: every step's parts add up to its wall time exactly,
// on the 19 real traces other projects wrote (../shared/traces/ext) and on our H200 attention
// captures; the steps and each step's device-busy time equal what tests/reference/
// diagnosis_reference.py computed from the raw events (tests/data/ext/diagnosis/<file>.json); the
// causes are ranked and their totals add up to the parts; a cause's share is its time over the wall
// time. The expert headlines (../shared/traces/ext/HEADLINES.tsv) are checked by
// test_diagnosis_headlines (../shared/tools/diagnosis_check.py over the CLI's JSON).
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <random>

#include "core/explain/explanation.h"
#include "core/explain/why.h"
#include "core/read/trace_reader.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/store/intervals.h"
#include "ext_traces.h"

using namespace attnscope;

namespace {

const QString kReference = QStringLiteral(ATTNSCOPE_TEST_DATA "/ext/diagnosis");

using testutil::extTracePath;
using testutil::snapshotAt;

// The split's own invariants: parts add up to each step, causes to the parts.
void checkSplit(const Diagnosis& d, const QString& what) {
  int64_t wall = 0, partsTotal[kCauseCount] = {};
  for (const StepWaits& st : d.steps) {
    int64_t sum = 0;
    for (int c = 0; c < kCauseCount; ++c) {
      QVERIFY2(st.parts[c] >= 0, qPrintable(what));
      sum += st.parts[c];
      partsTotal[c] += st.parts[c];
    }
    QVERIFY2(sum == st.spanNs(), qPrintable(QString("%1 %2: parts add up to %3 ns, the step is %4 ns")
                                                .arg(what, QString::fromStdString(st.name))
                                                .arg(sum)
                                                .arg(st.spanNs())));
    QVERIFY2(st.deviceBusyNs <= st.spanNs(), qPrintable(what));
    wall += st.spanNs();
  }
  QCOMPARE(d.wallNs, wall);
  int64_t prev = INT64_MAX;
  std::vector<bool> seen(kCauseCount, false);
  for (const auto* list : {&d.causes, &d.minor}) {
    for (const DiagnosedCause& c : *list) {
      QVERIFY2(c.totalNs <= prev || list == &d.minor, qPrintable(what + ": causes not ranked"));
      prev = c.totalNs;
      const int code = static_cast<int>(c.code);
      QVERIFY2(!seen[code], qPrintable(what + ": a cause listed twice"));
      seen[code] = true;
      QCOMPARE(c.totalNs, partsTotal[code]);
      QVERIFY(std::abs(c.share - static_cast<double>(c.totalNs) / static_cast<double>(wall)) < 1e-9);
      QVERIFY2(list == &d.minor || &c == &d.causes.front() || c.share >= kMinorShare, qPrintable(what));
      QVERIFY(!c.text.empty());
      // "in K of the N steps" counts the steps that hold its time, of the diagnosis's steps.
      const QString text = QString::fromStdString(c.text);
      const auto m = QRegularExpression(QStringLiteral("in ([0-9]+) of the ([0-9]+) steps")).match(text);
      if (m.hasMatch()) {
        QCOMPARE(m.captured(1).toInt(), c.steps);
        QCOMPARE(m.captured(2).toInt(), static_cast<int>(d.steps.size()));
      }
    }
  }
  // Every cause with time is listed, in causes or minor.
  for (int c = 0; c < kCauseCount; ++c) QCOMPARE(bool(seen[static_cast<size_t>(c)]), partsTotal[c] > 0);
  if (!d.causes.empty()) {
    QVERIFY(d.headline.find(d.causes.front().text) != std::string::npos);
  }
}

// A trace written by hand: complete events (times in us, as Kineto writes them) into one file.
struct TraceText {
  QString events;
  void x(const QString& cat, const QString& name, double ts, double dur, int pid, int tid, const QString& args) {
    events += QStringLiteral(
                  "%1{\"ph\":\"X\",\"cat\":\"%2\",\"name\":\"%3\",\"ts\":%4,\"dur\":%5,\"pid\":%6,"
                  "\"tid\":%7,\"args\":{%8}}")
                  .arg(events.isEmpty() ? QString() : QStringLiteral(","), cat, name)
                  .arg(ts, 0, 'f', 3)
                  .arg(dur, 0, 'f', 3)
                  .arg(pid)
                  .arg(tid)
                  .arg(args);
  }
  QString write(const QTemporaryDir& dir, const QString& name) const {
    QFile f(dir.filePath(name));
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(QStringLiteral("{\"traceEvents\":[%1]}").arg(events).toUtf8());
    return f.fileName();
  }
};

}  // namespace

class DiagnosisTest : public QObject {
  Q_OBJECT

 private slots:
  // The split's interval operations (intervals.h skips to a step's window by binary search) against
  // the same operations done one time unit at a time: 600 random pairs of sorted, disjoint lists
  // (fixed seed), from empty to a few hundred intervals, windows small and large.
  void intervalOpsMatchUnitByUnit() {
    std::mt19937_64 rng(44021);
    auto list = [&](int64_t span, int maxN) {
      Intervals v;
      const int n = static_cast<int>(rng() % static_cast<uint64_t>(maxN + 1));
      for (int k = 0; k < n; ++k) {
        const int64_t a = static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
        v.emplace_back(a, a + 1 + static_cast<int64_t>(rng() % 12));
      }
      return merged(std::move(v));
    };
    for (int c = 0; c < 600; ++c) {
      const int64_t span = c % 3 == 0 ? 60 : 2000;
      const Intervals a = list(span, c % 5 == 0 ? 3 : 300), b = list(span, c % 7 == 0 ? 2 : 300);
      std::vector<char> inB(span + 20, 0);
      for (const auto& [x, y] : b) std::fill(inB.begin() + x, inB.begin() + y, 1);
      // Runs of t inside `a` where pred(t), cut at the ends of `a`'s intervals (as the operations cut).
      auto runs = [&](auto pred) {
        Intervals out;
        for (const auto& [x, y] : a)
          for (int64_t t = x; t < y; ++t) {
            if (!pred(t)) continue;
            if (!out.empty() && out.back().second == t && t != x)
              out.back().second = t + 1;
            else
              out.emplace_back(t, t + 1);
          }
        return out;
      };
      // Taken pieces are cut at the cover's interval ends too: none touch in a merged cover.
      const Intervals both = runs([&](int64_t t) { return inB[t] != 0; });
      const Intervals only = runs([&](int64_t t) { return inB[t] == 0; });
      QCOMPARE(intersected(a, b), both);
      QCOMPARE(intersected(b, a), intersected(a, b));
      Intervals remaining = a, taken;
      int64_t expect = 0;
      for (const auto& [x, y] : both) expect += y - x;
      QCOMPARE(takeCovered(remaining, b, &taken), expect);
      QCOMPARE(taken, both);
      QCOMPARE(remaining, only);
    }
  }

  void everyTraceHasItsReference() {
    const QStringList refs = QDir(kReference).entryList({"*.json"}, QDir::Files, QDir::Name);
    QCOMPARE(refs.size(), 19);
  }

  void matchesTheReference_data() {
    QTest::addColumn<QString>("file");
    for (const QString& r : QDir(kReference).entryList({"*.json"}, QDir::Files, QDir::Name))
      QTest::newRow(qPrintable(r)) << r.left(r.size() - 5);
  }

  void matchesTheReference() {
    QFETCH(QString, file);
    QFile f(kReference + "/" + file + ".json");
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject ref = QJsonDocument::fromJson(f.readAll()).object();
    const auto snap = snapshotAt(extTracePath(file));
    QVERIFY2(snap, qPrintable(file));
    const Diagnosis& d = snap->explanation->diagnosis;
    QCOMPARE(QString::fromStdString(d.stepSource), ref["step_source"].toString());
    const QJsonArray steps = ref["steps"].toArray();
    QCOMPARE(d.steps.size(), static_cast<size_t>(steps.size()));
    for (qsizetype i = 0; i < steps.size(); ++i) {
      const QJsonObject s = steps[i].toObject();
      const StepWaits& st = d.steps[static_cast<size_t>(i)];
      QCOMPARE(QString::fromStdString(st.name), s["name"].toString());
      QCOMPARE(st.startNs, s["start_ns"].toInteger());
      QCOMPARE(st.endNs, s["end_ns"].toInteger());
      QCOMPARE(st.deviceBusyNs, s["device_busy_ns"].toInteger());
      QCOMPARE(st.communicationOverlappedNs, s["communication_overlapped_ns"].toInteger());
      const QJsonArray devices = s["devices"].toArray();
      QCOMPARE(st.busyByDevice.size(), static_cast<size_t>(devices.size()));
      for (qsizetype k = 0; k < devices.size(); ++k) {
        QCOMPARE(st.busyByDevice[static_cast<size_t>(k)].first, devices[k].toObject()["device"].toInteger());
        QCOMPARE(st.busyByDevice[static_cast<size_t>(k)].second, devices[k].toObject()["busy_ns"].toInteger());
      }
    }
    checkSplit(d, file);
  }

  // The findings never contradict the diagnosis, and their counts hold: a step is called launch-bound
  // only when the diagnosis ranks launch_bound before any blocked-host cause; "in N of the M steps"
  // never has N > M; no sentence calls a negative amount "more".
  void findingsAgreeWithTheDiagnosis() {
    static const QRegularExpression kOfThe(QStringLiteral("in ([0-9,]+) of the ([0-9,]+) steps"));
    const QStringList files = QDir(kReference).entryList({"*.json"}, QDir::Files, QDir::Name);
    QCOMPARE(files.size(), 19);
    for (const QString& r : files) {
      const QString file = r.left(r.size() - 5);
      const auto snap = snapshotAt(extTracePath(file));
      QVERIFY2(snap, qPrintable(file));
      const Explanation& x = *snap->explanation;
      bool launchBoundFirst = false;
      for (const DiagnosedCause& c : x.diagnosis.causes) {
        if (c.code == Cause::LaunchBound) {
          launchBoundFirst = true;
          break;
        }
        if (c.code == Cause::BlockingCopy || c.code == Cause::ExplicitSync || c.code == Cause::Allocator ||
            c.code == Cause::DataLoader || c.code == Cause::OneTimeSetup)
          break;
      }
      for (const Verdict& v : x.verdicts) {
        const QString text = QString::fromStdString(v.text);
        if (v.kind == "launch_bound" || text.contains(QStringLiteral("looks launch-bound")))
          QVERIFY2(launchBoundFirst, qPrintable(file + ": " + text.left(200)));
        for (auto it = kOfThe.globalMatch(text); it.hasNext();) {
          const auto m = it.next();
          const int n = m.captured(1).remove(QLatin1Char(',')).toInt();
          const int of = m.captured(2).remove(QLatin1Char(',')).toInt();
          QVERIFY2(n <= of, qPrintable(file + ": " + m.captured(0)));
        }
        QVERIFY2(!text.contains(QRegularExpression(QStringLiteral("is -[0-9]"))), qPrintable(file + ": " + text));
      }
    }
  }

  // A long first step is not set-up unless the trace records first-use work in it: four ProfilerSteps,
  // each an aten::mm that launches one 10 us kernel; steps 2-4 last 100 us, step 1 400 us (its op runs
  // 300 us longer, no runtime call in it longer than 5 us). By hand: a steady step is launch_bound 89 us
  // (the op's 90 us but for the 1 us the kernel sat queued), little_work 1 us (queued) and host_compute
  // 10 us (the step's thread in the loop's code with no op: 5 us before the op and 5 us after it); the
  // first step holds its 300 us more as what it is, launch_bound, and no set-up.
  void longFirstStepIsNotSetUp() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    TraceText t;
    const double starts[] = {1000, 1500, 1700, 1900};
    const double spans[] = {400, 100, 100, 100};
    for (int i = 0; i < 4; ++i) {
      const double at = starts[i], d = spans[i];
      t.x("user_annotation", QStringLiteral("ProfilerStep#%1").arg(i + 1), at, d, 1, 1, "");
      t.x("cpu_op", "aten::mm", at + 5, d - 10, 1, 1, "");
      t.x("cuda_runtime", "cudaLaunchKernel", at + 10, 5, 1, 1, QStringLiteral("\"correlation\":%1").arg(i + 1));
      t.x("kernel", "gemm_kernel", at + 16, 10, 0, 7,
          QStringLiteral("\"device\":0,\"stream\":7,\"correlation\":%1").arg(i + 1));
    }
    const QString path = t.write(dir, "steps.json");
    QVERIFY(!path.isEmpty());
    const auto snap = snapshotAt(path);
    QVERIFY(snap);
    const Diagnosis& d = snap->explanation->diagnosis;
    QCOMPARE(QString::fromStdString(d.stepSource), QStringLiteral("profiler_steps"));
    QCOMPARE(d.steps.size(), size_t{4});
    auto part = [&](size_t step, Cause c) { return d.steps[step].parts[static_cast<int>(c)]; };
    for (size_t i = 1; i < 4; ++i) {
      QCOMPARE(part(i, Cause::LaunchBound), int64_t{89'000});
      QCOMPARE(part(i, Cause::LittleWork), int64_t{1'000});
      QCOMPARE(part(i, Cause::HostCompute), int64_t{10'000});
      QCOMPARE(part(i, Cause::OneTimeSetup), int64_t{0});
    }
    QCOMPARE(part(0, Cause::OneTimeSetup), int64_t{0});
    QCOMPARE(part(0, Cause::LaunchBound), int64_t{389'000});
    QCOMPARE(part(0, Cause::LittleWork), int64_t{1'000});
    QCOMPARE(part(0, Cause::HostCompute), int64_t{10'000});
    checkSplit(d, QStringLiteral("steps.json"));
  }

  // `why` reads the same split: the DataLoader row of kineto_tb_resnet50_nw0 covers every moment the
  // diagnosis blamed on the DataLoader (rule 13 is "the host is in the DataLoader"), so its diagnosis
  // line gives the data_loader cause's whole total; and what it lists never exceeds the row's calls.
  void whyReadsTheSameSplit() {
    const auto snap = snapshotAt(extTracePath("kineto_tb_resnet50_nw0.pt.trace.json.gz"));
    QVERIFY(snap);
    const Diagnosis& d = snap->explanation->diagnosis;
    int64_t loader = 0;
    for (const StepWaits& st : d.steps) loader += st.parts[static_cast<int>(Cause::DataLoader)];
    QVERIFY(loader > 0);
    const std::string name = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
    const WhyReport r = whyRow(*snap, name);
    QVERIFY(r.found);
    const WhyItem* item = nullptr;
    for (const WhyItem& it : r.items)
      if (it.section == "diagnosis") item = &it;
    QVERIFY(item);
    QVERIFY2(item->text.find("the DataLoader " + spanDurationText(loader)) != std::string::npos, item->text.c_str());
    Intervals calls;
    for (const Event& e : snap->store->events())
      if (snap->store->name(e) == name) calls.emplace_back(e.start, e.end());
    int64_t callNs = 0;
    for (const auto& [a, b] : merged(calls)) callNs += b - a;
    QVERIFY(item->ns <= callNs);
  }

  // Graph capture by hand: three 100 us ProfilerSteps, each capturing (BeginCapture at +10 us to
  // EndCapture ending at +52 us, three launches inside that run nothing) and then replaying the graph
  // (cudaGraphLaunch at +60 us for 3 us, its kernel from +64 us for 20 us). By hand, a step: capture
  // 42 us (graph_capture), the replay's call 3 us (launch_bound), its kernel 20 us (gpu_compute), the
  // 8 us between EndCapture and the replay's call (the thread between two of its events, nothing
  // recorded: host_compute), and 27 us of nothing or of the kernel sitting queued (little_work: 10
  // before the capture + 1 queued + 16 after the kernel).
  void graphCaptureIsItsOwnCause() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    TraceText t;
    for (int i = 0; i < 3; ++i) {
      const double at = 1000 + 100 * i;
      const int g = 100 + i;
      t.x("user_annotation", QStringLiteral("ProfilerStep#%1").arg(i + 1), at, 100, 1, 1, "");
      t.x("cuda_runtime", "cudaStreamBeginCapture", at + 10, 2, 1, 1, "");
      for (int k = 0; k < 3; ++k)
        t.x("cuda_runtime", "cudaLaunchKernel", at + 15 + 5 * k, 2, 1, 1,
            QStringLiteral("\"correlation\":%1").arg(10 * i + k + 1));
      t.x("cuda_runtime", "cudaStreamEndCapture", at + 50, 2, 1, 1, "");
      t.x("cuda_runtime", "cudaGraphLaunch", at + 60, 3, 1, 1, QStringLiteral("\"correlation\":%1").arg(g));
      t.x("kernel", "fused_kernel", at + 64, 20, 0, 7,
          QStringLiteral("\"device\":0,\"stream\":7,\"correlation\":%1").arg(g));
    }
    const QString path = t.write(dir, "capture.json");
    QVERIFY(!path.isEmpty());
    const auto snap = snapshotAt(path);
    QVERIFY(snap);
    const Diagnosis& d = snap->explanation->diagnosis;
    QCOMPARE(d.steps.size(), size_t{3});
    for (const StepWaits& st : d.steps) {
      QCOMPARE(st.parts[static_cast<int>(Cause::GraphCapture)], int64_t{42'000});
      QCOMPARE(st.parts[static_cast<int>(Cause::LaunchBound)], int64_t{3'000});
      QCOMPARE(st.parts[static_cast<int>(Cause::GpuCompute)], int64_t{20'000});
      QCOMPARE(st.parts[static_cast<int>(Cause::HostCompute)], int64_t{8'000});
      QCOMPARE(st.parts[static_cast<int>(Cause::LittleWork)], int64_t{27'000});
    }
    QCOMPARE(d.causes.front().code, Cause::GraphCapture);
    checkSplit(d, QStringLiteral("capture.json"));
  }

  // A loop that synchronizes after every tiny kernel (known_causes.py's sync_every_kernel, which the
  // H200 showed launch_bound): per iteration the host launches (op +1 to +6 us, its launch +2 to +5),
  // the kernel runs (+6 to +10) while the host waits in cudaDeviceSynchronize (+6 to +11), then the host
  // is back in Python until the next op (+11 to +21). Without the sync the host would have run on beside
  // the kernel: a sync costs its own microsecond past the kernel and, after its return, as long as it
  // waited on the kernel (4 us, +11 to +15); the rest of the Python (+15 to +21) is the host's own code,
  // as it would be with no sync (a sync is never blamed for the gap after it). Worked out by hand below.
  void syncAfterEveryKernelIsBlamedForItsWait() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    TraceText t;
    const int iters = 10;
    t.x("user_annotation", "ProfilerStep#1", 1000, 20.0 * iters, 1, 1, "");
    for (int i = 0; i < iters; ++i) {
      const double at = 1000 + 20.0 * i;
      t.x("cpu_op", "aten::tanh", at + 1, 5, 1, 1, "");
      t.x("cuda_runtime", "cudaLaunchKernel", at + 2, 3, 1, 1, QStringLiteral("\"correlation\":%1").arg(i + 1));
      t.x("kernel", "tanh_kernel", at + 6, 4, 0, 7,
          QStringLiteral("\"device\":0,\"stream\":7,\"correlation\":%1").arg(i + 1));
      t.x("cuda_runtime", "cudaDeviceSynchronize", at + 6, 5, 1, 1, "");
    }
    const QString path = t.write(dir, "sync_loop.json");
    const auto snap = snapshotAt(path);
    QVERIFY(snap);
    const Diagnosis& d = snap->explanation->diagnosis;
    QCOMPARE(d.steps.size(), size_t{1});
    const StepWaits& st = d.steps.front();
    // Compute: 10 kernels x 4 us. Each sync: its own wait past the kernel (+10 to +11) and the idle
    // after its return for as long as it waited (+11 to +15): 5 us, ten times.
    QCOMPARE(st.parts[static_cast<int>(Cause::GpuCompute)], int64_t{40'000});
    QCOMPARE(st.parts[static_cast<int>(Cause::ExplicitSync)], int64_t{10 * 5'000});
    // Dispatch +1 to +5 (the op, its launch), the kernel queued +5 to +6.
    QCOMPARE(st.parts[static_cast<int>(Cause::LaunchBound)], int64_t{10 * 4'000});
    QCOMPARE(st.parts[static_cast<int>(Cause::LittleWork)], int64_t{10 * 1'000});
    // Python: the step's start to the first op (1 us), +15 to the next op at +21 (6 us, nine times),
    // the last sync's +15 to the step's end at +20 (5 us).
    QCOMPARE(st.parts[static_cast<int>(Cause::HostCompute)], int64_t{1'000 + 9 * 6'000 + 5'000});
    QCOMPARE(d.causes.front().code, Cause::HostCompute);
    checkSplit(d, QStringLiteral("sync_loop.json"));
  }

  // A GPU-bound loop whose host runs ahead (known_causes.py's big matmuls, which the H200 showed as
  // 97% little work): three 10 us host windows each launch one 100 us kernel; a warm-up's kernel
  // (its launch not in the trace) is still running when the first step starts. Each step completes
  // when its kernel ends: windows [1000, 1200), [1200, 1300), [1300, 1400) us by hand, all of it
  // GPU compute but the first step's 10 us before the backlog kernel starts; and the backlog is the
  // warm-up's compute, not the first step's set-up.
  void gpuBoundStepsRunUntilTheirWorkEnds() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    TraceText t;
    t.x("kernel", "warmup_gemm", 1010, 90, 0, 7, "\"device\":0,\"stream\":7,\"correlation\":99");
    for (int i = 0; i < 3; ++i) {
      const double at = 1000 + 10 * i;
      t.x("user_annotation", QStringLiteral("ProfilerStep#%1").arg(i + 1), at, 10, 1, 1, "");
      t.x("cuda_runtime", "cudaLaunchKernel", at + 2, 3, 1, 1, QStringLiteral("\"correlation\":%1").arg(i + 1));
      t.x("kernel", "gemm", 1100 + 100 * i, 100, 0, 7,
          QStringLiteral("\"device\":0,\"stream\":7,\"correlation\":%1").arg(i + 1));
    }
    const QString path = t.write(dir, "gpu_bound.json");
    const auto snap = snapshotAt(path);
    QVERIFY(snap);
    const Diagnosis& d = snap->explanation->diagnosis;
    QCOMPARE(d.steps.size(), size_t{3});
    const int64_t starts[] = {1'000'000, 1'200'000, 1'300'000}, ends[] = {1'200'000, 1'300'000, 1'400'000};
    for (size_t i = 0; i < 3; ++i) {
      QCOMPARE(d.steps[i].startNs, starts[i]);
      QCOMPARE(d.steps[i].endNs, ends[i]);
      QCOMPARE(d.steps[i].hostStartNs, int64_t(1'000'000 + 10'000 * static_cast<int64_t>(i)));
    }
    QCOMPARE(d.steps[0].parts[static_cast<int>(Cause::GpuCompute)], int64_t{190'000});
    QCOMPARE(d.steps[0].parts[static_cast<int>(Cause::OneTimeSetup)], int64_t{0});
    QCOMPARE(d.steps[1].parts[static_cast<int>(Cause::GpuCompute)], int64_t{100'000});
    QCOMPARE(d.causes.front().code, Cause::GpuCompute);
    // The steps table finds each step by its own host window.
    QCOMPARE(diagnosedStep(d, 1'010'000, 1'020'000), &d.steps[1]);
    checkSplit(d, QStringLiteral("gpu_bound.json"));
  }

  // cuDNN's autotuning (torch.backends.cudnn.benchmark with a new input shape each step, which the
  // H200 showed as 97% launch-bound): a convolution op that times candidate algorithms with event
  // synchronizes inside it is one-time set-up, all of it but its kernels' GPU time.
  void convolutionAutotuneIsSetUp() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    TraceText t;
    for (int i = 0; i < 3; ++i) {
      const double at = 1000 + 1000 * i;
      t.x("user_annotation", QStringLiteral("ProfilerStep#%1").arg(i + 1), at, 1000, 1, 1, "");
      t.x("cpu_op", "aten::cudnn_convolution", at + 10, 980, 1, 1, "");
      for (int k = 0; k < 3; ++k) {
        const double c = at + 100 + 200 * k;
        const int corr = 100 * i + k + 1;
        t.x("cuda_runtime", "cudaLaunchKernel", c, 5, 1, 1, QStringLiteral("\"correlation\":%1").arg(corr));
        t.x("kernel", QStringLiteral("conv_algo_%1").arg(k), c + 6, 20, 0, 7,
            QStringLiteral("\"device\":0,\"stream\":7,\"correlation\":%1").arg(corr));
        t.x("cuda_runtime", "cudaEventSynchronize", c + 6, 21, 1, 1, "");
      }
    }
    const QString path = t.write(dir, "autotune.json");
    const auto snap = snapshotAt(path);
    QVERIFY(snap);
    const Diagnosis& d = snap->explanation->diagnosis;
    for (const StepWaits& st : d.steps) {
      QCOMPARE(st.parts[static_cast<int>(Cause::GpuCompute)] + st.parts[static_cast<int>(Cause::LaunchBound)],
               int64_t{60'000});
      QCOMPARE(st.parts[static_cast<int>(Cause::OneTimeSetup)], int64_t{980'000 - 60'000});
    }
    QCOMPARE(d.causes.front().code, Cause::OneTimeSetup);
    QVERIFY2(d.causes.front().text.find("benchmark") != std::string::npos, d.causes.front().text.c_str());
    checkSplit(d, QStringLiteral("autotune.json"));
  }

  // torch.cuda.graph() captures with a prologue: synchronize, gc.collect() (untraced Python),
  // empty_cache() (cudaFree of the cached blocks), then BeginCapture ... EndCapture and the graph's
  // instantiation. Captured every step (known_causes.py's cuda_graph_capture, which the H200 showed
  // as allocator, little work and launch-bound), the whole of it is graph capture: by hand, the
  // synchronize at +5 to EndCapture's end at +80 and the instantiation (+82, 10 us): 85 us of 100
  // (the warm-up kernel before it, +2 to +5, is GPU compute).
  void graphCapturePrologueIsCapture() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    TraceText t;
    for (int i = 0; i < 3; ++i) {
      const double at = 1000 + 100 * i;
      t.x("user_annotation", QStringLiteral("ProfilerStep#%1").arg(i + 1), at, 100, 1, 1, "");
      // The warm-up run on a side stream, before the capture (as torch's recipe has it).
      t.x("cuda_runtime", "cudaLaunchKernel", at + 1, 1, 1, 1, QStringLiteral("\"correlation\":%1").arg(1000 + i));
      t.x("kernel", "warmup_kernel", at + 2, 3, 0, 9,
          QStringLiteral("\"device\":0,\"stream\":9,\"correlation\":%1").arg(1000 + i));
      t.x("cuda_runtime", "cudaDeviceSynchronize", at + 5, 3, 1, 1, "");
      t.x("cuda_runtime", "cudaFree", at + 20, 15, 1, 1, "");  // after gc.collect(), 8 to 20
      t.x("cuda_runtime", "cudaFree", at + 36, 14, 1, 1, "");
      t.x("cuda_runtime", "cudaStreamBeginCapture", at + 55, 2, 1, 1, "");
      t.x("cuda_runtime", "cudaLaunchKernel", at + 60, 3, 1, 1, QStringLiteral("\"correlation\":%1").arg(10 * i + 1));
      t.x("cuda_runtime", "cudaStreamEndCapture", at + 75, 5, 1, 1, "");
      t.x("cuda_runtime", "cudaGraphInstantiateWithFlags", at + 82, 10, 1, 1, "");
    }
    const QString path = t.write(dir, "capture_prologue.json");
    const auto snap = snapshotAt(path);
    QVERIFY(snap);
    const Diagnosis& d = snap->explanation->diagnosis;
    QCOMPARE(d.steps.size(), size_t{3});
    for (const StepWaits& st : d.steps) {
      QCOMPARE(st.parts[static_cast<int>(Cause::GraphCapture)], int64_t{85'000});
      QCOMPARE(st.parts[static_cast<int>(Cause::Allocator)], int64_t{0});
    }
    QCOMPARE(d.causes.front().code, Cause::GraphCapture);
    QCOMPARE(d.steps[1].parts[static_cast<int>(Cause::GpuCompute)], int64_t{3'000});
    checkSplit(d, QStringLiteral("capture_prologue.json"));
  }

  // torch.cuda.graph() on torch 2.x (the H100's known_causes cuda_graph_capture): between the prologue's
  // synchronize and BeginCapture, empty_cache's cudaFree calls and capture_begin registering the RNG
  // state: aten::empty (a cudaMalloc, the cache just emptied) and two aten::fill_ whose 2 us kernels run.
  // Per 100 us step by hand: the capture from the synchronize (+5) to EndCapture's end (+82), 77 us, but
  // for the fill kernels' 4 us (GPU compute), plus the instantiation (+83, 10 us): graph_capture 83 us;
  // the allocator none (its calls are the capture's); the loop's own code 13 us (+0 to +5, +82 to +83,
  // +93 to +100: host_compute).
  void graphCaptureBeginsWithItsRngState() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    TraceText t;
    for (int i = 0; i < 3; ++i) {
      const double at = 1000 + 100 * i;
      const int c = 100 * (i + 1);
      t.x("user_annotation", QStringLiteral("ProfilerStep#%1").arg(i + 1), at, 100, 1, 1, "");
      t.x("cuda_runtime", "cudaDeviceSynchronize", at + 5, 3, 1, 1, "");
      t.x("cuda_runtime", "cudaFree", at + 20, 15, 1, 1, "");
      t.x("cuda_runtime", "cudaFree", at + 36, 14, 1, 1, "");
      t.x("cpu_op", "aten::empty", at + 51, 7, 1, 1, "");
      t.x("cuda_runtime", "cudaMalloc", at + 52, 5, 1, 1, "");
      for (int k = 0; k < 2; ++k) {
        t.x("cpu_op", "aten::fill_", at + 58 + 4 * k, 4, 1, 1, "");
        t.x("cuda_runtime", "cudaLaunchKernel", at + 59 + 4 * k, 1, 1, 1,
            QStringLiteral("\"correlation\":%1").arg(c + k));
        t.x("kernel", "fill_kernel", at + 60 + 4 * k, 2, 0, 7,
            QStringLiteral("\"device\":0,\"stream\":7,\"correlation\":%1").arg(c + k));
      }
      t.x("cuda_runtime", "cudaStreamBeginCapture", at + 70, 1, 1, 1, "");
      t.x("cpu_op", "aten::addmm", at + 72, 8, 1, 1, "");
      t.x("cuda_runtime", "cudaMalloc", at + 73, 4, 1, 1, "");
      t.x("cuda_runtime", "cudaLaunchKernel", at + 78, 1, 1, 1, QStringLiteral("\"correlation\":%1").arg(c + 50));
      t.x("cuda_runtime", "cudaStreamEndCapture", at + 80, 2, 1, 1, "");
      t.x("cuda_runtime", "cudaGraphInstantiateWithFlags", at + 83, 10, 1, 1, "");
    }
    const auto snap = snapshotAt(t.write(dir, "capture_rng.json"));
    QVERIFY(snap);
    const Diagnosis& d = snap->explanation->diagnosis;
    QCOMPARE(d.steps.size(), size_t{3});
    for (const StepWaits& st : d.steps) {
      QCOMPARE(st.parts[static_cast<int>(Cause::GraphCapture)], int64_t{83'000});
      QCOMPARE(st.parts[static_cast<int>(Cause::GpuCompute)], int64_t{4'000});
      QCOMPARE(st.parts[static_cast<int>(Cause::Allocator)], int64_t{0});
      QCOMPARE(st.parts[static_cast<int>(Cause::HostCompute)], int64_t{13'000});
    }
    QCOMPARE(d.causes.front().code, Cause::GraphCapture);
    // One evidence item per capture, not a call and a capture.
    QVERIFY(!d.causes.front().items.empty());
    QCOMPARE(d.causes.front().items.front().kind, std::string("capture"));
    QCOMPARE(d.causes.front().items.front().count, uint64_t{3});
    checkSplit(d, QStringLiteral("capture_rng.json"));
  }

  // The H100 capture's loop: each step synchronizes first (nothing is running: the sync waits on no
  // work) and then sleeps with nothing recorded before its ops. A sync is blamed for what it waited
  // on, never for the gap after it: per 100 us step by hand, the sync's own 2 us (+1 to +3) are
  // explicit_sync; +0 to +1, +3 to +80 and +94 to +100 (84 us) the loop's untraced code (host_compute);
  // the op +80 to +85 (its launch +81 to +83, the kernel queued +83 to +84, running with nothing behind
  // it while the op dispatches +84 to +85) launch-bound 4 us and little work 1 us; the kernel +85 to
  // +94 GPU compute. The fix is the host's work, not the sync.
  void syncThenUntracedSleepIsHostWork() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    TraceText t;
    for (int i = 0; i < 3; ++i) {
      const double at = 1000 + 100 * i;
      t.x("user_annotation", QStringLiteral("ProfilerStep#%1").arg(i + 1), at, 100, 1, 1, "");
      t.x("cuda_runtime", "cudaDeviceSynchronize", at + 1, 2, 1, 1, "");
      t.x("cpu_op", "aten::mm", at + 80, 5, 1, 1, "");
      t.x("cuda_runtime", "cudaLaunchKernel", at + 81, 2, 1, 1, QStringLiteral("\"correlation\":%1").arg(i + 1));
      t.x("kernel", "gemm_kernel", at + 84, 10, 0, 7,
          QStringLiteral("\"device\":0,\"stream\":7,\"correlation\":%1").arg(i + 1));
    }
    const auto snap = snapshotAt(t.write(dir, "sync_sleep.json"));
    QVERIFY(snap);
    const Diagnosis& d = snap->explanation->diagnosis;
    QCOMPARE(d.steps.size(), size_t{3});
    for (const StepWaits& st : d.steps) {
      QCOMPARE(st.parts[static_cast<int>(Cause::ExplicitSync)], int64_t{2'000});
      QCOMPARE(st.parts[static_cast<int>(Cause::HostCompute)], int64_t{84'000});
      QCOMPARE(st.parts[static_cast<int>(Cause::LaunchBound)], int64_t{4'000});
      QCOMPARE(st.parts[static_cast<int>(Cause::LittleWork)], int64_t{1'000});
      QCOMPARE(st.parts[static_cast<int>(Cause::GpuCompute)], int64_t{9'000});
    }
    QCOMPARE(d.causes.front().code, Cause::HostCompute);
    for (const auto* list : {&d.causes, &d.minor})
      for (const DiagnosedCause& c : *list)
        for (const Fix& f : c.fixes)
          QVERIFY2(c.code != d.causes.front().code || f.code != "remove_sync", d.headline.c_str());
    QVERIFY2(d.headline.find("remove the") == std::string::npos, d.headline.c_str());
    // The evidence says where the untraced code ran longest: the 77 us after the sync.
    const EvidenceItem& gap = d.causes.front().items.front();
    QCOMPARE(gap.kind, std::string("untraced"));
    QCOMPARE(gap.count, uint64_t{9});
    QCOMPARE(gap.detail, std::string("the longest 77.000 us, after cudaDeviceSynchronize"));
    checkSplit(d, QStringLiteral("sync_sleep.json"));
  }

  // The whole trace's window is the profiler's recorded span: an inference trace whose 30 us of kernels
  // run in a 2 s recording (a first-use 1.2 ms runtime call among its few events) is a recording with
  // almost nothing in it, not 1.6 ms of set-up; a ProfilerStep that ends after the span is flagged.
  void theWindowIsTheRecording() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    TraceText t;
    t.x("Trace", "PyTorch Profiler (0)", 1000, 2'000'000, 1, 2, "");
    t.x("cuda_runtime", "cudaGetDeviceProperties", 500'000, 1200, 1, 1, "");
    t.x("cpu_op", "aten::linear", 501'300, 300, 1, 1, "");
    t.x("cuda_runtime", "cudaLaunchKernel", 501'350, 10, 1, 1, "\"correlation\":1");
    t.x("kernel", "gemm", 501'400, 30, 0, 7, "\"device\":0,\"stream\":7,\"correlation\":1");
    const auto snap = snapshotAt(t.write(dir, "inference.json"));
    QVERIFY(snap);
    const Diagnosis& d = snap->explanation->diagnosis;
    QCOMPARE(d.steps.size(), size_t{1});
    QCOMPARE(d.steps.front().startNs, int64_t{1'000'000});
    QCOMPARE(d.steps.front().endNs, int64_t{2'001'000'000});
    QCOMPARE(d.recordStartNs, int64_t{1'000'000});
    QCOMPARE(d.causes.front().code, Cause::LittleWork);
    QVERIFY(d.causes.front().share > 0.99);
    QVERIFY(!d.notes.empty() && d.notes.front().rfind("almost nothing ran in the recording", 0) == 0);
    checkSplit(d, QStringLiteral("inference.json"));

    TraceText u;
    u.x("Trace", "PyTorch Profiler (0)", 1000, 1000, 1, 2, "");
    u.x("user_annotation", "ProfilerStep#1", 1100, 500, 1, 1, "");
    u.x("user_annotation", "ProfilerStep#2", 1600, 600, 1, 1, "");
    const auto cut = snapshotAt(u.write(dir, "cut.json"));
    QVERIFY(cut);
    const auto& notes = cut->explanation->diagnosis.notes;
    QCOMPARE(notes.size(), size_t{1});
    QVERIFY2(notes.front().rfind("ProfilerStep#2 outlives the recording: it ends 200.000 us after", 0) == 0,
             notes.front().c_str());
  }

  // Our H200 attention captures: engine steps (or one step), parts add up too, and the four steps' device work
  // is there to blame (a GPU capture is never called CPU-only or empty).
  void attentionCaptures() {
    const QStringList files =
        QDir(QStringLiteral(ATTNSCOPE_TEST_DATA "/h200")).entryList({"*.json"}, QDir::Files, QDir::Name);
    QVERIFY(!files.isEmpty());
    for (const QString& f : files) {
      const auto snap = snapshotAt(QStringLiteral(ATTNSCOPE_TEST_DATA "/h200/") + f);
      QVERIFY2(snap, qPrintable(f));
      const Diagnosis& d = snap->explanation->diagnosis;
      // Engine traces keep the engine's steps; a torch capture without ProfilerStep#N is one step.
      const bool engine = snap->explanation->stepSource == "engine";
      QCOMPARE(QString::fromStdString(d.stepSource), engine ? QStringLiteral("engine") : QStringLiteral("whole_trace"));
      checkSplit(d, f);
      int64_t busy = 0;
      for (const StepWaits& st : d.steps) busy += st.deviceBusyNs;
      QVERIFY2(busy > 0, qPrintable(f));
      for (const DiagnosedCause& c : d.causes) QVERIFY2(c.code != Cause::CpuOnly, qPrintable(f));
    }
  }

  // Correlation ids that are not dense (a generated trace's, a hostile one's) take the rules' hashed table,
  // dense ones flat arrays: the same real trace with each id multiplied by 2^36 (sparse, and every id a
  // multiple of a large power of two) must give the same diagnosis, cause for cause and step for step.
  void sparseCorrelationIdsGiveTheSameDiagnosis() {
    for (const QString& path : {extTracePath(QStringLiteral("param_dlrm_worker0.pt.trace.json")),
                                QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_8x16x1024x64.json")}) {
      QFile f(path);
      QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(path));
      const QString text = QString::fromUtf8(f.readAll());
      QString spread;
      const QRegularExpression id(QStringLiteral("(\"correlation\"\\s*:\\s*)([0-9]+)"));
      qsizetype at = 0, ids = 0;
      for (auto it = id.globalMatch(text); it.hasNext();) {
        const auto m = it.next();
        spread += text.mid(at, m.capturedStart(2) - at) + QString::number(m.captured(2).toLongLong() << 36);
        at = m.capturedEnd(2);
        ids += m.captured(2).toLongLong() > 0 ? 1 : 0;
      }
      spread += text.mid(at);
      QVERIFY2(ids >= 10, qPrintable(path));
      QTemporaryDir dir;
      QFile out(dir.filePath(QStringLiteral("spread.json")));
      QVERIFY(out.open(QIODevice::WriteOnly));
      out.write(spread.toUtf8());
      out.close();
      const auto dense = snapshotAt(path), sparse = snapshotAt(out.fileName());
      QVERIFY2(dense && sparse, qPrintable(path));
      const Diagnosis& a = dense->explanation->diagnosis;
      const Diagnosis& b = sparse->explanation->diagnosis;
      QVERIFY2(!a.causes.empty() && a.causes.front().code != Cause::CpuOnly, qPrintable(path));
      QCOMPARE(diagnosisJson(b), diagnosisJson(a));
    }
  }
};

QTEST_GUILESS_MAIN(DiagnosisTest)
#include "test_diagnosis.moc"
