// One clock for every host-side mark and for CUPTI (registered as CUPTI's
// timestamp callback), so CPU and GPU events share a timebase.
#pragma once

#include <cstdint>
#include <ctime>

namespace attnscope::engine {

inline uint64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace attnscope::engine
