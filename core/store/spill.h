// Memory bounded by a budget, not by the trace: large arrays can live in files instead of the heap,
// and mapped files (spilled arrays, the columnar cache) give their pages back when the process's
// resident set passes the budget.
//
// - spill::allocate: while spilling is on (setSpilling), a buffer of at least 64 KiB is a
//   shared mapping of an unlinked file in Settings::dir (placed in a range of address space reserved
//   for them); smaller ones, and every buffer while it is off, come from the heap as usual. A spilled
//   buffer is not inherited by a forked child (MADV_DONTFORK: a shared mapping would be shared), and
//   its pages are faulted in one at a time (MADV_RANDOM: no read-ahead). A buffer given back goes to a
//   pool, file and pages kept, and is handed out again for a request of at least half its size: a new
//   file's every page is zeroed and its blocks converted on first write (`attnscope-bench spill`).
//   spill::Vector spills where a type says so; in the programs that open users' traces (attnscope,
//   attnscope-cli) the global operator new and delete go through it too (spill_new.cpp, an object
//   those programs link; not in sanitizer builds, nor in core), so every large array of every
//   analysis spills without its type knowing.
// - Regions: the spilled buffers and the read-only mappings of the cache are registered here. The
//   governor (a thread started by setSpilling or registerRegion) reads the resident set every 20 ms and,
//   when the pages of mapped files pass half the budget, drops registered regions' pages from the
//   process (madvise MADV_DONTNEED), the oldest first, until they are under a quarter of it.
//   A dropped page is still in the file (or the page cache): the next touch maps it back, unchanged,
//   without reading the disk while the kernel keeps it cached. Memory the process owns outright (the
//   heap) is never dropped: what is shown (tables, the visible window) stays there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <string>
#include <vector>

namespace attnscope::spill {

struct Settings {
  std::string dir;                       // where spilled buffers' files go (unlinked at once); "" = $TMPDIR, /var/tmp
  size_t budgetBytes = size_t{1} << 30;  // half of it for mapped pages, past which they are dropped
  size_t poolBytes = size_t{2} << 30;    // spilled buffers given back and kept for reuse: at most this much
};

// Turns spilling on (with these settings) or off for buffers allocated from now on. Buffers already
// allocated keep their kind. On: the governor runs.
void setSpilling(bool on, const Settings& s = {});
bool spilling();
Settings settings();

// The resident set budget from $ATTNSCOPE_MEMORY_BUDGET ("1536M", "2G", bytes), else `fallback`.
size_t budgetFromEnv(size_t fallback);

// Raw buffers: a file mapping when spilling is on and `bytes` is 64 KiB or more, else malloc.
void* allocate(size_t bytes);
// The same, at an address that is a multiple of `align` (a power of two, at most a page): a spilled
// buffer is page-aligned; the heap's comes from posix_memalign. Given back with deallocate.
void* allocate(size_t bytes, size_t align);
void deallocate(void* p, size_t bytes) noexcept;
// Whether `p` points into a spilled buffer (a file mapping), not the heap.
bool isSpilled(const void* p) noexcept;
// Gives the whole pages of [p, p+bytes) back, contents lost: a spilled buffer's file blocks too
// (MADV_REMOVE punches a hole; the buffer is then never pooled), heap pages to the kernel.
void discardPages(void* p, size_t bytes) noexcept;
// The bytes of spilled buffers given back and kept for reuse (the pool; emptied when spilling is
// turned off).
size_t pooledBytes();

// What allocate handed out as spilled buffers since the program started: bytes of new files, and of
// pooled buffers handed out again (ATTNSCOPE_REPORT_OPEN prints them; a new file's pages cost about
// twice a reused one's: `attnscope-bench spill`).
struct Counts {
  uint64_t newBytes = 0, reusedBytes = 0;
};
Counts counts();

// A read-only mapping (the cache's files) whose pages the governor may drop; starts the governor.
void registerRegion(const void* p, size_t bytes);
void unregisterRegion(const void* p) noexcept;

// Drops every registered region's pages now (tests; the governor calls it past the budget).
void dropAll() noexcept;
// Drops the whole pages of [p, p+bytes) from the process when they lie in a spilled buffer: contents
// kept (in the file, and the page cache while the kernel keeps them); the next touch maps them back. For
// a pass that reads an array once, faster than the governor's 20 ms would drop them.
void dropPages(const void* p, size_t bytes) noexcept;
// Asks the kernel to read [p, p+bytes) of a spilled buffer ahead, in the background (MADV_WILLNEED: its
// buffers are MADV_RANDOM, so a pass over pages the kernel has written out would read one page a fault);
// nothing for other memory.
void readAhead(const void* p, size_t bytes) noexcept;
// Resident set of this process in bytes (from /proc/self/statm), and the part of it backed by files.
size_t residentBytes();
size_t residentFileBytes();
// How often the governor dropped pages (tests and the benchmark).
uint64_t drops();

template <typename T>
struct Allocator {
  using value_type = T;
  Allocator() noexcept = default;
  template <typename U>
  Allocator(const Allocator<U>&) noexcept {}  // NOLINT: converting, as std::allocator's
  T* allocate(size_t n) {
    if (n > std::numeric_limits<size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    // A spilled buffer is page-aligned, no more.
    static_assert(alignof(T) <= 4096, "spill::Allocator aligns to a page at most");
    if constexpr (alignof(T) > alignof(std::max_align_t))
      return static_cast<T*>(spill::allocate(n * sizeof(T), alignof(T)));
    else
      return static_cast<T*>(spill::allocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { spill::deallocate(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const Allocator<U>&) const noexcept {
    return true;
  }
};

template <typename T>
using Vector = std::vector<T, Allocator<T>>;

}  // namespace attnscope::spill
