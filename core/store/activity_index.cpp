#include "core/store/activity_index.h"

#include <algorithm>

#include "core/store/work_counters.h"

namespace attnscope {

ActivityIndex::ActivityIndex(const EventStore& s) {
  workCounters().activityIndexes++;
  const Family* family = s.columns().family.data();
  const int64_t* start = s.columns().start.data();
  const int64_t* dur = s.columns().dur.data();
  spill::Vector<EventId> calls, gpu;
  for (EventId i = 0; i < s.size(); ++i) {
    const Family f = family[i];
    if (f == Family::CudaRuntime || f == Family::CudaDriver) calls.push_back(i);
    if (isGpuWork(f)) gpu.push_back(i);
  }
  const auto byStart = [&](EventId a, EventId b) { return start[a] < start[b]; };
  std::stable_sort(calls.begin(), calls.end(), byStart);
  std::stable_sort(gpu.begin(), gpu.end(), byStart);
  spill::Vector<int64_t> callStart(calls.size()), gpuStart(gpu.size());
  for (size_t k = 0; k < calls.size(); ++k) callStart[k] = start[calls[k]];
  spill::Vector<int64_t> busyStart, busyEnd, busyBefore;
  int64_t before = 0;
  for (size_t k = 0; k < gpu.size(); ++k) {
    const EventId id = gpu[k];
    const int64_t b = start[id], d = dur[id];
    gpuStart[k] = b;
    p_.maxGpuDur = std::max(p_.maxGpuDur, d);
    if (d <= 0) continue;
    if (!busyEnd.empty() && b <= busyEnd.back()) {
      busyEnd.back() = std::max(busyEnd.back(), b + d);
      continue;
    }
    if (!busyEnd.empty()) before += busyEnd.back() - busyStart.back();
    busyStart.push_back(b);
    busyEnd.push_back(b + d);
    busyBefore.push_back(before);
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
  if (t1 <= t0) return 0;
  const auto& bs = p_.busyStart;
  const auto& be = p_.busyEnd;
  const auto& bb = p_.busyBefore;
  // The intervals ending after t0 and starting before t1, clipped to the window.
  const size_t k0 = static_cast<size_t>(std::upper_bound(be.begin(), be.end(), t0) - be.begin());
  const size_t k1 = static_cast<size_t>(std::lower_bound(bs.begin(), bs.end(), t1) - bs.begin());
  if (k0 >= k1) return 0;
  const int64_t last = be[k1 - 1] - bs[k1 - 1];
  int64_t busy = bb[k1 - 1] + last - bb[k0];
  busy -= std::max<int64_t>(0, t0 - bs[k0]);
  busy -= std::max<int64_t>(0, be[k1 - 1] - t1);
  return busy;
}

}  // namespace attnscope
