// CUDA activity of a store indexed once, by start time: the runtime/driver
// calls of every thread, the GPU activities (kernels, copies, memsets), and
// the union of the GPU's busy intervals with prefix sums. A step, a sync
// wait or an overlay then costs binary searches plus its own events,
// whatever the trace holds (hostile ones overlap every step with every
// other, or give thousands of launches one correlation).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/store/event_store.h"

namespace attnscope {

class ActivityIndex {
 public:
  ActivityIndex() = default;
  explicit ActivityIndex(const EventStore& store);

  // CUDA runtime/driver calls of every thread starting in [t0, t1), by start.
  std::span<const EventId> callsIn(int64_t t0, int64_t t1) const;
  // Every GPU activity (kernel, memcpy, memset), by start (ties: store order).
  const std::vector<EventId>& gpuWorkByStart() const { return gpu_; }
  // The GPU activities starting before t1 (a prefix of gpuWorkByStart()).
  std::span<const EventId> gpuWorkStartingBefore(int64_t t1) const;
  // The GPU activities starting in [t0, t1) (a slice of gpuWorkByStart()).
  std::span<const EventId> gpuWorkStartingIn(int64_t t0, int64_t t1) const;
  // The longest GPU activity: those overlapping [t0, t1) start in [t0 - it, t1).
  int64_t maxGpuDurNs() const { return maxGpuDur_; }
  // The busy union's intervals: disjoint, sorted by start.
  const std::vector<int64_t>& busyStarts() const { return busyStart_; }
  const std::vector<int64_t>& busyEnds() const { return busyEnd_; }
  // The length of the union of GPU activity intervals inside [t0, t1).
  int64_t gpuBusyWithin(int64_t t0, int64_t t1) const;
  // The length of the whole union.
  int64_t gpuBusyTotal() const {
    return busyEnd_.empty() ? 0 : busyBefore_.back() + busyEnd_.back() - busyStart_.back();
  }

  // Device activity (core/store/device_activity.h: GPU work and other accelerators' work), by start:
  // the GPU work alone unless the trace has an accelerator's lanes (MTIA).
  const std::vector<EventId>& deviceWorkByStart() const { return accelerator_ ? device_ : gpu_; }
  // The length of the union of device activity inside [t0, t1), and of all of it. Overview, Kernels
  // and the diagnosis count a device's busy time by this one definition.
  int64_t deviceBusyWithin(int64_t t0, int64_t t1) const;
  int64_t deviceBusyTotal() const { return deviceBusyWithin(INT64_MIN / 2, INT64_MAX / 2); }
  bool hasAccelerator() const { return accelerator_; }

 private:
  std::vector<EventId> calls_;      // by start
  std::vector<int64_t> callStart_;  // their starts
  std::vector<EventId> gpu_;        // by start
  std::vector<int64_t> gpuStart_;   // their starts
  int64_t maxGpuDur_ = 0;
  // The union of GPU activity intervals: disjoint, sorted, with the busy
  // time before each one.
  std::vector<int64_t> busyStart_, busyEnd_, busyBefore_;
  // With an accelerator's lanes: every device activity by start, and its union.
  bool accelerator_ = false;
  std::vector<EventId> device_;
  std::vector<int64_t> devStart_, devEnd_, devBefore_;
};

}  // namespace attnscope
