// LibTorch's own profiler (Kineto, CPU + CUDA activities) on the same run,
// so the user sees what torch reports. It subscribes to CUPTI itself, so it
// always runs in a child process of its own, never next to our collector.
#include <torch/csrc/autograd/profiler_kineto.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/engine/measurement.h"

namespace attnscope::engine {

MeasurementResult runTorchMeasurement(const RunConfig& cfg, at::Device device, const std::string& tracePath) {
  namespace prof = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  using torch::profiler::impl::ProfilerConfig;
  using torch::profiler::impl::ProfilerState;
  MeasurementResult r;
  r.method = TimingMethod::Torch;
  r.pid = ::getpid();
  const std::unique_ptr<Workload> workload = makeWorkload(cfg, device, "torch");
  Workload& w = *workload;
  // record_shapes follows --record-shapes, as our trace pass does.
  ProfilerConfig pc(ProfilerState::KINETO, /*report_input_shapes=*/cfg.recordShapes, /*profile_memory=*/true);
  std::set<ActivityType> acts{ActivityType::CPU};
  if (device.is_cuda()) acts.insert(ActivityType::CUDA);
  // As torch.profiler's schedule does: prepare (Kineto sets CUPTI up), warm
  // up, then enable, so the profiler's first-use costs fall in the warm-up
  // rather than inside the first measured step.
  prof::prepareProfiler(pc, acts);
  for (int i = 0; i < cfg.warmup; ++i) w.call(-1, nullptr);
  w.synchronize();
  prof::enableProfiler(pc, acts);
  for (int i = 0; i < cfg.iters; ++i) w.call(i, &r.spans);
  // Python's torch.profiler synchronizes the device when it stops (its
  // __exit__), so no queued GPU work is lost: do the same.
  w.synchronize();
  auto result = prof::disableProfiler();
  if (result && !tracePath.empty()) {
    // Torch writes in place: write next to the target, then rename, so a
    // crash or a full disk never leaves a partial trace under the final name.
    const std::string tmp = tracePath + ".tmp-" + std::to_string(::getpid());
    result->save(tmp);
    if (std::rename(tmp.c_str(), tracePath.c_str()) == 0) {
      r.tracePath = tracePath;
    } else {
      r.notes.push_back("torch's trace could not be written to " + tracePath + ": " + std::strerror(errno));
      std::remove(tmp.c_str());
    }
  }
  r.stepNs.assign(static_cast<size_t>(cfg.iters), {0, 0, 0, 0});
  for (const auto& win : r.spans) r.stepNs[win.iteration][win.step] = win.endNs - win.startNs;
  return r;
}

}  // namespace attnscope::engine
