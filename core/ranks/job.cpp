// Opening a job: which files, which rank each is, what is missing or mixed, which file to use for a
// rank claimed twice and whether a folder holds two jobs, the process groups merged across ranks; then
// the analysis in order (job_match.cpp, job_waits.cpp, job_stragglers.cpp, job_headline.cpp).
#include "core/ranks/job.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "core/ranks/job_internal.h"
#include "core/ranks/summary_cache.h"
#include "core/text/duration.h"

namespace attnscope::ranks {

namespace fs = std::filesystem;

namespace {

bool endsWith(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

bool isJson(const std::string& name) { return endsWith(name, ".json") || endsWith(name, ".json.gz"); }

std::string rankList(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

std::string fileList(const std::vector<RankSummary>& all, const std::vector<size_t>& idx) {
  std::string s;
  for (size_t i : idx) s += (s.empty() ? "" : ", ") + all[i].file;
  return s;
}

// Two files whose time windows lie this far apart are not of one run (the hosts of one job keep their
// clocks far closer; two runs of a job are seconds apart at the least).
constexpr int64_t kSameRunSlackNs = 2'000'000'000;

bool overlaps(const RankSummary& a, int64_t lo, int64_t hi) {
  return a.traceStartNs <= hi + kSameRunSlackNs && a.traceEndNs + kSameRunSlackNs >= lo;
}

// The files as runs: those whose windows overlap (with the slack) are one run.
std::vector<std::vector<size_t>> runsOf(const std::vector<RankSummary>& s, const std::vector<size_t>& idx) {
  std::vector<size_t> order = idx;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s[a].traceStartNs < s[b].traceStartNs; });
  std::vector<std::vector<size_t>> runs;
  int64_t end = 0;
  for (size_t i : order) {
    if (runs.empty() || s[i].traceStartNs > end + kSameRunSlackNs) {
      runs.push_back({});
      end = s[i].traceEndNs;
    }
    runs.back().push_back(i);
    end = std::max(end, s[i].traceEndNs);
  }
  return runs;
}

bool sameTrace(const RankSummary& a, const RankSummary& b) {
  if (a.traceStartNs != b.traceStartNs || a.traceEndNs != b.traceEndNs) return false;
  if (a.collectives.size() != b.collectives.size() || a.steps.size() != b.steps.size()) return false;
  for (size_t k = 0; k < a.collectives.size(); ++k)
    if (a.collectives[k].arrivalNs != b.collectives[k].arrivalNs || a.collectives[k].endNs != b.collectives[k].endNs)
      return false;
  return true;
}

std::string apart(int64_t ns) {
  const double s = static_cast<double>(ns < 0 ? -ns : ns) / 1e9;
  char b[64];
  if (s >= 7200)
    std::snprintf(b, sizeof b, "%.1f h", s / 3600);
  else if (s >= 120)
    std::snprintf(b, sizeof b, "%.0f min", s / 60);
  else
    std::snprintf(b, sizeof b, "%.0f s", s);
  return b;
}

// A rank claimed by several files: the one to use, or none (with the reason in `why`).
std::optional<size_t> chooseFile(const std::vector<RankSummary>& all, const std::vector<size_t>& idx,
                                 const std::vector<size_t>& others, std::string* why) {
  bool copies = true;
  for (size_t i : idx) copies = copies && sameTrace(all[i], all[idx.front()]);
  if (copies) {
    *why = "the files are copies of one trace (the same events): " + all[idx.front()].file + " is used";
    return idx.front();
  }
  // The others' run: the one whose time fits it is this job's.
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t o : others) lo = std::min(lo, all[o].traceStartNs), hi = std::max(hi, all[o].traceEndNs);
  std::vector<size_t> fit;
  if (!others.empty())
    for (size_t i : idx)
      if (overlaps(all[i], lo, hi)) fit.push_back(i);
  if (fit.size() == 1) {
    std::string away;
    for (size_t i : idx)
      if (i != fit.front())
        away += (away.empty() ? "" : "; ") + all[i].file + " ran " + apart(all[i].traceStartNs - lo) +
                (all[i].traceStartNs < lo ? " before" : " after") + " them";
    *why = all[fit.front()].file + " is used: its time matches the other ranks' traces (" + away + ")";
    return fit.front();
  }
  // Both in the others' time: the one whose collectives match the others' count.
  std::map<size_t, int> counts;
  for (size_t o : others) counts[all[o].collectives.size()]++;
  size_t usual = 0;
  int most = 0;
  for (const auto& [n, k] : counts)
    if (k > most) usual = n, most = k;
  std::vector<size_t> same;
  for (size_t i : (fit.empty() ? idx : fit))
    if (most > 0 && all[i].collectives.size() == usual) same.push_back(i);
  if (same.size() == 1) {
    *why = all[same.front()].file + " is used: it issued " + std::to_string(usual) +
           " collectives as the other ranks did (the other file " +
           std::to_string(all[(same.front() == idx.front() ? idx.back() : idx.front())].collectives.size()) + ")";
    return same.front();
  }
  *why =
      "the files differ and both fit the job (same time and collectives): which one is this job's rank cannot "
      "be told, so the job is analysed without it";
  return std::nullopt;
}

}  // namespace

std::vector<std::string> jobFiles(const std::vector<std::string>& paths, std::string* error) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& p : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(p, ec);
    if (ec || !fs::exists(st)) {
      *error = p + ": no such file or folder";
      return {};
    }
    if (!fs::is_directory(st)) {
      if (seen.insert(fs::weakly_canonical(p, ec).string()).second) out.push_back(p);
      continue;
    }
    std::vector<std::string> traces, others;
    for (const auto& de : fs::directory_iterator(p, ec)) {
      if (!de.is_regular_file(ec)) continue;
      const std::string name = de.path().filename().string();
      if (!isJson(name)) continue;
      (name.find("trace") != std::string::npos ? traces : others).push_back(de.path().string());
    }
    if (ec) {
      *error = p + ": cannot list the folder (" + ec.message() + ")";
      return {};
    }
    if (traces.empty())
      for (const std::string& o : others) {
        const std::string name = fs::path(o).filename().string();
        if (name != "TRUTH.json" && !endsWith(name, ".steps.json")) traces.push_back(o);
      }
    if (traces.empty()) {
      *error = p + ": the folder holds no trace (no .json or .json.gz file)";
      return {};
    }
    std::sort(traces.begin(), traces.end());
    for (const std::string& t : traces)
      if (seen.insert(fs::weakly_canonical(t, ec).string()).second) out.push_back(t);
  }
  if (out.empty()) *error = "no trace given";
  return out;
}

JobReport openJob(const std::vector<std::string>& files, const ReaderLimits& limits, std::string* error,
                  std::vector<std::string>* warnings) {
  std::vector<RankSummary> summaries;
  for (const std::string& f : files) {
    RankSummary s;
    std::string warning;
    if (!summarizeFile(f, limits, &s, error, &warning)) return {};
    if (warnings && !warning.empty()) warnings->push_back(warning);
    summaries.push_back(std::move(s));
  }
  return analyzeJob(std::move(summaries));
}

namespace {

// Which summaries are the job: ranks known, one file per rank, one run. Fills findings.
std::vector<RankSummary> chooseRanks(std::vector<RankSummary> all, JobReport& r) {
  std::vector<size_t> known;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].rank >= 0) {
      known.push_back(i);
      continue;
    }
    r.findings.push_back({"unknown_rank",
                          all[i].file + ": no rank (no distributedInfo.rank, and the file name has no rank-N, rankN or "
                                        "workerN): left out",
                          {}});
  }
  std::map<int64_t, std::vector<size_t>> byRank;
  for (size_t i : known) byRank[all[i].rank].push_back(i);
  bool doubled = false;
  for (const auto& [rank, idx] : byRank) doubled = doubled || idx.size() > 1;
  // Two jobs in one folder: ranks claimed twice, and the files fall into runs far apart in time.
  if (doubled) {
    // Runs of two ranks or more are jobs; a lone file far from the others is a rank's stray file (below).
    std::vector<std::vector<size_t>> runs;
    for (auto& run : runsOf(all, known)) {
      std::set<int64_t> rs;
      for (size_t i : run) rs.insert(all[i].rank);
      if (rs.size() >= 2) runs.push_back(std::move(run));
    }
    if (runs.size() > 1) {
      std::vector<std::pair<std::pair<size_t, int64_t>, size_t>> score;  // ((ranks, start), run)
      for (size_t k = 0; k < runs.size(); ++k) {
        std::set<int64_t> rs;
        for (size_t i : runs[k]) rs.insert(all[i].rank);
        score.push_back({{rs.size(), all[runs[k].front()].traceStartNs}, k});
      }
      std::sort(score.begin(), score.end());
      const size_t pick = score.back().second;
      std::string text = "these files hold " + std::to_string(runs.size()) + " runs far apart in time: ";
      std::vector<int64_t> dropped;
      for (size_t k = 0; k < runs.size(); ++k) {
        std::set<int64_t> rs;
        for (size_t i : runs[k]) rs.insert(all[i].rank);
        text += (k ? "; " : "") + std::string(k == pick ? "analysed: " : "left out: ") + "ranks " +
                rankRuns({rs.begin(), rs.end()}) + " (" + std::to_string(runs[k].size()) +
                " files: " + fileList(all, runs[k]) + ")" +
                (k == pick ? ""
                           : ", " + apart(all[runs[k].front()].traceStartNs - all[runs[pick].front()].traceStartNs) +
                                 (all[runs[k].front()].traceStartNs < all[runs[pick].front()].traceStartNs ? " before"
                                                                                                           : " after"));
        if (k != pick)
          for (size_t i : runs[k]) dropped.push_back(all[i].rank);
      }
      r.findings.push_back({"two_jobs", text, dropped});
      byRank.clear();
      for (size_t i : runs[pick]) byRank[all[i].rank].push_back(i);
    }
  }
  std::vector<size_t> singles;
  for (const auto& [rank, idx] : byRank)
    if (idx.size() == 1) singles.push_back(idx.front());
  std::vector<RankSummary> kept;
  for (auto& [rank, idx] : byRank) {
    if (idx.size() == 1) {
      kept.push_back(std::move(all[idx.front()]));
      continue;
    }
    std::string why;
    const auto use = chooseFile(all, idx, singles, &why);
    r.findings.push_back({"duplicate_rank",
                          "rank " + std::to_string(rank) + " is claimed by " + std::to_string(idx.size()) + " files (" +
                              fileList(all, idx) + "): " + why,
                          {rank}});
    if (use) kept.push_back(std::move(all[*use]));
  }
  return kept;
}

// The process groups over every rank's pg_config: each group once, with its members. A group listed
// with different members on two ranks, or a default group whose size is not the world size, is said.
void mergeGroups(JobReport& r) {
  std::map<std::string, std::pair<GroupInfo, int64_t>> byName;  // name -> (group, the rank that listed it)
  for (const RankSummary& s : r.ranks)
    for (const ProcessGroupConfig& p : s.dist.pgConfig) {
      auto it = byName.find(p.name);
      if (it == byName.end()) {
        byName[p.name] = {GroupInfo{p.name, p.desc, p.ranks, true}, s.rank};
        continue;
      }
      if (it->second.first.ranks != p.ranks)
        r.findings.push_back({"mixed_job",
                              "process group '" + p.name + "' has ranks [" + rankList(it->second.first.ranks) +
                                  "] on rank " + std::to_string(it->second.second) + " but [" + rankList(p.ranks) +
                                  "] on rank " + std::to_string(s.rank) + " (" + s.file + ")",
                              {it->second.second, s.rank}});
    }
  for (auto& [name, g] : byName) {
    const bool isDefault = g.first.desc == "default_pg" || (g.first.desc.empty() && name == "0");
    if (isDefault && r.worldSize > 0 && static_cast<int64_t>(g.first.ranks.size()) != r.worldSize)
      r.findings.push_back({"mixed_job",
                            "the default process group '" + name + "' has " + std::to_string(g.first.ranks.size()) +
                                " ranks but the world size is " + std::to_string(r.worldSize),
                            {}});
    r.groups.push_back(std::move(g.first));
  }
}

}  // namespace

std::string rankRuns(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::string s;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    s += (s.empty() ? "" : ", ") + std::to_string(v[i]);
    if (j > i) s += (j == i + 1 ? ", " : "-") + std::to_string(v[j]);
    i = j + 1;
  }
  return s;
}

JobReport analyzeJob(std::vector<RankSummary> summaries) {
  JobReport r;
  r.ranks = chooseRanks(std::move(summaries), r);
  std::sort(r.ranks.begin(), r.ranks.end(), [](const RankSummary& a, const RankSummary& b) { return a.rank < b.rank; });
  // World size: the ranks must agree.
  std::map<int64_t, std::vector<int64_t>> worlds;
  std::map<std::string, std::vector<int64_t>> backends;
  for (const RankSummary& s : r.ranks) {
    worlds[s.dist.worldSize].push_back(s.rank);
    if (!s.dist.backend.empty()) backends[s.dist.backend].push_back(s.rank);
  }
  worlds.erase(-1);
  if (worlds.size() > 1) {
    std::string t = "world sizes differ (";
    bool first = true;
    for (const auto& [w, rs] : worlds) {
      t += (first ? "" : "; ") + std::string("world size ") + std::to_string(w) + " on rank(s) " + rankList(rs);
      first = false;
    }
    r.findings.push_back({"mixed_job", t + ")", {}});
  }
  if (!worlds.empty()) r.worldSize = worlds.rbegin()->first;
  if (!backends.empty()) r.backend = backends.begin()->first;
  if (r.worldSize < 0 && !r.ranks.empty()) r.worldSize = r.ranks.back().rank + 1;
  mergeGroups(r);
  std::set<int64_t> present;
  for (const RankSummary& s : r.ranks) present.insert(s.rank);
  std::vector<int64_t> missing;
  for (int64_t k = 0; k < r.worldSize && missing.size() < 1000; ++k)
    if (!present.count(k)) missing.push_back(k);
  if (!missing.empty())
    r.findings.push_back({"missing_ranks",
                          "rank(s) " + rankRuns(missing) + " of world size " + std::to_string(r.worldSize) +
                              " have no trace here: what they did is unknown",
                          missing});
  for (const RankSummary& s : r.ranks)
    if (s.rank >= r.worldSize && r.worldSize > 0)
      r.findings.push_back(
          {"mixed_job",
           s.file + ": rank " + std::to_string(s.rank) + " is outside the world size " + std::to_string(r.worldSize),
           {s.rank}});
  for (const RankSummary& s : r.ranks)
    for (const std::string& n : s.notes)
      r.findings.push_back({"note", "rank " + std::to_string(s.rank) + " (" + s.file + "): " + n, {s.rank}});

  if (r.ranks.size() >= 2) {
    matchCollectives(r);
    estimateClock(r);
  } else {
    r.clock.method = "none: fewer than two ranks";
    for (const RankSummary& s : r.ranks) r.clock.ranks.push_back({.rank = s.rank});
    if (!r.ranks.empty()) r.clock.referenceRank = r.ranks.front().rank;
  }
  findStragglers(r, modelWaits(r));
  findHangs(r);
  noteTruncations(r);
  writeHeadline(r);
  return r;
}

}  // namespace attnscope::ranks
