// Where a capture's traces go, and what they say about themselves: one process's trace to a file,
// several to a job folder of rank-R.json that `attnscope-cli ranks` and the Ranks window open. Each
// trace is Kineto's file with two objects put in front: "attnscope_capture" (how it was taken, from
// which process, and whether the job's set is partial) and, when Kineto left it out (on-demand traces
// have none: dynolog#155), "distributedInfo" with the rank and world size from the process's
// environment. A capture by steps also gets a ProfilerStep#N span per optimizer step on the training
// thread (what torch.profiler's schedule writes; on-demand traces have none), so that explain's steps
// and the ranks' step names are the iterations (each marked as attnscope's in its args). Every file
// is written atomically; Kineto's own files and the work folder are removed once placed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/capture/capture_align.h"
#include "core/capture/capture_session.h"

namespace attnscope::capture {

struct PlacedTrace {
  int pid = 0;
  int rank = -1;
  std::string path;
  StepTiming timing;  // its optimizer steps
  int steps() const { return static_cast<int>(timing.ends.size()); }
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
Placement placeTraces(const CaptureOutcome& outcome, const std::string& out, const std::string& command);

// Several ranks: whether they started on the same optimizer step (capture_align.h).
Alignment placedAlignment(const Placement& p);

// Removes the work folder when nothing is left in it for anyone (an asked process that may still
// write keeps it). True when removed.
bool removeWorkDir(const CaptureOutcome& outcome, const std::string& workDir);

// A request left in a process (cancelled, or timed out before its start step) keeps Kineto from
// taking the next one until it has run. The folder it left is marked (WORKDIR/pending: one line per
// process, "pid start-ticks"), and a later capture of the same process is told, up front.
void markPendingRequests(const CaptureOutcome& outcome, const std::string& workDir);
std::vector<std::string> pendingRequestsFor(const std::vector<ProcessInfo>& targets);

}  // namespace attnscope::capture
