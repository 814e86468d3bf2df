// Per-op profiling overhead: the same workload with no profiler, with our
// collector (RecordFunction + CUPTI + NVTX + memory), and with LibTorch's
// own profiler. Each mode runs in its own process (one CUPTI subscriber per
// process); attnscope-bench overhead starts them and prints the ratios.
#pragma once

#include <string>

#include "attnscope/run_config.h"

namespace attnscope::engine {

struct OverheadSample {
  double secondsPerCall = 0;  // host time per block call, device synchronized at the end
  int opsPerCall = 0;         // RecordFunction events per call (ours mode counts them)
  int calls = 0;
};

// mode: "none", "ours" or "torch". Throws std::runtime_error on bad mode.
OverheadSample measureOverhead(const std::string& mode, const RunConfig& cfg, int calls);

}  // namespace attnscope::engine
