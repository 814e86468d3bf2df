#include "core/engine/clock.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace attnscope::engine {

namespace {
// The counter can stand in for CLOCK_MONOTONIC when it ticks at a constant
// rate on every core: the CPU says so (invariant TSC), or the kernel itself
// keeps time with it.
bool tscTrusted() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8))) return true;
#endif
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  return in >> source && source == "tsc";
}

#if defined(__x86_64__)
// A counter reading bracketing a clock reading: the tightest of 16 tries.
struct Sandwich {
  uint64_t tsc = 0, ns = 0, widthTicks = UINT64_MAX;
};
Sandwich sandwich() {
  Sandwich best;
  for (int i = 0; i < 16; ++i) {
    const uint64_t a = __rdtsc();
    const uint64_t t = monotonicNs();
    const uint64_t b = __rdtsc();
    if (b > a && b - a < best.widthTicks) best = {a + (b - a) / 2, t, b - a};
  }
  return best;
}
#endif

TscClock calibrate() {
  TscClock c;
#if defined(__x86_64__)
  const char* want = std::getenv("ATTNSCOPE_CLOCK");
  if (want && std::strcmp(want, "monotonic") == 0) return c;
  if (!(want && std::strcmp(want, "tsc") == 0) && !tscTrusted()) return c;
  const Sandwich s0 = sandwich();
  const timespec nap{0, 10'000'000};
  nanosleep(&nap, nullptr);  // asleep, not spinning: the rate comes from the two ends
  const Sandwich s1 = sandwich();
  if (s1.tsc <= s0.tsc || s1.ns <= s0.ns || s0.widthTicks == UINT64_MAX || s1.widthTicks == UINT64_MAX) return c;
  c.nsPerTick = static_cast<double>(s1.ns - s0.ns) / static_cast<double>(s1.tsc - s0.tsc);
  c.baseTsc = s1.tsc;
  c.baseNs = s1.ns;
  c.enabled = true;
#endif
  return c;
}
}  // namespace

TscClock gTscClock;

void initClock() {
  static const bool once = [] {
    gTscClock = calibrate();
    return true;
  }();
  (void)once;
}

ClockCheck checkClock() {
  ClockCheck r;
#if defined(__x86_64__)
  if (!gTscClock.enabled) return r;
  const Sandwich s = sandwich();
  const double scaled = static_cast<double>(static_cast<int64_t>(s.tsc - gTscClock.baseTsc)) * gTscClock.nsPerTick;
  r.driftNs = static_cast<int64_t>(gTscClock.baseNs) + static_cast<int64_t>(scaled) - static_cast<int64_t>(s.ns);
  r.sinceCalibrationNs = static_cast<int64_t>(s.ns - gTscClock.baseNs);
  r.sandwichNs = static_cast<int64_t>(static_cast<double>(s.widthTicks) * gTscClock.nsPerTick);
#endif
  return r;
}

}  // namespace attnscope::engine
