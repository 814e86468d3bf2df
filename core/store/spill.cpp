#include "core/store/spill.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

namespace attnscope::spill {

namespace {

constexpr long kTmpfsMagic = 0x01021994;

struct Region {
  size_t bytes = 0;
  bool owned = false;  // a spilled buffer (unmapped on deallocate), else a caller's mapping
};

// Never destroyed: the governor thread may run while static destructors do.
struct State {
  std::mutex mu;
  Settings settings;
  std::atomic<bool> spilling{false};
  std::map<const void*, Region> regions;
  std::atomic<uint64_t> drops{0};
  std::atomic<size_t> owned{0};  // spilled buffers alive (none: deallocate goes straight to the heap)
  std::once_flag governorStarted;
};

State& state() {
  static State* s = new State;
  return *s;
}

size_t pageSize() {
  static const auto p = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return p;
}

bool onTmpfs(const std::string& dir) {
  struct statfs fs {};
  return ::statfs(dir.c_str(), &fs) == 0 && static_cast<long>(fs.f_type) == kTmpfsMagic;
}

// A folder on a disk for spilled buffers: the settings' own, else $TMPDIR, /var/tmp, /tmp (a tmpfs keeps
// its pages in memory, so it comes last).
std::string spillDir(const Settings& s) {
  std::vector<std::string> candidates;
  if (!s.dir.empty()) candidates.push_back(s.dir);
  if (const char* t = std::getenv("TMPDIR"); t && *t) candidates.emplace_back(t);
  candidates.emplace_back("/var/tmp");
  candidates.emplace_back("/tmp");
  for (const std::string& d : candidates)
    if (::access(d.c_str(), W_OK) == 0 && !onTmpfs(d)) return d;
  for (const std::string& d : candidates)
    if (::access(d.c_str(), W_OK) == 0) return d;
  return "/tmp";
}

// An unlinked file of `bytes` with its blocks reserved (so a full disk fails here, not as SIGBUS on a
// later write); -1 when none could be made.
int spillFile(const std::string& dir, size_t bytes) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::string tmpl = dir + "/attnscope-spill-XXXXXX";
    fd = ::mkstemp(tmpl.data());
    if (fd < 0) return -1;
    ::unlink(tmpl.c_str());
  }
  if (::posix_fallocate(fd, 0, static_cast<off_t>(bytes)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void governor() {
  State& s = state();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    size_t budget = 0;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      if (s.regions.empty()) continue;
      budget = s.settings.budgetBytes;
    }
    // Only when mapped pages are a good part of the excess: the heap alone over budget is not ours to drop.
    if (budget && residentBytes() > budget && residentFileBytes() > (size_t{32} << 20)) {
      dropAll();
      s.drops.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void startGovernor() {
  std::call_once(state().governorStarted, [] {
    try {
      std::thread(governor).detach();
    } catch (...) {
      // No thread: memory is then bounded by nothing but the kernel's reclaim of the page cache.
    }
  });
}

}  // namespace

void setSpilling(bool on, const Settings& s) {
  State& st = state();
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (on) {
      st.settings = s;
      st.settings.dir = spillDir(s);
    }
  }
  st.spilling.store(on, std::memory_order_relaxed);
  if (on) startGovernor();
}

bool spilling() { return state().spilling.load(std::memory_order_relaxed); }

Settings settings() {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().settings;
}

size_t budgetFromEnv(size_t fallback) {
  const char* v = std::getenv("ATTNSCOPE_MEMORY_BUDGET");
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  if (end == v || x <= 0) return fallback;
  double scale = 1;
  switch (*end) {
    case 'k':
    case 'K':
      scale = 1024.0;
      break;
    case 'm':
    case 'M':
      scale = 1024.0 * 1024;
      break;
    case 'g':
    case 'G':
      scale = 1024.0 * 1024 * 1024;
      break;
    default:
      break;
  }
  return static_cast<size_t>(x * scale);
}

void* allocate(size_t bytes) {
  State& s = state();
  if (bytes == 0) return ::operator new(1);
  if (s.spilling.load(std::memory_order_relaxed)) {
    Settings set = settings();
    if (bytes >= set.minBytes) {
      const size_t len = (bytes + pageSize() - 1) / pageSize() * pageSize();
      const int fd = spillFile(set.dir, len);
      if (fd >= 0) {
        void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        ::close(fd);
        if (p != MAP_FAILED) {
          std::lock_guard<std::mutex> lock(s.mu);
          s.regions[p] = Region{len, true};
          s.owned.fetch_add(1, std::memory_order_relaxed);
          return p;
        }
      }
      // No file: the heap, as without spilling.
    }
  }
  return ::operator new(bytes);
}

void deallocate(void* p, size_t bytes) noexcept {
  if (!p) return;
  State& s = state();
  if (s.owned.load(std::memory_order_relaxed) > 0) {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.regions.find(p);
    if (it != s.regions.end() && it->second.owned) {
      ::munmap(p, it->second.bytes);
      s.regions.erase(it);
      s.owned.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
  }
  ::operator delete(p, bytes == 0 ? 1 : bytes);
}

void registerRegion(const void* p, size_t bytes) {
  if (!p || bytes == 0) return;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    state().regions[p] = Region{bytes, false};
  }
  startGovernor();
}

void unregisterRegion(const void* p) noexcept {
  std::lock_guard<std::mutex> lock(state().mu);
  auto it = state().regions.find(p);
  if (it != state().regions.end() && !it->second.owned) state().regions.erase(it);
}

void dropAll() noexcept {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  const size_t page = pageSize();
  for (const auto& [p, r] : s.regions) {
    // The mapping's own pages only: a caller's region may start inside a page.
    const auto at = reinterpret_cast<uintptr_t>(p);
    const uintptr_t first = (at + page - 1) / page * page;
    const uintptr_t last = (at + r.bytes) / page * page;
    if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
  }
}

namespace {
bool statm(size_t* resident, size_t* shared) {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return false;
  unsigned long size = 0, res = 0, sh = 0;
  const int n = std::fscanf(f, "%lu %lu %lu", &size, &res, &sh);
  std::fclose(f);
  if (n != 3) return false;
  *resident = res * pageSize();
  *shared = sh * pageSize();
  return true;
}
}  // namespace

size_t residentBytes() {
  size_t r = 0, sh = 0;
  return statm(&r, &sh) ? r : 0;
}

size_t residentFileBytes() {
  size_t r = 0, sh = 0;
  return statm(&r, &sh) ? sh : 0;
}

uint64_t drops() { return state().drops.load(std::memory_order_relaxed); }

}  // namespace attnscope::spill
