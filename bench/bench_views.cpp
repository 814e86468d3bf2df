// What opening a view costs after a load: overview, kernels (three groupings), memory and modules
// computed from an already built snapshot, on the largest real traces of ../shared/traces/ext
// (the goal: under 100 ms each). The GUI does exactly this on a worker thread when a view's tab is
// first shown, then fills its table or chart.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/read/trace_reader.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/views/views.h"

int benchViews(const std::vector<std::string>& args) {
  int repeat = 5;
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--repeat" && i + 1 < args.size())
      repeat = std::max(1, std::stoi(args[++i]));
    else
      files.push_back(args[i]);
  }
  if (files.empty())
    for (const char* f : {"tl_h100_owlv2.json.gz", "hta_spmd_dhen_rank1.json.gz", "hta_trace_diff_control.json.gz"})
      files.push_back(std::string(ATTNSCOPE_BENCH_DIR) + "/../../shared/traces/ext/" + f);
  std::string ratios;
  for (const std::string& f : files) {
    attnscope::LoadResult lr = attnscope::loadTrace(f);
    if (!lr.ok()) {
      std::fprintf(stderr, "attnscope-bench views: %s: %s\n", f.c_str(), lr.error ? lr.error->what().c_str() : "?");
      return 2;
    }
    const auto snap = attnscope::buildSnapshot(std::make_shared<const attnscope::EventStore>(std::move(*lr.store)));
    const std::string name = f.substr(f.find_last_of('/') + 1);
    auto time = [&](const char* view, auto fn) {
      std::vector<double> ms;
      for (int r = 0; r < repeat; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      const double med = bench::median(ms);
      std::printf("%-34s %-16s %8.1f ms median of %d (%zu events)\n", name.c_str(), view, med, repeat,
                  snap->store->events().size());
      ratios +=
          name.substr(0, name.find('.')) + "_" + view + "_vs_100ms=" + std::to_string(med / 100.0).substr(0, 5) + " ";
    };
    time("overview", [&] { (void)attnscope::overviewView(*snap); });
    time("kernels", [&] { (void)attnscope::kernelView(*snap); });
    time("kernels_by_op", [&] { (void)attnscope::kernelView(*snap, attnscope::KernelGrouping::NameAndOp); });
    time("memory", [&] { (void)attnscope::memoryView(*snap); });
    time("modules", [&] { (void)attnscope::moduleView(*snap); });
  }
  std::printf("%s\n", ratios.c_str());
  return 0;
}
