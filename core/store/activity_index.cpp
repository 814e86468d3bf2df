#include "core/store/activity_index.h"

#include <algorithm>

#include "core/store/device_activity.h"
#include "core/store/work_counters.h"

namespace attnscope {

namespace {

// The union of the intervals of `ids` (sorted by start), with the busy time before each piece.
void unionOf(const EventStore& s, const std::vector<EventId>& ids, std::vector<int64_t>& starts,
             std::vector<int64_t>& ends, std::vector<int64_t>& before) {
  int64_t sum = 0;
  for (EventId id : ids) {
    const Event& e = s.event(id);
    if (e.dur <= 0) continue;
    if (!ends.empty() && e.start <= ends.back()) {
      ends.back() = std::max(ends.back(), e.end());
      continue;
    }
    if (!ends.empty()) sum += ends.back() - starts.back();
    starts.push_back(e.start);
    ends.push_back(e.end());
    before.push_back(sum);
  }
}

int64_t busyWithin(const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                   const std::vector<int64_t>& before, int64_t t0, int64_t t1) {
  if (t1 <= t0) return 0;
  // The intervals ending after t0 and starting before t1, clipped to the window.
  const size_t k0 = static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), t0) - ends.begin());
  const size_t k1 = static_cast<size_t>(std::lower_bound(starts.begin(), starts.end(), t1) - starts.begin());
  if (k0 >= k1) return 0;
  int64_t busy = before[k1 - 1] + (ends[k1 - 1] - starts[k1 - 1]) - before[k0];
  busy -= std::max<int64_t>(0, t0 - starts[k0]);
  busy -= std::max<int64_t>(0, ends[k1 - 1] - t1);
  return busy;
}

}  // namespace

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
  for (EventId id : gpu_) {
    gpuStart_.push_back(s.event(id).start);
    maxGpuDur_ = std::max(maxGpuDur_, s.event(id).dur);
  }
  unionOf(s, gpu_, busyStart_, busyEnd_, busyBefore_);
  for (EventId i = 0; i < s.events().size(); ++i)
    if (!isGpuWork(s.event(i).family) && isDeviceWork(s, s.event(i))) device_.push_back(i);
  accelerator_ = !device_.empty();
  if (accelerator_) {
    device_.insert(device_.end(), gpu_.begin(), gpu_.end());
    std::stable_sort(device_.begin(), device_.end(), byStart);
    unionOf(s, device_, devStart_, devEnd_, devBefore_);
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
  return busyWithin(busyStart_, busyEnd_, busyBefore_, t0, t1);
}

int64_t ActivityIndex::deviceBusyWithin(int64_t t0, int64_t t1) const {
  return accelerator_ ? busyWithin(devStart_, devEnd_, devBefore_, t0, t1)
                      : busyWithin(busyStart_, busyEnd_, busyBefore_, t0, t1);
}

}  // namespace attnscope
