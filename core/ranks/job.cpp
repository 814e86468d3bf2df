// Opening a job: which files, which rank each is, what is missing, doubled or mixed; then the
// analysis in order (job_match.cpp, job_stragglers.cpp).
#include "core/ranks/job.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "core/ranks/job_internal.h"
#include "core/ranks/summary_cache.h"

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

std::string pgConfigText(const std::vector<ProcessGroupConfig>& pgs) {
  std::string s;
  for (const ProcessGroupConfig& p : pgs) {
    s += (s.empty() ? "" : "; ") + std::string("'") + p.name + "' of " + std::to_string(p.size) + " ranks [" +
         rankList(p.ranks) + "]";
  }
  return s.empty() ? "none" : s;
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

JobReport analyzeJob(std::vector<RankSummary> summaries) {
  JobReport r;
  // Ranks: from distributedInfo or the file name; none, or one claimed twice, is said and left out.
  std::map<int64_t, std::vector<size_t>> byRank;
  for (size_t i = 0; i < summaries.size(); ++i) {
    if (summaries[i].rank < 0) {
      r.findings.push_back({"unknown_rank",
                            summaries[i].file +
                                ": no rank (no distributedInfo.rank, and the file name has no rank-N, rankN or "
                                "workerN): left out",
                            {}});
      continue;
    }
    byRank[summaries[i].rank].push_back(i);
  }
  std::vector<RankSummary> kept;
  for (auto& [rank, idx] : byRank) {
    if (idx.size() > 1) {
      std::string files;
      for (size_t i : idx) files += (files.empty() ? "" : ", ") + summaries[i].file;
      r.findings.push_back({"duplicate_rank",
                            "rank " + std::to_string(rank) + " is claimed by " + std::to_string(idx.size()) +
                                " files (" + files + "): none of them is analysed",
                            {rank}});
      continue;
    }
    kept.push_back(std::move(summaries[idx.front()]));
  }
  r.ranks = std::move(kept);

  // World size and process groups: they must agree.
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
  const RankSummary* withPg = nullptr;
  for (const RankSummary& s : r.ranks)
    if (s.dist.hasPgConfig) {
      if (!withPg) {
        withPg = &s;
      } else if (s.dist.pgConfig != withPg->dist.pgConfig) {
        r.findings.push_back({"mixed_job",
                              "process groups differ: rank " + std::to_string(withPg->rank) + " (" + withPg->file +
                                  ") has " + pgConfigText(withPg->dist.pgConfig) + ", rank " + std::to_string(s.rank) +
                                  " (" + s.file + ") has " + pgConfigText(s.dist.pgConfig),
                              {withPg->rank, s.rank}});
        break;
      }
    }
  if (r.worldSize < 0 && !r.ranks.empty()) r.worldSize = r.ranks.back().rank + 1;
  std::vector<int64_t> missing;
  for (int64_t k = 0; k < r.worldSize && missing.size() < 1000; ++k)
    if (!byRank.count(k)) missing.push_back(k);
  if (!missing.empty())
    r.findings.push_back({"missing_ranks",
                          "rank(s) " + rankList(missing) + " of world size " + std::to_string(r.worldSize) +
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
    findStragglers(r);
    findHangs(r);
  } else {
    r.clock.method = "none: fewer than two ranks";
    for (const RankSummary& s : r.ranks) r.clock.ranks.push_back({.rank = s.rank});
    if (!r.ranks.empty()) r.clock.referenceRank = r.ranks.front().rank;
    findStragglers(r);
  }
  writeHeadline(r);
  return r;
}

}  // namespace attnscope::ranks
