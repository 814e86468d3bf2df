// One clock for every host-side mark and for CUPTI (registered as CUPTI's
// timestamp callback), so CPU and GPU events share a timebase.
//
// The CPU's timestamp counter (as torch's profiler does), scaled to
// nanoseconds with a calibration against CLOCK_MONOTONIC made once per
// process, where the counter is invariant (or the kernel's clocksource):
// ~12 ns a read instead of ~21 on the H200 box, twice per op plus every CUPTI
// timestamp. Elsewhere, or with ATTNSCOPE_CLOCK=monotonic, CLOCK_MONOTONIC.
#pragma once

#include <cstdint>
#include <ctime>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace attnscope::engine {

inline uint64_t monotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct TscClock {
  bool enabled = false;
  uint64_t baseTsc = 0, baseNs = 0;
  double nsPerTick = 0;
};
// Set up when the process starts (clock.cpp): reads ATTNSCOPE_CLOCK and
// calibrates the counter against CLOCK_MONOTONIC over about 10 ms.
extern const TscClock gTscClock;

inline uint64_t nowNs() {
#if defined(__x86_64__)
  if (gTscClock.enabled) {
    const uint64_t d = __rdtsc() - gTscClock.baseTsc;
    return gTscClock.baseNs + static_cast<uint64_t>(static_cast<double>(d) * gTscClock.nsPerTick);
  }
#endif
  return monotonicNs();
}

}  // namespace attnscope::engine
