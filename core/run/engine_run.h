// One engine run, as one type: what it was asked to do (the config, structured), where it ran,
// every step's host windows per iteration with the GPU work they launched, every timing method's
// per-iteration figures, what collection counted, and the run's notes. One module writes it and
// reads it back: the trace's "attnscope" object (engineRunJson / parseEngineRun), and a child
// pass's result, which is the same object holding that pass alone (the parent reads it with the
// same parser). Traces from torch.profiler have none; older engines' traces parse (fields they
// lack keep their defaults).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/explain/explanation.h"
#include "core/run/run_capture.h"
#include "core/run/run_config.h"
#include "core/store/event_store.h"

namespace attnscope {

// StepSpread (explanation.h): a step's median and spread over a run's iterations.
// The spread of `values` (negative entries are "not measured" and skipped).
StepSpread spreadOf(std::vector<int64_t> values);
// {"n": .., "median_ns": .., "min_ns": .., "max_ns": .., "p10_ns": .., "p90_ns": ..}
std::string spreadJson(const StepSpread& s);
// "60.812 us [57.080 us-67.003 us]": the median, then p10-p90 when there are
// several iterations, else `single` after the median.
std::string spreadText(const StepSpread& s, std::string_view single = "");
// Whether `ns` lies inside the p10-p90 of `s` (false with fewer than two iterations).
bool insideSpread(double ns, const StepSpread& s);

// One call of one step: its host window and the GPU work launched inside it (the trace pass's).
struct RunIteration {
  int iteration = 0;
  int64_t hostStartNs = 0;
  int64_t hostEndNs = 0;
  int64_t gpuNs = 0;        // sum of the durations of the work launched inside the window
  int64_t gpuStartNs = -1;  // first start of that work (-1: none)
  int64_t gpuEndNs = -1;
  int launches = 0;
  bool operator==(const RunIteration&) const = default;
};

struct RunStepRecord {
  std::string name;  // "QK MATMUL"
  std::string key;   // "qk"
  bool wrapped = false;
  std::vector<RunIteration> iterations;
  bool operator==(const RunStepRecord&) const = default;
};

// An op's or scope's own CUDA-event pair (the events passes).
struct RunOpTiming {
  std::string name;
  bool userScope = false;
  int64_t cpuNs = 0;
  int64_t cudaEventNs = -1;
  bool operator==(const RunOpTiming&) const = default;
};

// One timing method's figures: per iteration, per step (kStepCount), in ns.
struct TimingSeries {
  std::string method;    // its key in the timing table (timing_methods.h)
  std::string measures;  // what the number means, in words
  std::string process;   // "parent" or "child"
  int64_t pid = 0;
  std::vector<std::vector<int64_t>> steps;  // -1 where not measured
  std::vector<RunOpTiming> ops;             // events passes: per op and scope
  std::string trace;                        // torch's pass: torch's own trace
  int streamDevice = -1;                    // events passes: the stream the step events timed
  int64_t streamId = -1;
  // Per step: the median over iterations and its spread.
  std::vector<StepSpread> spread() const;
  bool operator==(const TimingSeries&) const = default;
};

// What collection counted: one set of names for a pass result and for the trace.
struct RunCollection {
  std::string cupti = "not used";  // "ok", "unavailable: <reason>" or "error: <calls>"
  uint64_t droppedRecords = 0;
  uint64_t buffersCapped = 0;
  uint64_t buffersPooled = 0;             // CUPTI buffers allocated and zeroed before the warm-up
  uint64_t buffersAdded = 0;              // buffers the pool could not serve
  uint64_t recordsWithoutTimestamps = 0;  // left out: CUPTI could not time them
  uint64_t warmupRecordsLeftOut = 0;      // left out: the warm-up's
  std::vector<std::string> errors;        // failed CUPTI/CUDA calls at the end of the pass
  std::string clock = "monotonic";        // "tsc" (calibrated) or "monotonic"
  int64_t clockDriftNs = 0;               // calibrated clock - CLOCK_MONOTONIC at the end of the pass
  int64_t clockOverNs = 0;                // since calibration
  int64_t clockUncertaintyNs = 0;
  uint64_t nvtxRangesPushed = 0;
  AssembleStats assembled;  // the trace pass's correlation counters (assembled.markers: NVTX ranges seen)
  std::string tracePass;    // "parent" or "child": the process that ran the trace pass ("" in a pass result)
  bool operator==(const RunCollection&) const = default;
};

struct RunVersions {
  std::string libtorch;
  int cudaRuntime = 0;
  int cudaDriver = 0;
  int cupti = 0;
  bool operator==(const RunVersions&) const = default;
};

struct RunDeviceInfo {
  std::string name;  // "cpu", or the GPU's name
  std::string compute;
  int sms = 0;
  int64_t totalGlobalMem = 0;
  bool isCpu() const { return name == "cpu"; }
  bool operator==(const RunDeviceInfo&) const = default;
};

struct EngineRun {
  int version = 1;
  std::optional<RunConfig> config;  // from its structured fields (parseRunConfigJson), never its command line
  RunVersions versions;
  RunDeviceInfo device;
  std::vector<RunStepRecord> steps;  // the four steps, in order, each with its iterations
  std::vector<TimingSeries> timing;  // in the timing table's order
  RunCollection collection;
  std::vector<std::string> notes;
  bool operator==(const EngineRun&) const = default;

  const TimingSeries* timingOf(std::string_view method) const;
  std::vector<std::string> stepNames() const;
  std::vector<bool> wrapped() const;
  // Every step of every iteration ("SCALE", "SCALE #2"), in time order.
  std::vector<EngineStep> windows() const;
};

// The object (what follows the trace's "attnscope": key, and a child pass's whole result file).
std::string engineRunJson(const EngineRun& run);
// nullopt when `json` (the raw object) is empty or not a JSON object.
std::optional<EngineRun> parseEngineRun(std::string_view json);
// The store's object (EventStore::Meta::attnscopeJson), parsed.
std::optional<EngineRun> readEngineRun(const EventStore& store);

// The run's configuration from its structured fields (runConfigJson's object), never from the
// command line it also records: a field an older engine did not write keeps RunConfig's default
// (an older trace's output path comes from its "args", where "--out" is last but for flags).
// nullopt when `json` is not an object or a field holds a value no option accepts.
std::optional<RunConfig> parseRunConfigJson(std::string_view json);

// A timing method in the user's words ("host clock around it, no sync").
std::string timingMethodLabel(std::string_view method);

// "" when CUPTI collected the run's GPU activity; else, in one sentence,
// which collection is missing, why, and what the trace still holds.
std::string missingCollection(const EngineRun& m);

}  // namespace attnscope
