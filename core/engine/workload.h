// The question's multi-head attention as four named steps, with selectable
// record_function wrapping and synchronization, and the engine's own cheap
// host-window marks around every step (wrapped or not).
#pragma once

#include <ATen/ATen.h>

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/run/run_capture.h"
#include "core/run/run_config.h"

namespace attnscope::engine {

class RankGroup;

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

// A workload the run drives: named steps, each the workload's own work. The base runs one call of
// them with the run's wrapping (record_function per step, and around the whole), its syncs, the
// host window of every step and the passes' hooks, so a measurement pass never sees what a step
// does: a second workload (the user's own script, next) implements stepCount/stepName/runStep.
class Workload {
 public:
  virtual ~Workload() = default;
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  // One call of the block. `spans` (may be null) gets the steps' host spans;
  // `extraSync` adds a device sync as each step's last statement (host-sync).
  // `iterationScope`: the call inside a record_function of that name (the
  // trace pass's "ProfilerStep#N", as torch.profiler's step() marks them).
  void call(int iteration, std::vector<StepSpan>* spans, const StepHooks* hooks = nullptr, bool extraSync = false,
            const std::string* iterationScope = nullptr);
  void synchronize();
  bool cuda() const { return device_.is_cuda(); }

  virtual int stepCount() const = 0;
  virtual std::string_view stepName(int step) const = 0;
  // A rank of a multi-rank run: its collectives recorded since `windowStart` (record_param_comms
  // ops with their args) and the trace's distributedInfo; nothing for a single process.
  virtual std::vector<CollectiveOpRecord> takeCollectives(int64_t /*windowStart*/) { return {}; }
  virtual DistributedInfo distributedInfo() const { return {}; }

 protected:
  Workload(const RunConfig& cfg, at::Device device) : cfg_(cfg), device_(device) {}
  virtual void runStep(int step) = 0;  // the step's work, on the current stream
  virtual void endCall() {}            // after the last step of a call

  const RunConfig& cfg_;
  at::Device device_;
  int iteration_ = -1;  // the call's (-1: a warm-up call)
};

// The question's multi-head attention: QK MATMUL, SCALE, SOFTMAX PASS, AV MATMUL.
class AttentionWorkload final : public Workload {
 public:
  // Allocates q, k, v (seeded) on the device. Throws c10::Error on OOM. A rank of a multi-rank run
  // (cfg.rank >= 0) keeps its share of the heads and joins the pass's process group (`pass` names it).
  AttentionWorkload(const RunConfig& cfg, at::Device device, std::string_view pass = "");
  ~AttentionWorkload() override;
  int stepCount() const override { return kStepCount; }
  std::string_view stepName(int step) const override { return kStepNames[static_cast<size_t>(step)]; }

 protected:
  void runStep(int step) override;
  void endCall() override;
  std::vector<CollectiveOpRecord> takeCollectives(int64_t windowStart) override;
  DistributedInfo distributedInfo() const override;

 private:
  at::Tensor q_, k_, v_;
  at::Tensor qk_, s_, w_, o_;         // one call's intermediates, dropped at its end
  std::unique_ptr<RankGroup> group_;  // a rank of a multi-rank run
};

// The workload a run's config asks for (today: the attention block). `pass` names the pass (a rank's
// process group for it is its own).
std::unique_ptr<Workload> makeWorkload(const RunConfig& cfg, at::Device device, std::string_view pass = "");

}  // namespace attnscope::engine
