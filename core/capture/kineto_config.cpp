#include "core/capture/kineto_config.h"

namespace attnscope::capture {

namespace {

// Kineto's profiler loop ticks every second and starts the warm-up on the tick within a second of
// (start - warm-up): the start must be at least warm-up + 1 s ahead of the send, and a margin more for
// the poll's own delivery.
constexpr int64_t kTickMs = 1000;
constexpr int64_t kMarginMs = 1500;

const char* boolText(bool b) { return b ? "true" : "false"; }

}  // namespace

std::string validateSpec(const CaptureSpec& s) {
  if ((s.iterations > 0) == (s.durationMs > 0))
    return "say what to capture: --iterations N (optimizer steps) or --duration-ms T, one of them";
  if (s.iterations < 0 || s.iterations > kMaxIterations)
    return "--iterations must be 1.." + std::to_string(kMaxIterations);
  if (s.durationMs < 0 || s.durationMs > kMaxDurationMs)
    return "--duration-ms must be 1.." + std::to_string(kMaxDurationMs) + " (10 minutes)";
  if (s.roundup < 1 || s.roundup > kMaxRoundup) return "--start-roundup must be 1.." + std::to_string(kMaxRoundup);
  if (s.warmupSec < 0 || s.warmupSec > 60) return "the warm-up must be 0..60 s";
  return {};
}

std::string kinetoConfig(const CaptureSpec& s, const std::string& logFile, int64_t startMs) {
  std::string c = "ACTIVITIES_LOG_FILE=" + logFile + "\n";
  if (s.iterations > 0) {
    c += "PROFILE_START_ITERATION=0\n";
    c += "PROFILE_START_ITERATION_ROUNDUP=" + std::to_string(s.roundup) + "\n";
    c += "ACTIVITIES_ITERATIONS=" + std::to_string(s.iterations) + "\n";
    // A process that never stepped is then left alone (Kineto: "not updating iteration count").
    c += "ACTIVITIES_DURATION_MSECS=0\n";
  } else {
    c += "PROFILE_START_TIME=" + std::to_string(startMs) + "\n";
    c += "ACTIVITIES_DURATION_MSECS=" + std::to_string(s.durationMs) + "\n";
    c += "ACTIVITIES_WARMUP_PERIOD_SECS=" + std::to_string(s.warmupSec) + "\n";
  }
  c += std::string("PROFILE_REPORT_INPUT_SHAPES=") + boolText(s.recordShapes) + "\n";
  c += std::string("PROFILE_WITH_STACK=") + boolText(s.withStack) + "\n";
  c += std::string("PROFILE_WITH_MODULES=") + boolText(s.withModules) + "\n";
  c += "PROFILE_PROFILE_MEMORY=false\nPROFILE_WITH_FLOPS=false";
  return c;
}

int64_t earliestStartMs(const CaptureSpec& s, int64_t sendMs) {
  return sendMs + int64_t{s.warmupSec} * 1000 + kTickMs + kMarginMs;
}

bool startTimeAcceptable(const CaptureSpec& s, int64_t startMs, int64_t sendMs) {
  return s.iterations > 0 || startMs >= sendMs + int64_t{s.warmupSec} * 1000 + kTickMs + 500;
}

std::string kinetoTraceFile(const std::string& logFile, int pid) {
  const size_t slash = logFile.rfind('/');
  const size_t dot = logFile.rfind('.');
  const std::string p = "_" + std::to_string(pid);
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return logFile + p;
  return logFile.substr(0, dot) + p + logFile.substr(dot);
}

std::string specSummary(const CaptureSpec& s) {
  std::string t;
  if (s.iterations > 0) {
    t = std::to_string(s.iterations) + (s.iterations == 1 ? " optimizer step" : " optimizer steps");
    t += s.roundup > 1 ? ", starting on a step that is a multiple of " + std::to_string(s.roundup)
                       : ", starting on the next step";
  } else {
    t = std::to_string(s.durationMs) + " ms";
  }
  if (s.recordShapes) t += ", input shapes";
  if (s.withStack) t += ", Python stacks";
  if (s.withModules) t += ", modules";
  return t;
}

}  // namespace attnscope::capture
