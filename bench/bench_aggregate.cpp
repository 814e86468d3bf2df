// P2: key_averages on a loaded trace (both groupings, both attributions),
// next to HTA (HolisticTraceAnalysis) loading the same trace and computing its
// kernel breakdown, in the same run on the same machine.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/read/trace_reader.h"
#include "core/tables/key_averages.h"

using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

int benchAggregate(const std::vector<std::string>& args) {
  bench::FileArgs fa;
  if (!bench::parseFileArgs(args, "aggregate", "--no-hta", &fa)) return 2;
  const auto tl = Clock::now();
  attnscope::LoadResult r = attnscope::loadTrace(fa.path);
  const double loadS = seconds(tl);
  if (!r.ok()) {
    std::cerr << "attnscope-bench: " << r.error->what() << "\n";
    return 2;
  }
  const attnscope::EventStore& store = *r.store;
  struct Case {
    const char* label;
    attnscope::GroupBy group;
    attnscope::Attribution attribution;
  };
  const Case cases[] = {
      {"name/torch", attnscope::GroupBy::Name, attnscope::Attribution::Torch},
      {"shape/torch", attnscope::GroupBy::InputShape, attnscope::Attribution::Torch},
      {"name/corrected", attnscope::GroupBy::Name, attnscope::Attribution::Corrected},
      {"shape/corrected", attnscope::GroupBy::InputShape, attnscope::Attribution::Corrected},
  };
  double worst = 0;
  double all = 0;
  for (const Case& c : cases) {
    std::vector<double> times;
    size_t rows = 0;
    for (int i = 0; i < fa.repeat; ++i) {
      const auto t0 = Clock::now();
      const attnscope::KeyAverages ka = attnscope::computeKeyAverages(store, c.group, c.attribution);
      times.push_back(seconds(t0));
      rows = ka.rows.size();
    }
    const double med = bench::median(times);
    worst = std::max(worst, med);
    all += med;
    std::printf("key_averages %-16s %8.2f ms  (%zu rows, median of %d)\n", c.label, med * 1e3, rows, fa.repeat);
  }
  // What the viewer computes on load: each attribution once, both groupings from it.
  std::vector<double> shared;
  for (int i = 0; i < fa.repeat; ++i) {
    const auto t0 = Clock::now();
    const auto torch = attnscope::computeKeyAveragesBothGroupings(store, attnscope::Attribution::Torch);
    const auto corrected = attnscope::computeKeyAveragesBothGroupings(store, attnscope::Attribution::Corrected);
    shared.push_back(seconds(t0));
  }
  const double sharedMs = bench::median(shared) * 1e3;
  std::printf("all four, both groupings per attribution from one pass: %.2f ms (median of %d)\n", sharedMs, fa.repeat);
  std::printf("trace: %s (%zu events; loaded in %.3f s)\n", fa.path.c_str(), store.events().size(), loadS);

  // HTA: load the trace and compute the kernel breakdown, in a python3 child.
  double htaLoad = -1, htaBreakdown = -1;
  if (fa.peer) {
    const std::string out = bench::runPython(std::string(ATTNSCOPE_BENCH_DIR) + "/peer_hta.py", {fa.path});
    htaLoad = bench::keyValue(out, "hta_load_s");
    htaBreakdown = bench::keyValue(out, "hta_kernel_breakdown_s");
    if (htaLoad < 0)
      std::printf("HTA: not measured (%s)\n", out.empty() ? "python3 failed" : out.c_str());
    else
      std::printf("HTA load %.3f s, kernel breakdown %.3f s\n", htaLoad, htaBreakdown);
  }
  // Ours: load plus the four tables as the viewer computes them.
  const double ours = loadS + sharedMs / 1e3;
  const double htaTotal = htaLoad >= 0 ? htaLoad + htaBreakdown : -1;
  std::printf(
      "aggregate_ms_max=%.2f aggregate_ms_all4=%.2f aggregate_ms_all4_shared=%.2f load_s=%.4f hta_load_s=%.3f "
      "hta_kernel_breakdown_s=%.3f hta_total_s=%.3f speedup_vs_hta=%.1f\n",
      worst * 1e3, all * 1e3, sharedMs, loadS, htaLoad, htaBreakdown, htaTotal, htaTotal > 0 ? htaTotal / ours : 0.0);
  return 0;
}
