// Reads the "attnscope" metadata object our engine writes into its traces:
// the four workload steps with their host windows (wrapped or not), every
// timing method's per-step figures, and the collection counters.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/explain/explanation.h"
#include "core/store/event_store.h"

namespace attnscope {

struct EngineMetadata {
  std::string args;                 // the run's canonical command line options
  std::vector<EngineStep> windows;  // every step of every iteration ("SCALE", "SCALE #2", ...)
  // method ("cupti", "events", "host", "host-sync", "torch") -> per iteration -> per step, ns
  std::map<std::string, std::vector<std::vector<int64_t>>> timing;
  std::map<std::string, std::string> measures;  // method -> what it measures, in words
  uint64_t droppedRecords = 0;
  std::string cupti;  // "ok" or "unavailable: ..."
  int64_t nvtxPushed = 0;
  int64_t nvtxSeen = 0;
};

// nullopt when the trace has no (readable) engine metadata.
std::optional<EngineMetadata> readEngineMetadata(const EventStore& store);

}  // namespace attnscope
