#include "core/store/threads.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace attnscope {

unsigned workerThreads() {
  unsigned n = std::thread::hardware_concurrency();
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) n = static_cast<unsigned>(CPU_COUNT(&set));
  if (const char* v = std::getenv("ATTNSCOPE_THREADS")) {
    char* end = nullptr;
    const long want = std::strtol(v, &end, 10);
    if (end != v && *end == '\0' && want >= 1) n = std::min(n, static_cast<unsigned>(std::min(want, 64L)));
  }
  return std::clamp(n, 1u, 8u);
}

size_t parallelMinEvents(size_t usual) {
  if (const char* v = std::getenv("ATTNSCOPE_PARALLEL_MIN_EVENTS")) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (end != v && *end == '\0') return static_cast<size_t>(n);
  }
  return usual;
}

}  // namespace attnscope
