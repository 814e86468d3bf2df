// Per-op profiling overhead: the same workload with no profiler, with our
// collector (RecordFunction + CUPTI + NVTX + memory), and with LibTorch's own
// profiler. One process measures one profiler (one CUPTI subscriber per
// process) against its own baseline: batches without the profiler alternate
// with batches with it, so differences between processes (placement, clocks)
// and drifts within one cancel. attnscope-bench overhead starts the
// processes and prints ratios.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/run/run_config.h"

namespace attnscope::engine {

struct OverheadSample {
  std::vector<double> baseline;  // seconds per call, one per batch, no profiler
  std::vector<double> profiled;  // seconds per call, one per batch, profiler on
  int opsPerCall = 0;            // RecordFunction events per call (counted by our recorder)
};

// Each batch pair: a batch without the profiler, then the profiler started,
// a short warm-up, a timed batch with it, the profiler stopped.
// profiler: "ours" (recorder + CUPTI), "recorder" (RecordFunction side only),
// "cupti" (CUPTI only), "torch" (LibTorch's profiler, CPU + CUDA, shapes and
// memory like ours), "torch-cpu" (LibTorch's profiler, CPU activities only).
// Throws std::runtime_error on an unknown profiler.
OverheadSample measureOverhead(const std::string& profiler, const RunConfig& cfg, int callsPerBatch, int batches);

// Nanoseconds per call of the collector's building blocks (clock reads, a
// heap context, CUPTI external-id push/pop, NVTX push/pop with CUPTI on) and
// what CUPTI adds to every CUDA call: cudaGetDevice and a small op's launch
// before CUPTI, with it (API kinds on, then off) and after it.
std::vector<std::pair<std::string, double>> microCosts(bool cuda);

}  // namespace attnscope::engine
