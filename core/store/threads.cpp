#include "core/store/threads.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <utility>

namespace attnscope {

unsigned workerThreads() {
  unsigned n = std::thread::hardware_concurrency();
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) n = static_cast<unsigned>(CPU_COUNT(&set));
  if (const char* v = std::getenv("ATTNSCOPE_THREADS")) {
    char* end = nullptr;
    const long want = std::strtol(v, &end, 10);
    // What is asked for, more than the CPUs too (the tests run the many-thread paths on two).
    if (end != v && *end == '\0' && want >= 1) n = static_cast<unsigned>(std::min(want, 64L));
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

std::vector<uint32_t> splitByCounts(const std::vector<size_t>& counts, unsigned parts) {
  const auto lanes = static_cast<uint32_t>(counts.size());  // (items: lanes, in the store)
  parts = std::max(1u, std::min(parts, lanes));
  size_t total = 0;
  for (size_t c : counts) total += c;
  // Group g starts at the first lane whose middle falls past g/parts of the events, and after the
  // group before it; each group keeps a lane at least, and so does each group after it.
  std::vector<uint32_t> b{0};
  size_t acc = 0;  // events in lanes [0, k)
  uint32_t k = 0;
  for (unsigned g = 1; g < parts; ++g) {
    const size_t target = total * g / parts;
    while (k < lanes && (acc + counts[k] / 2 < target || k <= b.back())) acc += counts[k++];
    k = std::min(k, lanes - (parts - g));  // room for the groups after
    if (k <= b.back()) break;              // (cannot happen: parts <= lanes)
    b.push_back(k);
    acc = 0;
    for (uint32_t i = 0; i < k; ++i) acc += counts[i];
  }
  b.push_back(lanes);
  return b;
}

void runParts(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  std::vector<std::exception_ptr> errs(n);
  std::vector<std::thread> threads;
  std::vector<size_t> here;  // parts with no thread (reserved: nothing may throw once a thread runs)
  threads.reserve(n);
  here.reserve(n);
  for (size_t i = 1; i < n; ++i) {
    try {
      threads.emplace_back([&, i] {
        try {
          fn(i);
        } catch (...) {
          errs[i] = std::current_exception();
        }
      });
    } catch (...) {
      here.push_back(i);
    }
  }
  here.insert(here.begin(), 0);
  for (size_t i : here) {
    try {
      fn(i);
    } catch (...) {
      errs[i] = std::current_exception();
    }
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errs)
    if (e) std::rethrow_exception(e);
}

bool Helpers::runOne(std::unique_lock<std::mutex>& lock) {
  if (!fn_ || next_ >= n_) return false;
  const size_t i = next_++;
  const std::function<void(size_t)>* fn = fn_;
  lock.unlock();
  std::exception_ptr err;
  try {
    (*fn)(i);
  } catch (...) {
    err = std::current_exception();
  }
  lock.lock();
  // The first job's exception by index, not by time: the same error whatever the threads did.
  if (err && (!err_ || i < errIndex_)) {
    err_ = err;
    errIndex_ = i;
  }
  if (++done_ == n_) cv_.notify_all();
  return true;
}

void Helpers::forEach(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  std::unique_lock lock(m_);
  fn_ = &fn;
  n_ = n;
  next_ = done_ = 0;
  err_ = nullptr;
  cv_.notify_all();
  while (runOne(lock)) {
  }
  cv_.wait(lock, [&] { return done_ == n_; });
  fn_ = nullptr;
  n_ = next_ = done_ = 0;
  const std::exception_ptr err = std::exchange(err_, nullptr);
  lock.unlock();
  if (err) std::rethrow_exception(err);
}

void Helpers::help() {
  std::unique_lock lock(m_);
  while (true) {
    cv_.wait(lock, [&] { return closed_ || (fn_ && next_ < n_); });
    if (runOne(lock)) continue;
    if (closed_) return;
  }
}

void Helpers::close() {
  std::lock_guard lock(m_);
  closed_ = true;
  cv_.notify_all();
}

void runWithHelpers(Helpers& h, const std::function<void()>& main, const std::vector<std::function<void()>>& parts) {
  // Part 0 is main (here), which closes h however it ends; each other part then helps until then.
  runParts(parts.size() + 1, [&](size_t i) {
    if (i == 0) {
      const CloseHelpers close{h};
      main();
      return;
    }
    if (parts[i - 1]) parts[i - 1]();
    h.help();
  });
}

}  // namespace attnscope
