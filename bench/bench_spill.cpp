// attnscope-bench spill: what a page of a spilled buffer costs (a trace larger than the memory budget
// keeps its large arrays in files): writing N MB into the heap, into a new spilled buffer (one page per
// fault, as spill::allocate makes it), into a new one with the kernel's read-ahead left on (how they were
// made before), and into one given back and handed out again (the pool). Side by side, in turns, medians.
#include <sys/mman.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/store/spill.h"

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Writes every 8-byte word of [p, p+bytes) once, front to back; returns seconds.
double writeAll(void* p, size_t bytes) {
  const double t = now();
  auto* w = static_cast<volatile uint64_t*>(p);
  for (size_t i = 0; i < bytes / 8; ++i) w[i] = i;
  return now() - t;
}

}  // namespace

int benchSpill(const std::vector<std::string>& args) {
  size_t mb = 512;
  int repeat = 3;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--mb" && i + 1 < args.size())
      mb = std::strtoul(args[++i].c_str(), nullptr, 10);
    else if (args[i] == "--repeat" && i + 1 < args.size())
      repeat = std::atoi(args[++i].c_str());
    else {
      std::cerr << "usage: attnscope-bench spill [--mb N] [--repeat N]\n";
      return 2;
    }
  }
  if (mb == 0 || repeat < 1) {
    std::cerr << "attnscope-bench spill: --mb and --repeat must be at least 1\n";
    return 2;
  }
  const size_t bytes = mb << 20;
  attnscope::spill::setSpilling(true);
  std::vector<double> heap, fresh, readAhead, reused;
  for (int r = 0; r < repeat; ++r) {
    {
      void* p = std::malloc(bytes);
      if (!p) return 1;
      heap.push_back(writeAll(p, bytes));
      std::free(p);
    }
    {
      // A size no earlier turn gave back, so the pool has none: a new file.
      const size_t b = bytes + static_cast<size_t>(4 * r + 1) * 4096 * 1024;
      void* p = attnscope::spill::allocate(b);
      fresh.push_back(writeAll(p, bytes));
      void* q = attnscope::spill::allocate(b + 2 * 4096 * 1024);
      ::madvise(q, bytes, MADV_NORMAL);  // the read-ahead back on: a fault maps a large folio
      readAhead.push_back(writeAll(q, bytes));
      attnscope::spill::deallocate(q, b + 2 * 4096 * 1024);
      attnscope::spill::deallocate(p, b);
      void* again = attnscope::spill::allocate(b);  // the buffer just given back
      reused.push_back(writeAll(again, bytes));
      attnscope::spill::deallocate(again, b);
    }
  }
  attnscope::spill::setSpilling(false);
  const double gb = static_cast<double>(bytes) / (1u << 30);
  const double h = bench::median(heap) / gb, f = bench::median(fresh) / gb, ra = bench::median(readAhead) / gb,
               re = bench::median(reused) / gb;
  std::printf("writing %zu MB, seconds per GiB (median of %d, in turns):\n", mb, repeat);
  std::printf("  heap (malloc)                        %.3f\n", h);
  std::printf("  spilled, new, one page per fault     %.3f  (%.2fx the heap)\n", f, f / h);
  std::printf("  spilled, new, kernel read-ahead on   %.3f  (%.2fx the heap)\n", ra, ra / h);
  std::printf("  spilled, given back and reused       %.3f  (%.2fx the heap)\n", re, re / h);
  std::printf(
      "spill_heap_s_per_gib=%.3f spill_new_s_per_gib=%.3f spill_readahead_s_per_gib=%.3f "
      "spill_reused_s_per_gib=%.3f readahead_over_new=%.2f new_over_reused=%.2f\n",
      h, f, ra, re, ra / f, f / re);
  return 0;
}
