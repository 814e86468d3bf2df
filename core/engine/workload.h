// The question's multi-head attention as four named steps, with selectable
// record_function wrapping and synchronization, and the engine's own cheap
// host-window marks around every step (wrapped or not).
#pragma once

#include <ATen/ATen.h>

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "core/run/run_config.h"

namespace attnscope::engine {

struct StepSpan {
  int iteration = 0;
  int step = 0;
  int64_t startNs = 0;
  int64_t endNs = 0;
};

// Called at step boundaries (the events pass records CUDA events there).
struct StepHooks {
  std::function<void(int step)> onStepStart;
  std::function<void(int step)> onStepEnd;
};

class Workload {
 public:
  // Allocates q, k, v (seeded) on the device. Throws c10::Error on OOM.
  Workload(const RunConfig& cfg, at::Device device);
  // One call of the block. `spans` (may be null) gets the 4 steps' host spans;
  // `extraSync` adds a device sync as each step's last statement (host-sync).
  // `iterationScope`: the call inside a record_function of that name (the
  // trace pass's "ProfilerStep#N", as torch.profiler's step() marks them).
  at::Tensor call(int iteration, std::vector<StepSpan>* spans, const StepHooks* hooks = nullptr, bool extraSync = false,
                  const std::string* iterationScope = nullptr);
  void synchronize();
  bool cuda() const { return device_.is_cuda(); }

 private:
  const RunConfig& cfg_;
  at::Device device_;
  at::Tensor q_, k_, v_;
};

}  // namespace attnscope::engine
