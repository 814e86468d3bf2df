// `attnscope-cli record` on a real GPU: a small CUDA training script (tests/data/scripts/cuda_train.py)
// recorded with each sync mode, its modules wrapped and not. The seed's point, on the user's own
// code: each step's CUDA time (its launched kernels' durations, from the raw trace: launches in the
// ProfilerStep's window joined to kernels by correlation) is the same whether the modules are wrapped
// or not; wrapping adds rows, not GPU time. Also: the wrapped modules own GPU work, a step sync is a
// cudaDeviceSynchronize inside 'attnscope::step_sync', and CUDA_LAUNCH_BLOCKING makes the host wait
// for its kernels. Prints the figures. Skips (77) without a GPU or without torch with CUDA.
//
// A step and a wrapped module are their CPU ranges (cat user_annotation): on a GPU, torch.profiler
// also writes each range's device-side span (cat gpu_user_annotation, on the stream's row, from its
// first kernel to its last), with the same name. Counting those too made "10 ProfilerSteps" of 5, and
// a "step" that was a device-side span held the kernels that ran in it, not those its step launched.
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

int passed = 0, failed = 0;
void check(bool ok, const std::string& what) {
  std::cout << (ok ? "PASS  " : "FAIL  ") << what << "\n";
  (ok ? passed : failed)++;
}

struct StepFigures {
  std::string name;
  double hostUs = 0, kernelUs = 0;
  int kernels = 0, syncs = 0;
  int allSyncs = 0;                        // every cudaDeviceSynchronize in the window, in a step_sync scope or not
  std::map<std::string, int> kernelNames;  // the kernels its launches ran, by name
};

struct TraceFigures {
  std::vector<StepFigures> steps;
  std::map<std::string, double> kernelUsUnder;  // wrapped module -> kernel time launched inside it
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// From the raw events only: ProfilerStep windows, runtime launches inside them, kernels by correlation.
TraceFigures figuresOf(const std::string& path, const std::vector<std::string>& modules) {
  TraceFigures f;
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  if (p.load(path).get(doc)) return f;
  struct Span {
    std::string name;
    double a, b;
    int64_t tid;
  };
  std::vector<Span> steps, wraps, syncScopes;
  std::vector<std::pair<double, int64_t>> launches;  // (ts, correlation)
  std::vector<double> deviceSyncs;
  std::map<int64_t, double> kernelDur;
  std::map<int64_t, std::string> kernelName;
  for (simdjson::dom::element e : doc["traceEvents"].get_array()) {
    std::string_view name, cat;
    if (e["name"].get_string().get(name) || e["cat"].get_string().get(cat)) continue;
    double ts = 0, dur = 0;
    if (e["ts"].get_double().get(ts)) continue;
    if (e["dur"].get_double().get(dur)) dur = 0;
    int64_t corr = -1;
    if (e["args"]["correlation"].get_int64().get(corr)) corr = -1;
    int64_t tid = 0;
    if (e["tid"].get_int64().get(tid)) tid = 0;
    const bool cpuRange = cat == "user_annotation";  // not the device-side gpu_user_annotation span
    if (cpuRange && name.starts_with("ProfilerStep#")) steps.push_back({std::string(name), ts, ts + dur, tid});
    if (cat == "kernel" && corr >= 0) {
      kernelDur[corr] += dur;
      kernelName[corr] = std::string(name.substr(0, 60));
    }
    if (cat == "cuda_runtime" &&
        (name.find("LaunchKernel") != std::string_view::npos ||
         name.find("cuLaunchKernel") != std::string_view::npos) &&
        corr >= 0)
      launches.emplace_back(ts, corr);
    if (cat == "cuda_runtime" && name == "cudaDeviceSynchronize") deviceSyncs.push_back(ts);
    if (name == "attnscope::step_sync") syncScopes.push_back({std::string(name), ts, ts + dur, tid});
    for (const auto& m : modules)
      if (cpuRange && name == m) wraps.push_back({m, ts, ts + dur, tid});
  }
  std::sort(steps.begin(), steps.end(), [](const Span& x, const Span& y) { return x.a < y.a; });
  for (const Span& s : steps) {
    StepFigures st;
    st.name = s.name;
    st.hostUs = s.b - s.a;
    for (const auto& [ts, corr] : launches)
      if (ts >= s.a && ts < s.b && kernelDur.count(corr)) {
        st.kernelUs += kernelDur[corr];
        ++st.kernels;
        ++st.kernelNames[kernelName[corr]];
      }
    for (double t : deviceSyncs) st.allSyncs += t >= s.a && t <= s.b;
    for (const Span& q : syncScopes)
      if (q.a >= s.a && q.b <= s.b)
        for (double t : deviceSyncs) st.syncs += t >= q.a && t <= q.b;
    f.steps.push_back(st);
  }
  for (const Span& w : wraps)
    for (const auto& [ts, corr] : launches)
      if (ts >= w.a && ts < w.b && kernelDur.count(corr)) f.kernelUsUnder[w.name] += kernelDur[corr];
  return f;
}

}  // namespace

int main() {
  // ATTNSCOPE_GPU_RECORD_TRACES=DIR: the figures of traces recorded earlier (DIR/attnscope-gpu-record-SYNC-WRAP.json,
  // as scripts/gpu-record.sh brings them back), read anywhere, without recording.
  const char* reuse = std::getenv("ATTNSCOPE_GPU_RECORD_TRACES");
  if (!reuse &&
      std::system("python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null") != 0) {
    std::cout << "SKIP: no GPU, or python3's torch has no CUDA\n";
    return 77;
  }
  const std::string cli = std::string(ATTNSCOPE_BIN_DIR) + "/attnscope-cli";
  const std::string script = std::string(ATTNSCOPE_SOURCE_DIR) + "/tests/data/scripts/cuda_train.py";
  const std::vector<std::string> modules = {"attn", "norm", "mlp"};
  std::map<std::string, double> medianKernelUs;
  std::map<std::string, std::map<std::string, int>> kernelsOfStep;  // sync -> the middle step's kernels, unwrapped
  double noneHostUs = 0;                                            // a step's host time with --sync none, unwrapped
  std::printf("%-9s %-8s %6s %14s %14s %10s %6s\n", "sync", "wrap", "steps", "host/step us", "CUDA/step us", "kernels",
              "syncs");
  for (const char* sync : {"none", "step", "blocking"}) {
    for (const char* wrap : {"none", "children"}) {
      const std::string out =
          std::string(reuse ? reuse : "/tmp") + "/attnscope-gpu-record-" + sync + "-" + wrap + ".json";
      const std::string cmd = cli + " record --sync " + sync + " --wrap-modules " + wrap + " --active 5 --out " + out +
                              " -- python3 " + script + " >/dev/null 2>/tmp/attnscope-gpu-record.err";
      if (!reuse)
        check(std::system(cmd.c_str()) == 0,
              std::string("record --sync ") + sync + " --wrap-modules " + wrap + " exits 0");
      const TraceFigures f = figuresOf(out, modules);
      check(f.steps.size() == 5, "5 ProfilerSteps traced (" + std::to_string(f.steps.size()) + ")");
      if (f.steps.empty()) continue;
      // The explanation counts the same steps as the raw trace.
      const std::string steps = "/tmp/attnscope-gpu-record-steps.txt";
      if (std::system((cli + " explain " + out +
                       " --format json | python3 -c 'import json,sys; "
                       "print(len(json.load(sys.stdin)[\"steps\"]))' >" +
                       steps)
                          .c_str()) == 0) {
        FILE* sf = std::fopen(steps.c_str(), "r");
        int n = -1;
        if (sf && std::fscanf(sf, "%d", &n) != 1) n = -1;
        if (sf) std::fclose(sf);
        check(n == 5, "attnscope-cli explain finds the 5 steps (" + std::to_string(n) + ")");
      }
      std::string perStep;
      bool sameEveryStep = true;
      for (const auto& s : f.steps) {
        perStep += " " + std::to_string(s.kernels);
        sameEveryStep &= s.kernelNames == f.steps.front().kernelNames;
      }
      std::printf("  kernels in each step:%s%s\n", perStep.c_str(), sameEveryStep ? " (the same every step)" : "");
      std::vector<double> host, kern;
      int syncs = 0, allSyncs = 0;
      for (const auto& s : f.steps) {
        host.push_back(s.hostUs);
        kern.push_back(s.kernelUs);
        syncs += s.syncs;
        allSyncs += s.allSyncs;
      }
      const std::string key = sync;
      const StepFigures& mid = f.steps[f.steps.size() / 2];
      std::printf("%-9s %-8s %6zu %14.1f %14.1f %10d %6d\n", sync, wrap, f.steps.size(), median(host), median(kern),
                  mid.kernels, syncs);
      if (std::string(wrap) == "none") {
        medianKernelUs[key] = median(kern);
        kernelsOfStep[key] = mid.kernelNames;
      } else {
        const double a = medianKernelUs[key], b = median(kern);
        check(a > 0 && std::abs(b - a) <= 0.05 * a,
              std::string("sync ") + sync + ": a step's CUDA time is the same wrapped (" + std::to_string(b) +
                  " us) as not (" + std::to_string(a) + " us), within 5%");
        int differ = 0;
        std::map<std::string, int> all = kernelsOfStep[key];
        for (const auto& [k, n] : mid.kernelNames) all[k] += 0;
        for (const auto& [k, n] : all) {
          const int a0 = kernelsOfStep[key].count(k) ? kernelsOfStep[key].at(k) : 0;
          const int b0 = mid.kernelNames.count(k) ? mid.kernelNames.at(k) : 0;
          if (a0 != b0) {
            ++differ;
            std::printf("  %-60s %3d unwrapped, %3d wrapped\n", k.c_str(), a0, b0);
          }
        }
        check(differ == 0, "the same kernels (by name and count) in a step wrapped or not");
        for (const auto& m : modules)
          check(f.kernelUsUnder.count(m) && f.kernelUsUnder.at(m) > 0,
                "wrapped module '" + m + "' owns GPU work in the trace");
      }
      if (key == "step") check(syncs == 5, "one cudaDeviceSynchronize in 'attnscope::step_sync' per step");
      if (key == "none") check(allSyncs == 0, "no device synchronize in any step with --sync none");
      if (key == "none" && std::string(wrap) == "none") noneHostUs = median(host);
      if (key == "blocking" && std::string(wrap) == "none")
        check(median(host) >= median(kern) && median(host) > noneHostUs,
              "CUDA_LAUNCH_BLOCKING: the host waits for its kernels (host " + std::to_string(median(host)) +
                  " us a step, " + std::to_string(noneHostUs) + " us without it)");
    }
  }
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed ? 1 : 0;
}
