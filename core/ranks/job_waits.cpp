// The model of who waited for whom, on the aligned clock.
//
// A collective starts when its last member arrives; each member waits from its own arrival to that one.
// Sorting a collective's arrivals latest first, the gap below the k latest is waited by every member
// that arrived earlier, and it is the k latest that imposed it. The ranks late together are the latest
// ones above the deepest gap that stands out of the job's own jitter (and leave at least half the
// members on time); the wait they imposed is the last arrival minus the on-time members' last.
//
// Parallel instances of one collective (each tensor-parallel group's all-reduce of the same step) are
// read together: a group whose members are all late shows against the other groups, and its members are
// then culprits wherever they made someone wait. A rank that is late only because it waited for someone
// at its previous collective, or in point-to-point transfers (a pipeline stage in recv), is a victim, not a culprit.
// Per step, ranks late together at a collective (and any rank late with them) form a set; its imposed wait is added
// over the step's collectives.
//
// The jitter is measured robustly: each arrival against its collective's median, then against the
// rank's own usual place at that collective in the other steps (a lower median: a rank late on half the
// steps does not move it), and the 25th percentile of what is left, scaled to a standard deviation.
// Ranks persistently late and transient stragglers hardly move it; the threshold is 6 times it and at
// least 20 us.
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <numeric>
#include <set>

#include "core/ranks/job_internal.h"
#include "core/ranks/ranks_util.h"
#include "core/store/intervals.h"

namespace attnscope::ranks {

namespace {

constexpr double kCutSigmas = 6;
constexpr double kWeakSigmas = 2;    // a gap standing out of its own collective's on-time ranks, and this
constexpr double kLocalSpreads = 5;  // many times their spread
constexpr int64_t kCutFloorNs = 20'000;
constexpr double kSplitRatio = 1.5;  // clusters of late ranks this far apart in lateness are separate sets
constexpr double kQ25 = 0.3186;      // the 25th percentile of |N(0, 1)|
constexpr double kQ50 = 0.6745;      // its median

// The lower quartile of sorted `v` without its element at `p`: where the others are, read from their early
// side (ranks late together are at most half of them, so it is an on-time rank's), with no zero made by
// the value itself.
int64_t lowerQuartileWithout(const std::vector<int64_t>& v, size_t p) {
  const size_t j = (v.size() - 2) / 4;
  return v[j < p ? j : j + 1];
}

// The middle of the tightest half of `v` (the shortest interval holding half its values, rounded up):
// where a rank usually is, whether it is late in up to half the steps or in all of them.
template <class T>
T tightestHalfCentre(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  const size_t h = (v.size() + 1) / 2;
  size_t best = 0;
  for (size_t i = 1; i + h <= v.size(); ++i)
    if (v[i + h - 1] - v[i] < v[best + h - 1] - v[best]) best = i;
  return v[best] + (v[best + h - 1] - v[best]) / 2;
}

// For standard normal series of `len` values centred by tightestHalfCentre (a small series' tightest half
// is tighter than its spread): the 25th and 50th percentiles of |x - centre|.
std::pair<double, double> centredQuantiles(size_t len) {
  if (len < 3) return {kQ25, kQ50};
  len = std::min<size_t>(len, 64);  // past that the tightest half hardly differs from the spread
  // By simulation, per length when first asked (a job uses one or two), from a fixed seed; kept.
  static std::mutex lock;
  static std::map<size_t, std::pair<double, double>> known;
  const std::lock_guard<std::mutex> hold(lock);
  if (const auto it = known.find(len); it != known.end()) return it->second;
  uint64_t state = 0x243f6a8885a308d3ULL + len;
  auto uni = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (static_cast<double>(state >> 11) + 0.5) * 0x1.0p-53;
  };
  std::vector<double> all;
  for (size_t k = 0, trials = 12000 / len + 100; k < trials; ++k) {
    std::vector<double> v(len);
    for (double& x : v) x = std::sqrt(-2 * std::log(uni())) * std::cos(6.283185307179586 * uni());
    const double c = tightestHalfCentre(v);
    for (double x : v) all.push_back(std::fabs(x - c));
  }
  std::nth_element(all.begin(), all.begin() + static_cast<long>(all.size() / 4), all.end());
  const double q25 = all[all.size() / 4];
  std::nth_element(all.begin(), all.begin() + static_cast<long>(all.size() / 2), all.end());
  return known[len] = {q25, all[all.size() / 2]};
}

// A robust standard deviation of residuals centred as `q` says (the 25th and 50th percentiles of |x| for
// standard normal ones): a first guess from the 25th percentile (sound with up to three quarters of the
// values off), then the median of those within 5 times it (sound with up to half of those off, and far
// steadier on a few values).
int64_t scaleOf(std::vector<int64_t> v, std::pair<double, double> q) {
  if (v.empty()) return 0;
  for (int64_t& x : v) x = std::llabs(x);
  std::sort(v.begin(), v.end());
  const double first = static_cast<double>(v[v.size() / 4]) / q.first;
  const auto end = std::upper_bound(v.begin(), v.end(), static_cast<int64_t>(5 * first));
  const size_t kept = static_cast<size_t>(end - v.begin());
  if (kept < 4) return static_cast<int64_t>(first);
  return static_cast<int64_t>(static_cast<double>(v[kept / 2]) / q.second);
}

// The expected range of `n` standard normal values (d2, as quality control tables give it).
double rangeFactor(size_t n) {
  static const double d2[] = {0, 0, 1.128, 1.693, 2.059, 2.326, 2.534, 2.704, 2.847, 2.970, 3.078};
  if (n < std::size(d2)) return d2[n];
  return 2 * std::sqrt(2 * std::log(static_cast<double>(n))) - 0.5;  // close enough past 10
}

std::string signatureOf(const MatchedCollective& m) {
  return collectiveKey(m.name) + "|" + m.dims + "|" + std::to_string(m.nelems) + "|" + std::to_string(m.parts.size());
}

// The job's steps in the order they ran (the median aligned start of each name over the ranks).
void orderSteps(JobReport& r) {
  std::map<std::string, std::vector<int64_t>> starts;
  for (size_t i = 0; i < r.ranks.size(); ++i)
    for (const RankStep& st : r.ranks[i].steps) starts[st.name].push_back(st.startNs - appliedOffset(r, i));
  std::vector<std::pair<int64_t, std::string>> order;
  for (auto& [name, v] : starts) order.emplace_back(medianOf(v), name);
  std::sort(order.begin(), order.end());
  for (const auto& [t, name] : order) r.steps.push_back(name);
}

void fillFigures(JobReport& r) {
  const size_t n = r.ranks.size();
  r.figures.assign(n, {});
  std::vector<int64_t> spans;
  for (size_t i = 0; i < n; ++i)
    for (const RankStep& st : r.ranks[i].steps) {
      StepFigures f;
      f.step = st.name;
      f.startNs = st.startNs - appliedOffset(r, i);
      f.stepNs = st.spanNs();
      f.computeNs = st.computeNs;
      f.commNs = st.commNs;
      f.exposedCommNs = st.exposedCommNs;
      f.overlappedCommNs = st.overlappedCommNs;
      f.cause = st.cause;
      f.causeLabel = st.causeLabel;
      f.causeNs = st.causeNs;
      spans.push_back(f.stepNs);
      r.figures[i].push_back(std::move(f));
    }
  r.medianStepNs = medianOf(spans);
  // A truncated trace's steps with fewer collectives than the other ranks issued there: cut short.
  std::map<std::string, std::vector<int64_t>> perStep;  // step -> collectives on each rank
  std::vector<std::map<std::string, int64_t>> mine(n);
  for (size_t i = 0; i < n; ++i)
    for (const Collective& c : r.ranks[i].collectives)
      if (c.step >= 0) mine[i][r.ranks[i].steps[static_cast<size_t>(c.step)].name]++;
  for (size_t i = 0; i < n; ++i)
    for (const RankStep& st : r.ranks[i].steps) perStep[st.name].push_back(mine[i][st.name]);
  for (size_t i = 0; i < n; ++i) {
    if (r.ranks[i].truncated.empty()) continue;
    bool cut = false;
    for (StepFigures& f : r.figures[i]) {
      cut = cut || mine[i][f.step] < medianOf(perStep[f.step]);
      f.beyondEnd = cut;
    }
  }
}

}  // namespace

std::vector<LateSet> modelWaits(JobReport& r) {
  const size_t n = r.ranks.size();
  orderSteps(r);
  fillFigures(r);
  std::map<std::string, int> stepIndex;
  for (size_t k = 0; k < r.steps.size(); ++k) stepIndex[r.steps[k]] = static_cast<int>(k);
  // Each rank's collectives: their place among the group's collectives of their step, and the matched
  // collective each is part of.
  std::vector<std::vector<int>> slotOf(n), matchedOf(n);
  for (size_t i = 0; i < n; ++i) {
    std::map<std::pair<std::string, int>, int> next;
    const auto& cs = r.ranks[i].collectives;
    slotOf[i].resize(cs.size());
    matchedOf[i].assign(cs.size(), -1);
    for (size_t c = 0; c < cs.size(); ++c) slotOf[i][c] = next[{cs[c].pg, cs[c].step}]++;
  }
  for (size_t k = 0; k < r.matched.size(); ++k)
    for (const Part& p : r.matched[k].parts) matchedOf[p.first][p.second] = static_cast<int>(k);

  // Per collective: who arrived last, by how much.
  std::vector<std::vector<std::pair<int64_t, size_t>>> arr(r.matched.size());  // (aligned arrival, rank), latest first
  for (size_t k = 0; k < r.matched.size(); ++k) {
    MatchedCollective& m = r.matched[k];
    std::vector<int64_t> ends;
    for (const Part& p : m.parts) {
      arr[k].emplace_back(alignedArrival(r, p), p.first);
      ends.push_back(alignedEnd(r, p));
    }
    std::sort(arr[k].begin(), arr[k].end(), std::greater<>());
    const auto it = stepIndex.find(m.step);
    m.stepIndex = it == stepIndex.end() ? -1 : it->second;
    m.slot = slotOf[m.parts.front().first][m.parts.front().second];
    m.firstArrivalNs = arr[k].back().first;
    m.lastArrivalNs = arr[k].front().first;
    m.lastRank = r.ranks[arr[k].front().second].rank;
    m.medianEndNs = medianOf(ends);
    m.endSpreadNs = *std::max_element(ends.begin(), ends.end()) - *std::min_element(ends.begin(), ends.end());
    if (arr[k].size() < 2) continue;
    std::vector<int64_t> others;
    for (size_t q = 1; q < arr[k].size(); ++q) others.push_back(arr[k][q].first);
    m.lateNs = m.lastArrivalNs - medianOf(others);
    m.gapNs = m.lastArrivalNs - arr[k][1].first;
  }
  // What the model reads: when each rank was ready to take part. A GPU kernel's start (the stream got
  // there); a gloo collective's issue on the main thread (its worker thread may still run the one before,
  // which hides how late the rank itself was).
  std::vector<std::vector<std::pair<int64_t, size_t>>> rdy(r.matched.size());  // latest first
  std::vector<int64_t> lastReady(r.matched.size(), 0);
  for (size_t k = 0; k < r.matched.size(); ++k) {
    for (const Part& p : r.matched[k].parts) {
      const Collective& c = collectiveOf(r, p);
      const int64_t t = c.kind == "gpu_kernel" ? c.arrivalNs : std::min(c.issueNs, c.arrivalNs);
      rdy[k].emplace_back(t - appliedOffset(r, p.first), p.first);
    }
    std::sort(rdy[k].begin(), rdy[k].end(), std::greater<>());
    lastReady[k] = rdy[k].front().first;
  }

  // Arrivals against the others' median (x) carry a persistent straggler's lateness whole, and with two
  // ranks they only mirror each other: x is read only where no rank has the 3 steps that its own centre
  // (e) needs. A 2-rank job of 3 steps, one rank 30 ms late at each collective, read 45 ms of "jitter"
  // from x and named no one.
  // The jitter, per role (a collective's place in its step, what it is and how many take part): each
  // rank's readiness against the others' median, then against the rank's own usual place in that role
  // (the middle of the tightest half of its steps), pooled over the ranks.
  std::map<std::string, std::map<size_t, std::vector<int64_t>>> dev;  // role -> rank -> ready - the others' median
  // Two ranks: each one's readiness against the others' mirrors the other's lateness, so a job where both were
  // late on different steps (or one on most) reads its lateness as jitter. Each rank's own time from its step's
  // start (each step ended waiting for the same collective) to its readiness is moved only by its own lateness
  // where it did not wait for the other in send/recv before (a pipeline stage's time holds its neighbour's): its
  // deviation from its usual place, times sqrt(2) (the gap is a difference of two such), is the jitter there.
  std::map<std::string, std::map<size_t, std::vector<int64_t>>> own;  // role -> rank -> ready - its step's start
  std::set<std::string> withPeers;                                    // roles with send/recv before them in the step
  std::vector<std::string> roleOf(r.matched.size());
  for (size_t k = 0; k < r.matched.size(); ++k) {
    const MatchedCollective& m = r.matched[k];
    roleOf[k] = std::to_string(m.slot) + "|" + signatureOf(m);
    if (rdy[k].size() < 2) continue;
    std::vector<int64_t> a;
    for (const auto& [t, i] : rdy[k]) a.push_back(t);
    std::reverse(a.begin(), a.end());  // ascending
    for (size_t q = 0; q < a.size(); ++q)
      dev[roleOf[k]][rdy[k][a.size() - 1 - q].second].push_back(a[q] - lowerQuartileWithout(a, q));
    if (m.parts.size() != 2) continue;
    for (const Part& p : m.parts) {
      const Collective& c = collectiveOf(r, p);
      if (c.step < 0) continue;
      const int64_t t = c.kind == "gpu_kernel" ? c.arrivalNs : std::min(c.issueNs, c.arrivalNs);
      const std::vector<Collective>& cs = r.ranks[p.first].collectives;
      bool peer = false;
      for (size_t q = p.second + 1; q-- > 0 && cs[q].step == c.step;) peer = peer || cs[q].peerWaitNs > 0;
      if (peer) withPeers.insert(roleOf[k]);
      own[roleOf[k]][p.first].push_back(t - r.ranks[p.first].steps[static_cast<size_t>(c.step)].startNs);
    }
  }
  std::map<std::string, int64_t> sigma;
  std::map<std::string, size_t> independent;  // values a role's scale rests on (two ranks mirror each other)
  std::vector<int64_t> allE, allX;
  std::vector<size_t> lengths;
  for (const auto& [role, byRank] : dev) {
    std::vector<int64_t> e, x;
    std::vector<size_t> len;
    const auto mine = own.find(role);
    const bool pair = byRank.size() == 2 && mine != own.end() && mine->second.size() == 2 && !withPeers.count(role);
    for (const auto& [i, v] : byRank) {
      x.insert(x.end(), v.begin(), v.end());
      const std::vector<int64_t>& w = pair ? mine->second.at(i) : v;
      if (w.size() < 3) continue;
      const int64_t centre = tightestHalfCentre(w);
      for (int64_t d : w)
        e.push_back(pair ? static_cast<int64_t>(std::sqrt(2.0) * static_cast<double>(d - centre)) : d - centre);
      len.push_back(w.size());
    }
    std::sort(len.begin(), len.end());
    const size_t typical = len.empty() ? 0 : len[len.size() / 2];
    allE.insert(allE.end(), e.begin(), e.end());
    allX.insert(allX.end(), x.begin(), x.end());
    if (typical) lengths.push_back(typical);
    independent[role] = byRank.size() == 2 && !pair ? e.size() / 2 : e.size();
    sigma[role] = e.size() >= 8 ? scaleOf(e, centredQuantiles(typical))
                                : (e.empty() && x.size() >= 4 ? scaleOf(x, {kQ25, kQ50}) : -1);
  }
  std::sort(lengths.begin(), lengths.end());
  r.jitterNs =
      allE.size() >= 4 ? scaleOf(allE, centredQuantiles(lengths[lengths.size() / 2])) : scaleOf(allX, {kQ25, kQ50});
  size_t allIndependent = 0;
  for (const auto& [role, m] : independent) allIndependent += m;
  // A scale read from few values is uncertain: it is taken at the top of its likely range (the robust
  // median's standard error is about 1.17 / sqrt(values): one above), and a role seen on few values (two ranks, few
  // steps) at least at the job's scale over every role.
  auto upper = [](int64_t sg, size_t m) {
    return static_cast<int64_t>(static_cast<double>(sg) *
                                (1 + 1.17 / std::sqrt(static_cast<double>(std::max<size_t>(m, 1)))));
  };
  const int64_t jobScale = upper(r.jitterNs, allIndependent);
  for (auto& [role, sg] : sigma) {
    sg = upper(sg, independent[role]);
    if (sg < 0 || independent[role] < 24) sg = std::max(sg, jobScale);
  }
  r.thresholdNs = 0;
  for (const auto& [role, sg] : sigma) {
    const int64_t t = std::max<int64_t>(static_cast<int64_t>(kCutSigmas * static_cast<double>(sg)), kCutFloorNs);
    r.thresholdNs = r.thresholdNs ? std::min(r.thresholdNs, t) : t;
  }
  // Ranks whose clocks are aligned to each other: linked by collectives (a group with none in common
  // with the others cannot be compared with them).
  Dsu linked(n);
  for (const MatchedCollective& m : r.matched)
    for (const Part& p : m.parts) linked.unite(p.first, m.parts.front().first);

  // Parallel instances: the same role in the same step on different groups, read together, in the order
  // they ran.
  std::map<std::pair<int, std::string>, std::vector<size_t>> virt;
  for (size_t k = 0; k < r.matched.size(); ++k)
    if (rdy[k].size() >= 2)
      virt[{r.matched[k].stepIndex, (r.matched[k].stepIndex < 0 ? std::to_string(k) : roleOf[k]) + "|" +
                                        std::to_string(linked.find(r.matched[k].parts.front().first))}]
          .push_back(k);
  std::vector<std::pair<int64_t, const std::vector<size_t>*>> order;
  for (const auto& [key, ks] : virt) {
    std::vector<int64_t> a;
    for (size_t k : ks)
      for (const auto& [t, i] : rdy[k]) a.push_back(t);
    order.emplace_back(medianOf(a), &ks);
  }
  std::sort(order.begin(), order.end());
  // A pipeline stage's usual lateness by the schedule is taken off its ranks' readiness (job_schedule.cpp).
  std::map<std::string, int64_t> cutOf;
  for (const auto& [role, sg] : sigma)
    cutOf[role] = std::max<int64_t>(static_cast<int64_t>(kCutSigmas * static_cast<double>(sg)), kCutFloorNs);
  std::vector<const std::vector<size_t>*> virtuals;
  for (const auto& o : order) virtuals.push_back(o.second);
  const auto shift = pipelineSchedule(r, rdy, virtuals, roleOf, cutOf);
  auto shiftOf = [&shift](size_t k, size_t i) {
    const auto it = shift.find({k, i});
    return it == shift.end() ? int64_t{0} : it->second;
  };

  // Per rank, as of the last collective read: its step, and on time (0), late by its own doing (1), or late
  // as another's victim (2). A rank late from one collective to the next stays what it was.
  std::vector<std::pair<int, int>> state(n, {-2, 0});
  auto previous = [&](size_t i, size_t k) -> int {  // the matched collective rank i issued before k
    const Part* mine = nullptr;
    for (const Part& p : r.matched[k].parts)
      if (p.first == i) mine = &p;
    if (!mine) return -1;
    for (size_t c = mine->second; c-- > 0;)
      if (matchedOf[i][c] >= 0) return matchedOf[i][c];
    return -1;
  };
  struct Cluster {
    int step;
    size_t at;  // into `order`
    std::vector<size_t> ranks;
    int64_t lateNs;
    std::vector<size_t> collectives;
  };
  std::vector<Cluster> clusters;
  // Each virtual collective's arrivals (latest first) and its cuts: a gap stands out of the jitter (8
  // times the role's scale), or it stands out of this collective's own on-time ranks (5 times their
  // spread, with 3 of them or more) while 2 times the role's scale; the second kind counts only where the
  // same rank is late so at its next or previous collective of the step too (a rank whose lateness
  // carries through its step), so that one calm collective is not read as a straggler.
  std::vector<std::vector<std::tuple<int64_t, size_t, size_t>>> arrivalsOf(order.size());  // (ready, rank, matched)
  std::vector<std::vector<size_t>> strongCuts(order.size()), weakCuts(order.size());
  for (size_t vi = 0; vi < order.size(); ++vi) {
    auto& a = arrivalsOf[vi];
    for (size_t k : *order[vi].second)
      for (const auto& [at, i] : rdy[k]) a.emplace_back(at - shiftOf(k, i), i, k);
    std::sort(a.begin(), a.end(), std::greater<>());
    const double sg = static_cast<double>(sigma[roleOf[order[vi].second->front()]]);
    const int64_t thr = std::max<int64_t>(static_cast<int64_t>(kCutSigmas * sg), kCutFloorNs);
    const int64_t thrWeak = std::max<int64_t>(static_cast<int64_t>(kWeakSigmas * sg), kCutFloorNs);
    for (size_t q = 1; q <= std::max<size_t>(1, a.size() / 2) && q < a.size(); ++q) {
      const int64_t gap = std::get<0>(a[q - 1]) - std::get<0>(a[q]);
      if (gap >= thr) {
        strongCuts[vi].push_back(q);
      } else if (gap >= thrWeak && a.size() - q >= 3) {
        const double local = static_cast<double>(std::get<0>(a[q]) - std::get<0>(a.back())) / rangeFactor(a.size() - q);
        if (static_cast<double>(gap) >= kLocalSpreads * local) weakCuts[vi].push_back(q);
      }
    }
  }
  // Weak cuts kept: the same latest rank above a cut (strong or weak) at the next or the previous
  // collective of the step it takes part in (lateness carried from one collective to the next).
  auto latest = [&](size_t vi) { return std::get<1>(arrivalsOf[vi][0]); };
  auto stepOfV = [&](size_t vi) { return r.matched[order[vi].second->front()].stepIndex; };
  auto hasRank = [&](size_t vi, size_t i) {
    for (const auto& x : arrivalsOf[vi])
      if (std::get<1>(x) == i) return true;
    return false;
  };
  auto aboveAt = [&](size_t vi, size_t i) {
    return (!strongCuts[vi].empty() || !weakCuts[vi].empty()) && latest(vi) == i;
  };
  std::vector<bool> takesWeak(order.size(), false);
  for (size_t vi = 0; vi < order.size(); ++vi) {
    if (weakCuts[vi].empty()) continue;
    const size_t i = latest(vi);
    for (size_t w = vi + 1; w < order.size() && stepOfV(w) == stepOfV(vi) && !takesWeak[vi]; ++w)
      if (hasRank(w, i)) {
        takesWeak[vi] = aboveAt(w, i);
        break;
      }
    for (size_t w = vi; w-- > 0 && stepOfV(w) == stepOfV(vi) && !takesWeak[vi];)
      if (hasRank(w, i)) {
        takesWeak[vi] = aboveAt(w, i);
        break;
      }
  }
  std::vector<std::vector<bool>> takesPart(order.size(), std::vector<bool>(n, false));  // rank in a virtual collective
  for (size_t vi = 0; vi < order.size(); ++vi) {
    const std::vector<size_t>& ks = *order[vi].second;
    for (size_t k : ks)
      for (const auto& [at, i] : rdy[k]) takesPart[vi][i] = true;
    const auto& a = arrivalsOf[vi];
    std::vector<size_t> cuts = strongCuts[vi];
    if (takesWeak[vi]) cuts.insert(cuts.end(), weakCuts[vi].begin(), weakCuts[vi].end());
    std::sort(cuts.begin(), cuts.end());
    if (cuts.empty()) continue;
    const size_t deep = cuts.back();
    const int64_t bulk = std::get<0>(a[deep]);
    // Clusters between the cuts, joined where their lateness is alike.
    std::vector<std::vector<size_t>> groups;  // positions in a
    size_t from = 0;
    for (size_t c : cuts) {
      std::vector<size_t> g(c - from);
      std::iota(g.begin(), g.end(), from);
      groups.push_back(g);
      from = c;
    }
    auto lateOf = [&](const std::vector<size_t>& g) {
      std::vector<int64_t> v;
      for (size_t q : g) v.push_back(std::get<0>(a[q]) - bulk);
      return medianOf(v);
    };
    for (size_t g = groups.size(); g-- > 1;) {
      const int64_t hi = lateOf(groups[g - 1]), lo = lateOf(groups[g]);
      if (lo > 0 && static_cast<double>(hi) < kSplitRatio * static_cast<double>(lo)) {
        groups[g - 1].insert(groups[g - 1].end(), groups[g].begin(), groups[g].end());
        groups.erase(groups.begin() + static_cast<long>(g));
      }
    }
    // Victims: late only because their previous collective ended late while they waited in it for another
    // rank (or while they carried such a wait): their own work since it ended took what the others' took.
    auto partEnd = [&](size_t i, size_t k) {
      for (const Part& p : r.matched[k].parts)
        if (p.first == i) return alignedEnd(r, p);
      return int64_t{0};
    };
    // Time in point-to-point transfers since then (a pipeline stage waiting in recv for its neighbour) is
    // waiting for another rank too, not the rank's own work.
    auto peerWait = [&](size_t i, size_t k) {
      for (const Part& p : r.matched[k].parts)
        if (p.first == i) return r.ranks[i].collectives[p.second].peerWaitNs;
      return int64_t{0};
    };
    // A member with no earlier matched collective (the trace's first ones) is read from its window's start
    // (its step's start), against the others read so.
    std::vector<int64_t> works, firstWorks;  // every member's own work since its previous collective's end
    std::vector<int64_t> workOf(a.size(), INT64_MIN);
    for (size_t q = 0; q < a.size(); ++q) {
      const auto [at, i, k] = a[q];
      const int pk = previous(i, k);
      int64_t since = 0;
      if (pk >= 0) {
        since = at + shiftOf(k, i) - partEnd(i, static_cast<size_t>(pk));
      } else {
        bool has = false;
        for (const Part& p : r.matched[k].parts)
          if (p.first == i)
            since = at + shiftOf(k, i) - (collectiveOf(r, p).beforeFromNs - appliedOffset(r, i)), has = true;
        if (!has) continue;
      }
      workOf[q] = since - std::min(peerWait(i, k), std::max<int64_t>(since, 0));
      (pk >= 0 ? works : firstWorks).push_back(workOf[q]);
    }
    const int64_t usualWork = medianOf(works), usualFirstWork = medianOf(firstWorks);
    // Over the step so far (its collectives of the step up to this one): its own work, and the time it
    // spent in point-to-point transfers. A pipeline stage waits in recv at many places between two
    // collectives, so its lateness at one can stem from waits far before the previous.
    auto stepSoFar = [&](size_t i, size_t k) {
      std::pair<int64_t, int64_t> workPeer{0, 0};
      for (const Part& p : r.matched[k].parts) {
        if (p.first != i) continue;
        const std::vector<Collective>& cs = r.ranks[i].collectives;
        for (size_t c = p.second + 1; c-- > 0 && cs[c].step == cs[p.second].step;) {
          const int64_t span = std::max<int64_t>(cs[c].arrivalNs - cs[c].beforeFromNs, 0);
          const int64_t peer = std::min(cs[c].peerWaitNs, span);
          workPeer.first += span - peer;
          workPeer.second += peer;
        }
      }
      return workPeer;
    };
    std::vector<std::pair<int64_t, int64_t>> soFar(a.size());
    std::vector<int64_t> stepWorks;
    for (size_t q = 0; q < a.size(); ++q) {
      soFar[q] = stepSoFar(std::get<1>(a[q]), std::get<2>(a[q]));
      stepWorks.push_back(soFar[q].first);
    }
    const int64_t usualStepWork = medianOf(stepWorks);
    std::set<std::pair<size_t, size_t>> culprits;  // (rank, matched)
    const int step = r.matched[ks.front()].stepIndex;
    for (size_t q = 0; q < deep; ++q) {
      const auto [at, i, k] = a[q];
      const int64_t late = at - bulk;
      const int pk = previous(i, k);
      bool victim = false;
      if (state[i].first == step && state[i].second != 0) {
        victim = state[i].second == 2;  // still late since an earlier collective of the step: as it was there
      } else if (workOf[q] != INT64_MIN && 2 * (workOf[q] - (pk >= 0 ? usualWork : usualFirstWork)) < late) {
        // Its own work was ordinary: a victim when it waited for another rank, at its previous collective
        // or in point-to-point transfers since.
        int64_t mineAt = 0, lastAt = 0;
        if (pk >= 0) {
          lastAt = lastReady[static_cast<size_t>(pk)];
          for (const auto& [pt, pr] : rdy[static_cast<size_t>(pk)])
            if (pr == i) mineAt = pt;
        }
        victim = 2 * (lastAt - mineAt) >= late || 2 * peerWait(i, k) >= late;
      }
      if (!victim && state[i].second != 2 && 2 * soFar[q].second >= late && 2 * (soFar[q].first - usualStepWork) < late)
        victim = true;  // waited for its pipeline neighbours this step, and its own work was ordinary
      state[i] = {step, victim ? 2 : 1};
      if (!victim) culprits.insert({i, k});
    }
    for (size_t q = deep; q < a.size(); ++q) state[std::get<1>(a[q])] = {step, 0};
    // Where the culprits made an on-time member wait.
    std::map<size_t, int64_t> onLast;  // matched -> its on-time members' last arrival
    for (size_t q = deep; q < a.size(); ++q) {
      const auto [at, i, k] = a[q];
      auto [it, fresh] = onLast.emplace(k, at + shiftOf(k, i));  // as it arrived: the others waited for that
      if (!fresh) it->second = std::max(it->second, at + shiftOf(k, i));
    }
    for (const std::vector<size_t>& g : groups) {
      Cluster cl{r.matched[ks.front()].stepIndex, vi, {}, 0, {}};
      std::set<size_t> where;
      for (size_t q : g) {
        const auto [at, i, k] = a[q];
        if (!culprits.count({i, k}) || !onLast.count(k)) continue;
        cl.ranks.push_back(i);
        cl.lateNs = std::max(cl.lateNs, at - bulk);
        where.insert(k);
      }
      if (cl.ranks.empty()) continue;
      for (size_t k : where) {
        MatchedCollective& m = r.matched[k];
        for (const auto& [at, i] : rdy[k])
          if (culprits.count({i, k}) && std::find(cl.ranks.begin(), cl.ranks.end(), i) != cl.ranks.end())
            m.lateRanks.push_back(r.ranks[i].rank);
        std::sort(m.lateRanks.begin(), m.lateRanks.end());
        m.lateRanks.erase(std::unique(m.lateRanks.begin(), m.lateRanks.end()), m.lateRanks.end());
        m.imposedNs = std::max(m.imposedNs, lastReady[k] - onLast[k]);
        m.straggled = true;
        cl.collectives.push_back(k);
      }
      std::sort(cl.ranks.begin(), cl.ranks.end());
      clusters.push_back(std::move(cl));
    }
  }

  // Per step: ranks late together at a collective are one set. Its imposed wait: where it stayed late from
  // one collective to the next (a rank whose later collectives run on another thread stays behind), the
  // most it was late there; after a collective where its ranks were on time again, anew.
  std::vector<LateSet> sets;
  std::map<int, std::vector<const Cluster*>> byStep;
  for (const Cluster& c : clusters)
    if (c.step >= 0) byStep[c.step].push_back(&c);
  for (const auto& [step, cs] : byStep) {
    Dsu dsu(n);
    for (const Cluster* c : cs)
      for (size_t i : c->ranks) dsu.unite(i, c->ranks.front());
    std::map<size_t, LateSet> comp;
    std::map<size_t, std::map<size_t, int64_t>> lateAtVirtual;  // set -> virtual -> its lateness there
    for (const Cluster* c : cs) {
      const size_t root = dsu.find(c->ranks.front());
      LateSet& s = comp[root];
      s.step = step;
      for (size_t i : c->ranks)
        if (std::find(s.members.begin(), s.members.end(), i) == s.members.end()) s.members.push_back(i);
      s.lateNs = std::max(s.lateNs, c->lateNs);
      int64_t& v = lateAtVirtual[root][c->at];
      v = std::max(v, c->lateNs);
      s.collectives.insert(s.collectives.end(), c->collectives.begin(), c->collectives.end());
    }
    for (auto& [root, s] : comp) {
      std::sort(s.members.begin(), s.members.end());
      const auto& lateAtV = lateAtVirtual[root];
      int64_t episode = 0;
      for (size_t vi = lateAtV.begin()->first; vi < order.size(); ++vi) {
        const auto it = lateAtV.find(vi);
        if (it != lateAtV.end()) {
          episode = std::max(episode, it->second);
          continue;
        }
        bool part = false, sameStep = false;
        for (size_t i : s.members) part = part || takesPart[vi][i];
        for (size_t k : *order[vi].second) sameStep = sameStep || r.matched[k].stepIndex == step;
        if (!sameStep) continue;
        if (part) s.imposedNs += episode, episode = 0;
      }
      s.imposedNs += episode;
      std::sort(s.collectives.begin(), s.collectives.end(),
                [&](size_t x, size_t y) { return lastReady[x] < lastReady[y]; });
      s.origin = s.collectives.front();
      sets.push_back(std::move(s));
    }
  }

  // Per rank and step: the wait for the last rank (merged over the step's collectives), the wait it
  // imposed (its set's), and at how many collectives it was late.
  std::vector<std::vector<Intervals>> waits(n);
  for (size_t i = 0; i < n; ++i) waits[i].resize(r.ranks[i].steps.size());
  for (const MatchedCollective& m : r.matched)
    for (const Part& p : m.parts) {
      const int k = collectiveOf(r, p).step;
      if (k < 0) continue;
      StepFigures& f = r.figures[p.first][static_cast<size_t>(k)];
      ++f.collectives;
      if (std::binary_search(m.lateRanks.begin(), m.lateRanks.end(), r.ranks[p.first].rank)) ++f.arrivedLast;
      const int64_t a = alignedArrival(r, p);
      if (m.lastArrivalNs > a) waits[p.first][static_cast<size_t>(k)].emplace_back(a, m.lastArrivalNs);
    }
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < waits[i].size(); ++k)
      for (const auto& [a, b] : merged(std::move(waits[i][k]))) r.figures[i][k].waitForLastNs += b - a;
  for (const LateSet& s : sets)
    for (size_t i : s.members)
      for (StepFigures& f : r.figures[i])
        if (f.step == r.steps[static_cast<size_t>(s.step)]) f.imposedNs += s.imposedNs;
  return sets;
}

}  // namespace attnscope::ranks
