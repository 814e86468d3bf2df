// One measurement pass: the same configuration after the same warm-up,
// measured by one timing method, so methods never perturb each other.
#pragma once

#include <ATen/ATen.h>

#include <array>
#include <string>
#include <vector>

#include "core/engine/op_recorder.h"
#include "core/engine/workload.h"
#include "core/run/run_capture.h"
#include "core/run/run_config.h"

namespace attnscope::engine {

struct CollectionInfo {
  std::string cupti = "not used";  // "ok" or "unavailable: <reason>"
  uint64_t droppedRecords = 0;
  uint64_t buffersCapped = 0;
  uint64_t buffersPooled = 0;             // CUPTI buffers allocated and zeroed before the warm-up
  uint64_t buffersAdded = 0;              // buffers the pool could not serve
  uint64_t recordsWithoutTimestamps = 0;  // left out: CUPTI could not time them
  uint64_t recordsBeforeWindow = 0;       // left out: the warm-up's
  std::vector<std::string> errors;        // failed CUPTI/CUDA calls at the end of the pass
  std::string clock = "monotonic";        // "tsc" (calibrated) or "monotonic"
  int64_t clockDriftNs = 0;               // calibrated clock - CLOCK_MONOTONIC at the end of the pass
  int64_t clockSinceCalibrationNs = 0;
  int64_t clockUncertaintyNs = 0;
  uint64_t nvtxRangesPushed = 0;
  AssembleStats assembled;  // the trace pass's correlation counters (child or parent)
};

struct MeasurementResult {
  TimingMethod method = TimingMethod::Cupti;
  int64_t pid = 0;
  bool child = false;
  std::vector<std::array<int64_t, kStepCount>> stepNs;  // per iteration
  std::vector<int64_t> blockNs;                         // whole block per iteration
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

std::string measurementResultJson(const MeasurementResult& r);
bool parseMeasurementResult(const std::string& json, MeasurementResult* r, std::string* error);

// Emits a --progress json line (no-op otherwise).
void progress(const RunConfig& cfg, std::string_view phase, int iteration, const std::string& message);

}  // namespace attnscope::engine
