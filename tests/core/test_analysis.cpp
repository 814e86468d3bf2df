// Explanation on the real H200 captures: every expected figure below can be
// checked by hand in the trace JSON (ts/dur in microseconds there).
#include <QFile>
#include <QtTest>

#include "core/explain/compare.h"
#include "core/explain/explanation.h"
#include "core/read/trace_reader.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/tables/attribution.h"
#include "core/tables/key_averages.h"
#include "self_cpu_oracle.h"

using namespace attnscope;

// Declares `const EventStore& var`, loaded from tests/data/torch/REL, or fails the test.
#define LOAD(var, rel)                                                     \
  QString var##Error;                                                      \
  const std::optional<EventStore> var##Loaded = tryLoad(rel, &var##Error); \
  QVERIFY2(var##Loaded, qPrintable(var##Error));                           \
  const EventStore& var = *var##Loaded

namespace {

// The capture tests/data/torch/REL, or nullopt with *error saying why (a
// missing or unreadable file fails the test through LOAD, it never crashes it).
std::optional<EventStore> tryLoad(const QString& rel, QString* error) {
  const QString path = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/") + rel;
  if (!QFile::exists(path)) {
    *error = "missing capture " + path;
    return std::nullopt;
  }
  LoadResult r = loadTrace(path.toStdString());
  if (!r.ok()) {
    *error = "cannot load " + path;
    return std::nullopt;
  }
  return std::move(*r.store);
}

const KeyAverageRow* row(const KeyAverages& ka, const std::string& name, DeviceType dev) {
  for (const auto& r : ka.rows)
    if (r.name == name && r.deviceType == dev) return &r;
  return nullptr;
}

const char* kKineto[] = {"none_1x8x64x64",         "none_8x16x1024x64",        "none_sync_1x8x64x64",
                         "none_sync_8x16x1024x64", "softmax_1x8x64x64",        "softmax_8x16x1024x64",
                         "softmax_sync_1x8x64x64", "softmax_sync_8x16x1024x64"};

}  // namespace

class AnalysisTest : public QObject {
  Q_OBJECT
 private slots:
  // softmax_8x16x1024x64.json: cudaStreamSynchronize ts 5367878834488.945,
  // dur 298.889, External id 4115 (aten::copy_); the QK GEMM
  // sm80_xmma_gemm_..._tn_n_... has correlation 990 and ends at
  // 5367878834240.143 + 540.41 = 5367878834780.553, inside the wait.
  void scaleSyncAwaitsTheQkGemm() {
    LOAD(s, "kineto/softmax_8x16x1024x64.json");
    const Explanation a = *snapshotOf(s)->explanation;
    const SyncWait* w = nullptr;
    for (const auto& x : a.syncWaits)
      if (x.api == "cudaStreamSynchronize") w = &x;
    QVERIFY(w);
    QCOMPARE(w->durNs, int64_t{298889});
    QCOMPARE(w->issuer, std::string("op"));
    const std::vector<std::string> chain{
        "MULTIHEAD_ATTENTION_FULL", "aten::to", "aten::_to_copy", "aten::copy_", "cudaMemcpyAsync (Pageable -> Device)",
        "cudaStreamSynchronize"};
    QCOMPARE(w->opChain, chain);
    bool gemm = false;
    for (const auto& aw : w->awaited) {
      const std::string_view n = s.name(s.event(aw.gpu));
      if (aw.correlation == 990 && n.starts_with("sm80_xmma_gemm_") && n.find("_tn_n") != n.npos) gemm = true;
    }
    QVERIFY(gemm);
    // The step that holds it is SCALE (not wrapped here: the ops between QK's matmul and the softmax).
    QCOMPARE(a.steps[static_cast<size_t>(w->step)].name, std::string("SCALE"));
    QVERIFY(!a.steps[static_cast<size_t>(w->step)].wrapped);
    bool verdict = false;
    for (const auto& v : a.verdicts)
      if (v.kind == "sync_wait" && v.text.find("298.889 us") != std::string::npos &&
          std::find(v.evidence.begin(), v.evidence.end(), w->ev) != v.evidence.end())
        verdict = true;
    QVERIFY(verdict);
  }

  void softmaxPassInTorchMode() {
    LOAD(s, "kineto/softmax_8x16x1024x64.json");
    const KeyAverages ka = computeKeyAverages(s, GroupBy::Name, Attribution::Torch);
    const KeyAverageRow* r = row(ka, "SOFTMAX PASS", DeviceType::Cpu);
    QVERIFY(r);
    QCOMPARE(r->selfDeviceNs, int64_t{0});
    QCOMPARE(r->deviceTotalNs, int64_t{259261});  // softmax_warp_forward, dur 259.261
  }

  // Activity Buffer Request (ts 5367878831419.217, dur 2381.417) ran inside
  // aten::bmm (External id 4109), whose GEMM lasted 540.41 us.
  void activityBufferRequestOwnsGemmOnlyInTorchMode() {
    LOAD(s, "kineto/softmax_8x16x1024x64.json");
    const KeyAverages torch = computeKeyAverages(s, GroupBy::Name, Attribution::Torch);
    const KeyAverages corr = computeKeyAverages(s, GroupBy::Name, Attribution::Corrected);
    const KeyAverageRow* t = row(torch, "Activity Buffer Request", DeviceType::Cpu);
    const KeyAverageRow* c = row(corr, "Activity Buffer Request", DeviceType::Cpu);
    QVERIFY(t && c);
    QCOMPARE(t->selfDeviceNs, int64_t{540410});
    QCOMPARE(c->selfDeviceNs, int64_t{0});
    QCOMPARE(c->deviceTotalNs, int64_t{0});
    QCOMPARE(corr.attribution, Attribution::Corrected);
    const Ledger l = computeLedger(*snapshotOf(s, {.explain = false}));
    QCOMPARE(l.overheadOwnedGpuNs, int64_t{540410});
    QCOMPARE(l.overheadOwnedGpu.size(), size_t{1});
    QCOMPARE(s.event(l.overheadOwnedGpu[0]).correlation, int64_t{990});
    // gpu_user_annotation spans are spans in corrected mode, not self time.
    const KeyAverageRow* span = row(corr, "MULTIHEAD_ATTENTION_FULL", DeviceType::Cuda);
    QVERIFY(span);
    QCOMPARE(span->selfDeviceNs, int64_t{0});
    QCOMPARE(span->deviceTotalNs, int64_t{1754033});
  }

  // The corrected table subtracts the profiler's own work from the op it
  // interrupted: Activity Buffer Request (2381.417 us, inside aten::bmm) is
  // counted once, so aten::bmm's Self CPU is torch's 197.660 us and the total
  // torch's 4.682 ms (they were 2.579 ms and 7.063 ms: counted twice).
  void correctedSelfCpuCountsTheProfilerOnce() {
    {
      LOAD(s, "kineto/softmax_8x16x1024x64.json");
      const KeyAverages torch = computeKeyAverages(s, GroupBy::Name, Attribution::Torch);
      const KeyAverages corr = computeKeyAverages(s, GroupBy::Name, Attribution::Corrected);
      const KeyAverageRow* t = row(torch, "aten::bmm", DeviceType::Cpu);
      const KeyAverageRow* c = row(corr, "aten::bmm", DeviceType::Cpu);
      QVERIFY(t && c);
      QCOMPARE(c->selfCpuNs, int64_t{197660});
      QCOMPARE(c->selfCpuNs, t->selfCpuNs);
      const KeyAverageRow* abr = row(corr, "Activity Buffer Request", DeviceType::Cpu);
      QVERIFY(abr);
      QCOMPARE(abr->selfCpuNs, int64_t{2381417});
      QCOMPARE(corr.sumSelfCpuNs, int64_t{4681577});
    }
    for (const char* name : kKineto) {
      LOAD(s, QString("kineto/%1.json").arg(name));
      const int64_t outermost = testutil::outermostCpuNs(s);
      QVERIFY(outermost > 0);
      for (GroupBy g : {GroupBy::Name, GroupBy::InputShape}) {
        const KeyAverages torch = computeKeyAverages(s, g, Attribution::Torch);
        const KeyAverages corr = computeKeyAverages(s, g, Attribution::Corrected);
        QVERIFY2(corr.sumSelfCpuNs == torch.sumSelfCpuNs, name);
        QVERIFY2(corr.sumSelfCpuNs == outermost, name);
      }
    }
  }

  // Whatever is wrapped: one cudaStreamSynchronize (SCALE's) and one
  // cudaDeviceSynchronize from the profiler's stop (+1 from the user's
  // torch.cuda.synchronize() in the _sync captures).
  void syncCountsDoNotDependOnWrapping() {
    for (const char* name :
         {"none_8x16x1024x64", "none_sync_8x16x1024x64", "softmax_8x16x1024x64", "softmax_sync_8x16x1024x64"}) {
      LOAD(s, QString("kineto/%1.json").arg(name));
      const std::vector<SyncWait> ws = findSyncWaits(s, ActivityIndex(s));
      int stream = 0, deviceProfiler = 0, deviceUser = 0;
      for (const auto& w : ws) {
        stream += w.api == "cudaStreamSynchronize";
        deviceProfiler += w.api == "cudaDeviceSynchronize" && w.issuer == "profiler";
        deviceUser += w.api == "cudaDeviceSynchronize" && w.issuer == "user";
        if (w.api == "cudaStreamSynchronize")
          QVERIFY2(s.event(s.event(w.ev).parent).family != Family::UserAnnotation, name);
      }
      const bool sync = QString(name).contains("_sync");
      QCOMPARE(stream, 1);
      QCOMPARE(deviceProfiler, 1);
      QCOMPARE(deviceUser, sync ? 1 : 0);
      QCOMPARE(static_cast<int>(ws.size()), sync ? 3 : 2);
    }
  }

  void correctedSelfDeviceEqualsGpuActivitySum() {
    for (const char* name : kKineto) {
      LOAD(s, QString("kineto/%1.json").arg(name));
      int64_t gpuSum = 0;
      for (const Event& e : s.events())
        if (isGpuWork(e.family)) gpuSum += e.dur;
      for (GroupBy g : {GroupBy::Name, GroupBy::InputShape}) {
        const KeyAverages ka = computeKeyAverages(s, g, Attribution::Corrected);
        int64_t self = 0;
        for (const auto& r : ka.rows) self += r.selfDeviceNs;
        QVERIFY2(self == gpuSum, name);
        QCOMPARE(ka.sumSelfDeviceNs, gpuSum);
      }
      // torch mode double counts (ops and kernel rows both carry the time).
      QVERIFY(computeLedger(*snapshotOf(s, {.explain = false})).torchSelfDeviceAllRowsNs > gpuSum);
    }
  }

  // Only SOFTMAX PASS is wrapped in this capture; the attention block's other steps are
  // found from the ops their code runs: QK MATMUL up to the first aten::matmul, SCALE up
  // to the softmax, AV MATMUL the second matmul.
  void stepsOfTheAttentionBlock() {
    LOAD(s, "kineto/softmax_8x16x1024x64.json");
    const Explanation a = *snapshotOf(s)->explanation;
    QCOMPARE(a.stepSource, std::string("annotations"));
    std::vector<std::string> names;
    for (const auto& st : a.steps) names.push_back(st.name);
    QCOMPARE(names, (std::vector<std::string>{"QK MATMUL", "SCALE", "SOFTMAX PASS", "AV MATMUL"}));
    const StepReport& sp = a.steps[2];
    QVERIFY(sp.wrapped && !a.steps[0].wrapped && !a.steps[1].wrapped && !a.steps[3].wrapped);
    QCOMPARE(sp.gpuAttributedNs, int64_t{259261});
    QCOMPARE(sp.launches.size(), size_t{1});
    QCOMPARE(sp.launches[0].correlation, int64_t{1042});
    // Kernel starts 5367878835315.108, its cudaLaunchKernel 5367878835048.12.
    QCOMPARE(sp.launches[0].latencyNs(), int64_t{266988});
    QVERIFY(sp.gpuEndNs > sp.hostEndNs);  // it ran after SOFTMAX PASS closed on the CPU
    // QK MATMUL: the 540.410 us GEMM (correlation 990); AV MATMUL: the 418.749 us one.
    QCOMPARE(a.steps[0].gpuAttributedNs, int64_t{540410});
    QCOMPARE(a.steps[3].gpuAttributedNs, int64_t{418749});
    // Every nothing-wrapped capture gives the same four steps, none wrapped.
    for (const char* name : {"none_8x16x1024x64", "none_sync_8x16x1024x64", "none_1x8x64x64"}) {
      LOAD(n, QString("kineto/%1.json").arg(name));
      const Explanation b = *snapshotOf(n)->explanation;
      QCOMPARE(b.steps.size(), size_t{4});
      for (size_t k = 0; k < 4; ++k) {
        QCOMPARE(b.steps[k].name, names[k]);
        QVERIFY(!b.steps[k].wrapped);
      }
    }
  }

  // Scopes are steps and the ops between two scopes are one step; a trace without scopes is
  // one step; ProfilerStep#N are the steps whatever else is annotated, with the scopes one
  // level down as their regions. Tiny traces in tests/data/steps whose answers can be read
  // off by eye (times in us there).
  void stepRulesOnTinyTraces() {
    auto explain = [](const char* file) {
      LoadResult r = loadTrace(std::string(ATTNSCOPE_TEST_DATA "/steps/") + file);
      return r.ok() ? *snapshotOf(*r.store)->explanation : Explanation{};
    };
    // op1, A{op2}, op3, op4, B, op5 on one thread.
    const Explanation a = explain("scopes.json");
    std::vector<std::string> names;
    for (const auto& st : a.steps) names.push_back(st.name);
    QCOMPARE(names, (std::vector<std::string>{"(before A)", "A", "(between A and B)", "B", "(after B)"}));
    QCOMPARE(a.stepSource, std::string("annotations"));
    QCOMPARE(a.steps[2].hostStartNs, int64_t{60000});  // op3's start to op4's end
    QCOMPARE(a.steps[2].hostEndNs, int64_t{85000});
    QVERIFY(a.steps[1].wrapped && !a.steps[2].wrapped);

    // No scope: the whole trace is the one step.
    const Explanation w = explain("whole_trace.json");
    QCOMPARE(w.stepSource, std::string("whole_trace"));
    QCOMPARE(w.steps.size(), size_t{1});
    QCOMPARE(w.steps[0].hostStartNs, int64_t{5000});
    QCOMPARE(w.steps[0].hostEndNs, int64_t{50000});

    // ProfilerStep#N on the CPU (not its gpu_user_annotation twin), in time order, with regions;
    // a kernel launched in #1 that runs into #2 spills: 15 us out of #1, 15 us into #2.
    const Explanation p = explain("profiler_steps.json");
    QCOMPARE(p.stepSource, std::string("profiler_steps"));
    QCOMPARE(p.steps.size(), size_t{2});
    QCOMPARE(p.steps[0].name, std::string("ProfilerStep#1"));
    QCOMPARE(p.steps[0].regions.size(), size_t{1});  // "## forward ##" (not "inner": two levels down)
    QCOMPARE(p.steps[0].regions[0].name, std::string("## forward ##"));
    QCOMPARE(p.steps[0].regions[0].gpuAttributedNs, int64_t{25000});
    QCOMPARE(p.steps[0].gpuAttributedNs, int64_t{25000});
    QCOMPARE(p.steps[0].spillOutNs, int64_t{15000});
    QCOMPARE(p.steps[1].spillInNs, int64_t{15000});
    QCOMPARE(p.steps[1].spillFrom, std::vector<int>{0});
    QCOMPARE(p.steps[0].gpuBusyInHostWindowNs, int64_t{10000});
    QCOMPARE(p.steps[0].idleNs, int64_t{90000});
    QCOMPARE(p.steps[1].syncWaitNs, int64_t{8000});
    QCOMPARE(p.syncGroups.size(), size_t{1});
    QCOMPARE(p.syncGroups[0].key, std::string("aten::item > cudaStreamSynchronize"));  // ProfilerStep#2 left out
    bool spill = false;
    for (const Verdict& v : p.verdicts) spill |= v.kind == "spill" && v.step == "ProfilerStep#1";
    QVERIFY(spill);
  }

  void engineWindowsAreUsedWhenGiven() {
    LOAD(s, "kineto/softmax_8x16x1024x64.json");
    // The SOFTMAX PASS annotation's host window, given as an engine step.
    const std::vector<EngineStep> w{{"SOFTMAX PASS", true, 5367878834984435, 5367878835138263}};
    const Explanation a = *snapshotOf(s, {.steps = &w})->explanation;
    QCOMPARE(a.stepSource, std::string("engine"));
    QCOMPARE(a.steps.size(), size_t{1});
    QCOMPARE(a.steps[0].gpuAttributedNs, int64_t{259261});
    QVERIFY(a.steps[0].event == kNoEvent);
  }

  void eventFallbackSaysWhatItsTimeMeasures() {
    for (const char* name : {"softmax_8x16x1024x64_w3", "none_8x16x1024x64_w3", "full+sync_8x16x1024x64_w3"}) {
      LOAD(s, QString("event-fallback/%1.json").arg(name));
      const Explanation a = *snapshotOf(s)->explanation;
      QCOMPARE(a.ledger.timing, std::string("cuda_events"));
      QCOMPARE(a.ledger.gpuActivities, uint64_t{0});
      QVERIFY(a.ledger.cudaEventRecords > 0);
      const Verdict* v = nullptr;
      for (const auto& x : a.verdicts)
        if (x.kind == "event_timing") v = &x;
      QVERIFY2(v, name);
      QVERIFY(v->text.find("CUDA-event timing without kernels") != std::string::npos);
      QVERIFY(v->text.find("distance between the markers") != std::string::npos);
      QVERIFY(!v->evidence.empty());
      for (const auto& st : a.steps) QVERIFY(!st.eventNs.has_value());  // not in the file
    }
  }

  // SCALE's cudaStreamSynchronize: 298.889 us with only SOFTMAX PASS wrapped,
  // 211.845 us with nothing wrapped (none_8x16x1024x64.json, ts 5367878973865.148).
  void compareReportsTheSyncWaitShift() {
    LOAD(a, "kineto/softmax_8x16x1024x64.json");
    LOAD(b, "kineto/none_8x16x1024x64.json");
    const Comparison c = compareTraces(*snapshotOf(a), *snapshotOf(b));
    const Pair<SyncWait>* p = nullptr;
    for (const auto& x : c.syncWaits)
      if (x.a && x.b && x.a->api == "cudaStreamSynchronize") p = &x;
    QVERIFY(p);
    QCOMPARE(p->a->durNs, int64_t{298889});
    QCOMPARE(p->b->durNs, int64_t{211845});
    bool said = false;
    for (const auto& t : c.perturbation)
      if (t.find("298.889 us in A vs 211.845 us in B (-87.044 us, B - A)") != std::string::npos) said = true;
    QVERIFY(said);
    bool softmaxStep = false;
    for (const auto& st : c.steps)
      if (st.key == "SOFTMAX PASS") softmaxStep = st.a && st.b && st.a->wrapped && !st.b->wrapped;
    QVERIFY(softmaxStep);  // a step in both, wrapped only in A
  }
};

QTEST_APPLESS_MAIN(AnalysisTest)
#include "test_analysis.moc"
