#include "core/engine/workload.h"

#include <ATen/record_function.h>
#include <torch/cuda.h>

#include <cmath>
#include <memory>
#include <optional>

#include "core/engine/clock.h"

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

Workload::Workload(const RunConfig& cfg, at::Device device) : cfg_(cfg), device_(device) {
  at::manual_seed(static_cast<uint64_t>(cfg.seed));
  const auto [b, h, s, d] = cfg.shape;
  auto opts = at::TensorOptions().dtype(scalarType(cfg.dtype)).device(device);
  q_ = at::randn({b, h, s, d}, opts);
  k_ = at::randn({b, h, s, d}, opts);
  v_ = at::randn({b, h, s, d}, opts);
  synchronize();
}

void Workload::synchronize() {
  if (device_.is_cuda()) torch::cuda::synchronize();
}

at::Tensor Workload::call(int iteration, std::vector<StepSpan>* spans, const StepHooks* hooks, bool extraSync,
                          const std::string* iterationScope) {
  const int64_t d = cfg_.shape[3];
  const bool stepSync = cfg_.sync == SyncMode::Step || extraSync;
  std::optional<UserScope> whole;
  if (iterationScope) whole.emplace(*iterationScope);
  std::optional<UserScope> full;
  if (cfg_.wrapFull) full.emplace(kFullScopeName);

  at::Tensor qk, s, w, o;
  auto step = [&](int i, auto&& body) {
    StepSpan win;
    win.iteration = iteration;
    win.step = i;
    win.startNs = static_cast<int64_t>(nowNs());
    if (hooks && hooks->onStepStart) hooks->onStepStart(i);
    {
      std::optional<UserScope> scope;
      if (cfg_.wrap[i]) scope.emplace(kStepNames[i]);
      body();
      if (stepSync) synchronize();  // the step's last statement, inside its scope
    }
    if (hooks && hooks->onStepEnd) hooks->onStepEnd(i);
    win.endNs = static_cast<int64_t>(nowNs());
    if (spans) spans->push_back(win);
  };

  step(0, [&] { qk = at::matmul(q_, k_.transpose(-2, -1)); });
  step(1, [&] {
    if (cfg_.scale == ScaleMode::DeviceTensor) {
      // torch.sqrt(torch.tensor(d, device=cuda)): a host scalar copied to the
      // device (a pageable H2D copy and a stream sync), as in the question.
      s = qk / at::sqrt(at::scalar_tensor(d, at::kLong).to(device_));
    } else {
      s = qk / std::sqrt(static_cast<double>(d));
    }
  });
  step(2, [&] { w = at::softmax(s, -1); });
  step(3, [&] { o = at::matmul(w, v_); });
  full.reset();
  if (cfg_.sync == SyncMode::End) synchronize();
  whole.reset();
  return o;
}

}  // namespace attnscope::engine
