#include "core/engine/run_record.h"

#include <algorithm>

#include "core/run/timing_methods.h"

namespace attnscope::engine {

namespace {

struct WindowGpu {
  int64_t gpuNs = 0;
  int64_t gpuStart = -1;
  int64_t gpuEnd = -1;
  int launches = 0;
};

// GPU work launched inside a host window, found by correlation.
WindowGpu gpuOfWindow(const EventStore& s, int64_t t0, int64_t t1) {
  WindowGpu g;
  for (const Event& e : s.events()) {
    if ((e.family != Family::CudaRuntime && e.family != Family::CudaDriver) || e.correlation == kNoId) continue;
    if (e.start < t0 || e.start >= t1) continue;
    for (EventId id : s.byCorrelation(e.correlation)) {
      const Event& k = s.event(id);
      if (k.family != Family::Kernel && k.family != Family::GpuMemcpy && k.family != Family::GpuMemset) continue;
      ++g.launches;
      g.gpuNs += k.dur;
      g.gpuStart = g.gpuStart < 0 ? k.start : std::min(g.gpuStart, k.start);
      g.gpuEnd = std::max(g.gpuEnd, k.end());
    }
  }
  return g;
}

}  // namespace

EngineRun recordRun(const RunConfig& cfg, const std::vector<MeasurementResult>& results, const EventStore& store,
                    const RunVersions& versions, const RunDeviceInfo& device, std::vector<std::string> notes) {
  EngineRun run;
  run.config = cfg;
  run.versions = versions;
  run.device = device;
  const MeasurementResult& trace = results.front();
  // Each step window's GPU work, found once per window.
  std::vector<WindowGpu> windowGpu;
  windowGpu.reserve(trace.spans.size());
  for (const auto& w : trace.spans) windowGpu.push_back(gpuOfWindow(store, w.startNs, w.endNs));
  for (int k = 0; k < kStepCount; ++k) {
    RunStepRecord st{std::string(kStepNames[k]), std::string(kStepKeys[k]), cfg.wrap[k], {}};
    for (size_t wi = 0; wi < trace.spans.size(); ++wi) {
      const StepSpan& w = trace.spans[wi];
      if (w.step != k) continue;
      const WindowGpu& g = windowGpu[wi];
      st.iterations.push_back(RunIteration{w.iteration, w.startNs, w.endNs, g.gpuNs, g.gpuStart, g.gpuEnd, g.launches});
    }
    run.steps.push_back(std::move(st));
  }
  for (const MeasurementResult& r : results) {
    // The trace pass always runs; its series is written only when asked for.
    if (r.method == TimingMethod::Cupti && !cfg.timing[static_cast<size_t>(TimingMethod::Cupti)]) continue;
    TimingSeries t = passRun(r).timing.front();
    if (r.method == TimingMethod::Cupti) {
      // CUPTI's number for a step: the GPU time of the work its window launched.
      t.steps.assign(r.stepNs.size(), std::vector<int64_t>(kStepCount, 0));
      for (size_t wi = 0; wi < trace.spans.size(); ++wi) {
        const StepSpan& w = trace.spans[wi];
        if (w.iteration >= 0 && static_cast<size_t>(w.iteration) < t.steps.size())
          t.steps[static_cast<size_t>(w.iteration)][static_cast<size_t>(w.step)] = windowGpu[wi].gpuNs;
      }
    }
    run.timing.push_back(std::move(t));
    notes.insert(notes.end(), r.notes.begin(), r.notes.end());
  }
  run.collection = trace.collection;
  run.collection.tracePass = trace.child ? "child" : "parent";
  run.notes = std::move(notes);
  return run;
}

}  // namespace attnscope::engine
