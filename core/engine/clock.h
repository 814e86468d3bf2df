// One clock for every host-side mark and for CUPTI (registered as CUPTI's
// timestamp callback), so CPU and GPU events share a timebase.
//
// The CPU's timestamp counter (as torch's profiler does), scaled to
// nanoseconds with a calibration against CLOCK_MONOTONIC, where the counter
// is invariant (or the kernel's clocksource): ~12 ns a read instead of ~21 on
// the H200 box, twice per op plus every CUPTI timestamp. Elsewhere, with
// ATTNSCOPE_CLOCK=monotonic, or before initClock(), CLOCK_MONOTONIC.
//
// Calibration (initClock, once per engine process, never at start-up of the
// CLI): two rdtsc / clock_gettime / rdtsc sandwiches 10 ms apart (sleeping,
// not spinning), each the tightest of several tries, so a preemption inside
// one try cannot skew the rate; checkClock() measures the drift at the end.
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
// Disabled until initClock() calibrates it.
extern TscClock gTscClock;

// Reads ATTNSCOPE_CLOCK and calibrates (about 10 ms, asleep). Idempotent;
// call before any thread reads the clock.
void initClock();

// How far the calibrated clock has drifted from CLOCK_MONOTONIC since
// initClock (0 when the clock is CLOCK_MONOTONIC itself), and over how long.
struct ClockCheck {
  int64_t driftNs = 0;
  int64_t sinceCalibrationNs = 0;
  int64_t sandwichNs = 0;  // the uncertainty of one comparison (the tightest sandwich's width)
};
ClockCheck checkClock();

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
