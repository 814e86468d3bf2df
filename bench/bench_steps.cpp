// attnscope-bench steps TRACE: where a load's time and memory go, step by
// step, in this process: the reader (read, inflate, parse, build the
// store), then what `info`, `table` and the app compute from the store (the
// activity index, torch's tables by name and by shape in both attributions,
// the ledger, the explanation, the timeline's index). After each step:
// seconds, and resident / peak memory.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/explain/explanation.h"
#include "core/read/trace_reader.h"
#include "core/snapshot/trace_snapshot.h"
#ifdef ATTNSCOPE_BENCH_TIMELINE
#include "ui/timeline/index.h"
#endif

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// VmRSS and VmHWM in MB.
std::pair<double, double> memoryMb() {
  std::ifstream f("/proc/self/status");
  double rss = 0, hwm = 0;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("VmRSS:", 0) == 0) rss = std::stod(line.substr(6)) / 1024.0;
    if (line.rfind("VmHWM:", 0) == 0) hwm = std::stod(line.substr(6)) / 1024.0;
  }
  return {rss, hwm};
}

void row(const char* step, double s) {
  const auto [rss, hwm] = memoryMb();
  std::printf("%-44s %8.2f s   resident %7.0f MB   peak %7.0f MB\n", step, s, rss, hwm);
}

}  // namespace

int benchSteps(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::cerr << "usage: attnscope-bench steps TRACE\n";
    return 2;
  }
  using namespace attnscope;
  const auto t0 = Clock::now();
  LoadResult r = loadTrace(args[0]);
  const double total = since(t0);
  if (!r.ok()) {
    std::cerr << "attnscope-bench steps: " << r.error->what() << "\n";
    return 1;
  }
  std::printf("trace: %s: %.1f MB of JSON, %zu events, %llu chunks\n", args[0].c_str(),
              static_cast<double>(r.jsonBytes) / 1e6, r.store->events().size(),
              static_cast<unsigned long long>(r.chunks));
  const LoadTimings& tm = r.timings;
  std::printf("  read %.2f s, inflate %.2f s (inside parse when streamed), parse %.2f s, build %.2f s\n", tm.read,
              tm.decompress, tm.parse, tm.build);
  row("load (the reader: all of the above)", total);
  auto store = std::make_shared<const EventStore>(std::move(*r.store));
  r.store.reset();
  auto t = Clock::now();
  ActivityIndex index(*store);
  row("activity index (GPU work by launch)", since(t));
  t = Clock::now();
  auto snap = buildSnapshot(store, {.explain = false, .shapeTables = true});
  row("torch's tables, 2 groupings x 2 attributions", since(t));
  t = Clock::now();
  const Ledger ledger = computeLedger(*snap);
  row("ledger (info)", since(t));
  t = Clock::now();
  const Explanation ex = explainTrace(*snap);
  row("explanation (steps, sync waits, findings)", since(t));
#ifdef ATTNSCOPE_BENCH_TIMELINE
  t = Clock::now();
  const ui::TimelineIndex timeline(*store);
  row("timeline index (the app)", since(t));
#endif
  (void)ledger;
  (void)ex;
  return 0;
}
