#include "clock.h"

#include <cstdlib>
#include <cstring>

namespace attnscope::engine {

namespace {
TscClock calibrate() {
  TscClock c;
#if defined(__x86_64__)
  const char* want = std::getenv("ATTNSCOPE_CLOCK");
  if (!want || std::strcmp(want, "tsc") != 0) return c;
  const uint64_t t0 = monotonicNs(), c0 = __rdtsc();
  uint64_t t1 = t0, c1 = c0;
  while (t1 - t0 < 20'000'000) {
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
