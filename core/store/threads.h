// How many threads an open of a trace may use: the CPUs this process may run on (its affinity, as
// `taskset` or a container's cpuset sets it, not the machine's count), at most 8, or fewer when
// ATTNSCOPE_THREADS says so (1 reads, builds and analyses a trace on one thread).
#pragma once

#include <cstddef>
#include <exception>
#include <thread>

namespace attnscope {

unsigned workerThreads();

// The size (in events) from which a stage splits its work over threads: `usual`, or
// ATTNSCOPE_PARALLEL_MIN_EVENTS when set (the tests split small traces to compare the two paths).
size_t parallelMinEvents(size_t usual);

// Runs a() here and b() on a second thread when `two`; else, or when no second thread can start, a()
// then b() here. An exception from either comes back here once both are done.
template <typename A, typename B>
void runBoth(bool two, A&& a, B&& b) {
  std::exception_ptr err;
  std::thread t;
  if (two) {
    try {
      t = std::thread([&] {
        try {
          b();
        } catch (...) {
          err = std::current_exception();
        }
      });
    } catch (...) {
      // No second thread: both here.
    }
  }
  try {
    a();
  } catch (...) {
    if (t.joinable()) t.join();
    throw;
  }
  if (t.joinable())
    t.join();
  else
    b();
  if (err) std::rethrow_exception(err);
}

}  // namespace attnscope
