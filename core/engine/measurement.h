// One measurement pass: the same configuration after the same warm-up,
// measured by one timing method, so methods never perturb each other.
#pragma once

#include <ATen/ATen.h>

#include <array>
#include <string>
#include <vector>

#include "core/engine/op_recorder.h"
#include "core/engine/workload.h"
#include "core/run/engine_run.h"
#include "core/run/run_capture.h"
#include "core/run/run_config.h"

namespace attnscope::engine {

// What collection counted (one set of names for the pass result and the trace: engine_run.h).
using CollectionInfo = RunCollection;

struct MeasurementResult {
  TimingMethod method = TimingMethod::Cupti;
  int64_t pid = 0;
  bool child = false;
  std::vector<std::array<int64_t, kStepCount>> stepNs;  // per iteration
  std::vector<StepSpan> spans;
  std::vector<EventTiming> eventOps;  // events pass: per op/scope
  CollectionInfo collection;
  std::string tracePath;     // torch pass: torch's own trace
  int64_t eventStream = -1;  // events passes: the CUDA stream the step events were recorded on
  int eventDevice = -1;      // ... and its device
  std::vector<std::string> notes;
};

// Runs `method` in this process. The trace pass (Cupti) also fills `cap`.
MeasurementResult runMeasurement(TimingMethod method, const RunConfig& cfg, at::Device device, RunCapture* cap,
                                 const std::string& torchTracePath);

// A child's pass result: the run's one serializer (engineRunJson) over an EngineRun holding this
// pass alone (its series, its step windows, its collection and notes), read back by parseEngineRun.
EngineRun passRun(const MeasurementResult& r);
std::string measurementResultJson(const MeasurementResult& r);
bool parseMeasurementResult(const std::string& json, MeasurementResult* r, std::string* error);

// Emits a --progress json line (no-op otherwise).
void progress(const RunConfig& cfg, std::string_view phase, int iteration, const std::string& message);

}  // namespace attnscope::engine
