// The job generator (job_gen.h): the schedule, the simulated timeline of every rank, and the traces.
#include "job_gen.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

namespace jobgen {

namespace {

constexpr double kUs = 1000.0;  // ns per us
constexpr double kMs = 1e6;

// splitmix64: the same numbers on every platform and compiler (std's distributions are not).
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uni() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uni(double a, double b) { return a + (b - a) * uni(); }
  int integer(int a, int b) { return a + static_cast<int>(next() % static_cast<uint64_t>(b - a + 1)); }
  double logUni(double a, double b) { return a * std::exp(std::log(b / a) * uni()); }
  double normal() {
    const double u1 = std::max(uni(), 1e-300);
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * uni());
  }
  bool chance(double p) { return uni() < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[next() % v.size()];
  }
};

enum Kind { kWorld = 0, kTp = 1, kDp = 2 };

struct Slot {
  Kind kind = kWorld;
  std::string name;  // allreduce, allgather, reduce_scatter
  int64_t nelems = 0;
  double workNs = 0;
  bool blocking = true;
};

struct Seg {
  double segStart = 0, ready = 0, arrival = 0, end = 0;
};

struct StepRec {
  double start = 0, loadEnd = 0, fwdEnd = 0, optStart = 0, end = 0;
  std::vector<Seg> segs;
};

std::string us(double ns) {
  char b[40];
  std::snprintf(b, sizeof b, "%.3f", ns / kUs);
  return b;
}

std::string ranksJson(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string jq(const std::string& s) { return "\"" + s + "\""; }

// A job's process groups as torch names them: "0" the default group, then one new_group per tensor-
// parallel group ("1".."dp"), then one per data-parallel group.
std::string groupName(const Job& j, Kind k, int rank) {
  if (k == kWorld || j.tp <= 1) return "0";
  if (k == kTp) return std::to_string(1 + rank / j.tp);
  return std::to_string(1 + j.dp + rank % j.tp);
}

std::vector<int64_t> groupMembers(const Job& j, Kind k, int rank) {
  std::vector<int64_t> m;
  for (int r = 0; r < j.world; ++r)
    if (groupName(j, k, r) == groupName(j, k, rank)) m.push_back(r);
  return m;
}

const char* ncclKernel(const std::string& name) {
  if (name == "allgather") return "ncclDevKernel_AllGather_RING_LL(ncclDevComm*)";
  if (name == "reduce_scatter") return "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevComm*)";
  return "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)";
}

struct Writer {
  std::string out;
  bool first = true;
  void event(const std::string& body) {
    out += first ? "\n  {" : ",\n  {";
    out += body;
    out += "}";
    first = false;
  }
  void x(const char* cat, const std::string& name, int64_t pid, int64_t tid, double ts, double dur,
         const std::string& args = {}) {
    std::string b = "\"ph\": \"X\", \"cat\": \"" + std::string(cat) + "\", \"name\": " + jq(name) +
                    ", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid) + ", \"ts\": " + us(ts) +
                    ", \"dur\": " + us(std::max(dur, 1.0));
    if (!args.empty()) b += ", \"args\": {" + args + "}";
    event(b);
  }
};

}  // namespace

Job generate(uint64_t seed, const Options& o) {
  Rng rng{seed * 0x2545f4914f6cdd1dULL + 17};
  Job j;
  j.seed = seed;
  // The form first: it constrains the shape.
  static const std::vector<std::string> forms = {"none", "none", "none", "one", "one", "two", "node", "link"};
  j.form = o.form.empty() ? rng.pick(forms) : o.form;
  j.backend = !o.backend.empty() ? o.backend : (rng.chance(0.6) ? "nccl" : "gloo");
  const bool nccl = j.backend == "nccl";
  // World size: 2-64, log-uniform; a node of 4 needs two hosts at least; a slow link a TP group.
  int world = o.world;
  if (world <= 0) {
    world = static_cast<int>(std::lround(rng.logUni(2, 64.49)));
    if (j.form == "node") world = std::max(8, world / 4 * 4);
    if (j.form == "link") world = std::max(4, world / 2 * 2);
  }
  j.world = world;
  // Subgroups: TP x DP on part of the jobs (and always for a slow link).
  int tp = o.tp;
  if (tp <= 0) {
    tp = 1;
    std::vector<int> fits;
    for (int t : {2, 4})
      if (world % t == 0 && world / t >= 2) fits.push_back(t);
    if (!fits.empty() && (j.form == "link" || rng.chance(0.35))) tp = rng.pick(fits);
  }
  j.tp = tp;
  j.dp = world / tp;
  j.ranksPerNode = (j.form == "node" || !nccl || world % 8 != 0) ? 4 : (rng.chance(0.5) ? 8 : 4);
  const int steps = o.steps > 0 ? o.steps : rng.integer(4, 8);
  int coll = o.collectives;
  if (coll <= 0) coll = std::clamp(static_cast<int>(std::lround(rng.logUni(1, 16.49))), 1, 16);
  if (j.form == "link") coll = std::max(coll, 2);
  j.collectivesPerStep = coll;
  const int firstStep = rng.integer(1, 40);
  for (int s = 0; s < steps; ++s) j.stepNames.push_back("ProfilerStep#" + std::to_string(firstStep + s));
  j.jitterNs = o.jitterNs > 0
                   ? o.jitterNs
                   : static_cast<int64_t>(nccl ? rng.logUni(10 * kUs, 100 * kUs) : rng.logUni(30 * kUs, 120 * kUs));
  const double sigma = static_cast<double>(j.jitterNs);

  // The schedule of a step: work segments each ending in a collective.
  std::vector<Slot> sched(static_cast<size_t>(coll));
  for (int i = 0; i < coll; ++i) {
    Slot& sl = sched[static_cast<size_t>(i)];
    if (tp > 1) {
      const double u = rng.uni();
      sl.kind = u < 0.5 ? kTp : (u < 0.9 ? kDp : kWorld);
    }
    sl.name = "allreduce";
    if (nccl && rng.chance(0.3))
      sl.name = sl.kind == kTp ? "allgather" : (rng.chance(0.5) ? "allgather" : "reduce_scatter");
    sl.nelems = static_cast<int64_t>(rng.logUni(1 << 10, nccl ? (1 << 26) : (1 << 21)));
    sl.workNs = rng.logUni(0.3 * kMs, 12 * kMs);
    sl.blocking = nccl || sl.kind == kTp;
  }
  if (tp > 1) {
    // A cross-group collective ends the step (a gradient all-reduce), and gloo's default group has one
    // (the loss): gloo's groups are told apart by their worker threads, which run only when used.
    sched.back().kind = nccl ? kDp : kWorld;
    sched.back().blocking = nccl;
    if (coll >= 2 && std::none_of(sched.begin(), sched.end() - 1, [](const Slot& s) { return s.kind == kTp; }))
      sched.front().kind = kTp, sched.front().blocking = true;
  }
  for (const Slot& sl : sched) j.pgNames.push_back(sl.kind == kWorld ? "world" : sl.kind == kTp ? "tp" : "dp");
  const double loadBase = rng.logUni(0.5 * kMs, 4 * kMs), optBase = rng.logUni(0.3 * kMs, 3 * kMs);

  // Hosts and their clocks.
  const int nodes = (world + j.ranksPerNode - 1) / j.ranksPerNode;
  const std::string cluster = rng.pick(std::vector<std::string>{"gpu-a", "trn-", "node", "h100-r"});
  std::vector<double> hostClock(static_cast<size_t>(nodes));
  for (double& c : hostClock) c = rng.uni(-30 * kUs, 30 * kUs);
  const int shift = o.clockShift >= 0 ? o.clockShift : (rng.chance(0.5) ? 1 : 0);
  if (shift)
    for (int k = 0, n = std::max(1, std::min(nodes, rng.integer(1, 2))); k < n; ++k)
      hostClock[static_cast<size_t>(rng.integer(0, nodes - 1))] += (rng.chance(0.5) ? 1 : -1) * rng.uni(0.2, 80) * kMs;
  for (int r = 0; r < world; ++r) {
    j.hosts.push_back(cluster + std::to_string(17 + r / j.ranksPerNode));
    j.clockNs.push_back(static_cast<int64_t>(std::llround(hostClock[static_cast<size_t>(r / j.ranksPerNode)])));
  }
  if (o.shiftRank >= 0 && o.shiftRank < world) j.clockNs[static_cast<size_t>(o.shiftRank)] += o.shiftNs;
  j.hostIn = !o.hostIn.empty() ? o.hostIn : rng.pick(std::vector<std::string>{"trace", "file name", "none"});

  // The stragglers.
  auto lateNs = [&]() { return o.lateNs > 0 ? static_cast<double>(o.lateNs) : rng.logUni(2 * kMs, 50 * kMs); };
  auto transientSteps = [&](const std::set<int>& avoid) {
    std::vector<int> free;
    for (int s = 0; s < steps; ++s)
      if (!avoid.count(s)) free.push_back(s);
    const int n =
        std::min<int>(static_cast<int>(free.size()), rng.integer(1, std::max(1, steps / 2 - (avoid.empty() ? 0 : 1))));
    std::vector<int> out;
    while (static_cast<int>(out.size()) < n) {
      const int s = free[rng.next() % free.size()];
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  auto someSteps = [&](bool persistent) {
    if (!persistent) return transientSteps({});
    std::vector<int> all(static_cast<size_t>(steps));
    std::iota(all.begin(), all.end(), 0);
    if (steps >= 6 && rng.chance(0.5)) all.erase(all.begin() + rng.integer(0, steps - 1));
    return all;
  };
  auto persistentNow = [&]() { return o.persistent >= 0 ? o.persistent == 1 : rng.chance(0.4); };
  const std::vector<std::string> causes = {"data_loading", "forward"};
  if (j.form == "one") {
    TrueStraggler t;
    t.ranks = {rng.integer(0, world - 1)};
    t.persistent = persistentNow();
    t.steps = someSteps(t.persistent);
    t.lateNs = static_cast<int64_t>(lateNs());
    t.cause = rng.pick(causes);
    j.stragglers.push_back(t);
  } else if (j.form == "two") {
    TrueStraggler a, b;
    a.ranks = {rng.integer(0, world - 1)};
    do b.ranks = {rng.integer(0, world - 1)};
    while (b.ranks == a.ranks);
    a.steps = transientSteps({});
    b.steps = transientSteps(std::set<int>(a.steps.begin(), a.steps.end()));
    a.lateNs = static_cast<int64_t>(lateNs());
    b.lateNs = static_cast<int64_t>(lateNs());
    a.cause = rng.pick(causes);
    b.cause = rng.pick(causes);
    j.stragglers = {a, b};
  } else if (j.form == "node") {
    TrueStraggler t;
    const int node = rng.integer(0, nodes - 1);
    for (int r = node * j.ranksPerNode; r < std::min(world, (node + 1) * j.ranksPerNode); ++r) t.ranks.push_back(r);
    t.persistent = persistentNow();
    t.steps = someSteps(t.persistent);
    t.lateNs = static_cast<int64_t>(lateNs());
    t.cause = rng.pick(causes);
    j.stragglers.push_back(t);
  } else if (j.form == "link") {
    TrueStraggler t;
    const int g = rng.integer(0, j.dp - 1);
    for (int r = g * tp; r < (g + 1) * tp; ++r) t.ranks.push_back(r);
    t.persistent = persistentNow();
    t.steps = someSteps(t.persistent);
    t.lateNs = static_cast<int64_t>(lateNs());
    t.cause = "slow_link";
    t.group = groupName(j, kTp, g * tp);
    j.stragglers.push_back(t);
  }
  for (TrueStraggler& t : j.stragglers) t.persistent = 2 * static_cast<int>(t.steps.size()) > steps;

  // The timeline, in true time (ns).
  std::vector<double> speed(static_cast<size_t>(world));
  for (double& v : speed) v = 1 + 0.0005 * rng.normal();
  auto jitter = [&]() {
    double x = sigma * rng.normal();
    if (rng.chance(0.002)) x += -std::log(std::max(rng.uni(), 1e-12)) * sigma;  // a rare hiccup
    return x;
  };
  // A duration of `base` with the jitter: base + jitter while the jitter is small against it, and never
  // below a fifth of it (a piece of work with a jitter as large as itself varies by factors, as a
  // log-normal does, rather than piling up at a floor).
  auto vary = [&](double base) {
    const double d = jitter();
    return d >= -0.5 * base ? base + d : base * (0.2 + 0.3 * std::exp((d + 0.5 * base) / (0.3 * base)));
  };
  // The extra each rank gets on step s where it place: (region, ns).
  auto injected = [&](int r, int s, const std::string& where) {
    double extra = 0;
    for (const TrueStraggler& t : j.stragglers) {
      if (t.cause != where) continue;
      if (!std::binary_search(t.ranks.begin(), t.ranks.end(), r)) continue;
      if (!std::binary_search(t.steps.begin(), t.steps.end(), s)) continue;
      extra += static_cast<double>(t.lateNs) * (t.ranks.size() > 1 ? 1 + 0.03 * (2 * rng.uni() - 1) : 1.0);
    }
    return extra;
  };
  const double t0 = 1.7e18 - std::fmod(1.7e18, 1e9) + rng.uni(0, 1e9);
  std::vector<std::vector<StepRec>> rec(static_cast<size_t>(world), std::vector<StepRec>(static_cast<size_t>(steps)));
  std::vector<double> cursor(static_cast<size_t>(world));
  for (double& c : cursor) c = t0 + rng.uni(0, 50 * kUs);
  std::vector<std::vector<double>> workerFree(static_cast<size_t>(world), std::vector<double>(3, 0));
  for (int s = 0; s < steps; ++s) {
    for (int r = 0; r < world; ++r) {
      StepRec& sr = rec[static_cast<size_t>(r)][static_cast<size_t>(s)];
      double& c = cursor[static_cast<size_t>(r)];
      sr.start = c;
      c += vary(loadBase * (1 + 0.003 * rng.normal())) + injected(r, s, "data_loading");
      sr.loadEnd = c;
      for (double& w : workerFree[static_cast<size_t>(r)]) w = std::max(w, c);
      sr.segs.resize(sched.size());
    }
    bool linkDone = false;
    for (size_t k = 0; k < sched.size(); ++k) {
      const Slot& sl = sched[k];
      for (int r = 0; r < world; ++r) {
        Seg& g = rec[static_cast<size_t>(r)][static_cast<size_t>(s)].segs[k];
        double work = vary(sl.workNs * speed[static_cast<size_t>(r)]);
        if (k == 0) work += injected(r, s, "forward");
        g.segStart = cursor[static_cast<size_t>(r)];
        g.ready = g.segStart + work;
        g.arrival = sl.blocking ? g.ready : std::max(g.ready, workerFree[static_cast<size_t>(r)][sl.kind]);
      }
      // Each instance of the collective (one per group of this kind) ends when its last member arrived.
      std::vector<bool> done(static_cast<size_t>(world), false);
      const bool slowHere = sl.kind == kTp && !linkDone;
      for (int r = 0; r < world; ++r) {
        if (done[static_cast<size_t>(r)]) continue;
        const std::vector<int64_t> members = groupMembers(j, sl.kind, r);
        double last = 0;
        for (int64_t m : members)
          last = std::max(last, rec[static_cast<size_t>(m)][static_cast<size_t>(s)].segs[k].arrival);
        const double bw = nccl ? (sl.kind == kTp ? 100.0 : 20.0) : 1.0;  // bytes per ns
        double transfer = (nccl ? 15 * kUs : 50 * kUs) + static_cast<double>(sl.nelems) * 4 / bw;
        for (const TrueStraggler& t : j.stragglers)
          if (slowHere && t.cause == "slow_link" && t.group == groupName(j, kTp, r) &&
              std::binary_search(t.steps.begin(), t.steps.end(), s))
            transfer += static_cast<double>(t.lateNs);
        for (int64_t m : members) {
          done[static_cast<size_t>(m)] = true;
          rec[static_cast<size_t>(m)][static_cast<size_t>(s)].segs[k].end = last + transfer + rng.uni(0, 3 * kUs);
        }
      }
      if (slowHere) linkDone = true;
      for (int r = 0; r < world; ++r) {
        const Seg& g = rec[static_cast<size_t>(r)][static_cast<size_t>(s)].segs[k];
        if (sl.blocking) {
          cursor[static_cast<size_t>(r)] = g.end;
        } else {
          cursor[static_cast<size_t>(r)] = g.ready;
          workerFree[static_cast<size_t>(r)][sl.kind] = g.end;
        }
      }
    }
    for (int r = 0; r < world; ++r) {
      StepRec& sr = rec[static_cast<size_t>(r)][static_cast<size_t>(s)];
      double& c = cursor[static_cast<size_t>(r)];
      for (double w : workerFree[static_cast<size_t>(r)]) c = std::max(c, w);
      sr.fwdEnd = sched.front().blocking ? sr.segs.front().end : sr.segs.front().ready;
      sr.optStart = c;
      c += vary(optBase);
      sr.end = c;
      c += rng.uni(5 * kUs, 20 * kUs);
    }
  }
  std::vector<double> stepTimes;
  for (const auto& rr : rec)
    for (const StepRec& sr : rr) stepTimes.push_back(sr.end - sr.start);
  std::nth_element(stepTimes.begin(), stepTimes.begin() + static_cast<long>(stepTimes.size() / 2), stepTimes.end());
  j.medianStepNs = static_cast<int64_t>(stepTimes[stepTimes.size() / 2]);

  // The traces.
  const bool commsId = nccl && (o.commsId || rng.chance(0.5));
  for (int r = 0; r < world; ++r) {
    const double off = static_cast<double>(j.clockNs[static_cast<size_t>(r)]);
    const int64_t pid = 4100 + r * 7, mainTid = pid;
    const int device = r % j.ranksPerNode;
    Writer w;
    std::vector<int64_t> seq(3, 0);
    int64_t corr = 1000;
    const std::vector<Kind> kinds = tp > 1 ? std::vector<Kind>{kWorld, kTp, kDp} : std::vector<Kind>{kWorld};
    for (int s = 0; s < steps; ++s) {
      const StepRec& sr = rec[static_cast<size_t>(r)][static_cast<size_t>(s)];
      w.x("user_annotation", j.stepNames[static_cast<size_t>(s)], pid, mainTid, sr.start + off, sr.end - sr.start);
      w.x("user_annotation", "data_loading", pid, mainTid, sr.start + off + 2 * kUs, sr.loadEnd - sr.start - 4 * kUs);
      w.x("user_annotation", "forward", pid, mainTid, sr.loadEnd + off, sr.fwdEnd - sr.loadEnd);
      if (sr.optStart > sr.fwdEnd + 2 * kUs)
        w.x("user_annotation", "backward", pid, mainTid, sr.fwdEnd + off, sr.optStart - sr.fwdEnd);
      w.x("user_annotation", "optimizer", pid, mainTid, sr.optStart + off, sr.end - sr.optStart);
      for (size_t k = 0; k < sched.size(); ++k) {
        const Slot& sl = sched[k];
        const Seg& g = sr.segs[k];
        const std::string pg = groupName(j, sl.kind, r);
        const int64_t sq = ++seq[sl.kind];
        if (nccl) {
          ++corr;
          w.x("cpu_op", "aten::mm", pid, mainTid, g.segStart + off + 2 * kUs, 8 * kUs,
              "\"Input Dims\": [[4096, 4096], [4096, 4096]], \"External id\": " + std::to_string(corr));
          w.x("cuda_runtime", "cudaLaunchKernel", pid, mainTid, g.segStart + off + 4 * kUs, 4 * kUs,
              "\"correlation\": " + std::to_string(corr));
          w.x("kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", device, 7,
              g.segStart + off + 12 * kUs, g.ready - g.segStart - 16 * kUs,
              "\"device\": " + std::to_string(device) + ", \"stream\": 7, \"correlation\": " + std::to_string(corr));
          ++corr;
          std::string comm = "\"Collective name\": " + jq(sl.name) + ", \"Process Group Name\": " + jq(pg) +
                             ", \"Seq\": " + std::to_string(sq) + ", \"In msg nelems\": " + std::to_string(sl.nelems) +
                             ", \"Out msg nelems\": " + std::to_string(sl.nelems) + ", \"dtype\": \"Float\"";
          if (commsId) comm += ", \"Comms Id\": \"" + pg + "-" + std::to_string(sq) + "\"";
          w.x("cpu_op", "record_param_comms", pid, mainTid, g.ready + off - 14 * kUs, 10 * kUs, comm);
          w.x("cuda_runtime", "cudaLaunchKernel", pid, mainTid, g.ready + off - 12 * kUs, 4 * kUs,
              "\"correlation\": " + std::to_string(corr));
          w.x("kernel", ncclKernel(sl.name), device, 20 + sl.kind, g.arrival + off, g.end - g.arrival,
              "\"device\": " + std::to_string(device) + ", \"stream\": " + std::to_string(20 + sl.kind) +
                  ", \"correlation\": " + std::to_string(corr) + ", " + comm);
        } else {
          w.x("cpu_op", "aten::addmm", pid, mainTid, g.segStart + off + 25 * kUs, g.ready - g.segStart - 30 * kUs,
              "\"Input Dims\": [[256], [256, 256], [256, 256]]");
          const std::string dims = "[[" + std::to_string(sl.nelems) + "]]";
          w.x("cpu_op", "c10d::allreduce_", pid, mainTid, g.ready + off, sl.blocking ? g.end - g.ready : 15 * kUs,
              "\"Input Dims\": [" + dims + ", [], [], [], [], []]");
          const int64_t tid =
              pid + 50 + static_cast<int64_t>(std::find(kinds.begin(), kinds.end(), sl.kind) - kinds.begin());
          w.x("user_annotation", "gloo:all_reduce", pid, tid, g.arrival + off, g.end - g.arrival,
              "\"Input Dims\": " + dims);
        }
      }
    }
    // distributedInfo: the groups this rank is a member of, as torch lists them.
    std::string pgs = "{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"" +
                      std::string(nccl ? "cuda:nccl" : "cpu:gloo,cuda:gloo") +
                      "\", \"pg_size\": " + std::to_string(world) + ", \"ranks\": " + ranksJson([&] {
                        std::vector<int64_t> all(static_cast<size_t>(world));
                        std::iota(all.begin(), all.end(), 0);
                        return all;
                      }()) +
                      "}";
    if (tp > 1)
      for (Kind k : {kTp, kDp}) {
        const std::vector<int64_t> m = groupMembers(j, k, r);
        pgs += ", {\"pg_name\": " + jq(groupName(j, k, r)) + ", \"pg_desc\": \"undefined\", \"backend_config\": \"" +
               std::string(nccl ? "cuda:nccl" : "cpu:gloo,cuda:gloo") + "\", \"pg_size\": " + std::to_string(m.size()) +
               ", \"ranks\": " + ranksJson(m) + "}";
      }
    std::string doc = "{\n\"schemaVersion\": 1,\n";
    if (nccl)
      doc += "\"deviceProperties\": [{\"id\": " + std::to_string(device) +
             ", \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85045624832, \"computeMajor\": 9, "
             "\"computeMinor\": 0, \"numSms\": 132}],\n";
    doc += "\"distributedInfo\": {\"backend\": \"" + j.backend + "\", \"rank\": " + std::to_string(r) +
           ", \"world_size\": " + std::to_string(world) + ", \"pg_count\": " + std::to_string(tp > 1 ? 3 : 1) +
           ", \"pg_config\": [" + pgs + "]},\n";
    if (j.hostIn == "trace") doc += "\"hostname\": " + jq(j.hosts[static_cast<size_t>(r)]) + ",\n";
    doc += "\"displayTimeUnit\": \"ms\",\n\"traceEvents\": [" + w.out + "\n]}\n";
    File f;
    f.name = j.hostIn == "file name" ? j.hosts[static_cast<size_t>(r)] + "_" + std::to_string(pid) + "." +
                                           std::to_string(static_cast<int64_t>(t0 / kMs) + r) + ".pt.trace.json"
                                     : "rank-" + std::to_string(r) + ".pt.trace.json";
    f.text = std::move(doc);
    j.files.push_back(std::move(f));
  }
  return j;
}

std::string Job::truthJson() const {
  std::string s = "{\"seed\": " + std::to_string(seed) + ", \"form\": " + jq(form) + ", \"backend\": " + jq(backend) +
                  ", \"world\": " + std::to_string(world) + ", \"tp\": " + std::to_string(tp) +
                  ", \"dp\": " + std::to_string(dp) + ", \"ranks_per_node\": " + std::to_string(ranksPerNode) +
                  ", \"collectives_per_step\": " + std::to_string(collectivesPerStep) +
                  ", \"jitter_ns\": " + std::to_string(jitterNs) +
                  ", \"median_step_ns\": " + std::to_string(medianStepNs) + ", \"host_in\": " + jq(hostIn) +
                  ", \"steps\": [";
  for (size_t i = 0; i < stepNames.size(); ++i) s += (i ? ", " : "") + jq(stepNames[i]);
  s += "], \"schedule\": [";
  for (size_t i = 0; i < pgNames.size(); ++i) s += (i ? ", " : "") + jq(pgNames[i]);
  s += "], \"hosts\": [";
  for (size_t i = 0; i < hosts.size(); ++i) s += (i ? ", " : "") + jq(hosts[i]);
  s += "], \"clock_ns\": " + ranksJson(clockNs) + ", \"stragglers\": [";
  for (size_t i = 0; i < stragglers.size(); ++i) {
    const TrueStraggler& t = stragglers[i];
    s += (i ? ", {" : "{") + std::string("\"ranks\": ") + ranksJson(t.ranks) + ", \"steps\": [";
    for (size_t k = 0; k < t.steps.size(); ++k) s += (k ? ", " : "") + jq(stepNames[static_cast<size_t>(t.steps[k])]);
    s += "], \"late_ns\": " + std::to_string(t.lateNs) + ", \"persistent\": " + (t.persistent ? "true" : "false") +
         ", \"cause\": " + jq(t.cause) + ", \"group\": " + jq(t.group) + "}";
  }
  return s + "]}\n";
}

bool writeJob(const Job& job, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  auto put = [&](const std::string& name, const std::string& text) {
    std::ofstream f(dir + "/" + name, std::ios::binary | std::ios::trunc);
    f << text;
    return static_cast<bool>(f);
  };
  for (const File& f : job.files)
    if (!put(f.name, f.text)) return false;
  return put("TRUTH.json", job.truthJson());
}

}  // namespace jobgen
