// Stragglers from the model's late sets (job_waits.cpp): a rank, or a set of ranks late together, whose
// imposed wait stood out of the jitter in some steps, with what it was doing before it arrived that the
// others were not (a region that took longer, its work, a collective of its own group that ran long, a
// late start on the device), what it cost the job, and the fix that fits.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/ranks/job_internal.h"
#include "core/ranks/ranks_util.h"
#include "core/text/duration.h"

namespace attnscope::ranks {

namespace {

std::string ms(int64_t ns) { return spanDurationText(ns); }

std::string pct(double share) {
  char b[32];
  std::snprintf(b, sizeof b, share < 0.1 ? "%.1f%%" : "%.0f%%", 100 * share);
  return b;
}

// What a rank did before arriving at its collective `c`, from its step's first collective on: the
// regions by name, the work (its own time, not waiting), and its start delay at `c`.
struct Before {
  std::map<std::string, int64_t> regions;
  int64_t workNs = 0, startDelayNs = 0;
  // The issuing thread's time before it issued (from the previous collective's end) that no recorded op
  // or annotation covers: host work the profiler does not see (Python between ops, a busy data pipeline
  // in the main process, logging, a sleep). Regions are counted up to the arrival, so on a GPU rank
  // (whose host runs ahead) this reads low, never high.
  int64_t uncoveredNs = 0;
};

Before beforeOf(const RankSummary& s, size_t c) {
  Before b;
  const Collective& at = s.collectives[c];
  for (size_t k = 0; k <= c; ++k) {
    const Collective& x = s.collectives[k];
    if (x.step != at.step) continue;
    int64_t covered = 0;
    for (const Activity& a : x.before) b.regions[a.name] += a.ns, covered += a.ns;
    b.workNs += x.arrivalNs - x.beforeFromNs - std::min(x.peerWaitNs, x.arrivalNs - x.beforeFromNs);
    b.uncoveredNs += std::max<int64_t>(0, std::min(x.issueNs, x.arrivalNs) - x.beforeFromNs - covered - x.peerWaitNs);
  }
  b.startDelayNs = at.arrivalNs - at.issueNs;
  return b;
}

struct Reason {
  std::string cause = "unknown", region, group;
  int64_t mineNs = 0, othersNs = 0;
  double ratio = 0;
};

// The parallel instances of matched collective k (itself included): same step, place, name and size.
std::vector<size_t> instancesOf(const JobReport& r, size_t k) {
  const MatchedCollective& m = r.matched[k];
  std::vector<size_t> out;
  for (size_t q = 0; q < r.matched.size(); ++q) {
    const MatchedCollective& o = r.matched[q];
    if (o.stepIndex == m.stepIndex && o.slot == m.slot && o.name == m.name && o.nelems == m.nelems &&
        o.dims == m.dims && o.parts.size() == m.parts.size())
      out.push_back(q);
  }
  return out;
}

// Rank i's collectives of the step before its part in k: the one that ran longest after its last member
// arrived, against the same collective on the other groups' instances; a slow link when that excess is
// half the lateness or more.
bool slowCollective(const JobReport& r, size_t i, size_t k, int64_t late, Reason* why) {
  const MatchedCollective& m = r.matched[k];
  size_t mine = SIZE_MAX;
  for (const Part& p : m.parts)
    if (p.first == i) mine = p.second;
  if (mine == SIZE_MAX) return false;
  const std::vector<Collective>& cs = r.ranks[i].collectives;
  auto runs = [&](const MatchedCollective& x) {
    std::vector<int64_t> ends;
    for (const Part& p : x.parts) ends.push_back(alignedEnd(r, p));
    return medianOf(ends) - x.lastArrivalNs;
  };
  int64_t bestExcess = 0;
  for (size_t c = mine; c-- > 0 && cs[c].step == cs[mine].step;) {
    for (size_t q = 0; q < r.matched.size(); ++q) {
      const MatchedCollective& pm = r.matched[q];
      bool has = false;
      for (const Part& p : pm.parts) has = has || (p.first == i && p.second == c);
      if (!has) continue;
      std::vector<int64_t> others;
      for (size_t o : instancesOf(r, q))
        if (o != q) others.push_back(runs(r.matched[o]));
      if (others.empty()) break;
      const int64_t own = runs(pm), usual = medianOf(others);
      if (own - usual > bestExcess) {
        bestExcess = own - usual;
        why->group = pm.pg;
        why->mineNs = own;
        why->othersNs = usual;
      }
      break;
    }
  }
  if (2 * bestExcess < late) return false;
  why->cause = "slow_collective";
  return true;
}

Reason reasonFor(const JobReport& r, const LateSet& s, size_t i) {
  Reason why;
  // The member's first collective of the step where it was a culprit.
  size_t k = s.origin, c = SIZE_MAX;
  for (size_t q : s.collectives) {
    for (const Part& p : r.matched[q].parts)
      if (p.first == i) c = p.second;
    if (c != SIZE_MAX) {
      k = q;
      break;
    }
  }
  if (c == SIZE_MAX) return why;
  if (slowCollective(r, i, k, s.lateNs, &why)) return why;
  const Before mine = beforeOf(r.ranks[i], c);
  std::vector<Before> others;
  for (size_t q : instancesOf(r, k))
    for (const Part& p : r.matched[q].parts)
      if (!std::binary_search(s.members.begin(), s.members.end(), p.first))
        others.push_back(beforeOf(r.ranks[p.first], p.second));
  if (others.empty()) return why;
  int64_t best = 0;
  for (const auto& [name, ns] : mine.regions) {
    std::vector<int64_t> o;
    for (const Before& b : others) {
      const auto it = b.regions.find(name);
      o.push_back(it == b.regions.end() ? 0 : it->second);
    }
    const int64_t med = medianOf(o);
    if (ns - med > best) best = ns - med, why.region = name, why.mineNs = ns, why.othersNs = med;
  }
  if (!why.region.empty() && 2 * best >= s.lateNs) {
    why.cause = "slow_region";
    return why;
  }
  why.region.clear();
  std::vector<int64_t> work, delay, uncovered;
  for (const Before& b : others)
    work.push_back(b.workNs), delay.push_back(b.startDelayNs), uncovered.push_back(b.uncoveredNs);
  const int64_t usualWork = medianOf(work), usualUncovered = medianOf(uncovered);
  if (2 * (mine.uncoveredNs - usualUncovered) >= s.lateNs) {
    why.cause = "untraced_host";
    why.mineNs = mine.uncoveredNs;
    why.othersNs = usualUncovered;
    return why;
  }
  if (usualWork > 0 && 2 * (mine.workNs - usualWork) >= s.lateNs) {
    why.cause = "slow_work";
    why.mineNs = mine.workNs;
    why.othersNs = usualWork;
    why.ratio = static_cast<double>(mine.workNs) / static_cast<double>(usualWork);
    return why;
  }
  if (2 * (mine.startDelayNs - medianOf(delay)) >= s.lateNs) {
    why.cause = "late_start";
    why.mineNs = mine.startDelayNs;
    why.othersNs = medianOf(delay);
  }
  return why;
}

bool looksLikeDataLoading(const std::string& n) {
  const std::string k = collectiveKey(n);
  return k.find("data") != std::string::npos || k.find("loadbatch") != std::string::npos ||
         k.find("getbatch") != std::string::npos || k.find("input") != std::string::npos;
}

std::string stepsText(const std::vector<std::string>& steps) {
  std::string s, prefix;
  for (const std::string& st : steps) {
    const size_t hash = st.rfind('#');
    const std::string p = hash == std::string::npos ? "" : st.substr(0, hash);
    s += (s.empty() ? "" : ", ") + (p == prefix && !p.empty() ? st.substr(hash) : st);
    prefix = p;
  }
  return s;
}

// The value a standard normal exceeds with probability 0.05 / n (the largest of n deviations stays below it
// 95 times in 100, Bonferroni): by bisection on erfc.
double largestOfNormal(size_t n) {
  const double p = 0.05 / static_cast<double>(std::max<size_t>(n, 1));
  double lo = 0, hi = 40;
  for (int k = 0; k < 80; ++k) {
    const double mid = (lo + hi) / 2;
    (0.5 * std::erfc(mid / std::sqrt(2.0)) > p ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace

void findStragglers(JobReport& r, const std::vector<LateSet>& sets) {
  r.stragglerRule =
      "per collective, the ranks that arrived late together above the deepest gap that stands " +
      std::string("out of the job's arrival jitter (") + ms(r.jitterNs) +
      ", measured over ranks and collectives against each rank's usual place; per kind of collective where it has "
      "enough values) by 6 times it and at least 20 us, "
      "with at least half the members on time; a rank late only because it waited for another (at its previous "
      "collective, or in send/recv for a pipeline neighbour) with ordinary work of its own is a victim; per step, "
      "ranks late together form a set, and the wait it imposed on "
      "each on-time rank is added over the step's collectives; a straggler is a rank or set whose imposed wait in "
      "a step is at least 50 us, 1% of the median step and the largest deviation chance gives over the ranks' "
      "arrivals looked at (the jitter times the normal quantile of 0.05 / their count); persistent when that holds in "
      "more than half the "
      "steps with collectives";
  std::set<int> withCollectives;
  for (const MatchedCollective& m : r.matched)
    if (m.stepIndex >= 0 && m.parts.size() >= 2) withCollectives.insert(m.stepIndex);
  // What is worth naming. A step's imposed wait must stand out of the job's arrival jitter by more than the
  // largest of the deviations looked at (every rank at every collective: with hundreds of them the largest
  // normal one is 4 sigma or more), and cost the others at least 1% of a step (clean jobs' chance sets
  // cost 0.1-0.5%; stragglers of 2 ms in 200 ms steps 1% and more) and 50 us.
  size_t looked = 0;
  for (const MatchedCollective& m : r.matched) looked += m.parts.size();
  const int64_t chance = static_cast<int64_t>(largestOfNormal(looked) * static_cast<double>(r.jitterNs));
  const int64_t material = std::max({int64_t{50'000}, r.medianStepNs / 100, chance});
  // The job's time: each step with collectives at its median duration over the ranks.
  int64_t jobNs = 0;
  for (int k : withCollectives) {
    std::vector<int64_t> dur;
    for (const auto& fs : r.figures)
      for (const StepFigures& f : fs)
        if (f.step == r.steps[static_cast<size_t>(k)]) dur.push_back(f.stepNs);
    jobNs += medianOf(dur);
  }
  std::map<std::vector<size_t>, std::vector<LateSet>> byMembers;
  for (const LateSet& s : sets)
    if (s.imposedNs >= material) byMembers[s.members].push_back(s);
  // One step only: a rank late there cannot be told from a rank whose share of the work is larger by
  // design (or from the step's jitter): said, not named a straggler.
  if (withCollectives.size() < 2) {
    for (const auto& [members, list] : byMembers) {
      std::vector<int64_t> ranks;
      for (size_t i : members) ranks.push_back(r.ranks[i].rank);
      for (const LateSet& s : list) {
        const MatchedCollective& m = r.matched[s.origin];
        r.findings.push_back({"late_ranks",
                              (ranks.size() == 1 ? "rank " : "ranks ") + rankRuns(ranks) + " arrived " + ms(s.lateNs) +
                                  " after the others at " + m.name + " #" + std::to_string(m.index) +
                                  " on process group '" + m.pg + "' (" + r.steps[static_cast<size_t>(s.step)] +
                                  "), and the others waited " + ms(s.imposedNs) +
                                  " for them in the step; with one step traced this cannot be told from the "
                                  "ranks' share of the work, so no straggler is named",
                              ranks});
      }
    }
    byMembers.clear();
  }
  // Sets that never met in a collective (groups with no collective in common, as the data-parallel groups
  // of a host's tensor-parallel ranks when only those run) but were late on the same steps by alike
  // amounts were late together: one set.
  auto sameSteps = [](const std::vector<LateSet>& a, const std::vector<LateSet>& b) {
    if (a.size() != b.size()) return false;
    for (size_t k = 0; k < a.size(); ++k) {
      const double hi = static_cast<double>(std::max(a[k].imposedNs, b[k].imposedNs));
      const double lo = static_cast<double>(std::min(a[k].imposedNs, b[k].imposedNs));
      if (a[k].step != b[k].step || hi > 1.25 * lo) return false;
    }
    return true;
  };
  auto met = [&](const std::vector<size_t>& a, const std::vector<size_t>& b) {
    for (const MatchedCollective& m : r.matched) {
      bool inA = false, inB = false;
      for (const Part& p : m.parts) {
        inA = inA || std::binary_search(a.begin(), a.end(), p.first);
        inB = inB || std::binary_search(b.begin(), b.end(), p.first);
      }
      if (inA && inB) return true;
    }
    return false;
  };
  for (auto& [members, list] : byMembers)
    std::sort(list.begin(), list.end(), [](const LateSet& a, const LateSet& b) { return a.step < b.step; });
  for (bool joined = true; joined;) {
    joined = false;
    for (auto a = byMembers.begin(); a != byMembers.end() && !joined; ++a)
      for (auto b = std::next(a); b != byMembers.end() && !joined; ++b) {
        if (!sameSteps(a->second, b->second) || met(a->first, b->first)) continue;
        std::vector<size_t> all = a->first;
        all.insert(all.end(), b->first.begin(), b->first.end());
        std::sort(all.begin(), all.end());
        std::vector<LateSet> list = a->second;
        for (size_t k = 0; k < list.size(); ++k) {
          list[k].members = all;
          list[k].imposedNs = std::max(list[k].imposedNs, b->second[k].imposedNs);
          list[k].lateNs = std::max(list[k].lateNs, b->second[k].lateNs);
          list[k].collectives.insert(list[k].collectives.end(), b->second[k].collectives.begin(),
                                     b->second[k].collectives.end());
        }
        byMembers.erase(b);
        byMembers.erase(a);
        byMembers[all] = std::move(list);
        joined = true;
      }
  }
  // Hosts, for naming a set.
  std::map<std::string, std::vector<size_t>> byHost;
  for (size_t i = 0; i < r.ranks.size(); ++i)
    if (!r.ranks[i].host.empty()) byHost[r.ranks[i].host].push_back(i);
  for (const auto& [members, list] : byMembers) {
    Straggler st;
    for (size_t i : members) st.ranks.push_back(r.ranks[i].rank);
    st.rank = st.ranks.front();
    std::vector<const LateSet*> ordered;
    for (const LateSet& x : list) ordered.push_back(&x);
    std::vector<int64_t> late;
    for (const LateSet* s : ordered) {
      st.steps.push_back(r.steps[static_cast<size_t>(s->step)]);
      st.stepIndexes.push_back(s->step);
      late.push_back(s->imposedNs);
      st.totalLateNs += s->imposedNs;
    }
    st.lateNs = medianOf(late);
    st.minLateNs = *std::min_element(late.begin(), late.end());
    st.maxLateNs = *std::max_element(late.begin(), late.end());
    st.stepsWithCollectives = static_cast<int>(withCollectives.size());
    st.persistent = 2 * static_cast<int>(st.steps.size()) > st.stepsWithCollectives;
    // Its share of the steps it held up (on the others), and of the job's time (the steps with collectives).
    std::vector<double> shares;
    for (const LateSet* s : ordered) {
      std::vector<int64_t> dur;
      for (size_t i = 0; i < r.ranks.size(); ++i)
        if (!std::binary_search(members.begin(), members.end(), i))
          for (const StepFigures& f : r.figures[i])
            if (f.step == r.steps[static_cast<size_t>(s->step)]) dur.push_back(f.stepNs);
      const int64_t d = medianOf(dur);
      if (d > 0) shares.push_back(static_cast<double>(s->imposedNs) / static_cast<double>(d));
    }
    std::sort(shares.begin(), shares.end());
    if (!shares.empty()) st.stepShare = shares[(shares.size() - 1) / 2];
    if (jobNs > 0) st.jobShare = static_cast<double>(st.totalLateNs) / static_cast<double>(jobNs);
    // Who: one rank, a host's ranks, a process group's, or a list.
    std::set<std::string> hosts;
    for (size_t i : members) hosts.insert(r.ranks[i].host);
    if (hosts.size() == 1 && !hosts.begin()->empty()) {
      st.host = *hosts.begin();
      st.wholeHost = members.size() >= 2 && byHost[st.host].size() == members.size();
    }
    std::string group;
    for (const GroupInfo& g : r.groups)
      if (g.ranks.size() >= 2 && g.ranks == st.ranks && static_cast<int64_t>(g.ranks.size()) != r.worldSize)
        group = g.name;
    if (members.size() == 1)
      st.who = "rank " + std::to_string(st.rank) + (st.host.empty() ? "" : " (host " + st.host + ")");
    else
      st.who = "ranks " + rankRuns(st.ranks) +
               (st.wholeHost       ? " (one host: " + st.host + ", all of its ranks)"
                : !st.host.empty() ? " (host " + st.host + ")"
                : !group.empty()   ? " (process group '" + group + "')"
                                   : "");
    // Why: the most common reason over its members and steps.
    std::map<std::string, std::vector<Reason>> reasons;
    for (const LateSet* s : ordered)
      for (size_t i : members) {
        Reason why = reasonFor(r, *s, i);
        reasons[why.cause + "|" + why.region + why.group].push_back(why);
      }
    const std::vector<Reason>* best = nullptr;
    for (const auto& [key, v] : reasons)
      if (!best || v.size() > best->size() || (v.size() == best->size() && best->front().cause == "unknown")) best = &v;
    const Reason& why = best->front();
    std::vector<int64_t> mine, others;
    std::vector<int64_t> ratio;
    for (const Reason& x : *best) {
      mine.push_back(x.mineNs);
      others.push_back(x.othersNs);
      ratio.push_back(static_cast<int64_t>(x.ratio * 1000));
    }
    st.cause = why.cause;
    st.region = why.region;
    st.group = why.group;
    const std::string they = members.size() == 1 ? "it" : "they";
    const std::string their = members.size() == 1 ? "its" : "their";
    const std::string R = members.size() == 1 ? "rank " + std::to_string(st.rank) : "ranks " + rankRuns(st.ranks);
    std::string because;
    if (st.cause == "slow_region") {
      st.regionNs = medianOf(mine), st.othersRegionNs = medianOf(others);
      because = "before arriving " + they + " spent " + ms(st.regionNs) + " in '" + st.region + "' (the others " +
                ms(st.othersRegionNs) + ")";
      if (looksLikeDataLoading(st.region))
        st.fix = "speed up " + R +
                 "'s input pipeline: more DataLoader workers (num_workers), pin_memory and "
                 "prefetch_factor, and check that host's storage and CPU load";
      else
        st.fix = "look at what '" + st.region + "' does on " + R +
                 " that it does not on the others: more work (uneven batches or sequence lengths), a slower device "
                 "(clocks, temperature: nvidia-smi -q -d PERFORMANCE), a sync or I/O";
    } else if (st.cause == "slow_work") {
      st.workRatio = static_cast<double>(medianOf(ratio)) / 1000.0;
      char b[32];
      std::snprintf(b, sizeof b, "%.2fx", st.workRatio);
      because = their + std::string(" work before arriving took ") + b + " the others' (" + ms(medianOf(mine)) +
                " against " + ms(medianOf(others)) + ")";
      bool device = false;
      for (size_t i : members) device |= r.ranks[i].hasDevice;
      st.fix = std::string("check whether ") + they + (members.size() == 1 ? " gets" : " get") +
               " more work than the others (uneven batches or sequence lengths)" +
               (device ? " and " + R + "'s device (clocks and temperature: nvidia-smi -q -d PERFORMANCE)"
                       : " and " + R + "'s host (other processes, CPU frequency, threads per process)");
    } else if (st.cause == "untraced_host") {
      st.regionNs = medianOf(mine), st.othersRegionNs = medianOf(others);
      because = "before issuing the collective " + they + " spent " + ms(st.regionNs) +
                " on the host outside any op the trace recorded (the others " + ms(st.othersRegionNs) +
                "): Python or library work the profiler does not see";
      st.fix = "find what " + R +
               "'s Python does between its ops before this collective (a data pipeline in the main process, "
               "logging, checkpointing, a sleep or a wait on I/O): py-spy dump on that rank, or profile with "
               "with_stack=True and wrap the suspect code in record_function";
    } else if (st.cause == "slow_collective") {
      st.collectiveNs = medianOf(mine), st.othersCollectiveNs = medianOf(others);
      because = their + std::string(" collective on process group '") + st.group + "' ran " + ms(st.collectiveNs) +
                " after its last member arrived, against " + ms(st.othersCollectiveNs) +
                " for the same collective on the other groups: a slow link inside that group";
      st.fix = "test the link between " + R +
               " (nccl-tests' all_reduce_perf on those ranks alone), check NVLink and "
               "InfiniBand (nvidia-smi nvlink -s, ibstat) and the transport NCCL picked (NCCL_DEBUG=INFO)";
    } else if (st.cause == "late_start") {
      because = they + std::string(" issued the collective on time, but the device started it ") +
                ms(medianOf(mine) - medianOf(others)) + " later than the others' did";
      st.fix = "find what runs ahead of the collective on " + R +
               "'s device (other streams' work queued before it, another process on that GPU)";
    } else {
      because = "nothing " + they + " did before arriving took longer than on the others";
      st.fix = "look at " + R + "'s host outside the trace (other processes, CPU frequency, swapping)";
    }
    if (st.wholeHost) st.fix = "the whole host " + st.host + " is slow: " + st.fix;
    const std::string range = st.steps.size() > 1 && st.maxLateNs != st.minLateNs
                                  ? " [" + ms(st.minLateNs) + " - " + ms(st.maxLateNs) + "]"
                                  : "";
    st.text = st.who + " held the others up on " + std::to_string(st.steps.size()) + " of " +
              std::to_string(st.stepsWithCollectives) + " steps (" + stepsText(st.steps) + "; " +
              (st.persistent ? "persistent" : "transient") + "): every other rank waited " + ms(st.lateNs) +
              (st.steps.size() > 1 ? " a step" : "") + range + " for " + (members.size() == 1 ? "it" : "them") + ", " +
              pct(st.stepShare) + " of a step (" + ms(st.totalLateNs) + " in all, " + pct(st.jobShare) +
              " of the job's " + std::to_string(st.stepsWithCollectives) + " steps), because " + because +
              ". Fix: " + st.fix;
    r.stragglers.push_back(std::move(st));
  }
  std::stable_sort(r.stragglers.begin(), r.stragglers.end(),
                   [](const Straggler& a, const Straggler& b) { return a.totalLateNs > b.totalLateNs; });
}

}  // namespace attnscope::ranks
