// One clock for every host-side mark and for CUPTI (registered as CUPTI's
// timestamp callback), so CPU and GPU events share a timebase.
//
// CLOCK_MONOTONIC by default. ATTNSCOPE_CLOCK=tsc reads the CPU's timestamp
// counter instead (as torch's profiler does), scaled to nanoseconds with a
// calibration against CLOCK_MONOTONIC made once per process: cheaper on
// machines where clock_gettime is slow. The overhead benchmark compares both.
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
// Set up when the process starts (clock.cpp): reads ATTNSCOPE_CLOCK and, for
// tsc, calibrates the counter against CLOCK_MONOTONIC over about 20 ms.
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
