// A pipeline's schedule, told from a straggler (job_waits.cpp asks it before reading who was late).
//
// In a job whose ranks exchange activations by send/recv (pipeline stages), a stage may arrive after the
// others at a collective in every step by design: in a GPipe or 1F1B schedule the first stage ends the
// backward last, so the whole stage (every data-parallel replica of it) is last at the step's closing
// all-reduce. That is the schedule's lateness (the pipeline bubble), not a straggler.
//
// A stage's ranks are each other's peers: the ranks linked by the job's process groups other than the world
// (a stage's data-parallel group, its tensor-parallel groups). At each kind of collective (its place in the step,
// name, size), each rank's usual place is the median over the steps of its readiness after the collective's
// early ranks (the lower quartile), and a stage's place in a step is its own early quarter (so a rank late
// against its peers does not move it). Where a stage's usual place stands out of the jitter (the cut), and most
// of its ranks and most steps are alike (within the cut, or 6 times the stage's own step-to-step spread: its
// lateness is its compute, which varies as compute does), that is the stage's schedule: its place in the step
// (or its usual place, in a step where it was later than alike) is taken off its ranks' readiness there before
// the model reads who was late. A rank is then late when it is late against its own stage's peers or beyond
// the stage's usual lateness. A stage of one rank (a pipeline of one replica) has no peers to tell the two
// apart by, and is left as it is.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "core/ranks/job_internal.h"
#include "core/ranks/ranks_util.h"
#include "core/text/duration.h"

namespace attnscope::ranks {

std::map<std::pair<size_t, size_t>, int64_t> pipelineSchedule(
    JobReport& r, const std::vector<std::vector<std::pair<int64_t, size_t>>>& rdy,
    const std::vector<const std::vector<size_t>*>& virtuals, const std::vector<std::string>& roleOf,
    const std::map<std::string, int64_t>& cutOf) {
  std::map<std::pair<size_t, size_t>, int64_t> shift;
  const size_t n = r.ranks.size();
  bool p2p = false;
  for (const RankSummary& s : r.ranks)
    for (const Collective& c : s.collectives) p2p = p2p || c.peerWaitNs > 0;
  if (!p2p || n < 2) return shift;
  // Stages: ranks linked by the process groups other than the world's.
  std::map<int64_t, size_t> indexOf;
  for (size_t i = 0; i < n; ++i) indexOf[r.ranks[i].rank] = i;
  Dsu stage(n);
  for (const GroupInfo& g : r.groups) {
    if (g.ranks.size() < 2 || static_cast<int64_t>(g.ranks.size()) >= static_cast<int64_t>(n)) continue;
    std::vector<size_t> members;
    for (int64_t rk : g.ranks)
      if (const auto it = indexOf.find(rk); it != indexOf.end()) members.push_back(it->second);
    for (size_t i : members) stage.unite(i, members.front());
  }
  // Per kind of collective and rank: its readiness after the early ranks, per step; and the steps' values.
  struct Seen {
    std::map<size_t, std::vector<int64_t>> byRank;
    std::vector<std::vector<std::pair<size_t, size_t>>> instances;  // per step: (matched, rank)
    size_t example = 0;
  };
  std::map<std::string, Seen> roles;
  for (const std::vector<size_t>* ks : virtuals) {
    std::vector<int64_t> a;
    for (size_t k : *ks)
      for (const auto& [t, i] : rdy[k]) a.push_back(t);
    if (a.size() < 3) continue;
    std::sort(a.begin(), a.end());
    const int64_t early = a[(a.size() - 1) / 4];
    Seen& s = roles[roleOf[ks->front()]];
    s.example = ks->front();
    s.instances.emplace_back();
    for (size_t k : *ks)
      for (const auto& [t, i] : rdy[k]) {
        s.byRank[i].push_back(t - early);
        s.instances.back().emplace_back(k, i);
      }
  }
  for (const auto& [role, s] : roles) {
    if (s.instances.size() < 3) continue;  // "in most steps" needs steps
    const auto cutIt = cutOf.find(role);
    if (cutIt == cutOf.end()) continue;
    const int64_t cut = cutIt->second;
    std::map<size_t, int64_t> usual;
    for (const auto& [i, v] : s.byRank)
      if (2 * v.size() > s.instances.size()) usual[i] = medianOf(v);
    std::map<size_t, std::vector<size_t>> stages;
    for (const auto& [i, u] : usual) stages[stage.find(i)].push_back(i);
    for (const auto& [root, members] : stages) {
      // Not the whole job: the stage is at most half the ranks at this collective.
      if (2 * members.size() > s.byRank.size()) continue;
      // One replica: a stage of one rank has no peers to tell the schedule from a straggler by; left as it is.
      if (members.size() < 2) continue;
      std::vector<int64_t> us;
      for (size_t i : members) us.push_back(usual[i]);
      const int64_t mid = medianOf(us);
      if (mid < cut) continue;
      // The stage's place in each step: its early quarter (the earliest with up to 3 replicas), so that a rank
      // late against its peers does not move it.
      std::vector<int64_t> perStep;
      for (const auto& inst : s.instances) {
        std::vector<int64_t> mine, all;
        for (const auto& [k, i] : inst)
          for (const auto& [t, j] : rdy[k])
            if (j == i) {
              all.push_back(t);
              if (std::binary_search(members.begin(), members.end(), i)) mine.push_back(t);
            }
        std::sort(all.begin(), all.end());
        std::sort(mine.begin(), mine.end());
        perStep.push_back(mine.empty() ? INT64_MIN : mine[(mine.size() - 1) / 4] - all[(all.size() - 1) / 4]);
      }
      std::vector<int64_t> seen, spread;
      for (int64_t x : perStep)
        if (x != INT64_MIN) seen.push_back(x);
      const int64_t centre = medianOf(seen);
      for (int64_t x : seen) spread.push_back(std::llabs(x - centre));
      // A similar amount: within the cut, or within 6 times the stage's own step-to-step spread (a stage's
      // lateness is its compute, which varies as compute does).
      const int64_t band =
          std::max<int64_t>(cut, static_cast<int64_t>(6 * 1.4826 * static_cast<double>(medianOf(spread))));
      size_t alike = 0, within = 0;
      for (int64_t u : us) alike += u >= mid - band && u <= mid + band;
      for (int64_t x : seen) within += x >= centre - band && x <= centre + band;
      // Most of its ranks share the place, in most steps: else it is not the schedule's.
      if (2 * alike <= members.size() || 2 * within <= s.instances.size() || centre < cut) continue;
      for (size_t q = 0; q < s.instances.size(); ++q) {
        const int64_t x = perStep[q];
        const int64_t by = x != INT64_MIN && x >= centre - band && x <= centre + band ? x : centre;
        for (const auto& [k, i] : s.instances[q])
          if (std::binary_search(members.begin(), members.end(), i)) shift[{k, i}] = by;
      }
      std::sort(seen.begin(), seen.end());
      std::vector<int64_t> ranks;
      for (size_t i : members) ranks.push_back(r.ranks[i].rank);
      const MatchedCollective& m = r.matched[s.example];
      r.findings.push_back(
          {"pipeline_schedule",
           (ranks.size() == 1 ? "rank " : "ranks ") + rankRuns(ranks) +
               (ranks.size() == 1 ? " (one pipeline stage) arrives"
                                  : " (one pipeline stage, with its replicas) arrive") +
               " at " + m.name + " on process group '" + m.pg + "' " + spanDurationText(centre) + " a step" +
               " after the other ranks [" + spanDurationText(seen.front()) + " - " + spanDurationText(seen.back()) +
               " over the steps], so in " + std::to_string(within) + " of " + std::to_string(s.instances.size()) +
               " steps: the pipeline's schedule (the stage that ends the backward last), the pipeline bubble, not "
               "a straggler; a straggler there is a rank late against its stage's peers or beyond this",
           ranks});
    }
  }
  return shift;
}

}  // namespace attnscope::ranks
