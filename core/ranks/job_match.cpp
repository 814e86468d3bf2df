// Matching every collective across ranks (by Comms Id, else process group and Seq, else the order per
// process group checked against name and size), each group with its members as the job's merged
// process groups list them.
#include <cmath>
#include <map>
#include <set>

#include "core/ranks/job_internal.h"
#include "core/ranks/ranks_util.h"
#include "core/text/duration.h"

namespace attnscope::ranks {

namespace {

std::string signature(const Collective& c) {
  return collectiveKey(c.name) + "|" + c.dims + "|" + (c.nelems >= 0 ? std::to_string(c.nelems) : "");
}

std::string shown(const Collective& c) {
  std::string s = c.name;
  if (!c.dims.empty()) s += " " + c.dims;
  if (c.nelems >= 0) s += " (" + std::to_string(c.nelems) + " elements)";
  return s;
}

struct Group {
  std::string name;
  bool inferred = false;
  std::vector<size_t> members;                   // rank indices
  std::vector<std::vector<size_t>> collectives;  // per member, its collectives of the group in issue order
};

// The step most of the parts were issued in.
std::string stepOf(const JobReport& r, const std::vector<Part>& parts) {
  std::map<std::string, int> n;
  for (const Part& p : parts) {
    const Collective& c = collectiveOf(r, p);
    if (c.step >= 0) n[r.ranks[p.first].steps[static_cast<size_t>(c.step)].name]++;
  }
  std::string best;
  int most = 0;
  for (const auto& [s, k] : n)
    if (k > most) best = s, most = k;
  return best;
}

void addMatched(JobReport& r, const Group& g, const std::string& method, int index, std::vector<Part> parts) {
  MatchedCollective m;
  m.method = method;
  m.pg = g.name;
  m.pgInferred = g.inferred;
  m.index = index;
  const Collective& c = collectiveOf(r, parts.front());
  m.seq = c.seq;
  m.commsId = c.commsId;
  m.name = c.name;
  m.dims = c.dims;
  m.nelems = c.nelems;
  m.parts = std::move(parts);
  m.step = stepOf(r, m.parts);
  r.matched.push_back(std::move(m));
}

void addUnmatched(JobReport& r, const Group& g, int index, const std::vector<Part>& parts, std::vector<int64_t> missing,
                  const std::string& reason) {
  UnmatchedCollective u;
  u.pg = g.name;
  u.index = index;
  u.parts = parts;
  for (const Part& p : parts) u.presentRanks.push_back(r.ranks[p.first].rank);
  if (!parts.empty()) {
    u.name = collectiveOf(r, parts.front()).name;
    u.dims = collectiveOf(r, parts.front()).dims;
  }
  u.missingRanks = std::move(missing);
  u.reason = reason;
  r.unmatched.push_back(std::move(u));
}

// By a key every rank's collective carries (Comms Id, or Seq within the group).
void matchByKey(JobReport& r, const Group& g, bool byCommsId) {
  std::map<std::string, std::vector<Part>> byKey;
  std::map<std::string, int64_t> firstIssue;
  for (size_t m = 0; m < g.members.size(); ++m)
    for (size_t ci : g.collectives[m]) {
      const Collective& c = r.ranks[g.members[m]].collectives[ci];
      std::string key = byCommsId ? c.commsId : std::to_string(c.seq);
      if (!byCommsId) key = std::string(20 - std::min<size_t>(20, key.size()), '0') + key;  // numeric order
      byKey[key].push_back({g.members[m], ci});
      auto [it, fresh] = firstIssue.emplace(key, c.issueNs);
      if (!fresh) it->second = std::min(it->second, c.issueNs);
    }
  std::vector<std::pair<int64_t, std::string>> order;
  for (const auto& [k, t] : firstIssue) order.emplace_back(byCommsId ? t : 0, k);
  std::stable_sort(order.begin(), order.end());
  int index = 0;
  for (const auto& [t, key] : order) {
    const std::vector<Part>& parts = byKey[key];
    ++index;
    std::set<std::string> sigs;
    for (const Part& p : parts) sigs.insert(signature(collectiveOf(r, p)));
    std::set<size_t> present;
    for (const Part& p : parts) present.insert(p.first);
    std::vector<int64_t> missing;
    for (size_t m : g.members)
      if (!present.count(m)) missing.push_back(r.ranks[m].rank);
    if (sigs.size() > 1) {
      std::string what;
      for (const Part& p : parts)
        what += (what.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r.ranks[p.first].rank) + " " +
                shown(collectiveOf(r, p));
      r.findings.push_back({"mismatch",
                            "process group '" + g.name + "', " + (byCommsId ? "Comms Id " : "Seq ") +
                                (byCommsId ? key : std::to_string(collectiveOf(r, parts.front()).seq)) +
                                ": the ranks issued different collectives (" + what + ")",
                            {}});
      addUnmatched(r, g, index, parts, missing, "mismatch");
    } else if (!missing.empty()) {
      addUnmatched(r, g, index, parts, missing, "missing");
    } else {
      addMatched(r, g, byCommsId ? "comms_id" : "pg_seq", index, parts);
    }
  }
}

// By the order each rank issued the group's collectives, checked against name and size: a rank whose
// collective differs from the others' is skipped past (an extra one) or held back (one fewer) when its
// next collective or the others' next one lines up again, else the place is a mismatch.
void matchByOrder(JobReport& r, const Group& g) {
  const size_t n = g.members.size();
  std::vector<size_t> ptr(n, 0);
  auto sigAt = [&](size_t m, size_t k) -> std::string {
    return k < g.collectives[m].size() ? signature(r.ranks[g.members[m]].collectives[g.collectives[m][k]]) : "";
  };
  int index = 0, reported = 0;
  for (size_t guard = 0; guard < 10'000'000; ++guard) {
    std::map<std::string, size_t> count;
    std::string majority;
    size_t best = 0;
    for (size_t m = 0; m < n; ++m) {
      const std::string s = sigAt(m, ptr[m]);
      if (s.empty()) continue;
      if (++count[s] > best) best = count[s], majority = s;
    }
    if (count.empty()) break;
    ++index;
    std::string nextOfMajority;
    for (size_t m = 0; m < n && nextOfMajority.empty(); ++m)
      if (sigAt(m, ptr[m]) == majority) nextOfMajority = sigAt(m, ptr[m] + 1);
    std::vector<Part> in;
    std::vector<int64_t> missing;
    bool mismatch = false;
    for (size_t m = 0; m < n; ++m) {
      const int64_t rank = r.ranks[g.members[m]].rank;
      const std::string s = sigAt(m, ptr[m]);
      if (s == majority) {
        in.push_back({g.members[m], g.collectives[m][ptr[m]]});
        continue;
      }
      if (s.empty()) {
        missing.push_back(rank);
        continue;
      }
      const Collective& mine = r.ranks[g.members[m]].collectives[g.collectives[m][ptr[m]]];
      std::string what;
      if (sigAt(m, ptr[m] + 1) == majority) {  // an extra one on this rank
        what = "rank " + std::to_string(rank) + " issued an extra " + shown(mine) + " before it";
        addUnmatched(r, g, index, {{g.members[m], g.collectives[m][ptr[m]]}}, {}, "mismatch");
        ++ptr[m];
        in.push_back({g.members[m], g.collectives[m][ptr[m]]});
      } else if (!nextOfMajority.empty() && s == nextOfMajority) {  // this rank skipped one
        what = "rank " + std::to_string(rank) + " never issued it (its next one is the others' next)";
        missing.push_back(rank);
      } else {
        what = "rank " + std::to_string(rank) + " issued " + shown(mine) + " instead";
        addUnmatched(r, g, index, {{g.members[m], g.collectives[m][ptr[m]]}}, {}, "mismatch");
        ++ptr[m];
        mismatch = true;
      }
      if (reported++ < 10) {
        // A named Part: binding the result to a temporary argument trips GCC 13's -Wdangling-reference.
        const Part shownPart = in.empty() ? Part{g.members[m], g.collectives[m][ptr[m]]} : in.front();
        const Collective& theirs = collectiveOf(r, shownPart);
        r.findings.push_back({"mismatch",
                              "process group '" + g.name + "', collective #" + std::to_string(index) + " (" +
                                  shown(theirs) + " on the others): " + what,
                              {rank}});
      }
    }
    for (const Part& p : in)
      for (size_t m = 0; m < n; ++m)
        if (g.members[m] == p.first) ++ptr[m];
    if (in.empty()) continue;
    if (missing.empty() && !mismatch)
      addMatched(r, g, "order", index, in);
    else
      addUnmatched(r, g, index, in, missing, mismatch ? "mismatch" : "missing");
  }
}

}  // namespace

void matchCollectives(JobReport& r) {
  // A rank whose trace has no process groups named its gloo groups by their order ("gloo group 2"):
  // name them as the job's process groups (another rank's distributedInfo), in the same order.
  const std::vector<ProcessGroupConfig>* jobPgs = nullptr;
  for (const RankSummary& s : r.ranks)
    if (!s.dist.pgConfig.empty()) {
      jobPgs = &s.dist.pgConfig;
      break;
    }
  if (jobPgs)
    for (RankSummary& s : r.ranks)
      for (Collective& c : s.collectives)
        if (c.pgInferred && c.pg.rfind("gloo group ", 0) == 0) {
          const size_t k = std::stoul(c.pg.substr(11)) - 1;
          if (k < jobPgs->size()) c.pg = (*jobPgs)[k].name;
        }
  // The groups, by name, with their members: the ranks that issued any of its collectives, and those
  // distributedInfo lists in it.
  std::map<std::string, Group> groups;
  for (size_t i = 0; i < r.ranks.size(); ++i)
    for (size_t ci = 0; ci < r.ranks[i].collectives.size(); ++ci) {
      const Collective& c = r.ranks[i].collectives[ci];
      Group& g = groups[c.pg];
      g.name = c.pg;
      g.inferred = g.inferred || c.pgInferred;
      if (std::find(g.members.begin(), g.members.end(), i) == g.members.end()) g.members.push_back(i);
    }
  for (auto& [name, g] : groups) {
    for (const GroupInfo& gi : r.groups)
      if (gi.name == name)
        for (int64_t rank : gi.ranks)
          for (size_t i = 0; i < r.ranks.size(); ++i)
            if (r.ranks[i].rank == rank && std::find(g.members.begin(), g.members.end(), i) == g.members.end())
              g.members.push_back(i);
    std::sort(g.members.begin(), g.members.end());
    g.collectives.resize(g.members.size());
    bool allIds = true, allSeq = !g.inferred;
    for (size_t m = 0; m < g.members.size(); ++m) {
      const RankSummary& s = r.ranks[g.members[m]];
      for (size_t ci = 0; ci < s.collectives.size(); ++ci)
        if (s.collectives[ci].pg == name) {
          g.collectives[m].push_back(ci);
          allIds = allIds && !s.collectives[ci].commsId.empty();
          allSeq = allSeq && s.collectives[ci].seq >= 0;
        }
    }
    std::string how;
    if (allIds) {
      matchByKey(r, g, true);
      how = "by Comms Id";
    } else if (allSeq) {
      matchByKey(r, g, false);
      how = "by process group and Seq";
    } else {
      matchByOrder(r, g);
      how = "by their order in the group, checked against name and size (the traces carry no Seq or Comms Id)";
    }
    r.matchMethods += (r.matchMethods.empty() ? "" : "; ") + std::string("group '") + name + "': " + how;
  }
}

}  // namespace attnscope::ranks
