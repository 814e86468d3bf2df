#include "core/run/timing_methods.h"

namespace attnscope {

namespace {

constexpr std::array<TimingMethodInfo, kTimingMethodCount> kMethods = {{
    {TimingMethod::Cupti, "cupti", "CUPTI (its kernels' GPU time)",
     "sum of the durations of the kernels, copies and memsets launched inside each step's host window "
     "(CUPTI activity + correlation)",
     "CUPTI activity + correlation (what torch.profiler with ProfilerActivity.CUDA does): the exact GPU time of "
     "the kernels each step launched. Always recorded: it is the trace.",
     "", true, 100, false},
    {TimingMethod::Events, "events", "CUDA events around it, nothing else recorded",
     "GPU-timeline distance between CUDA events recorded at the step's start and end (no other events in this "
     "pass)",
     "CUDA events at each step's start and end, nothing else: GPU-timeline distance, which waits behind earlier "
     "queued work.",
     "times the GPU's stream with CUDA events", true, 10, false},
    {TimingMethod::Host, "host", "host clock around it, no sync", "host clock around the step, no sync (launch cost)",
     "Host clock around each step, no sync: launch cost only.", "", true, 90, false},
    {TimingMethod::HostSync, "host-sync", "host clock with a sync at its end",
     "host clock around the step with a device sync as its last statement",
     "Host clock around each step with a device sync as its last statement: queued-earlier work plus this step "
     "plus sync overhead.",
     "ends every step with a GPU sync", false, 20, false},
    {TimingMethod::Torch, "torch", "host clock under torch.profiler",
     "host clock around the step while torch's profiler ran",
     "LibTorch's own profiler, in a separate child process (one CUPTI subscriber per process).", "", false, 30, true},
    {TimingMethod::OpEvents, "op-events", "CUDA events around it while every op records a pair (use_cuda=True's way)",
     "the same step events while every op and scope also recorded a CUDA event pair (use_cuda=True's way): the "
     "difference from events is their cost",
     "CUDA events at each step's start and end while every op and scope also records a pair (what use_cuda=True "
     "does): the difference from events is what those pairs cost the steps.",
     "times the GPU's stream with CUDA events", false, 40, false},
}};

constexpr bool tableInOrder() {
  for (int i = 0; i < kTimingMethodCount; ++i)
    if (static_cast<int>(kMethods[static_cast<size_t>(i)].method) != i) return false;
  return true;
}
static_assert(tableInOrder(), "timing method rows follow TimingMethod's order");

}  // namespace

const std::array<TimingMethodInfo, kTimingMethodCount>& timingMethods() { return kMethods; }

const TimingMethodInfo& timingInfo(TimingMethod m) { return kMethods[static_cast<size_t>(m)]; }

const TimingMethodInfo* timingByKey(std::string_view key) {
  for (const TimingMethodInfo& t : kMethods)
    if (t.key == key) return &t;
  return nullptr;
}

bool timingMeaningful(std::string_view key, bool cpuRun) {
  if (!cpuRun) return true;
  const TimingMethodInfo* t = timingByKey(key);
  return t && t->method != TimingMethod::Cupti && !t->needsGpu();
}

}  // namespace attnscope
