// The ranks' clock offsets from the matched collectives' ends (they end together on every rank: the last
// participant arrives, then all finish within the time the last transfer takes), measured against the
// clock most ranks share, so an offset is said on the rank whose clock is off.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/ranks/job_internal.h"

namespace attnscope::ranks {

// Below this an offset is not applied: older Kineto traces have 1 us timestamps, and a shift of a few
// microseconds changes no figure reported here.
constexpr int64_t kMinShiftNs = 10'000;

namespace {

// The offsets that make the matched collectives' ends agree best: least squares over every collective
// (each rank's end minus its offset against the collective's mean), solved by conjugate gradients (a
// rank's offset is then set by all the groups it shares, even when its own group's members share its
// clock), then twice again with the ends that disagree by far more than the rest given less weight.
// Relative to rank index 0; a rank no collective links keeps 0.
std::vector<int64_t> solveOffsets(const JobReport& r, const std::vector<const MatchedCollective*>& use, size_t n) {
  std::vector<double> x(n, 0.0);
  if (use.empty() || n < 2) return std::vector<int64_t>(n, 0);
  // Ends relative to each collective's first part (keeps the numbers small).
  std::vector<std::vector<std::pair<size_t, double>>> ends;
  for (const MatchedCollective* m : use) {
    std::vector<std::pair<size_t, double>> e;
    const int64_t base = collectiveOf(r, m->parts.front()).endNs;
    for (const Part& p : m->parts) e.emplace_back(p.first, static_cast<double>(collectiveOf(r, p).endNs - base));
    ends.push_back(std::move(e));
  }
  std::vector<std::vector<double>> w(ends.size());
  for (size_t k = 0; k < ends.size(); ++k) w[k].assign(ends[k].size(), 1.0);
  // A v: for each collective, each member's v minus the collective's weighted mean of v, weighted.
  auto apply = [&](const std::vector<double>& v) {
    std::vector<double> out(n, 0.0);
    for (size_t k = 0; k < ends.size(); ++k) {
      double sw = 0, sv = 0;
      for (size_t q = 0; q < ends[k].size(); ++q) sw += w[k][q], sv += w[k][q] * v[ends[k][q].first];
      const double mean = sw > 0 ? sv / sw : 0;
      for (size_t q = 0; q < ends[k].size(); ++q) out[ends[k][q].first] += w[k][q] * (v[ends[k][q].first] - mean);
    }
    return out;
  };
  for (int round = 0; round < 3; ++round) {
    std::vector<double> b(n, 0.0);
    for (size_t k = 0; k < ends.size(); ++k) {
      double sw = 0, se = 0;
      for (size_t q = 0; q < ends[k].size(); ++q) sw += w[k][q], se += w[k][q] * ends[k][q].second;
      const double mean = sw > 0 ? se / sw : 0;
      for (size_t q = 0; q < ends[k].size(); ++q) b[ends[k][q].first] += w[k][q] * (ends[k][q].second - mean);
    }
    std::vector<double> ax = apply(x), res(n), dir(n);
    double rr = 0;
    for (size_t i = 0; i < n; ++i) res[i] = b[i] - ax[i], dir[i] = res[i], rr += res[i] * res[i];
    const double stop = 1e-6 * std::max(1.0, rr);
    for (size_t it = 0; it < 4 * n + 20 && rr > stop && rr > 1e-9; ++it) {
      const std::vector<double> ad = apply(dir);
      double dad = 0;
      for (size_t i = 0; i < n; ++i) dad += dir[i] * ad[i];
      if (dad <= 0) break;
      const double alpha = rr / dad;
      double rr2 = 0;
      for (size_t i = 0; i < n; ++i) x[i] += alpha * dir[i], res[i] -= alpha * ad[i], rr2 += res[i] * res[i];
      for (size_t i = 0; i < n; ++i) dir[i] = res[i] + rr2 / rr * dir[i];
      rr = rr2;
    }
    // Weights for the next round: ends far off the rest (a collective cut short, a stalled rank's end)
    // count less (Huber's, at 3 robust deviations).
    std::vector<int64_t> dev;
    std::vector<std::vector<double>> resid(ends.size());
    for (size_t k = 0; k < ends.size(); ++k) {
      std::vector<double> y;
      for (const auto& [i, e] : ends[k]) y.push_back(e - x[i]);
      std::vector<double> sorted = y;
      std::sort(sorted.begin(), sorted.end());
      const double med = sorted[sorted.size() / 2];
      for (double v : y) resid[k].push_back(v - med), dev.push_back(static_cast<int64_t>(std::fabs(v - med)));
    }
    const double scale = std::max(1000.0, 3 * 1.4826 * static_cast<double>(medianOf(dev)));
    for (size_t k = 0; k < ends.size(); ++k)
      for (size_t q = 0; q < ends[k].size(); ++q)
        w[k][q] = std::fabs(resid[k][q]) <= scale ? 1.0 : scale / std::fabs(resid[k][q]);
  }
  std::vector<int64_t> off(n);
  for (size_t i = 0; i < n; ++i) off[i] = static_cast<int64_t>(std::llround(x[i] - x[0]));
  return off;
}

}  // namespace

void estimateClock(JobReport& r) {
  const size_t n = r.ranks.size();
  r.clock.ranks.assign(n, {});
  for (size_t i = 0; i < n; ++i) r.clock.ranks[i].rank = r.ranks[i].rank;
  r.clock.referenceRank = n ? r.ranks.front().rank : -1;
  // Collectives that ran to their end on every rank: they end together (the last participant arrives,
  // then all finish within the time the last transfer takes).
  std::vector<const MatchedCollective*> use;
  for (const MatchedCollective& m : r.matched) {
    bool ok = m.parts.size() >= 2;
    for (const Part& p : m.parts) ok = ok && !collectiveOf(r, p).cut;
    if (ok) use.push_back(&m);
  }
  // From there, each rank's offset is the median of its ends against its collectives' median end (robust
  // to a collective whose ends disagree); the spread of those differences gives the uncertainty.
  std::vector<int64_t> off = solveOffsets(r, use, n);
  std::vector<std::vector<int64_t>> diffs(n);
  for (int pass = 0; pass < 3; ++pass) {
    for (auto& d : diffs) d.clear();
    for (const MatchedCollective* m : use) {
      std::vector<int64_t> ends;
      for (const Part& p : m->parts) ends.push_back(collectiveOf(r, p).endNs - off[p.first]);
      const int64_t med = medianOf(ends);
      for (const Part& p : m->parts) diffs[p.first].push_back(collectiveOf(r, p).endNs - med);
    }
    for (size_t i = 0; i < n; ++i)
      if (!diffs[i].empty()) off[i] = medianOf(diffs[i]);
  }
  std::vector<double> se(n, 0);
  for (size_t i = 0; i < n; ++i) {
    std::vector<int64_t> dev;
    for (int64_t d : diffs[i]) dev.push_back(std::llabs(d - off[i]));
    const double sigma = 1.4826 * static_cast<double>(medianOf(dev));
    const size_t k = diffs[i].size();
    se[i] = k ? 1.2533 * sigma / std::sqrt(static_cast<double>(k)) : 0;
    r.clock.ranks[i].spreadNs = static_cast<int64_t>(sigma);
    r.clock.ranks[i].collectives = static_cast<int>(k);
  }
  // The reference: the lowest rank whose clock agrees with the clock most ranks share (the median
  // offset), so that a rank whose clock is off is the one said to be off, even rank 0.
  std::vector<int64_t> aligned;
  for (size_t i = 0; i < n; ++i)
    if (!diffs[i].empty()) aligned.push_back(off[i]);
  const int64_t consensus = medianOf(aligned);
  size_t refIdx = 0;
  int64_t closest = INT64_MAX;
  for (size_t i = 0; i < n; ++i) {
    if (diffs[i].empty()) continue;
    const int64_t d = std::llabs(off[i] - consensus);
    if (d <= std::max<int64_t>(static_cast<int64_t>(3 * se[i]), kMinShiftNs)) {
      refIdx = i;
      break;
    }
    if (d < closest) closest = d, refIdx = i;
  }
  r.clock.referenceRank = n ? r.ranks[refIdx].rank : -1;
  const int64_t ref = n ? off[refIdx] : 0;
  for (size_t i = 0; i < n; ++i) {
    RankClock& c = r.clock.ranks[i];
    c.estimateNs = off[i] - ref;
    c.uncertaintyNs = i == refIdx ? 0 : static_cast<int64_t>(std::sqrt(se[i] * se[i] + se[refIdx] * se[refIdx]));
    c.appliedNs = (i != refIdx && c.collectives > 0 &&
                   std::llabs(c.estimateNs) > std::max<int64_t>(3 * c.uncertaintyNs, kMinShiftNs))
                      ? c.estimateNs
                      : 0;
    if (c.collectives == 0 && n > 1)
      r.findings.push_back({"note",
                            "rank " + std::to_string(c.rank) +
                                ": no collective it shares with the others ran to its end, so its clock cannot be "
                                "aligned: its times are taken as they are",
                            {c.rank}});
  }
  r.clock.method = "the offsets that make the ends of " + std::to_string(use.size()) +
                   " matched collectives agree best (least squares over every collective, ends far off the rest "
                   "weighted down; then each rank's median end against its collectives' median end), relative to "
                   "rank " +
                   std::to_string(r.clock.referenceRank) + " (the lowest rank on the clock most ranks share)" +
                   "; an offset is applied only where it exceeds 3x its uncertainty (the standard error of the "
                   "rank's ends against its collectives' median end) and 10 us";
}

}  // namespace attnscope::ranks
