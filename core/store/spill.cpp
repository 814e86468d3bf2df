#include "core/store/spill.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <thread>

namespace attnscope::spill {

namespace {

constexpr long kTmpfsMagic = 0x01021994;
// Smaller buffers stay on the heap while spilling (a file per buffer costs a few tens of microseconds).
constexpr size_t kMinSpilledBytes = size_t{64} << 10;
// At most this many buffers in the pool (each is a mapping; the kernel allows about 65,000).
constexpr size_t kPoolMaxBuffers = 1024;
// Spilled buffers live in one range of address space reserved up front (nothing else is ever mapped
// there), so that telling a spilled buffer from a heap block is a comparison, not a lookup.
constexpr size_t kRangeBytes = size_t{16} << 40;  // 16 TiB of address space, none of it memory

struct Region {
  size_t bytes = 0;
  bool owned = false;   // a spilled buffer (given back on deallocate), else a caller's mapping
  bool pooled = false;  // a spilled buffer given back, kept for the next one of about its size
  bool holed = false;   // pages of its file punched out (discardPages): never pooled (not reserved)
  uint64_t made = 0;    // when it was last handed out (or registered): the governor drops oldest first
};

// Never destroyed: the governor thread may run while static destructors do.
struct State {
  std::mutex mu;
  Settings settings;
  std::atomic<bool> spilling{false};
  std::map<const void*, Region> regions;
  std::atomic<uint64_t> drops{0};
  std::once_flag governorStarted, rangeReserved;
  std::atomic<char*> base{nullptr};
  size_t next = 0;     // bump offset into the range (under mu)
  uint64_t clock = 0;  // counts hand-outs and registrations (under mu)
  // Spilled buffers given back, by size, kept mapped with their files for reuse (under mu): a new file's
  // pages are zeroed, its blocks allocated and converted on first write and given back on release, where
  // a reused one's pages are already in the page cache. At most settings.poolBytes of them (disk; their
  // pages are the page cache's and the governor's), the oldest going first; a buffer is handed out
  // again for a request of at least half its size. By size, and by when each was given back (its
  // Region::made) for the oldest.
  std::multimap<size_t, void*> pool;
  std::map<uint64_t, std::multimap<size_t, void*>::iterator> poolByAge;
  size_t pooledBytes = 0;
  std::atomic<uint64_t> newBytes{0}, reusedBytes{0};
};

// Buffers to unmap once mu is released (unmapping a buffer frees its file: slow for a large one). Its
// array is malloc's, never spill::allocate's (which takes mu).
class Unmaps {
 public:
  Unmaps() = default;
  Unmaps(const Unmaps&) = delete;
  Unmaps& operator=(const Unmaps&) = delete;
  ~Unmaps() { std::free(items_); }
  // False when there was no room (the caller unmaps it at once).
  bool add(void* p, size_t bytes) noexcept {
    if (n_ == cap_) {
      const size_t cap = cap_ ? cap_ * 2 : 16;
      void* more = std::realloc(items_, cap * sizeof(Item));
      if (!more) return false;
      items_ = static_cast<Item*>(more);
      cap_ = cap;
    }
    items_[n_++] = Item{p, bytes};
    return true;
  }
  void unmapAll() const noexcept;

 private:
  struct Item {
    void* p;
    size_t bytes;
  };
  Item* items_ = nullptr;
  size_t n_ = 0, cap_ = 0;
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

void reserveRange() {
  std::call_once(state().rangeReserved, [] {
    void* p = ::mmap(nullptr, kRangeBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) state().base.store(static_cast<char*>(p), std::memory_order_release);
  });
}

bool inRange(const void* p) {
  const char* b = state().base.load(std::memory_order_acquire);
  return b && p >= b && p < b + kRangeBytes;
}

void dropRange(const void* p, size_t bytes) noexcept {
  // The mapping's own pages only: a caller's region may start inside a page.
  const size_t page = pageSize();
  const auto at = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (at + page - 1) / page * page;
  const uintptr_t last = (at + bytes) / page * page;
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

// Drops regions' pages, the cache's mappings first, then spilled buffers oldest first, until the
// mapped pages resident are at most `target` (read again after every 64 MiB dropped).
void dropOldest(size_t target) noexcept {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  size_t sinceCheck = 0;
  auto step = [&](const void* p, const Region& r) {
    dropRange(p, r.bytes);
    sinceCheck += r.bytes;
    if (sinceCheck < (size_t{64} << 20)) return false;
    sinceCheck = 0;
    return residentFileBytes() <= target;
  };
  for (const auto& [p, r] : s.regions)
    if (!r.owned && step(p, r)) return;
  // Spilled buffers: those given back first, then the others in the order they were handed out. (The
  // list is malloc's: a large allocation here would come back to this lock.)
  using Entry = std::pair<uint64_t, const void*>;
  auto* owned = static_cast<Entry*>(std::malloc(sizeof(Entry) * (s.regions.size() + 1)));
  if (!owned) {
    for (const auto& [p, r] : s.regions)
      if (r.owned && step(p, r)) return;
    return;
  }
  size_t n = 0;
  for (const auto& [p, r] : s.regions)
    if (r.owned) owned[n++] = Entry{r.pooled ? 0 : r.made, p};
  std::sort(owned, owned + n, [](const Entry& a, const Entry& b) { return a.first < b.first; });
  for (size_t i = 0; i < n; ++i)
    if (step(owned[i].second, s.regions[owned[i].second])) break;
  std::free(owned);
}

// Every 20 ms: when the mapped pages resident (files: spilled buffers, the cache, and the program's
// own code) pass half the budget, pages are dropped until they are under a quarter of it, the oldest
// first: the cache's mappings, the pool's buffers, then spilled buffers in the order they were handed
// out, so the arrays an analysis has just made, usually the ones it is working on, keep
// their pages while the ones it finished with go (dropping every page at once made a pass over a
// new array fault it back every 20 ms). The heap is not the governor's: the other half of the budget is
// left to it.
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
    if (budget && residentFileBytes() > budget / 2) {
      dropOldest(budget / 4);
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

// Unmaps a spilled buffer: its file goes (the mapping was its last reference); the address range stays
// reserved.
void unmapSpilled(void* p, size_t len) noexcept {
  ::mmap(p, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
}

// A spilled buffer of `bytes`, or nullptr (no file, no room: the caller uses the heap).
void* allocateSpilled(size_t bytes) {
  State& s = state();
  const size_t len = (bytes + pageSize() - 1) / pageSize() * pageSize();
  std::string dir;
  size_t at = 0;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    // A buffer given back, the smallest of at least this size and at most twice it.
    if (auto it = s.pool.lower_bound(len); it != s.pool.end() && it->first / 2 <= len) {
      void* p = it->second;
      Region& r = s.regions.find(p)->second;
      s.pooledBytes -= it->first;
      s.poolByAge.erase(r.made);
      s.pool.erase(it);
      r.pooled = false;
      r.made = ++s.clock;
      s.reusedBytes.fetch_add(r.bytes, std::memory_order_relaxed);
      return p;
    }
    char* b = s.base.load(std::memory_order_relaxed);
    if (!b || s.next + len > kRangeBytes) return nullptr;
    at = s.next;
    s.next += len;
    dir = s.settings.dir;
  }
  char* const where = s.base.load(std::memory_order_relaxed) + at;
  const int fd = spillFile(dir, len);
  if (fd < 0) return nullptr;
  void* p = ::mmap(where, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    ::mmap(where, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    return nullptr;
  }
  // A forked child does not get it: a shared mapping would be shared with the child, which could then
  // write into the parent's arrays (the children this program forks exec at once and never touch it).
  ::madvise(p, len, MADV_DONTFORK);
  // No read-ahead: a fault maps one page. With read-ahead a fault on a new (preallocated, unwritten)
  // buffer zeroes a large folio ahead, and each later write fault to a page of that folio marks every
  // block of the whole folio dirty again (ext4's page_mkwrite): `attnscope-bench spill` wrote 1 GiB in
  // 7.4 s that way, 1.05 s one page at a time (the heap: 0.44 s).
  ::madvise(p, len, MADV_RANDOM);
  s.newBytes.fetch_add(len, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(s.mu);
  s.regions[p] = Region{len, true, false, false, ++s.clock};
  return p;
}

// Takes the pool's buffers out, the oldest first, until it holds at most `keepBytes` and
// kPoolMaxBuffers; each goes to `gone` (or is unmapped here when `gone` cannot take it). Under mu.
void trimPool(State& s, size_t keepBytes, Unmaps& gone) noexcept {
  while (!s.poolByAge.empty() && (s.pooledBytes > keepBytes || s.pool.size() > kPoolMaxBuffers)) {
    const auto oldest = s.poolByAge.begin();
    const auto entry = oldest->second;
    void* const p = entry->second;
    const size_t bytes = entry->first;
    s.pooledBytes -= bytes;
    s.pool.erase(entry);
    s.poolByAge.erase(oldest);
    s.regions.erase(p);
    if (!gone.add(p, bytes)) unmapSpilled(p, bytes);
  }
}

void Unmaps::unmapAll() const noexcept {
  for (size_t i = 0; i < n_; ++i) unmapSpilled(items_[i].p, items_[i].bytes);
}

// Gives a spilled buffer back to the pool (its file and pages stay), or for good when the pool cannot
// take it (too large, holed, spilling off).
void releaseSpilled(void* p) noexcept {
  State& s = state();
  Unmaps gone;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.regions.find(p);
    if (it == s.regions.end() || !it->second.owned || it->second.pooled) return;
    Region& r = it->second;
    bool kept = false;
    if (r.bytes <= s.settings.poolBytes && !r.holed && s.spilling.load(std::memory_order_relaxed)) {
      const uint64_t made = s.clock + 1;
      auto entry = s.pool.end();
      try {
        entry = s.pool.emplace(r.bytes, p);
        s.poolByAge.emplace(made, entry);
        kept = true;
      } catch (...) {  // no room for its entries: given back for good
        if (entry != s.pool.end()) s.pool.erase(entry);
      }
      if (kept) {
        r.pooled = true;
        r.made = ++s.clock;
        s.pooledBytes += r.bytes;
        trimPool(s, s.settings.poolBytes, gone);
      }
    }
    if (!kept) {
      const size_t bytes = r.bytes;
      s.regions.erase(it);
      if (!gone.add(p, bytes)) unmapSpilled(p, bytes);
    }
  }
  gone.unmapAll();
}

}  // namespace

void setSpilling(bool on, const Settings& s) {
  State& st = state();
  if (on) reserveRange();
  Unmaps gone;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (on) {
      st.settings = s;
      st.settings.dir = spillDir(s);
    }
    // Under mu: a buffer given back from now on sees the new state, and none is pooled once it is off.
    st.spilling.store(on, std::memory_order_relaxed);
    trimPool(st, 0, gone);  // the pool's buffers were made for the settings before
  }
  gone.unmapAll();
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

void* allocate(size_t bytes) { return allocate(bytes, alignof(std::max_align_t)); }

void* allocate(size_t bytes, size_t align) {
  if (bytes >= kMinSpilledBytes && spilling())
    if (void* p = allocateSpilled(bytes)) return p;  // page-aligned
  void* p = nullptr;
  if (align <= alignof(std::max_align_t))
    p = std::malloc(bytes ? bytes : 1);
  else if (::posix_memalign(&p, align, bytes ? bytes : 1) != 0)
    p = nullptr;
  if (!p) throw std::bad_alloc();
  return p;
}

bool isSpilled(const void* p) noexcept { return inRange(p); }

Counts counts() {
  const State& s = state();
  return Counts{s.newBytes.load(std::memory_order_relaxed), s.reusedBytes.load(std::memory_order_relaxed)};
}

void discardPages(void* p, size_t bytes) noexcept {
  const size_t page = pageSize();
  const auto at = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (at + page - 1) / page * page;
  const uintptr_t last = (at + bytes) / page * page;
  if (last <= first) return;
  if (!inRange(p)) {
    ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
    return;
  }
  // A spilled buffer's pages only (clamped to the buffer that holds p), which is then never pooled: its
  // punched blocks are no longer reserved. (Marked even if the punch fails and the pages are only
  // dropped.)
  uintptr_t end = first;
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.regions.upper_bound(p);
    if (it == s.regions.begin()) return;
    --it;
    const auto start = reinterpret_cast<uintptr_t>(it->first);
    if (!it->second.owned || at >= start + it->second.bytes) return;
    it->second.holed = true;
    end = std::min<uintptr_t>(last, start + it->second.bytes);
  }
  if (end <= first) return;
  if (::madvise(reinterpret_cast<void*>(first), end - first, MADV_REMOVE) != 0)
    ::madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
}

size_t pooledBytes() {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().pooledBytes;
}

void deallocate(void* p, size_t) noexcept {
  if (!p) return;
  if (inRange(p))
    releaseSpilled(p);
  else
    std::free(p);
}

void registerRegion(const void* p, size_t bytes) {
  if (!p || bytes == 0) return;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    state().regions[p] = Region{bytes, false, false, false, ++state().clock};
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
  for (const auto& [p, r] : s.regions) dropRange(p, r.bytes);
}

void dropPages(const void* p, size_t bytes) noexcept {
  if (inRange(p)) dropRange(p, bytes);
}

void readAhead(const void* p, size_t bytes) noexcept {
  if (!inRange(p) || bytes == 0) return;
  const size_t page = pageSize();
  const auto at = reinterpret_cast<uintptr_t>(p) / page * page;
  ::madvise(reinterpret_cast<void*>(at), reinterpret_cast<uintptr_t>(p) + bytes - at, MADV_WILLNEED);
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
