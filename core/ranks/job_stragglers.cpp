// On the aligned clock: who arrived last at each matched collective and by how much, each rank's
// steps with the time it waited for the last arriver, the stragglers with what they were doing
// before they arrived, the hangs, and the headline.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/ranks/job_internal.h"
#include "core/store/intervals.h"
#include "core/text/duration.h"

namespace attnscope::ranks {

namespace {

std::string rankList(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

std::string ms(int64_t ns) { return spanDurationText(ns); }

int64_t percentile(std::vector<int64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(at);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + static_cast<int64_t>((at - static_cast<double>(lo)) * static_cast<double>(v[hi] - v[lo]));
}

std::string collectiveWords(const std::string& name, const std::string& dims, int index, const std::string& pg) {
  std::string s = name;
  if (!dims.empty()) s += " " + dims;
  return s + " #" + std::to_string(index) + " on process group '" + pg + "'";
}

int64_t activityNs(const std::vector<Activity>& v, const std::string& name) {
  for (const Activity& a : v)
    if (a.name == name) return a.ns;
  return 0;
}

// Why rank `mine` arrived late at `m`: a region it spent longer in than the others, before arriving.
struct Reason {
  std::string region;
  int64_t mineNs = 0, othersNs = 0, excessNs = 0;
  double workRatio = 0;
  int64_t workNs = 0, othersWorkNs = 0;
  int64_t startDelayNs = 0, othersStartDelayNs = 0;
};

Reason reasonFor(const JobReport& r, const MatchedCollective& m, size_t mine) {
  Reason why;
  const Collective* me = nullptr;
  std::vector<const Collective*> others;
  for (const Part& p : m.parts) {
    if (p.first == mine)
      me = &collectiveOf(r, p);
    else
      others.push_back(&collectiveOf(r, p));
  }
  if (!me) return why;
  for (const Activity& a : me->before) {
    std::vector<int64_t> o;
    for (const Collective* c : others) o.push_back(activityNs(c->before, a.name));
    const int64_t med = medianOf(o);
    if (a.ns - med > why.excessNs) why = {a.name, a.ns, med, a.ns - med};
  }
  std::vector<int64_t> work, delay;
  for (const Collective* c : others) {
    work.push_back(c->arrivalNs - c->beforeFromNs);
    delay.push_back(c->arrivalNs - c->issueNs);
  }
  why.workNs = me->arrivalNs - me->beforeFromNs;
  why.othersWorkNs = medianOf(work);
  why.workRatio = why.othersWorkNs > 0 ? static_cast<double>(why.workNs) / static_cast<double>(why.othersWorkNs) : 0;
  why.startDelayNs = me->arrivalNs - me->issueNs;
  why.othersStartDelayNs = medianOf(delay);
  return why;
}

}  // namespace

void findStragglers(JobReport& r) {
  const size_t n = r.ranks.size();
  std::vector<int64_t> medStep(n, 0);
  for (size_t i = 0; i < n; ++i) {
    std::vector<int64_t> spans;
    for (const RankStep& st : r.ranks[i].steps) spans.push_back(st.spanNs());
    medStep[i] = medianOf(spans);
  }
  r.stragglerRule =
      "a collective waited for its last rank when that rank arrived at least 2x the spread of the others' "
      "arrivals after the one before it (and at least 100 us and 5% of its median step), and 3x the job's usual "
      "lateness (the last rank's median at the other collectives) after the others' median, or when that rank is "
      "last at half the collectives or more, 5% of its step late there, and either last that often by chance less "
      "than once in 1,000 or twice as late as the others when they are last; a rank is a straggler "
      "of a step when the step's collectives waited for it more often than not; persistent when that holds in "
      "most steps";
  for (MatchedCollective& m : r.matched) {
    std::vector<std::pair<int64_t, size_t>> arr;
    std::vector<int64_t> ends;
    for (const Part& p : m.parts) {
      arr.emplace_back(alignedArrival(r, p), p.first);
      ends.push_back(alignedEnd(r, p));
    }
    std::sort(arr.begin(), arr.end());
    m.firstArrivalNs = arr.front().first;
    m.lastArrivalNs = arr.back().first;
    m.lastRank = r.ranks[arr.back().second].rank;
    m.medianEndNs = medianOf(ends);
    m.endSpreadNs = *std::max_element(ends.begin(), ends.end()) - *std::min_element(ends.begin(), ends.end());
    if (arr.size() < 2) continue;
    std::vector<int64_t> others;
    for (size_t k = 0; k + 1 < arr.size(); ++k) others.push_back(arr[k].first);
    m.lateNs = m.lastArrivalNs - medianOf(others);
    m.gapNs = m.lastArrivalNs - arr[arr.size() - 2].first;
    const int64_t othersRange = arr[arr.size() - 2].first - arr.front().first;
    const int64_t floorNs = std::max<int64_t>(100'000, medStep[arr.back().second] / 20);
    m.straggled = m.gapNs >= std::max(floorNs, 2 * othersRange);
  }
  // The job's usual lateness (the last rank's, at the collectives where it did not stand apart): a
  // straggled collective's must be 3x that, so ordinary scheduling noise is not called a straggler.
  std::vector<int64_t> usual;
  for (const MatchedCollective& m : r.matched)
    if (!m.straggled && m.parts.size() >= 2) usual.push_back(m.lateNs);
  const int64_t noise = medianOf(usual);
  for (MatchedCollective& m : r.matched) m.straggled = m.straggled && m.lateNs >= 3 * noise;
  // A rank that is last at half the collectives or more (chance makes it one in n) holds the others up
  // even where no single collective stands out from the jitter, and then "the usual lateness" above is
  // its own. Its collectives count as straggled when it came a step's floor late there, and at least
  // twice as late as the other ranks do when they are last.
  std::map<int64_t, std::vector<size_t>> lastAt;
  std::map<int64_t, size_t> indexOf;
  size_t compared = 0;
  for (size_t k = 0; k < r.matched.size(); ++k)
    if (r.matched[k].parts.size() >= 2) {
      lastAt[r.matched[k].lastRank].push_back(k);
      ++compared;
    }
  for (size_t i = 0; i < n; ++i) indexOf[r.ranks[i].rank] = i;
  for (const auto& [rank, ks] : lastAt) {
    if (ks.size() < 3 || 2 * ks.size() < compared || n < 3) continue;
    std::vector<int64_t> mine, others;
    for (size_t k = 0; k < r.matched.size(); ++k)
      if (r.matched[k].parts.size() >= 2)
        (r.matched[k].lastRank == rank ? mine : others).push_back(r.matched[k].lateNs);
    const int64_t floorNs = std::max<int64_t>(100'000, medStep[indexOf[rank]] / 20);
    const int64_t lateNs = medianOf(mine);
    // Last this often by chance (each rank last one time in n): the binomial tail.
    const double p = 1.0 / static_cast<double>(n);
    double chance = 0;
    for (size_t j = ks.size(); j <= compared; ++j)
      chance += std::exp(std::lgamma(static_cast<double>(compared) + 1) - std::lgamma(static_cast<double>(j) + 1) -
                         std::lgamma(static_cast<double>(compared - j) + 1) + static_cast<double>(j) * std::log(p) +
                         static_cast<double>(compared - j) * std::log1p(-p));
    const bool rare = chance < 1e-3;
    const bool later = others.empty() || lateNs >= 2 * medianOf(others);
    if (lateNs < floorNs || (!rare && !later)) continue;
    for (size_t k : ks)
      if (r.matched[k].lateNs >= floorNs) r.matched[k].straggled = true;
  }

  // Per rank and step.
  r.figures.assign(n, {});
  std::vector<std::vector<Intervals>> waits(n);
  for (size_t i = 0; i < n; ++i) {
    waits[i].resize(r.ranks[i].steps.size());
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
      r.figures[i].push_back(std::move(f));
    }
  }
  for (const MatchedCollective& m : r.matched)
    for (const Part& p : m.parts) {
      const int k = collectiveOf(r, p).step;
      if (k < 0) continue;
      StepFigures& f = r.figures[p.first][static_cast<size_t>(k)];
      ++f.collectives;
      if (m.straggled && r.ranks[p.first].rank == m.lastRank) ++f.arrivedLast;
      const int64_t a = alignedArrival(r, p);
      if (m.lastArrivalNs > a) waits[p.first][static_cast<size_t>(k)].emplace_back(a, m.lastArrivalNs);
    }
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < waits[i].size(); ++k)
      for (const auto& [a, b] : merged(std::move(waits[i][k]))) r.figures[i][k].waitForLastNs += b - a;

  // Stragglers.
  for (size_t i = 0; i < n; ++i) {
    Straggler s;
    s.rank = r.ranks[i].rank;
    std::set<int> stepsHit;
    for (size_t k = 0; k < r.figures[i].size(); ++k) {
      const StepFigures& f = r.figures[i][k];
      if (f.collectives == 0) continue;
      ++s.stepsWithCollectives;
      if (2 * f.arrivedLast > f.collectives) {
        s.steps.push_back(f.step);
        stepsHit.insert(static_cast<int>(k));
      }
    }
    if (s.steps.empty()) continue;
    std::vector<int64_t> late;
    std::map<std::string, std::vector<Reason>> regions;
    std::vector<Reason> all;
    std::string kind;
    std::set<int> explained;
    for (const MatchedCollective& m : r.matched) {
      if (!m.straggled || m.lastRank != s.rank) continue;
      int k = -1;
      for (const Part& p : m.parts)
        if (p.first == i) k = collectiveOf(r, p).step;
      if (!stepsHit.count(k)) continue;
      late.push_back(m.lateNs);
      if (!explained.insert(k).second) continue;  // the step's first straggled collective tells why
      const Reason why = reasonFor(r, m, i);
      if (all.empty()) kind = collectiveOf(r, m.parts.front()).kind;  // the kind of collective it was late to
      all.push_back(why);
      if (!why.region.empty() && 2 * why.excessNs >= m.lateNs) regions[why.region].push_back(why);
    }
    s.lateNs = medianOf(late);
    for (int64_t x : late) s.totalLateNs += x;
    s.persistent = s.stepsWithCollectives >= 2 && 2 * static_cast<int>(s.steps.size()) > s.stepsWithCollectives;
    std::string stepsText;
    for (const std::string& st : s.steps) stepsText += (stepsText.empty() ? "" : ", ") + st;
    std::string head = "rank " + std::to_string(s.rank) + " makes the others wait in " +
                       std::to_string(s.steps.size()) + " of " + std::to_string(s.stepsWithCollectives) + " steps (" +
                       stepsText + "): it arrives " + ms(s.lateNs) + " after the median of the others";
    if (late.size() > 1)
      head += " [" + ms(*std::min_element(late.begin(), late.end())) + " - " +
              ms(*std::max_element(late.begin(), late.end())) + " over " + std::to_string(late.size()) +
              " collectives]";
    head += s.persistent ? " (persistent)" : " (transient)";
    const std::string* bestRegion = nullptr;
    for (const auto& [name, v] : regions)
      if (!bestRegion || v.size() > regions[*bestRegion].size()) bestRegion = &name;
    if (bestRegion) {
      const auto& v = regions[*bestRegion];
      std::vector<int64_t> mine, others;
      for (const Reason& x : v) mine.push_back(x.mineNs), others.push_back(x.othersNs);
      s.cause = "slow_region";
      s.region = *bestRegion;
      s.regionNs = medianOf(mine);
      s.othersRegionNs = medianOf(others);
      s.text = head + ", because before arriving it was in '" + s.region + "' " + ms(s.regionNs) + " (the others " +
               ms(s.othersRegionNs) + ")" +
               (v.size() < all.size() ? " in " + std::to_string(v.size()) + " of those steps" : "");
    } else {
      std::vector<int64_t> ratio1000, work, othersWork, delay, othersDelay;
      for (const Reason& x : all) {
        ratio1000.push_back(static_cast<int64_t>(x.workRatio * 1000));
        work.push_back(x.workNs);
        othersWork.push_back(x.othersWorkNs);
        delay.push_back(x.startDelayNs - x.othersStartDelayNs);
      }
      s.workRatio = static_cast<double>(medianOf(ratio1000)) / 1000.0;
      if (s.workRatio >= 1.5) {
        s.cause = "slow_work";
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1fx", s.workRatio);
        s.text = head + ", because its work since its previous collective takes " + buf + " the others' (" +
                 ms(medianOf(work)) + " against " + ms(medianOf(othersWork)) + ")";
      } else if (2 * medianOf(delay) >= s.lateNs) {
        s.cause = "late_start";
        s.text =
            head + ": it issued the collective on time, but its " +
            (kind == "gpu_kernel" ? std::string("GPU started the kernel") : std::string("gloo worker started it")) +
            " " + ms(medianOf(delay)) + " later than the others' did";
      } else {
        s.cause = "unknown";
        s.text = head + "; what it did before arriving looks like the others' work (no region took longer)";
      }
    }
    r.stragglers.push_back(std::move(s));
  }
  std::stable_sort(r.stragglers.begin(), r.stragglers.end(),
                   [](const Straggler& a, const Straggler& b) { return a.totalLateNs > b.totalLateNs; });
}

void findHangs(JobReport& r) {
  std::map<std::string, std::vector<int64_t>> durByPg;
  for (const MatchedCollective& m : r.matched)
    for (const Part& p : m.parts) durByPg[m.pg].push_back(collectiveOf(r, p).endNs - collectiveOf(r, p).arrivalNs);
  for (UnmatchedCollective& u : r.unmatched) {
    if (u.reason != "missing" || u.parts.empty() || u.missingRanks.empty()) continue;
    Hang h;
    h.pg = u.pg;
    h.index = u.index;
    h.collective = collectiveWords(u.name, u.dims, u.index, u.pg);
    h.missingRanks = u.missingRanks;
    h.waitingRanks = u.presentRanks;
    std::vector<int64_t> arrivals, waited;
    for (const Part& p : u.parts) {
      arrivals.push_back(alignedArrival(r, p));
      waited.push_back(collectiveOf(r, p).endNs - collectiveOf(r, p).arrivalNs);
    }
    h.waitedNs = *std::max_element(waited.begin(), waited.end());
    const Collective& first = collectiveOf(r, u.parts.front());
    if (first.step >= 0) h.step = r.ranks[u.parts.front().first].steps[static_cast<size_t>(first.step)].name;
    h.blockedIn = first.blockedIn.empty() ? first.op : first.blockedIn;
    const int64_t arrived = medianOf(arrivals);
    int64_t pastNs = INT64_MIN;
    for (int64_t mr : u.missingRanks)
      for (size_t i = 0; i < r.ranks.size(); ++i)
        if (r.ranks[i].rank == mr) pastNs = std::max(pastNs, r.ranks[i].traceEndNs - appliedOffset(r, i) - arrived);
    h.tracedPast = pastNs >= 0;
    const int64_t usual = medianOf(durByPg[u.pg]);
    const bool longWait = h.waitedNs >= std::max<int64_t>(10 * usual, 1'000'000'000);
    if (!h.tracedPast && !longWait) {
      u.reason = "outside_window";
      continue;
    }
    const std::string missingText = (h.missingRanks.size() == 1 ? "rank " : "ranks ") + rankList(h.missingRanks);
    h.text = missingText + " never issued " + h.collective;
    if (h.tracedPast)
      h.text += " (its trace runs " + ms(pastNs) + " past the others' arrival and holds no such call)";
    else
      h.text += " (its trace ends before the others arrived, so it may have issued it later)";
    std::vector<int64_t> sortedWaited = waited;
    std::sort(sortedWaited.begin(), sortedWaited.end());
    h.text += ": " + std::string(h.waitingRanks.size() == 1 ? "rank " : "ranks ") + rankList(h.waitingRanks) +
              " entered it in '" + h.blockedIn + "'" + (h.step.empty() ? "" : " (" + h.step + ")") + " and waited " +
              ms(sortedWaited.front()) +
              (sortedWaited.size() > 1 && sortedWaited.back() != sortedWaited.front() ? " to " + ms(sortedWaited.back())
                                                                                      : "") +
              " (the group's collectives usually take " + ms(usual) + "); missing ranks: {" + rankList(h.missingRanks) +
              "}";
    // The waiting ranks waited from their arrival to the end (a timeout, or the trace's end).
    for (const Part& p : u.parts) {
      const Collective& c = collectiveOf(r, p);
      if (c.step >= 0 && p.first < r.figures.size() && static_cast<size_t>(c.step) < r.figures[p.first].size())
        r.figures[p.first][static_cast<size_t>(c.step)].waitForLastNs += c.endNs - c.arrivalNs;
    }
    r.hangs.push_back(std::move(h));
  }
}

namespace {

// The clock offsets applied, in a sentence ("" when none was).
std::string offsetsSentence(const JobReport& r) {
  std::string s;
  for (const RankClock& c : r.clock.ranks)
    if (c.appliedNs)
      s += (s.empty() ? " Clocks: rank " : "; rank ") + std::to_string(c.rank) + " runs " +
           (c.appliedNs > 0 ? "+" : "-") + ms(std::llabs(c.appliedNs)) + " +- " + ms(c.uncertaintyNs) + " off rank " +
           std::to_string(r.clock.referenceRank) + "'s clock";
  return s.empty() ? s : s + " (aligned before every figure here).";
}

}  // namespace

void writeHeadline(JobReport& r) {
  writeHeadlineText(r);
  r.headline += offsetsSentence(r);
}

void writeHeadlineText(JobReport& r) {
  for (const JobFinding& f : r.findings)
    if (f.kind == "mixed_job") {
      r.headline = "These files are not one job: " + f.text + ".";
      return;
    }
  if (!r.hangs.empty()) {
    r.headline = "What costs this job most: a hang: " + r.hangs.front().text + ".";
    return;
  }
  if (!r.stragglers.empty()) {
    r.headline = "What costs this job most: " + r.stragglers.front().text + ".";
    return;
  }
  std::vector<int64_t> late;
  for (const MatchedCollective& m : r.matched)
    if (m.parts.size() >= 2) late.push_back(m.lateNs);
  if (late.empty()) {
    r.headline = r.ranks.size() < 2 ? "One rank only: nothing to compare across ranks."
                                    : "No collective is matched across the ranks: nothing to compare.";
    return;
  }
  std::map<int64_t, int> lastCount;
  std::vector<int64_t> gaps;
  for (const MatchedCollective& m : r.matched)
    if (m.parts.size() >= 2) lastCount[m.lastRank]++, gaps.push_back(m.gapNs);
  std::vector<std::pair<int, int64_t>> byCount;
  for (const auto& [rank, k] : lastCount) byCount.emplace_back(-k, rank);
  std::sort(byCount.begin(), byCount.end());
  std::string who;
  for (size_t i = 0; i < byCount.size() && i < 8; ++i)
    who += (i ? ", rank " : "rank ") + std::to_string(byCount[i].second) + " at " + std::to_string(-byCount[i].first);
  if (byCount.size() > 8) who += ", and " + std::to_string(byCount.size() - 8) + " more ranks";
  // No rank stands apart: what costs the job is then the largest part of the ranks' step time, added
  // over ranks and steps: their compute, their exposed communication (the wait for the last rank
  // inside it), or neither (the device idle while the host launches, runs Python or loads data).
  int64_t total = 0, sums[3] = {}, waitIn = 0;
  std::vector<int64_t> part[3];
  for (const auto& steps : r.figures)
    for (const StepFigures& f : steps) {
      if (f.stepNs <= 0) continue;
      const int64_t rest = std::max<int64_t>(0, f.stepNs - f.computeNs - f.exposedCommNs);
      total += f.stepNs;
      sums[0] += f.computeNs;
      sums[1] += f.exposedCommNs;
      sums[2] += rest;
      waitIn += std::min(f.waitForLastNs, f.exposedCommNs);
      part[0].push_back(f.computeNs);
      part[1].push_back(f.exposedCommNs);
      part[2].push_back(rest);
    }
  std::string lead;
  if (total > 0) {
    auto pct = [&](int64_t x) { return std::to_string((x * 100 + total / 2) / total) + "%"; };
    const std::string names[3] = {
        "the ranks' compute",
        "communication not hidden behind compute (" + pct(waitIn) + " of the step time waiting for the last rank)",
        "time in neither compute nor communication (the device idle while the host launches, runs Python or "
        "loads data)"};
    const char* shortName[3] = {"compute", "exposed communication", "neither"};
    const int k = static_cast<int>(std::max_element(sums, sums + 3) - sums);
    lead = "What costs this job most: " + names[k] + ", " + pct(sums[k]) + " of the ranks' step time (a median " +
           ms(medianOf(part[k])) + " a step [p10 " + ms(percentile(part[k], 0.1)) + " - p90 " +
           ms(percentile(part[k], 0.9)) + "]); ";
    std::string rest;
    for (int q = 0; q < 3; ++q)
      if (q != k) rest += (rest.empty() ? "" : ", ") + std::string(shortName[q]) + " " + pct(sums[q]);
    lead += rest + ". ";
  }
  r.headline = lead + "No straggler: no rank stands apart from the others. At the " + std::to_string(late.size()) +
               " matched collectives the last rank arrived a median " + ms(medianOf(late)) + " [p90 " +
               ms(percentile(late, 0.9)) + "] after the others' median and " + ms(medianOf(gaps)) +
               " after the rank before it; the last to arrive: " + who + ".";
}

}  // namespace attnscope::ranks
