// Faults said as findings, never made up: a hang only where the ranks that entered a collective waited
// far longer than the group's collectives take (the others' waits show it), never because a file ends;
// a collective a rank never issued while its trace ran on is a finding of its own; a truncated trace is
// said with where it ends, and the collectives it did not reach are not counted as missing.
#include <algorithm>
#include <map>

#include "core/ranks/job_internal.h"
#include "core/text/duration.h"

namespace attnscope::ranks {

namespace {

std::string ms(int64_t ns) { return spanDurationText(ns); }

std::string rankList(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

std::string collectiveWords(const std::string& name, const std::string& dims, int index, const std::string& pg) {
  std::string s = name;
  if (!dims.empty()) s += " " + dims;
  return s + " #" + std::to_string(index) + " on process group '" + pg + "'";
}

size_t indexOfRank(const JobReport& r, int64_t rank) {
  for (size_t i = 0; i < r.ranks.size(); ++i)
    if (r.ranks[i].rank == rank) return i;
  return SIZE_MAX;
}

// The job's start on the aligned clock (the earliest trace start).
int64_t jobStart(const JobReport& r) {
  int64_t t = INT64_MAX;
  for (size_t i = 0; i < r.ranks.size(); ++i) t = std::min(t, r.ranks[i].traceStartNs - appliedOffset(r, i));
  return t == INT64_MAX ? 0 : t;
}

}  // namespace

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
    bool cut = false;
    for (const Part& p : u.parts) {
      arrivals.push_back(alignedArrival(r, p));
      waited.push_back(collectiveOf(r, p).endNs - collectiveOf(r, p).arrivalNs);
      cut = cut || collectiveOf(r, p).cut;
    }
    h.waitedNs = *std::max_element(waited.begin(), waited.end());
    const Collective& first = collectiveOf(r, u.parts.front());
    if (first.step >= 0) h.step = r.ranks[u.parts.front().first].steps[static_cast<size_t>(first.step)].name;
    h.blockedIn = first.blockedIn.empty() ? first.op : first.blockedIn;
    const int64_t arrived = medianOf(arrivals);
    int64_t pastNs = INT64_MIN;
    bool truncatedBefore = false;
    for (int64_t mr : u.missingRanks) {
      const size_t i = indexOfRank(r, mr);
      if (i == SIZE_MAX) continue;
      const int64_t past = r.ranks[i].traceEndNs - appliedOffset(r, i) - arrived;
      pastNs = std::max(pastNs, past);
      truncatedBefore = truncatedBefore || !r.ranks[i].truncated.empty();
    }
    h.tracedPast = pastNs >= 0 && !truncatedBefore;
    // The others' waits show a hang: far longer than the group's collectives take (a timeout), or still
    // waiting when their traces ended.
    const int64_t usual = medianOf(durByPg[u.pg]);
    const bool longWait = h.waitedNs >= std::max<int64_t>(10 * usual, 1'000'000'000) ||
                          (cut && h.waitedNs >= std::max<int64_t>(10 * usual, 100'000'000));
    const std::string missingText = (h.missingRanks.size() == 1 ? "rank " : "ranks ") + rankList(h.missingRanks);
    if (!longWait) {
      if (truncatedBefore) {
        u.reason = "truncated";
      } else if (h.tracedPast) {
        r.findings.push_back({"missing_collective",
                              missingText + " never issued " + h.collective + ", though " +
                                  (h.missingRanks.size() == 1 ? "its trace runs " : "their traces run ") + ms(pastNs) +
                                  " past the others' arrival; the others waited " + ms(h.waitedNs) +
                                  " there (the group's collectives take " + ms(usual) + "): no hang",
                              h.missingRanks});
      } else {
        u.reason = "outside_window";
      }
      continue;
    }
    h.text = missingText + " never issued " + h.collective;
    if (h.tracedPast)
      h.text += " (its trace runs " + ms(pastNs) + " past the others' arrival and holds no such call)";
    else if (truncatedBefore)
      h.text += " (its trace is truncated before it: what it did then is unknown)";
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

void noteTruncations(JobReport& r) {
  const int64_t t0 = jobStart(r);
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const RankSummary& s = r.ranks[i];
    if (s.truncated.empty()) continue;
    const int64_t end = s.traceEndNs - appliedOffset(r, i);
    std::string inStep;
    for (const RankStep& st : s.steps)
      if (st.startNs <= s.traceEndNs) inStep = st.name;
    int missed = 0;
    for (const UnmatchedCollective& u : r.unmatched)
      missed += u.reason == "truncated" &&
                std::find(u.missingRanks.begin(), u.missingRanks.end(), s.rank) != u.missingRanks.end();
    char at[48];
    std::snprintf(at, sizeof at, "%.3f s", static_cast<double>(end - t0) / 1e9);
    r.findings.push_back({"truncated",
                          "rank " + std::to_string(s.rank) + "'s trace (" + s.file + ") is truncated: " + s.truncated +
                              "; its last complete event ends " + at + " into the job" +
                              (inStep.empty() ? "" : ", in " + inStep) + ": it is analysed up to there" +
                              (missed ? ", and the " + std::to_string(missed) +
                                            " collective(s) the others issued after it are not "
                                            "counted as missing"
                                      : ""),
                          {s.rank}});
  }
}

}  // namespace attnscope::ranks
