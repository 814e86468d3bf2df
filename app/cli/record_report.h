// What `attnscope-cli record` reads back once its ranks have ended: each rank's result file and
// trace (with the diagnosis headline and, for a job, its rank summary), and the words it says:
// the script's failure, a cancel at each moment, the job's headline across the ranks.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "core/ranks/rank_summary.h"
#include "core/run/script_run.h"
#include "record_launch.h"

namespace attnscope::cli {

// A file as it was before the run (so a trace found after a cancel is known to be this run's).
struct FileIdentity {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  int64_t mtimeNs = 0;
  int64_t size = 0;
};
FileIdentity identityOf(const std::string& path);

// One rank's report: where its trace is and what cost its steps most.
struct RankReport {
  int rank = 0;
  std::optional<ScriptRun> run;
  bool trace = false;  // this run's trace is at the rank's path (written whole: traces are renamed into place)
  std::string headline;
  std::string readError;
  std::optional<ranks::RankSummary> summary;  // with several ranks
};

RankReport readBack(const RankLaunch& l, const FileIdentity& before, bool summarize);

// The job's headline (attnscope-cli ranks' first line) from the ranks' summaries; "" with fewer than two.
std::string jobHeadline(const std::vector<RankReport>& ranks);

// What to show of a rank's stderr: its last lines without the profiler's own noise on a machine
// without a GPU (Kineto's "gpuGetDeviceCount failed" line).
std::vector<std::string> stderrToShow(const std::vector<std::string>& tail, size_t lines);
bool isProfilerNoise(const std::string& line);

// Whether two descriptors write to the same file or terminal (the script's stderr, passed through,
// and the report): the report then says where to look instead of printing the lines twice.
bool sameDestination(int a, int b);

// "cancelled after the trace was written: the trace is kept", by the recorder's moment.
std::string cancelMoment(const std::optional<ScriptRun>& run);

}  // namespace attnscope::cli
