#include "core/engine/overhead.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>
#include <array>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "core/engine/clock.h"
#include "core/engine/cupti_collector.h"
#include "core/engine/op_recorder.h"
#include "core/engine/workload.h"

namespace attnscope::engine {

namespace {
double batchSecondsPerCall(Workload& w, int calls, bool callIds = false) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    const CallExternalId id(callIds, static_cast<uint64_t>(i) + 1);  // what a run's CUPTI pass does
    w.call(i, nullptr);
  }
  w.synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / calls;
}
}  // namespace

OverheadSample measureOverhead(const std::string& profiler, const RunConfig& cfg, int callsPerBatch, int batches) {
  namespace prof = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  using torch::profiler::impl::ProfilerConfig;
  using torch::profiler::impl::ProfilerState;
  const bool ours = profiler == "ours" || profiler == "recorder" || profiler == "cupti";
  const bool torchProf = profiler == "torch" || profiler == "torch-cpu";
  if (!ours && !torchProf) throw std::runtime_error("unknown profiler " + profiler);
  prepareNvtxInjection();
  initClock();
  const bool cuda = cfg.device == RunDevice::Cuda;
  const at::Device device(cuda ? at::kCUDA : at::kCPU, 0);
  const std::unique_ptr<Workload> workload = makeWorkload(cfg, device, "overhead");
  Workload& w = *workload;
  for (int i = 0; i < 500; ++i) w.call(-1, nullptr);  // clocks up, caches warm
  w.synchronize();

  // Pairs of batches, one without the profiler and one with it, so a drift
  // of the machine during the process moves both alike. The profiler is
  // started and stopped around each profiled batch (outside its timing), as
  // a user profiles a few steps; its first-use costs get a short warm-up.
  OverheadSample out;
  const ProfilerConfig pc(ProfilerState::KINETO, /*report_input_shapes=*/true, /*profile_memory=*/true);
  std::set<ActivityType> acts{ActivityType::CPU};
  if (cuda && profiler == "torch") acts.insert(ActivityType::CUDA);
  for (int b = 0; b < batches; ++b) {
    out.baseline.push_back(batchSecondsPerCall(w, callsPerBatch));
    std::unique_ptr<CuptiCollector> cupti;
    std::unique_ptr<OpRecorder> rec;
    if (ours) {
      if (cuda && profiler != "recorder") cupti = std::make_unique<CuptiCollector>();
      // Input shapes on, like torch's side here (the bench's "ours, no input
      // shapes" variant sets ATTNSCOPE_NO_SHAPES).
      if (profiler != "cupti")
        rec = std::make_unique<OpRecorder>(RecordMode::Trace, cuda, cupti && cupti->available(), 0,
                                           std::getenv("ATTNSCOPE_NO_SHAPES") == nullptr);
    } else {
      prof::prepareProfiler(pc, acts);
      prof::enableProfiler(pc, acts);
    }
    const bool callIds = rec && rec->pushesCallIds();
    batchSecondsPerCall(w, std::max(1, callsPerBatch / 10), callIds);
    out.profiled.push_back(batchSecondsPerCall(w, callsPerBatch, callIds));
    if (ours) {
      RunCapture cap;
      if (cupti) cupti->finish(&cap);
      if (rec) {
        rec->takeInto(&cap);
        const size_t calls = static_cast<size_t>(callsPerBatch + std::max(1, callsPerBatch / 10));
        out.opsPerCall = static_cast<int>(cap.ops.size() / calls);
      }
    } else {
      prof::disableProfiler();
    }
  }
  return out;
}

constexpr int kMicroCalls = 200000;

std::vector<std::pair<std::string, double>> microCosts(bool cuda) {
  initClock();
  using Clock = std::chrono::steady_clock;
  std::vector<std::pair<std::string, double>> out;
  auto time = [&](const std::string& what, auto&& fn, int n = kMicroCalls) {
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) fn(i);
    out.emplace_back(what, std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / n);
  };
  volatile uint64_t sink = 0;
  time("clock_gettime(CLOCK_MONOTONIC)", [&](int) { sink = sink + monotonicNs(); });
#if defined(__x86_64__)
  time("rdtsc", [&](int) { sink = sink + __rdtsc(); });
#endif
  time(gTscClock.enabled ? "nowNs() (TSC, calibrated)" : "nowNs() (CLOCK_MONOTONIC)",
       [&](int) { sink = sink + nowNs(); });
  time("heap context (make_unique + free)", [&](int) {
    auto p = std::make_unique<std::array<int64_t, 6>>();
    sink = sink + static_cast<uint64_t>((*p)[0]);
  });
  if (!cuda) return out;
  prepareNvtxInjection();
  at::Tensor t = at::ones({4}, at::Device(at::kCUDA, 0));
  // What CUPTI's API tracing costs every CUDA call, recorded or not: a
  // query-only call (PyTorch makes 13-39 per step of the block) and a launch,
  // before CUPTI, with its API kinds on (the query not recorded, then
  // recorded), with only the device-side kinds on, and after it.
  constexpr int kLaunches = 20000;
  int dev = 0;
  auto query = [&](int) { cudaGetDevice(&dev); };
  auto launch = [&](int) { t.add_(1.0); };
  auto blocks = [&](const std::string& when) {
    time("cudaGetDevice (" + when + ")", query);
    time("t.add_(1) on 4 floats, host side (" + when + ")", launch, kLaunches);
    cudaDeviceSynchronize();
  };
  for (int i = 0; i < 1000; ++i) launch(i);  // the launch path warmed up
  cudaDeviceSynchronize();
  blocks("before CUPTI");
  {
    CuptiCollector cupti;
    if (!cupti.available()) {  // no figure may claim a CUPTI state it did not have
      out.emplace_back("CUPTI's blocks not measured: " + cupti.unavailableReason(), std::nan(""));
      return out;
    }
    // The bench's own CUPTI calls: a refused one marks the figures it changes.
    std::string refused;
    auto check = [&](const char* what, CUptiResult r) {
      if (r == CUPTI_SUCCESS) return;
      const char* why = nullptr;
      refused += std::string(" [") + what + " refused: " +
                 (cuptiGetResultString(r, &why) == CUPTI_SUCCESS && why ? why : "CUPTI error " + std::to_string(r)) +
                 "]";
    };
    time("CUPTI external id push + pop", [&](int i) {
      cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, static_cast<uint64_t>(i + 1));
      uint64_t last = 0;
      cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    });
    time("NVTX range push + pop (CUPTI markers on)", [&](int) {
      nvtxRangePushA("bench");
      nvtxRangePop();
    });
    blocks("CUPTI on, query calls not recorded");
    check("cuptiActivityEnableRuntimeApi",
          cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 1));
    time("cudaGetDevice (CUPTI on, recorded)" + refused, query);
    check("cuptiActivityDisable(RUNTIME)", cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME));
    check("cuptiActivityDisable(DRIVER)", cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER));
    blocks("CUPTI on, API kinds off, kernels traced" + refused);
    cupti.finish(nullptr);
  }
  blocks("after CUPTI, every kind off");
  return out;
}

}  // namespace attnscope::engine
