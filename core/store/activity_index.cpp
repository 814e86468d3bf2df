#include "core/store/activity_index.h"

#include <algorithm>

#include "core/store/device_activity.h"
#include "core/store/work_counters.h"

namespace attnscope {

namespace {

// The union of the intervals of `ids` (sorted by start), with the busy time before each piece.
void unionOf(const int64_t* start, const int64_t* dur, std::span<const EventId> ids, spill::Vector<int64_t>& starts,
             spill::Vector<int64_t>& ends, spill::Vector<int64_t>& before) {
  int64_t sum = 0;
  for (EventId id : ids) {
    const int64_t b = start[id], d = dur[id];
    if (d <= 0) continue;
    if (!ends.empty() && b <= ends.back()) {
      ends.back() = std::max(ends.back(), b + d);
      continue;
    }
    if (!ends.empty()) sum += ends.back() - starts.back();
    starts.push_back(b);
    ends.push_back(b + d);
    before.push_back(sum);
  }
}

int64_t busyWithin(std::span<const int64_t> starts, std::span<const int64_t> ends, std::span<const int64_t> before,
                   int64_t t0, int64_t t1) {
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
  const Family* family = s.columns().family.data();
  const int64_t* start = s.columns().start.data();
  const int64_t* dur = s.columns().dur.data();
  spill::Vector<EventId> calls, gpu, device;
  for (EventId i = 0; i < s.size(); ++i) {
    const Family f = family[i];
    if (f == Family::CudaRuntime || f == Family::CudaDriver) calls.push_back(i);
    if (isGpuWork(f))
      gpu.push_back(i);
    else if (f == Family::Other && dur[i] > 0 && isDeviceWork(s, s.event(i)))
      device.push_back(i);  // another accelerator's work (device_activity.h)
  }
  const auto byStart = [&](EventId a, EventId b) { return start[a] < start[b]; };
  std::stable_sort(calls.begin(), calls.end(), byStart);
  std::stable_sort(gpu.begin(), gpu.end(), byStart);
  spill::Vector<int64_t> callStart(calls.size()), gpuStart(gpu.size());
  for (size_t k = 0; k < calls.size(); ++k) callStart[k] = start[calls[k]];
  for (size_t k = 0; k < gpu.size(); ++k) {
    gpuStart[k] = start[gpu[k]];
    p_.maxGpuDur = std::max(p_.maxGpuDur, dur[gpu[k]]);
  }
  spill::Vector<int64_t> busyStart, busyEnd, busyBefore;
  unionOf(start, dur, gpu, busyStart, busyEnd, busyBefore);
  p_.accelerator = !device.empty();
  if (p_.accelerator) {
    device.insert(device.end(), gpu.begin(), gpu.end());
    std::stable_sort(device.begin(), device.end(), byStart);
    spill::Vector<int64_t> devStart, devEnd, devBefore;
    unionOf(start, dur, device, devStart, devEnd, devBefore);
    p_.device = Col<EventId>(std::move(device));
    p_.devStart = Col<int64_t>(std::move(devStart));
    p_.devEnd = Col<int64_t>(std::move(devEnd));
    p_.devBefore = Col<int64_t>(std::move(devBefore));
  }
  p_.calls = Col<EventId>(std::move(calls));
  p_.callStart = Col<int64_t>(std::move(callStart));
  p_.gpu = Col<EventId>(std::move(gpu));
  p_.gpuStart = Col<int64_t>(std::move(gpuStart));
  p_.busyStart = Col<int64_t>(std::move(busyStart));
  p_.busyEnd = Col<int64_t>(std::move(busyEnd));
  p_.busyBefore = Col<int64_t>(std::move(busyBefore));
}

std::span<const EventId> ActivityIndex::callsIn(int64_t t0, int64_t t1) const {
  const auto a = std::lower_bound(p_.callStart.begin(), p_.callStart.end(), t0);
  const auto b = std::lower_bound(a, p_.callStart.end(), t1);
  return {p_.calls.data() + (a - p_.callStart.begin()), static_cast<size_t>(b - a)};
}

std::span<const EventId> ActivityIndex::gpuWorkStartingBefore(int64_t t1) const {
  const auto b = std::lower_bound(p_.gpuStart.begin(), p_.gpuStart.end(), t1);
  return {p_.gpu.data(), static_cast<size_t>(b - p_.gpuStart.begin())};
}

std::span<const EventId> ActivityIndex::gpuWorkStartingIn(int64_t t0, int64_t t1) const {
  const auto a = std::lower_bound(p_.gpuStart.begin(), p_.gpuStart.end(), t0);
  const auto b = std::lower_bound(a, p_.gpuStart.end(), t1);
  return {p_.gpu.data() + (a - p_.gpuStart.begin()), static_cast<size_t>(b - a)};
}

int64_t ActivityIndex::gpuBusyWithin(int64_t t0, int64_t t1) const {
  return busyWithin(p_.busyStart, p_.busyEnd, p_.busyBefore, t0, t1);
}

int64_t ActivityIndex::deviceBusyWithin(int64_t t0, int64_t t1) const {
  return p_.accelerator ? busyWithin(p_.devStart, p_.devEnd, p_.devBefore, t0, t1)
                        : busyWithin(p_.busyStart, p_.busyEnd, p_.busyBefore, t0, t1);
}

}  // namespace attnscope
