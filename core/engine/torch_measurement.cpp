// LibTorch's own profiler (Kineto, CPU + CUDA activities) on the same run,
// so the user sees what torch reports. It subscribes to CUPTI itself, so it
// always runs in a child process of its own, never next to our collector.
#include <torch/csrc/autograd/profiler_kineto.h>
#include <unistd.h>

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
  Workload w(cfg, device);
  for (int i = 0; i < cfg.warmup; ++i) w.call(-1, nullptr);
  w.synchronize();
  ProfilerConfig pc(ProfilerState::KINETO, /*report_input_shapes=*/true, /*profile_memory=*/true);
  std::set<ActivityType> acts{ActivityType::CPU};
  if (device.is_cuda()) acts.insert(ActivityType::CUDA);
  prof::prepareProfiler(pc, acts);
  prof::enableProfiler(pc, acts);
  for (int i = 0; i < cfg.iters; ++i) w.call(i, &r.spans);
  // Python's torch.profiler synchronizes the device when it stops (its
  // __exit__), so no queued GPU work is lost: do the same.
  w.synchronize();
  auto result = prof::disableProfiler();
  if (result && !tracePath.empty()) {
    result->save(tracePath);
    r.tracePath = tracePath;
  }
  r.stepNs.assign(static_cast<size_t>(cfg.iters), {0, 0, 0, 0});
  r.blockNs.assign(static_cast<size_t>(cfg.iters), 0);
  for (const auto& win : r.spans) r.stepNs[win.iteration][win.step] = win.endNs - win.startNs;
  return r;
}

}  // namespace attnscope::engine
