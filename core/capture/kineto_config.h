// What a capture asks of a running torch process: Kineto's on-demand config text, and the rules it
// must keep so that Kineto takes it (verified on torch 2.11, docs/capture.md):
//   - steps: PROFILE_START_ITERATION=0 with PROFILE_START_ITERATION_ROUNDUP=K starts on the next
//     optimizer step that is a multiple of K (every rank counts its own steps, so the ranks of a job
//     start on the same step); ACTIVITIES_ITERATIONS=N steps. ACTIVITIES_DURATION_MSECS=0 with it:
//     else Kineto turns a request to a process that never stepped into a 500 ms capture by time.
//   - time: PROFILE_START_TIME (Unix ms) at least the warm-up plus one tick of Kineto's 1 s loop ahead
//     of when the process reads it, else Kineto refuses it ("start timestamp is in the past",
//     "insufficient time for warmup") and, on torch 2.11, may crash the process at its exit.
//   - the trace lands in ACTIVITIES_LOG_FILE with the process id before its extension
//     (/tmp/x/trace.json -> /tmp/x/trace_1234.json), written to a .tmp and renamed when complete.
#pragma once

#include <cstdint>
#include <string>

namespace attnscope::capture {

struct CaptureSpec {
  int iterations = 0;  // optimizer steps to capture (0: by time)
  int durationMs = 0;  // milliseconds to capture (0: by steps)
  int roundup = 1;     // start on a step that is a multiple of this
  int warmupSec = 2;   // Kineto's warm-up before a capture by time (CUPTI's set-up on a GPU)
  bool recordShapes = false;
  bool withStack = false;
  bool withModules = false;
};

inline constexpr int kMaxIterations = 100000;
inline constexpr int kMaxDurationMs = 600000;  // 10 minutes
inline constexpr int kMaxRoundup = 1000000;

// Empty when the spec can be asked; else what is wrong, in the user's words.
std::string validateSpec(const CaptureSpec& spec);

// The config text for one process; `startMs` is the Unix time a capture by time starts (ignored by
// steps). Check it with startTimeAcceptable() against the moment it is sent.
std::string kinetoConfig(const CaptureSpec& spec, const std::string& logFile, int64_t startMs);

// The earliest start of a capture by time that Kineto takes when the config leaves at `sendMs`.
int64_t earliestStartMs(const CaptureSpec& spec, int64_t sendMs);
bool startTimeAcceptable(const CaptureSpec& spec, int64_t startMs, int64_t sendMs);

// Where Kineto writes the trace of process `pid` asked to log to `logFile`.
std::string kinetoTraceFile(const std::string& logFile, int pid);

// One line for people: "3 optimizer steps, starting on a step that is a multiple of 100".
std::string specSummary(const CaptureSpec& spec);

}  // namespace attnscope::capture
