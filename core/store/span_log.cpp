#include "core/store/span_log.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace attnscope::spans {

namespace {
struct Entry {
  const char* name;
  int thread;
  std::chrono::steady_clock::time_point start, end;
};
std::mutex m;
std::vector<Entry> entries;
std::atomic<int> nextThread{0};
int threadNumber() {
  thread_local const int n = nextThread.fetch_add(1);
  return n;
}
}  // namespace

bool on() {
  static const bool v = std::getenv("ATTNSCOPE_REPORT_SPANS") != nullptr;
  return v;
}

void add(const char* name, std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point end) {
  const int t = threadNumber();
  const std::lock_guard lock(m);
  entries.push_back({name, t, start, end});
}

std::string report() {
  const std::lock_guard lock(m);
  if (entries.empty()) return {};
  std::vector<Entry> e = entries;
  std::stable_sort(e.begin(), e.end(), [](const Entry& a, const Entry& b) { return a.start < b.start; });
  const auto t0 = e.front().start;
  const auto s = [&](std::chrono::steady_clock::time_point t) { return std::chrono::duration<double>(t - t0).count(); };
  std::string out;
  char line[256];
  for (const Entry& x : e) {
    std::snprintf(line, sizeof line, "span %s thread %d %.6f %.6f\n", x.name, x.thread, s(x.start), s(x.end));
    out += line;
  }
  return out;
}

void clear() {
  const std::lock_guard lock(m);
  entries.clear();
}

}  // namespace attnscope::spans
