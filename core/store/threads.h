// How many threads an open of a trace may use: the CPUs this process may run on (its affinity, as
// `taskset` or a container's cpuset sets it, not the machine's count), at most 8; or as many as
// ATTNSCOPE_THREADS says, up to 8 (1 reads, builds and analyses a trace on one thread; more than the
// CPUs lets the tests run the paths of a larger machine).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

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

// Consecutive items (a store's lanes) in at most `parts` groups of about equal count each, given each
// item's count: the boundaries b[0] = 0 < b[1] < ... < b[n] = items, n <= parts (n >= 1).
std::vector<uint32_t> splitByCounts(const std::vector<size_t>& counts, unsigned parts);

// Runs fn(0) .. fn(n-1) each on a thread of its own (fn(0) here); a part whose thread cannot start
// runs here after the others. An exception from any comes back here once all are done.
void runParts(size_t n, const std::function<void(size_t)>& fn);

// Work one thread hands out while threads that are free help with it. forEach(n, fn) runs fn(0) .. fn(n-1)
// on the calling thread and on every thread waiting in help(), each taking the next index, and returns
// when all n are done (an exception from any comes back from forEach: the lowest index's). help() takes whatever
// forEach hands out until close(); a thread that has finished its own part of an analysis calls it, so the longest part
// is shared by every thread that is free, not only by the one that started it.
class Helpers {
 public:
  void forEach(size_t n, const std::function<void(size_t)>& fn);
  void help();
  void close();

 private:
  bool runOne(std::unique_lock<std::mutex>& lock);

  std::mutex m_;
  std::condition_variable cv_;
  const std::function<void(size_t)>* fn_ = nullptr;
  size_t n_ = 0, next_ = 0, done_ = 0;
  bool closed_ = false;
  std::exception_ptr err_;
  size_t errIndex_ = 0;
};

// Runs main() here and each of `parts` on a thread of its own, which then helps `h` until main() has
// ended (main's end closes h). A part whose thread cannot start runs here after main(). An exception from
// any comes back here once all are done.
void runWithHelpers(Helpers& h, const std::function<void()>& main, const std::vector<std::function<void()>>& parts);

// Closes `h` when it goes: the helpers go back however the work that handed out to them ends.
struct CloseHelpers {
  Helpers& h;
  ~CloseHelpers() { h.close(); }
};

}  // namespace attnscope
