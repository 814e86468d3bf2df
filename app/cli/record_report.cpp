#include "record_report.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_args.h"
#include "core/explain/explanation.h"
#include "core/ranks/job.h"
#include "core/ranks/summary_cache.h"
#include "core/snapshot/trace_snapshot.h"

namespace attnscope::cli {

namespace {

std::string readFile(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

FileIdentity identityOf(const std::string& path) {
  FileIdentity id;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return id;
  id.exists = true;
  id.dev = st.st_dev;
  id.ino = st.st_ino;
  id.mtimeNs = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  id.size = static_cast<int64_t>(st.st_size);
  return id;
}

RankReport readBack(const RankLaunch& l, const FileIdentity& before, bool summarize) {
  RankReport r;
  r.rank = l.rank;
  r.run = parseScriptRun(readFile(l.result));
  const FileIdentity now = identityOf(l.out);
  // A trace is renamed into place whole, so a file there that was not there before (or is another
  // file now) is this run's, complete.
  r.trace = now.exists && (!before.exists || now.ino != before.ino || now.dev != before.dev ||
                           now.mtimeNs != before.mtimeNs || now.size != before.size);
  if (!r.trace) return r;
  try {
    const EventStore store = loadOrThrow(l.out, ReaderLimits{});
    const auto snap = snapshotOf(store);
    const Explanation& an = *snap->explanation;
    r.headline = an.diagnosis.headline;
    if (r.headline.empty() && !an.diagnosis.steps.empty())
      r.headline = "no cause stands out in the traced steps (attnscope-cli explain shows each step)";
    if (summarize) {
      r.summary = ranks::summarizeRank(*snap, l.out);
      // Cached beside the trace, so `attnscope-cli ranks` on the folder reads no trace again.
      std::string dir, note, error;
      ranks::writeSummaryCache(l.out, *r.summary, &dir, &note, &error);
    }
  } catch (const std::exception& e) {
    r.readError = e.what();
  }
  return r;
}

std::string jobHeadline(const std::vector<RankReport>& ranks) {
  std::vector<ranks::RankSummary> summaries;
  for (const RankReport& r : ranks)
    if (r.summary) summaries.push_back(*r.summary);
  if (summaries.size() < 2) return {};
  return ranks::analyzeJob(std::move(summaries)).headline;
}

bool isProfilerNoise(const std::string& line) { return line.find("gpuGetDeviceCount failed") != std::string::npos; }

std::vector<std::string> stderrToShow(const std::vector<std::string>& tail, size_t lines) {
  std::vector<std::string> out;
  for (const std::string& l : tail)
    if (!isProfilerNoise(l)) out.push_back(l);
  if (out.size() > lines) out.erase(out.begin(), out.end() - static_cast<std::ptrdiff_t>(lines));
  return out;
}

bool sameDestination(int a, int b) {
  struct stat sa {
  }, sb{};
  if (::fstat(a, &sa) != 0 || ::fstat(b, &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

std::string cancelMoment(const std::optional<ScriptRun>& run) {
  if (run && run->cancelled == "baseline")
    return "cancelled while timing steps without the profiler, after the trace was written: the trace is kept "
           "without the baseline (the profiler's inflation is not measured)";
  return "cancelled after the trace was written: the trace is kept";
}

}  // namespace attnscope::cli
