// Where a capture's traces go, and what they say about themselves: one process's trace to a file,
// several to a job folder of rank-R.json that `attnscope-cli ranks` and the Ranks window open. Each
// trace is Kineto's file with two objects put in front: "attnscope_capture" (how it was taken, from
// which process, and whether the job's set is partial) and, when Kineto left it out (on-demand traces
// have none: dynolog#155), "distributedInfo" with the rank and world size from the process's
// environment. Every file is written atomically; Kineto's own files and the work folder are removed
// once placed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/capture/capture_session.h"

namespace attnscope::capture {

struct PlacedTrace {
  int pid = 0;
  int rank = -1;
  std::string path;
  int steps = 0;                   // Optimizer.step# spans in it
  int64_t firstStepEndUnixNs = 0;  // the first one's end, on the host's clock (0: none)
  int64_t medianStepNs = 0;        // between consecutive ends
};

struct Placement {
  std::string out;  // the file, or the job folder
  bool folder = false;
  bool partial = false;  // some process of the set wrote nothing
  std::vector<PlacedTrace> traces;
  std::vector<std::string> notes;  // said to the user
  std::string error;               // a write failed: naming the path and why
};

// The default output: attnscope-capture-<what>-<stamp>.json in `here`, or a folder with several.
std::string defaultCaptureOut(const std::vector<ProcessInfo>& targets, const std::string& here, int64_t unixMs);

// Places the written traces at `out` (a file, an existing folder for one trace, or the job's folder).
// `command` is the command line that asked for the capture (recorded in each trace).
Placement placeTraces(const CaptureOutcome& outcome, const CaptureSpec& spec, const std::string& out,
                      const std::string& command);

// Several ranks: whether they started on the same optimizer step (their first steps end within half
// a step of each other on this host's clock), in words; empty with fewer than two ranks with steps.
std::string stepAlignment(const Placement& p, bool* aligned);

// Removes the work folder when nothing is left in it for anyone (an asked process that may still
// write keeps it). True when removed.
bool removeWorkDir(const CaptureOutcome& outcome, const std::string& workDir);

}  // namespace attnscope::capture
