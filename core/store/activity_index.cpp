#include "core/store/activity_index.h"

#include <algorithm>

#include "core/store/work_counters.h"

namespace attnscope {

ActivityIndex::ActivityIndex(const EventStore& s) {
  workCounters().activityIndexes++;
  for (EventId i = 0; i < s.events().size(); ++i) {
    const Family f = s.event(i).family;
    if (f == Family::CudaRuntime || f == Family::CudaDriver) calls_.push_back(i);
    if (isGpuWork(f)) gpu_.push_back(i);
  }
  const auto byStart = [&](EventId a, EventId b) { return s.event(a).start < s.event(b).start; };
  std::stable_sort(calls_.begin(), calls_.end(), byStart);
  std::stable_sort(gpu_.begin(), gpu_.end(), byStart);
  callStart_.reserve(calls_.size());
  for (EventId id : calls_) callStart_.push_back(s.event(id).start);
  gpuStart_.reserve(gpu_.size());
  int64_t before = 0;
  for (EventId id : gpu_) {
    const Event& e = s.event(id);
    gpuStart_.push_back(e.start);
    maxGpuDur_ = std::max(maxGpuDur_, e.dur);
    if (e.dur <= 0) continue;
    if (!busyEnd_.empty() && e.start <= busyEnd_.back()) {
      busyEnd_.back() = std::max(busyEnd_.back(), e.end());
      continue;
    }
    if (!busyEnd_.empty()) before += busyEnd_.back() - busyStart_.back();
    busyStart_.push_back(e.start);
    busyEnd_.push_back(e.end());
    busyBefore_.push_back(before);
  }
}

std::span<const EventId> ActivityIndex::callsIn(int64_t t0, int64_t t1) const {
  const auto a = std::lower_bound(callStart_.begin(), callStart_.end(), t0);
  const auto b = std::lower_bound(a, callStart_.end(), t1);
  return {calls_.data() + (a - callStart_.begin()), static_cast<size_t>(b - a)};
}

std::span<const EventId> ActivityIndex::gpuWorkStartingBefore(int64_t t1) const {
  const auto b = std::lower_bound(gpuStart_.begin(), gpuStart_.end(), t1);
  return {gpu_.data(), static_cast<size_t>(b - gpuStart_.begin())};
}

std::span<const EventId> ActivityIndex::gpuWorkStartingIn(int64_t t0, int64_t t1) const {
  const auto a = std::lower_bound(gpuStart_.begin(), gpuStart_.end(), t0);
  const auto b = std::lower_bound(a, gpuStart_.end(), t1);
  return {gpu_.data() + (a - gpuStart_.begin()), static_cast<size_t>(b - a)};
}

int64_t ActivityIndex::gpuBusyWithin(int64_t t0, int64_t t1) const {
  if (t1 <= t0) return 0;
  // The intervals ending after t0 and starting before t1, clipped to the window.
  const size_t k0 = static_cast<size_t>(std::upper_bound(busyEnd_.begin(), busyEnd_.end(), t0) - busyEnd_.begin());
  const size_t k1 =
      static_cast<size_t>(std::lower_bound(busyStart_.begin(), busyStart_.end(), t1) - busyStart_.begin());
  if (k0 >= k1) return 0;
  const int64_t last = busyEnd_[k1 - 1] - busyStart_[k1 - 1];
  int64_t busy = busyBefore_[k1 - 1] + last - busyBefore_[k0];
  busy -= std::max<int64_t>(0, t0 - busyStart_[k0]);
  busy -= std::max<int64_t>(0, busyEnd_[k1 - 1] - t1);
  return busy;
}

}  // namespace attnscope
