// A capture of running torch processes, as far as their traces on disk (capture_output places them).
//
// Route 1, no dynolog daemon on the host: attnscope binds the `dynolog` endpoint for the capture's
// length and answers the processes' polls itself: empty for every process but its targets, the
// config for a target once its poll is fresh (the first poll after the bind may be a retry Kineto
// built up to 10 s earlier) and says its activity profiler is free (else another profiler is
// running in it: said, and waited for). Several targets are asked in the order that puts their next
// polls closest together, and a capture by steps starts on a multiple of the roundup, so all start on
// the same optimizer step. Route 2, a daemon holds the endpoint: the request goes to its RPC port
// (TCP, 1778) and the daemon hands it to the processes.
//
// Either way attnscope then watches: a poll without the free bit after the request means the capture
// runs; the trace file appears (Kineto renames it when complete); the process exits; a timeout.
// Nothing is ever sent to a process but replies to its own polls, and nothing after a cancel.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/capture/kineto_config.h"
#include "core/capture/process_probe.h"

namespace attnscope::capture {

enum class TargetPhase {
  WaitingForPoll,  // bound; no poll from it yet
  Polled,          // polling; not asked yet
  Busy,            // its activity profiler is taken (torch.profiler in the script, another capture)
  Asked,           // it has the request; its capture has not started yet
  Capturing,       // its capture runs (its polls say the profiler is taken since we asked)
  Written,         // its trace is on disk
  Exited,          // it exited before its trace was written
  TimedOut,        // it did not start (no step, or never polled) within the timeout
  Unmatched,       // the daemon does not know it
};
std::string phaseText(TargetPhase p);

struct TargetStatus {
  ProcessInfo process;
  TargetPhase phase = TargetPhase::WaitingForPoll;
  int polls = 0;
  int64_t phaseSinceMs = 0;  // steady clock: when it entered this phase
  int64_t lastPollMs = 0;    // steady clock
  int64_t periodMs = 0;      // between its polls, once seen twice in a row
  int64_t askedMs = 0;       // steady clock, 0 when not asked
  int asks = 0;              // requests sent after the first (until one took)
  int64_t askedUnixMs = 0;
  int64_t startUnixMs = 0;  // a capture by time: when it starts
  bool busySeen = false;
  std::string kinetoFile;   // where Kineto writes its trace
  std::string partialFile;  // what an exit mid-write left (a non-empty .tmp), if anything
  std::string detail;       // why it ended as it did, in the user's words
};

struct CaptureProgress {
  std::string message;  // one line: what happens now
  const std::vector<TargetStatus>* targets = nullptr;
  int64_t elapsedMs = 0;
};

enum class Route { OwnEndpoint, Daemon };

struct CaptureOptions {
  CaptureSpec spec;
  std::string workDir;  // where Kineto writes (prepareWorkDir)
  int timeoutSec = 60;  // for the first poll, and for a capture by steps to start
  int daemonPort = 1778;
  std::string socketName = "dynolog";
  std::string logName = "trace";  // Kineto writes WORKDIR/NAME_PID.json
  std::function<void(const CaptureProgress&)> onProgress;
  const std::atomic<int>* cancel = nullptr;  // non-zero: stop now
};

struct CaptureOutcome {
  Route route = Route::OwnEndpoint;
  CaptureSpec spec;  // what was asked (the roundup of the last attempt)
  std::vector<TargetStatus> targets;
  bool cancelled = false;
  std::string failure;  // when it could not run at all (the endpoint held, the daemon unreachable)
  std::vector<std::string> notes;
  int64_t askWindowMs = -1;  // several targets: the first ask to the last
  int written() const;
  bool anyAsked() const;
  std::string routeText() const;
};

// A private folder under /tmp (Kineto writes on-demand traces under /tmp or
// KINETO_ONDEMAND_TRACE_DIR only), owned by the targets' user when we are root. Empty and `error`
// set when it cannot be made.
std::string prepareWorkDir(const std::vector<ProcessInfo>& targets, std::string* error);

CaptureOutcome runCapture(const std::vector<ProcessInfo>& targets, const CaptureOptions& options);

// The daemon route (capture_daemon.cpp), for runCapture.
CaptureOutcome runDaemonCapture(std::vector<TargetStatus> targets, const CaptureOptions& options);

// Watching after the request, shared by both routes: files, exits, timeouts. True when all ended.
bool settleTargets(std::vector<TargetStatus>& targets, const CaptureOptions& options, int64_t nowMs);

int64_t steadyMs();
int64_t unixMs();

}  // namespace attnscope::capture
