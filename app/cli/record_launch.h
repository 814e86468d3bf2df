// `attnscope-cli record`'s processes: one Python per rank running the recorder
// (resources/record/attnscope_record.py, embedded in this executable), each in its own process
// group, with its stdout/stderr passed through (and the last stderr lines kept) and its progress
// lines read from a pipe. Ctrl-C or SIGTERM reach every rank's group; a second one, or 5 s
// without an exit, kills them; their unfinished files are removed.
#pragma once

#include <string>
#include <vector>

#include "core/run/record_config.h"

namespace attnscope::cli {

struct RankLaunch {
  int rank = 0;
  std::string out;     // the trace this rank writes
  std::string result;  // the recorder's result file
  std::string config;  // its config file
};

struct RankExit {
  int rank = 0;
  int exitCode = 0;  // the process's exit code, or -1 when a signal ended it
  int signal = 0;
  std::vector<std::string> stderrTail;  // its last lines on stderr
  bool cuptiTaken = false;              // CUPTI said another subscriber has it (Nsight Systems, a second profiler)
};

struct LaunchResult {
  std::vector<RankExit> ranks;
  bool cancelled = false;
  std::vector<std::string> notes;  // what the launcher did (a rank stopped because another failed)
};

// Starts every rank's `python runner` in `cwd` with the environment record needs and waits for
// all of them. `prefix` lines with "[rank R] " (several ranks). Progress lines are forwarded to
// stdout as JSON (progressJson) or summarised on stderr.
LaunchResult launchRanks(const RecordConfig& cfg, const std::string& python, const std::string& runner,
                         const std::string& cwd, const std::vector<RankLaunch>& ranks);

// A free TCP port on 127.0.0.1 for MASTER_PORT (0 when none could be bound).
int freeLocalPort();

}  // namespace attnscope::cli
