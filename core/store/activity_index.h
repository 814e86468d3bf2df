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
  std::span<const EventId> gpuWorkByStart() const { return p_.gpu; }
  // The GPU activities starting before t1 (a prefix of gpuWorkByStart()).
  std::span<const EventId> gpuWorkStartingBefore(int64_t t1) const;
  // The GPU activities starting in [t0, t1) (a slice of gpuWorkByStart()).
  std::span<const EventId> gpuWorkStartingIn(int64_t t0, int64_t t1) const;
  // The longest GPU activity: those overlapping [t0, t1) start in [t0 - it, t1).
  int64_t maxGpuDurNs() const { return p_.maxGpuDur; }
  // The busy union's intervals: disjoint, sorted by start.
  std::span<const int64_t> busyStarts() const { return p_.busyStart; }
  std::span<const int64_t> busyEnds() const { return p_.busyEnd; }
  // The length of the union of GPU activity intervals inside [t0, t1).
  int64_t gpuBusyWithin(int64_t t0, int64_t t1) const;
  // The length of the whole union.
  int64_t gpuBusyTotal() const {
    return p_.busyEnd.empty() ? 0 : p_.busyBefore.back() + p_.busyEnd.back() - p_.busyStart.back();
  }

  // Its arrays, as the columnar cache writes and maps them.
  struct Parts {
    Col<EventId> calls;      // by start
    Col<int64_t> callStart;  // their starts
    Col<EventId> gpu;        // by start
    Col<int64_t> gpuStart;   // their starts
    int64_t maxGpuDur = 0;
    // The union of GPU activity intervals: disjoint, sorted, with the busy time before each one.
    Col<int64_t> busyStart, busyEnd, busyBefore;
    // With an accelerator's lanes: every device activity by start, and its union.
    bool accelerator = false;
    Col<EventId> device;
    Col<int64_t> devStart, devEnd, devBefore;
  };
  const Parts& parts() const { return p_; }
  static ActivityIndex fromParts(Parts&& p) {
    ActivityIndex x;
    x.p_ = std::move(p);
    return x;
  }

  // Device activity (core/store/device_activity.h: GPU work and other accelerators' work), by start:
  // the GPU work alone unless the trace has an accelerator's lanes (MTIA).
  std::span<const EventId> deviceWorkByStart() const { return p_.accelerator ? p_.device.span() : p_.gpu.span(); }
  // The length of the union of device activity inside [t0, t1), and of all of it. Overview, Kernels
  // and the diagnosis count a device's busy time by this one definition.
  int64_t deviceBusyWithin(int64_t t0, int64_t t1) const;
  int64_t deviceBusyTotal() const { return deviceBusyWithin(INT64_MIN / 2, INT64_MAX / 2); }
  bool hasAccelerator() const { return p_.accelerator; }

 private:
  Parts p_;
};

}  // namespace attnscope
