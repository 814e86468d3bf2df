// The "attnscope" metadata object our engine writes into its traces, read
// once per trace (the snapshot holds it; nothing else parses it): the run's
// configuration, the four workload steps with their host windows (wrapped or
// not), every timing method's per-step figures and the collection counters.
// Traces from torch.profiler have none.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/explain/explanation.h"
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

// One timing method's figures: per iteration, per step (kStepCount), in ns.
struct TimingSeries {
  std::string method;                       // cupti, events, host, host-sync, torch
  std::string measures;                     // what the number means, in words
  std::string process;                      // "parent" or "child"
  std::vector<std::vector<int64_t>> steps;  // -1 where not measured
  // Per step: the median over iterations and its spread.
  std::vector<StepSpread> spread() const;
};

struct EngineMetadata {
  std::string args;                    // the run's canonical command line options
  std::optional<RunConfig> config;     // args parsed back (nullopt when they do not parse)
  std::string device;                  // "cpu" or the GPU's name
  std::vector<std::string> stepNames;  // the four steps, in order
  std::vector<bool> wrapped;           // per step: inside a record_function
  std::vector<EngineStep> steps;       // every step of every iteration ("SCALE", "SCALE #2"), in time order
  std::vector<TimingSeries> timing;    // in the engine's method order
  std::vector<std::string> notes;
  std::string cupti;  // "ok" or "unavailable: ..." ("" when not recorded)
  uint64_t droppedRecords = 0;
  uint64_t recordsWithoutTimestamps = 0;  // CUPTI records it could not time, left out
  int64_t nvtxPushed = 0;
  int64_t nvtxSeen = 0;

  const TimingSeries* timingOf(std::string_view method) const;
};

// A timing method in the user's words ("host clock around it, no sync").
std::string timingMethodLabel(std::string_view method);

// The run's configuration from its structured fields (runConfigJson's object), never from the
// command line it also records: a field an older engine did not write keeps RunConfig's default
// (an older trace's output path comes from its "args", where "--out" is last but for flags).
// nullopt when `json` is not an object or a field holds a value no option accepts.
std::optional<RunConfig> parseRunConfigJson(std::string_view json);

// nullopt when `json` (the raw object) is empty or not a JSON object.
std::optional<EngineMetadata> parseEngineMetadata(std::string_view json);
// The store's object (EventStore::Meta::attnscopeJson), parsed.
std::optional<EngineMetadata> readEngineMetadata(const EventStore& store);

// "" when CUPTI collected the run's GPU activity; else, in one sentence,
// which collection is missing, why, and what the trace still holds.
std::string missingCollection(const EngineMetadata& m);

}  // namespace attnscope
