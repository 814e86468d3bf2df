// The timing methods of an engine run, in one table: how each is named on the command line and in
// the trace, what it measures (in the user's words and in the trace's metadata), whether it needs
// a GPU, whether a run measures it by default, its help text, and when its pass runs. Everything
// that lists the methods reads this table: the CLI's parser and help, the engine's pass order and
// metadata, the Run panel's boxes and tooltips, the Explanation's answer table.
//
// Adding a method: a TimingMethod value (run_config.h), its row here, and its measurement
// (core/engine/measurement.cpp, runMeasurement's switch).
#pragma once

#include <array>
#include <string_view>

#include "core/run/run_config.h"

namespace attnscope {

struct TimingMethodInfo {
  TimingMethod method;
  std::string_view key;         // --timing and the trace's "timing" object: "host-sync"
  std::string_view label;       // in the user's words: "host clock with a sync at its end"
  std::string_view measures;    // the trace's "measures": what one number is, precisely
  std::string_view help;        // the Run panel's tooltip
  std::string_view cpuRefusal;  // why it cannot run on the CPU ("" when it can)
  bool defaultOn;               // measured when --timing is not given (on a GPU)
  // Pass order: lower runs earlier. The trace pass (cupti) always runs, and runs last: CUPTI,
  // once set up in a process, stays attached to it. The host pass, the no-profiler figure each
  // profiler's inflation is measured against, runs right before it (the box's speed drifts over
  // a run, so the two passes compared sit next to each other).
  int passOrder;
  bool childProcess;  // always its own process (a second CUPTI subscriber would fail)
  bool needsGpu() const { return !cpuRefusal.empty(); }
};

// Every method, in TimingMethod order (the order of the trace's "timing" object and of tables).
const std::array<TimingMethodInfo, kTimingMethodCount>& timingMethods();
const TimingMethodInfo& timingInfo(TimingMethod m);
// nullptr when `key` names no method.
const TimingMethodInfo* timingByKey(std::string_view key);
// Whether a run's series of method `key` says anything: on a CPU run neither CUDA events nor
// CUPTI's kernels measure a step (the GPU-only methods, and cupti's GPU time, are left out).
bool timingMeaningful(std::string_view key, bool cpuRun);

}  // namespace attnscope
