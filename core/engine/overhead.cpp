#include "overhead.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <chrono>
#include <memory>
#include <stdexcept>

#include "cupti_collector.h"
#include "op_recorder.h"
#include "workload.h"

namespace attnscope::engine {

OverheadSample measureOverhead(const std::string& mode, const RunConfig& cfg, int calls) {
  namespace prof = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  using torch::profiler::impl::ProfilerConfig;
  using torch::profiler::impl::ProfilerState;
  if (mode != "none" && mode != "ours" && mode != "torch") throw std::runtime_error("unknown mode " + mode);
  prepareNvtxInjection();
  const bool cuda = cfg.device == RunDevice::Cuda;
  const at::Device device(cuda ? at::kCUDA : at::kCPU, 0);
  Workload w(cfg, device);
  for (int i = 0; i < 500; ++i) w.call(-1, nullptr);  // clocks up, caches warm
  w.synchronize();

  std::unique_ptr<CuptiCollector> cupti;
  std::unique_ptr<OpRecorder> rec;
  const ProfilerConfig pc(ProfilerState::KINETO, /*report_input_shapes=*/true, /*profile_memory=*/true);
  std::set<ActivityType> acts{ActivityType::CPU};
  if (cuda) acts.insert(ActivityType::CUDA);
  if (mode == "ours") {
    if (cuda) cupti = std::make_unique<CuptiCollector>();
    rec = std::make_unique<OpRecorder>(RecordMode::Trace, cuda, cupti && cupti->available());
  } else if (mode == "torch") {
    prof::prepareProfiler(pc, acts);
    prof::enableProfiler(pc, acts);
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) w.call(i, nullptr);
  w.synchronize();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  OverheadSample out;
  out.calls = calls;
  out.secondsPerCall = s / calls;
  if (mode == "ours") {
    RunCapture cap;
    if (cupti) cupti->stop();
    rec->takeInto(&cap);
    out.opsPerCall = static_cast<int>(cap.ops.size() / static_cast<size_t>(calls));
  } else if (mode == "torch") {
    prof::disableProfiler();
  }
  return out;
}

}  // namespace attnscope::engine
