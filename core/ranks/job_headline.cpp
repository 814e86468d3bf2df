// The headline an expert gives: first what limits the reading (two runs in the files, a rank claimed
// twice, a truncated trace), then who held the job up, when, by how much, what that cost as time and as
// a share of the step, why and the fix; with no straggler, what costs the job instead and its fix; last
// the clocks that were off and by how much.
#include <algorithm>
#include <cmath>
#include <map>

#include "core/ranks/job_internal.h"
#include "core/text/duration.h"

namespace attnscope::ranks {

namespace {

std::string ms(int64_t ns) { return spanDurationText(ns); }

int64_t percentile(std::vector<int64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(at);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + static_cast<int64_t>((at - static_cast<double>(lo)) * static_cast<double>(v[hi] - v[lo]));
}

// The clock offsets applied, in a sentence ("" when none was): ranks whose clocks are off by the same
// amount (one host's) together.
std::string offsetsSentence(const JobReport& r) {
  // Offsets of a millisecond or more (smaller ones are applied too, and listed with the clock offsets).
  std::vector<const RankClock*> off;
  for (const RankClock& c : r.clock.ranks)
    if (std::llabs(c.appliedNs) >= 1'000'000) off.push_back(&c);
  if (off.empty()) return {};
  std::sort(off.begin(), off.end(), [](const RankClock* a, const RankClock* b) { return a->appliedNs < b->appliedNs; });
  std::string s;
  for (size_t i = 0; i < off.size();) {
    size_t j = i;
    std::vector<int64_t> ranks{off[i]->rank}, est{off[i]->appliedNs};
    int64_t unc = off[i]->uncertaintyNs;
    // One host's ranks: the same offset within their uncertainty (or 2%).
    while (j + 1 < off.size() && off[j + 1]->appliedNs - off[j]->appliedNs <=
                                     std::max<int64_t>(3 * std::max(off[j]->uncertaintyNs, off[j + 1]->uncertaintyNs),
                                                       std::llabs(off[j]->appliedNs) / 50)) {
      ++j;
      ranks.push_back(off[j]->rank), est.push_back(off[j]->appliedNs), unc = std::max(unc, off[j]->uncertaintyNs);
    }
    const int64_t v = medianOf(est);
    s += (s.empty() ? " Clocks: " : "; ") +
         (ranks.size() == 1 ? "rank " + std::to_string(ranks.front()) + "'s clock is "
                            : "the clocks of ranks " + rankRuns(ranks) + " are ") +
         ms(std::llabs(v)) + " +- " + ms(unc) + (v > 0 ? " ahead of" : " behind");
    i = j + 1;
  }
  return s + " rank " + std::to_string(r.clock.referenceRank) +
         "'s (the clock most ranks share); aligned before every figure here.";
}

// With no straggler: the largest part of the ranks' step time, with its fix.
std::string noStraggler(JobReport& r) {
  std::vector<int64_t> late;
  for (const MatchedCollective& m : r.matched)
    if (m.parts.size() >= 2) late.push_back(m.lateNs);
  if (late.empty())
    return r.ranks.size() < 2 ? "One rank only: nothing to compare across ranks."
                              : "No collective is matched across the ranks: nothing to compare.";
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
  // What costs the job is then the largest part of the ranks' step time, added over ranks and steps:
  // their compute, their exposed communication (the wait for the last rank inside it), or neither (the
  // device idle while the host launches, runs Python or loads data).
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
    const std::string fixes[3] = {
        "make each rank's own steps cheaper: attnscope-cli explain on one rank's trace says what costs them",
        "hide the communication behind compute (DDP's bucket_cap_mb, FSDP's forward/backward prefetch) or send "
        "less (a larger batch per step, gradient accumulation, compression)",
        "keep the device fed: more DataLoader workers, fewer host syncs (.item(), .cpu()), CUDA graphs or "
        "torch.compile to cut launch time"};
    const int k = static_cast<int>(std::max_element(sums, sums + 3) - sums);
    lead = "What costs this job most: " + names[k] + ", " + pct(sums[k]) + " of the ranks' step time (a median " +
           ms(medianOf(part[k])) + " a step [p10 " + ms(percentile(part[k], 0.1)) + " - p90 " +
           ms(percentile(part[k], 0.9)) + "]); ";
    std::string rest;
    for (int q = 0; q < 3; ++q)
      if (q != k) rest += (rest.empty() ? "" : ", ") + std::string(shortName[q]) + " " + pct(sums[q]);
    lead += rest + ". ";
    r.fix = fixes[k];
  }
  std::string oneStep;
  for (const JobFinding& f : r.findings)
    if (f.kind == "late_ranks") oneStep += (oneStep.empty() ? "" : "; ") + f.text.substr(0, f.text.find(" ("));
  std::string out =
      lead +
      (oneStep.empty() ? "No straggler: no rank or set of ranks made the others wait beyond the job's jitter (" +
                             ms(r.jitterNs) + ")."
                       : "No straggler is named: with one step traced, a rank late there cannot be told from its "
                         "share of the work (" +
                             oneStep + ").") +
      " At the " + std::to_string(late.size()) + " matched collectives the last rank arrived a median " +
      ms(medianOf(late)) + " [p90 " + ms(percentile(late, 0.9)) + "] after the others' median and " +
      ms(medianOf(gaps)) + " after the rank before it; the last to arrive: " + who + ".";
  if (!r.fix.empty()) out += " Fix: " + r.fix + ".";
  return out;
}

}  // namespace

void writeHeadline(JobReport& r) {
  std::string pre;
  for (const JobFinding& f : r.findings) {
    if (f.kind == "two_jobs") pre += "More than one job in these files: " + f.text + ". ";
    if (f.kind == "duplicate_rank") pre += "Rank " + std::to_string(f.ranks.front()) + " twice: " + f.text + ". ";
  }
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const RankSummary& s = r.ranks[i];
    if (s.truncated.empty()) continue;
    std::string where;
    for (const StepFigures& f : r.figures[i])
      if (!f.beyondEnd) where = f.step;
    const size_t at = s.truncated.find("before byte ");
    const std::string cut =
        at == std::string::npos ? s.truncated : "its file is cut at byte " + s.truncated.substr(at + 12);
    pre += "Rank " + std::to_string(s.rank) + "'s trace is truncated (" + cut + "): it is analysed up to its last " +
           "complete event" + (where.empty() ? "" : ", in " + where) +
           ", and no hang or missing collective is read into its end. ";
  }
  std::string main;
  for (const JobFinding& f : r.findings)
    if (f.kind == "mixed_job" && main.empty()) main = "These files are not one job: " + f.text + ".";
  if (main.empty() && !r.hangs.empty()) main = "What costs this job most: a hang: " + r.hangs.front().text + ".";
  if (main.empty() && !r.stragglers.empty()) {
    const Straggler& s = r.stragglers.front();
    main = "What costs this job most: " + s.text + ".";
    r.fix = s.fix;
    for (size_t k = 1; k < r.stragglers.size() && k < 4; ++k) {
      const Straggler& o = r.stragglers[k];
      std::string steps;
      for (const std::string& st : o.steps) steps += (steps.empty() ? "" : ", ") + st;
      main += (k == 1 ? " Also: " : "; ") + o.who + " on " + steps + " (" + ms(o.lateNs) +
              (o.steps.size() > 1 ? " a step" : "") + ")";
    }
    if (r.stragglers.size() > 1)
      main += r.stragglers.size() > 4 ? "; and " + std::to_string(r.stragglers.size() - 4) + " more (see the findings)."
                                      : ".";
  }
  if (main.empty()) main = noStraggler(r);
  // A pipeline stage last by the schedule is said, so that its lateness is not read as a straggler's.
  for (const JobFinding& f : r.findings)
    if (f.kind == "pipeline_schedule") {
      main += " By the pipeline's schedule, not a straggler: " + f.text.substr(0, f.text.find(", so in")) + ".";
      break;
    }
  r.headline = pre + main + offsetsSentence(r);
}

}  // namespace attnscope::ranks
