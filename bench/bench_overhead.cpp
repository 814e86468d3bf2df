// P5: per-op profiling overhead of our collector vs LibTorch's own profiler
// vs no profiler, on the same workload, in one run. Each mode is a child
// process of this one (one CUPTI subscriber per process).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#ifdef ATTNSCOPE_HAVE_ENGINE
#include "overhead.h"
#endif

int benchOverhead(const std::vector<std::string>& args, const std::string& self) {
#ifndef ATTNSCOPE_HAVE_ENGINE
  (void)args;
  (void)self;
  std::cerr << "attnscope-bench overhead: built without the engine (LibTorch + CUPTI)\n";
  return 2;
#else
  using namespace attnscope;
  std::string mode, shape = "1,8,64,64", device = "cuda";
  int calls = 2000, rounds = 3;
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--mode") mode = args[i + 1];
    else if (args[i] == "--shape") shape = args[i + 1];
    else if (args[i] == "--calls") calls = std::max(1, std::atoi(args[i + 1].c_str()));
    else if (args[i] == "--rounds") rounds = std::max(1, std::atoi(args[i + 1].c_str()));
    else if (args[i] == "--device") device = args[i + 1];
  }
  RunConfig cfg;
  if (auto err = parseRunArgs({"--shape", shape, "--wrap", "all", "--device", device}, &cfg)) {
    std::cerr << *err << "\n";
    return 2;
  }
  if (!mode.empty()) {  // child: one mode
    const auto s = engine::measureOverhead(mode, cfg, calls);
    std::printf("%.9f %d\n", s.secondsPerCall, s.opsPerCall);
    return 0;
  }
  // Parent: rounds of none / ours / torch, interleaved, medians.
  std::vector<double> t[3];
  int ops = 0;
  const char* modes[3] = {"none", "ours", "torch"};
  for (int r = 0; r < rounds; ++r) {
    for (int m = 0; m < 3; ++m) {
      const std::string cmd = self + " overhead --mode " + modes[m] + " --shape " + shape + " --device " + device +
                              " --calls " + std::to_string(calls) + " 2>/dev/null";
      FILE* f = popen(cmd.c_str(), "r");
      double sec = -1;
      int o = 0;
      if (!f || std::fscanf(f, "%lf %d", &sec, &o) != 2) {
        std::cerr << "attnscope-bench overhead: the " << modes[m] << " child failed\n";
        if (f) pclose(f);
        return 1;
      }
      pclose(f);
      t[m].push_back(sec);
      if (m == 1) ops = o;
    }
  }
  auto med = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double none = med(t[0]), ours = med(t[1]), torch = med(t[2]);
  const double oursPerOp = (ours - none) / std::max(ops, 1) * 1e9;
  const double torchPerOp = (torch - none) / std::max(ops, 1) * 1e9;
  std::printf("workload: attention %s on %s, every step wrapped, %d calls x %d rounds, %d ops per call\n",
              shape.c_str(), device.c_str(), calls, rounds, ops);
  std::printf("per call (median): none %.1f us, ours %.1f us, torch profiler %.1f us\n", none * 1e6, ours * 1e6,
              torch * 1e6);
  std::printf("per-op overhead: ours %.0f ns, torch %.0f ns\n", oursPerOp, torchPerOp);
  std::printf("ours_ns_per_op=%.0f torch_ns_per_op=%.0f ratio_ours_vs_torch=%.3f ops_per_call=%d\n", oursPerOp,
              torchPerOp, torchPerOp > 0 ? oursPerOp / torchPerOp : 0.0, ops);
  return 0;
#endif
}
