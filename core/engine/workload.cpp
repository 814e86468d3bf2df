#include "core/engine/workload.h"

#include <ATen/record_function.h>
#include <torch/cuda.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <thread>

#include "core/engine/clock.h"
#include "core/engine/rank_group.h"

namespace attnscope::engine {

namespace {

at::ScalarType scalarType(RunDType d) {
  switch (d) {
    case RunDType::Float32:
      return at::kFloat;
    case RunDType::Float16:
      return at::kHalf;
    case RunDType::BFloat16:
      return at::kBFloat16;
  }
  return at::kFloat;
}

// What Python's `with torch.autograd.profiler.record_function(name):` does:
// a RecordFunction with USER_SCOPE, begun with the name, ended on exit.
class UserScope {
 public:
  explicit UserScope(std::string_view name) : rf_(at::RecordScope::USER_SCOPE) {
    if (rf_.isActive()) rf_.before(std::string(name));
  }
  ~UserScope() { rf_.end(); }
  UserScope(const UserScope&) = delete;
  UserScope& operator=(const UserScope&) = delete;

 private:
  at::RecordFunction rf_;
};

}  // namespace

AttentionWorkload::AttentionWorkload(const RunConfig& cfg, at::Device device, std::string_view pass)
    : Workload(cfg, device) {
  at::manual_seed(static_cast<uint64_t>(cfg.seed));
  const auto [b, h, s, d] = cfg.shape;
  auto opts = at::TensorOptions().dtype(scalarType(cfg.dtype)).device(device);
  q_ = at::randn({b, h, s, d}, opts);
  k_ = at::randn({b, h, s, d}, opts);
  v_ = at::randn({b, h, s, d}, opts);
  if (cfg.rank >= 0 && cfg.ranks > 1) {
    // This rank's heads of the same seeded tensors, so the gathered output is the one-process block's.
    const int64_t share = h / cfg.ranks, first = share * cfg.rank;
    q_ = q_.narrow(1, first, share).contiguous();
    k_ = k_.narrow(1, first, share).contiguous();
    v_ = v_.narrow(1, first, share).contiguous();
    group_ = std::make_unique<RankGroup>(cfg, device, pass.empty() ? "run" : pass);
  }
  synchronize();
}

AttentionWorkload::~AttentionWorkload() = default;

void AttentionWorkload::runStep(int step) {
  switch (step) {
    case 0:
      qk_ = at::matmul(q_, k_.transpose(-2, -1));
      break;
    case 1:
      if (cfg_.scale == ScaleMode::DeviceTensor) {
        // torch.sqrt(torch.tensor(d, device=cuda)): a host scalar copied to the
        // device (a pageable H2D copy and a stream sync), as in the question.
        s_ = qk_ / at::sqrt(at::scalar_tensor(cfg_.shape[3], at::kLong).to(device_));
      } else {
        s_ = qk_ / std::sqrt(static_cast<double>(cfg_.shape[3]));
      }
      break;
    case 2:
      w_ = at::softmax(s_, -1);
      break;
    case 3:
      o_ = at::matmul(w_, v_);
      if (group_) {
        // The ranks' outputs all-gathered, inside AV MATMUL (its scope when wrapped): a rank that
        // waits for a late one shows the wait in this step. The slow rank's sleep comes first, in a
        // scope of its own, so the truth is in its trace.
        if (cfg_.rank == cfg_.slowRank && cfg_.slowUs > 0) {
          const UserScope sleep("slow_rank_sleep");
          std::this_thread::sleep_for(std::chrono::microseconds(cfg_.slowUs));
        }
        o_ = group_->allGather(o_, iteration_);
      }
      break;
    default:
      break;
  }
}

void AttentionWorkload::endCall() {
  qk_ = at::Tensor();
  s_ = at::Tensor();
  w_ = at::Tensor();
  o_ = at::Tensor();
}

std::vector<CollectiveOpRecord> AttentionWorkload::takeCollectives(int64_t windowStart) {
  return group_ ? group_->takeRecords(windowStart) : std::vector<CollectiveOpRecord>();
}

DistributedInfo AttentionWorkload::distributedInfo() const { return group_ ? group_->info() : DistributedInfo(); }

std::unique_ptr<Workload> makeWorkload(const RunConfig& cfg, at::Device device, std::string_view pass) {
  return std::make_unique<AttentionWorkload>(cfg, device, pass);
}

void Workload::synchronize() {
  if (device_.is_cuda()) torch::cuda::synchronize();
}

void Workload::call(int iteration, std::vector<StepSpan>* spans, const StepHooks* hooks, bool extraSync,
                    const std::string* iterationScope) {
  const bool stepSync = cfg_.sync == SyncMode::Step || extraSync;
  iteration_ = iteration;
  std::optional<UserScope> whole;
  if (iterationScope) whole.emplace(*iterationScope);
  std::optional<UserScope> full;
  if (cfg_.wrapFull) full.emplace(kFullScopeName);
  for (int i = 0; i < stepCount(); ++i) {
    StepSpan win;
    win.iteration = iteration;
    win.step = i;
    win.startNs = static_cast<int64_t>(nowNs());
    if (hooks && hooks->onStepStart) hooks->onStepStart(i);
    {
      std::optional<UserScope> scope;
      if (i < kStepCount && cfg_.wrap[static_cast<size_t>(i)]) scope.emplace(stepName(i));
      runStep(i);
      if (stepSync) synchronize();  // the step's last statement, inside its scope
    }
    if (hooks && hooks->onStepEnd) hooks->onStepEnd(i);
    win.endNs = static_cast<int64_t>(nowNs());
    if (spans) spans->push_back(win);
  }
  full.reset();
  if (cfg_.sync == SyncMode::End) synchronize();
  whole.reset();
  endCall();
}

}  // namespace attnscope::engine
