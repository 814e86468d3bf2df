// A random case of the Kineto-layout generator (kineto_gen.h) for test_diagnosis_gen's sweep: the
// causes, their shares and the variants a program keeps for all its steps, drawn from a seed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kineto_gen.h"

namespace attnscope::kgen {

// A random case: 3 to 8 steps mixing 2 to 5 causes at random shares (the first cause clearly first:
// 6 points of share or more ahead of the second), with noise on every segment's length, sometimes a
// longer first step with no set-up in it, set-up in the first step, periodic work every Nth step; one
// case in ten CPU-only.
inline std::pair<std::string, Truth> randomCase(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uni = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  for (int attempt = 0;; ++attempt) {
    Builder b;
    const bool cpu = pick(10) == 0;
    if (cpu) b.setCpuOnly();
    // The causes of this case and their shares of a step.
    enum Seg {
      kCompute,
      kLaunch,
      kHostOps,
      kHostGap,
      kCopy,
      kReadBack,
      kSync,
      kAlloc,
      kLoader,
      kComm,
      kSyncGap,   // a sync on a short kernel, then long untraced host work
      kCapture,   // torch.cuda.graph() with its prologue and allocations
      kLeadGap,   // the step opens with a sync on nothing and untraced host work
      kTailGap,   // the step closes with untraced host work
      kTailSync,  // the step closes with a sync on a kernel and untraced host work
      kSegs
    };
    std::vector<int> kinds;
    const int nk = 2 + pick(4);
    std::vector<int> pool =
        cpu ? std::vector<int>{kHostOps, kHostGap, kLoader, kComm}
            : std::vector<int>{kCompute, kLaunch, kHostOps, kHostGap, kCopy,    kReadBack, kSync,    kAlloc,
                               kLoader,  kComm,   kSyncGap, kCapture, kLeadGap, kTailGap,  kTailSync};
    std::shuffle(pool.begin(), pool.end(), rng);
    for (int i = 0; i < nk && i < static_cast<int>(pool.size()); ++i) kinds.push_back(pool[static_cast<size_t>(i)]);
    // A step has one end: untraced work after a sync on a kernel, or without one.
    if (std::count(kinds.begin(), kinds.end(), kTailSync) > 0)
      kinds.erase(std::remove(kinds.begin(), kinds.end(), kTailGap), kinds.end());
    // A trace with a device runs something on it (else it is a CPU-only profile).
    if (!cpu && std::none_of(kinds.begin(), kinds.end(), [](int k) {
          return k == kCompute || k == kLaunch || k == kCopy || k == kReadBack || k == kSync || k == kComm ||
                 k == kSyncGap || k == kCapture || k == kTailSync;
        }))
      kinds.push_back(kCompute);
    std::vector<double> w;
    for (size_t i = 0; i < kinds.size(); ++i) w.push_back(-std::log(uni(1e-6, 1.0)));
    const int steps = 3 + pick(6);
    const int64_t stepNs = static_cast<int64_t>(uni(2e6, 20e6));
    // Variants fixed for the whole trace (a program does the same thing every step).
    const int flavour = pick(3), allocVariant = pick(3), commKind = pick(2), setupKind = pick(4);
    const bool pinned = pick(2), workers = pick(2), ddp = pick(2), late = pick(3) == 0, manyComm = pick(3) == 0;
    const double syncGapRatio = uni(3.0, 9.0);
    const bool blockingLaunches = pick(6) == 0;  // CUDA_LAUNCH_BLOCKING=1
    const bool withSetup = !cpu && pick(3) == 0, longFirst = pick(4) == 0;
    const int periodic = steps >= 6 && pick(3) == 0 ? 2 + pick(2) : 0;
    std::string recipe = std::string(cpu ? "cpu-only " : "") + std::to_string(steps) + " steps of " +
                         std::to_string(stepNs / 1000) + " us:";
    static const char* kNames[] = {"compute", "launch", "hostops", "hostgap", "copy",    "readback", "sync",    "alloc",
                                   "loader",  "comm",   "syncgap", "capture", "leadgap", "tailgap",  "tailsync"};
    double sum = 0;
    for (double v : w) sum += v;
    for (size_t i = 0; i < kinds.size(); ++i) {
      char buf[48];
      std::snprintf(buf, sizeof buf, " %s %.2f", kNames[kinds[i]], w[i] / sum);
      recipe += buf;
    }
    for (int s = 0; s < steps; ++s) {
      b.beginStep();
      // Each segment's length this step (the noise drawn in the kinds' order).
      std::vector<int64_t> lens;
      for (size_t i = 0; i < kinds.size(); ++i) {
        const double noise = uni(0.9, 1.1);
        lens.push_back(std::max<int64_t>(static_cast<int64_t>(static_cast<double>(stepNs) * w[i] / sum * noise),
                                         kinds[i] == kCapture ? 200'000 : 100'000));
      }
      int tail = 0;
      int64_t tailNs = 0;
      for (size_t i = 0; i < kinds.size(); ++i) {
        if (kinds[i] == kLeadGap) b.syncThenSleep(lens[i]);
        if (kinds[i] == kTailGap || kinds[i] == kTailSync) tail = kinds[i] == kTailGap ? 1 : 2, tailNs = lens[i];
      }
      if (ddp && !cpu) b.ddpMarker();
      if (s == 0 && withSetup) {
        int64_t L = static_cast<int64_t>(uni(0.2, 0.6) * static_cast<double>(stepNs)) + 2'000'000;
        // A huge first cudaFree is 20x the trace's other frees (which last up to 0.8 ms) or more.
        if (setupKind == 0) L = std::max<int64_t>(L, 21'000'000);
        b.setup(L, setupKind);
      }
      if (s == 0 && longFirst)
        b.hostOps(static_cast<int64_t>(uni(0.5, 1.0) * static_cast<double>(stepNs)), "aten::index");
      for (size_t i = 0; i < kinds.size(); ++i) {
        const int64_t L = lens[i];
        switch (kinds[i]) {
          case kCompute:
            b.compute(L, flavour);
            break;
          case kLaunch:
            b.launchBound(L, blockingLaunches);
            break;
          case kHostOps:
            b.hostOps(L);
            break;
          case kHostGap:
            b.hostGap(L);
            break;
          case kCopy:
            b.copyH2D(L, pinned);
            break;
          case kReadBack:
            b.readBack(L);
            break;
          case kSync:
            b.userSync(L);
            break;
          case kSyncGap:
            b.userSync(L, syncGapRatio);
            break;
          case kCapture:
            b.captureGraph(L);
            break;
          case kAlloc:
            b.alloc(L, allocVariant);
            break;
          case kLoader:
            b.loader(L, workers);
            break;
          case kComm:
            if (cpu)
              b.glooWait(L);
            else
              b.comm(L, commKind, manyComm ? 25 : 1, late);
            break;
          default:
            break;
        }
      }
      if (periodic && s % periodic == periodic - 1)
        b.hostOps(static_cast<int64_t>(uni(0.8, 1.2) * static_cast<double>(stepNs)), "aten::linear");
      b.endStep(tail, tailNs);
    }
    if (withSetup) recipe += std::string("; set-up ") + std::to_string(setupKind) + " in step 1";
    if (longFirst) recipe += "; a longer first step (no set-up in it)";
    if (periodic) recipe += "; every " + std::to_string(periodic) + "th step longer";
    if (blockingLaunches) recipe += "; launches blocking";
    b.decideFixes();
    b.truth.periodicEvery = periodic;
    b.truth.recipe = recipe;
    // The first cause clearly first (and a CPU-only trace's largest part).
    std::vector<int64_t> v(b.truth.ns, b.truth.ns + kCauseCount);
    if (cpu) v.assign(b.cpuParts, b.cpuParts + 4);
    std::sort(v.rbegin(), v.rend());
    if (static_cast<double>(v[0] - v[1]) < 0.06 * static_cast<double>(b.truth.wallNs) && attempt < 50) {
      rng.seed(seed * 1000003 + static_cast<uint64_t>(attempt) + 1);
      continue;
    }
    return {b.json(), b.truth};
  }
}

}  // namespace attnscope::kgen
