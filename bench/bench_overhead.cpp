// P5: per-op profiling overhead of our collector vs LibTorch's own profiler
// vs no profiler, on the same workload, in one run. Each profiler runs in a
// child process of this one (one CUPTI subscriber per process) that measures
// its own no-profiler baseline first; the children are interleaved in rounds,
// which profiler goes first alternating from round to round. The lead figure
// is the baseline-normalised ratio (each profiler's overhead as a fraction of
// its own process's baseline, ours over torch's) per round: its median over
// the rounds with a bootstrap 95% confidence interval.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#ifdef ATTNSCOPE_HAVE_ENGINE
#include "core/engine/overhead.h"

namespace {
// The mean of the two middle values for an even count (bench::median takes
// the upper one): the rounds here are often even.
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::pair<double, double> spread(const std::vector<double>& v) {
  if (v.empty()) return {0, 0};
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return {*lo, *hi};
}

// The 95% interval of the median of `v` by bootstrap: 5,000 resamples with
// replacement (a fixed seed: the same rounds give the same interval).
std::pair<double, double> bootstrapMedianCi(const std::vector<double>& v) {
  if (v.size() < 2) return {v.empty() ? 0 : v[0], v.empty() ? 0 : v[0]};
  std::mt19937_64 rng(12345);
  std::uniform_int_distribution<size_t> pick(0, v.size() - 1);
  std::vector<double> meds, sample(v.size());
  for (int b = 0; b < 5000; ++b) {
    for (double& x : sample) x = v[pick(rng)];
    meds.push_back(median(sample));
  }
  std::sort(meds.begin(), meds.end());
  return {meds[static_cast<size_t>(0.025 * 4999)], meds[static_cast<size_t>(0.975 * 4999)]};
}

struct Variant {
  std::string label, profiler, env;  // env: "NAME=1" set for the child, or empty
};

// The collector's building blocks, measured in this process (--blocks, and
// after the comparison with --ablations).
void printBlocks(bool cuda) {
  std::printf("building blocks (ns per call, this process):\n");
  for (const auto& [what, ns] : attnscope::engine::microCosts(cuda)) std::printf("  %-66s %8.1f\n", what.c_str(), ns);
}
}  // namespace
#endif

int benchOverhead(const std::vector<std::string>& args, const std::string& self) {
#ifndef ATTNSCOPE_HAVE_ENGINE
  (void)args;
  (void)self;
  std::cerr << "attnscope-bench overhead: built without the engine (LibTorch + CUPTI)\n";
  return 2;
#else
  using namespace attnscope;
  std::string profiler, shape = "1,8,64,64", device = "cuda", wrap = "all";
  int calls = 300, batches = 9, rounds = 30;
  bool ablations = false, blocksOnly = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool hasValue = i + 1 < args.size();
    if (args[i] == "--ablations")
      ablations = true;
    else if (args[i] == "--blocks")
      blocksOnly = true;
    else if (!hasValue)
      break;
    else if (args[i] == "--profiler")
      profiler = args[++i];
    else if (args[i] == "--shape")
      shape = args[++i];
    else if (args[i] == "--wrap")
      wrap = args[++i];
    else if (args[i] == "--calls")
      calls = std::max(1, std::atoi(args[++i].c_str()));
    else if (args[i] == "--batches")
      batches = std::max(1, std::atoi(args[++i].c_str()));
    else if (args[i] == "--rounds")
      rounds = std::max(1, std::atoi(args[++i].c_str()));
    else if (args[i] == "--device")
      device = args[++i];
  }
  RunConfig cfg;
  if (auto err = parseRunArgs({"--shape", shape, "--wrap", wrap, "--device", device}, &cfg)) {
    std::cerr << *err << "\n";
    return 2;
  }
  if (blocksOnly) {
    printBlocks(cfg.device == RunDevice::Cuda);
    return 0;
  }
  if (!profiler.empty()) {  // child: one profiler against its own baseline
    const auto s = engine::measureOverhead(profiler, cfg, calls, batches);
    std::printf("ops %d\nbase", s.opsPerCall);
    for (double v : s.baseline) std::printf(" %.9f", v);
    std::printf("\nprof");
    for (double v : s.profiled) std::printf(" %.9f", v);
    std::printf("\n");
    return 0;
  }

  std::vector<Variant> variants = {{"ours", "ours", ""}, {"torch", "torch", ""}};
  if (ablations) {
    variants.push_back({"ours, every API call recorded", "ours", "ATTNSCOPE_CUPTI_ALL_API=1"});
    variants.push_back({"ours, no memory reports", "ours", "ATTNSCOPE_NO_MEMORY=1"});
    variants.push_back({"ours, no input shapes", "ours", "ATTNSCOPE_NO_SHAPES=1"});
    variants.push_back({"ours, no NVTX ranges", "ours", "ATTNSCOPE_NO_NVTX=1"});
    variants.push_back({"ours, no external ids", "ours", "ATTNSCOPE_NO_EXTID=1"});
    variants.push_back({"ours, External id per outermost op", "ours", "ATTNSCOPE_EXTID=outermost"});
    variants.push_back({"ours, External id pushed for every op/scope", "ours", "ATTNSCOPE_EXTID=every"});
    variants.push_back({"ours, CUPTI's own clock", "ours", "ATTNSCOPE_CUPTI_NO_TSCB=1"});
    variants.push_back({"ours, CLOCK_MONOTONIC", "ours", "ATTNSCOPE_CLOCK=monotonic"});
    variants.push_back({"ours, RecordFunction side only", "recorder", ""});
    variants.push_back({"ours, CUPTI side only", "cupti", ""});
    variants.push_back({"torch, CPU activities only", "torch-cpu", ""});
  }
  std::vector<std::vector<double>> perCall(variants.size()), base(variants.size()), prof(variants.size());
  int ops = 0;
  const std::string errFile = "/tmp/attnscope-bench-overhead-" + std::to_string(::getpid()) + ".err";
  for (int r = 0; r < rounds; ++r) {
    for (size_t step = 0; step < variants.size(); ++step) {
      // Odd rounds run the variants in reverse: neither profiler always goes first.
      const size_t v = r % 2 ? variants.size() - 1 - step : step;
      const std::string cmd = (variants[v].env.empty() ? "" : "env " + variants[v].env + " ") + self +
                              " overhead --profiler " + variants[v].profiler + " --shape " + shape + " --wrap " + wrap +
                              " --device " + device + " --calls " + std::to_string(calls) + " --batches " +
                              std::to_string(batches) + " 2>" + errFile;
      FILE* f = popen(cmd.c_str(), "r");
      std::string text;
      char buf[4096];
      while (f && std::fgets(buf, sizeof buf, f)) text += buf;
      const int rc = f ? pclose(f) : -1;
      std::istringstream in(text);
      std::string word;
      int o = -1;
      std::vector<double> b, p;
      while (in >> word) {
        if (word == "ops")
          in >> o;
        else if (word == "base" || word == "prof") {
          std::string line;
          std::getline(in, line);
          std::istringstream ls(line);
          double x;
          while (ls >> x) (word == "base" ? b : p).push_back(x);
        }
      }
      if (rc != 0 || o < 0 || b.empty() || p.empty()) {
        std::cerr << "attnscope-bench overhead: the '" << variants[v].label << "' child failed (" << cmd
                  << "); its stderr:\n";
        std::ifstream err(errFile);
        std::cerr << err.rdbuf() << "\n";
        std::remove(errFile.c_str());
        return 1;
      }
      if (variants[v].profiler == "ours" && variants[v].env.empty()) ops = o;
      base[v].push_back(median(b));
      prof[v].push_back(median(p));
      std::vector<double> diff;  // batch pairs: with minus without, same moment of the process
      for (size_t k = 0; k < std::min(b.size(), p.size()); ++k) diff.push_back(p[k] - b[k]);
      perCall[v].push_back(median(diff));
    }
  }
  std::remove(errFile.c_str());
  std::printf(
      "workload: attention %s on %s, --wrap %s; per profiler and round one process: %d pairs of batches of %d "
      "calls without and with it; %d rounds, which profiler runs first alternating; %d ops per call\n",
      shape.c_str(), device.c_str(), wrap.c_str(), batches, calls, rounds, ops);
  std::printf(
      "what each records: ours = every op and scope with input shapes and memory reports (RecordFunction), and "
      "from CUPTI kernels, copies, memsets, runtime and driver calls (without %s), synchronization, NVTX "
      "markers, external correlation, overhead; torch = the same ops with shapes and memory (KINETO), and from "
      "CUPTI kernels, copies, memsets, runtime and driver calls (all of them), external correlation, overhead "
      "(no synchronization, no NVTX markers)\n",
      "54 query-only APIs such as cudaGetDevice");
  std::printf("%-34s %12s %12s %14s %22s\n", "profiler", "base us/call", "prof us/call", "overhead ns/op",
              "spread over rounds");
  std::vector<double> perOp(variants.size());
  for (size_t v = 0; v < variants.size(); ++v) {
    const double d = median(perCall[v]);
    perOp[v] = d / std::max(ops, 1) * 1e9;
    const auto [lo, hi] = spread(perCall[v]);
    std::printf("%-34s %12.1f %12.1f %14.0f %10.0f..%-10.0f\n", variants[v].label.c_str(), median(base[v]) * 1e6,
                median(prof[v]) * 1e6, perOp[v], lo / std::max(ops, 1) * 1e9, hi / std::max(ops, 1) * 1e9);
  }
  if (ablations) printBlocks(cfg.device == RunDevice::Cuda);
  // Each child runs on whatever core and clock the machine gives it, and a
  // slow process shows both a slower baseline and a larger overhead. Two
  // readings that do not compare across processes: the ratio within each
  // round (ours and torch run back to back), and the same with each
  // profiler's overhead taken as a fraction of its own process's baseline.
  std::vector<double> paired, normalized;
  for (int r = 0; r < rounds; ++r) {
    const double o = perCall[0][static_cast<size_t>(r)], t = perCall[1][static_cast<size_t>(r)];
    const double ob = base[0][static_cast<size_t>(r)], tb = base[1][static_cast<size_t>(r)];
    if (t <= 0 || ob <= 0 || tb <= 0) continue;
    paired.push_back(o / t);
    normalized.push_back((o / ob) / (t / tb));
  }
  const auto [pl, ph] = spread(paired);
  const auto [nl, nh] = spread(normalized);
  const auto [cl, ch] = bootstrapMedianCi(normalized);
  std::printf(
      "ours/torch, each overhead as a fraction of its own process's baseline: median %.3f over %zu rounds, 95%% CI "
      "%.3f..%.3f (bootstrap), range %.3f..%.3f; raw per round ours/torch: median %.3f (%.3f..%.3f)\n",
      median(normalized), normalized.size(), cl, ch, nl, nh, median(paired), pl, ph);
  std::printf(
      "ours_ns_per_op=%.0f torch_ns_per_op=%.0f ratio_ours_vs_torch=%.3f paired_ratio=%.3f "
      "baseline_normalized_ratio=%.3f ci95_low=%.3f ci95_high=%.3f ops_per_call=%d rounds=%d\n",
      perOp[0], perOp[1], perOp[1] > 0 ? perOp[0] / perOp[1] : 0.0, median(paired), median(normalized), cl, ch, ops,
      rounds);
  return 0;
#endif
}
