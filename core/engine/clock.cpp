#include "core/engine/clock.h"

#include <cstdlib>
#include <cstring>
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

TscClock calibrate() {
  TscClock c;
#if defined(__x86_64__)
  const char* want = std::getenv("ATTNSCOPE_CLOCK");
  if (want && std::strcmp(want, "monotonic") == 0) return c;
  if (!(want && std::strcmp(want, "tsc") == 0) && !tscTrusted()) return c;
  const uint64_t t0 = monotonicNs(), c0 = __rdtsc();
  uint64_t t1 = t0, c1 = c0;
  while (t1 - t0 < 10'000'000) {
    t1 = monotonicNs();
    c1 = __rdtsc();
  }
  if (c1 <= c0) return c;
  c.nsPerTick = static_cast<double>(t1 - t0) / static_cast<double>(c1 - c0);
  c.baseTsc = c1;
  c.baseNs = t1;
  c.enabled = true;
#endif
  return c;
}
}  // namespace

const TscClock gTscClock = calibrate();

}  // namespace attnscope::engine
