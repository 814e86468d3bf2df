// Everything derived from one loaded trace, computed once and never changed
// afterwards: the store, its activity index, the engine's metadata (parsed
// once), torch's key_averages in both attributions and both groupings, and
// the explanation (steps, sync waits, ledger, verdicts). The viewer builds it
// on the loader's worker thread and every view reads it; the CLI's explain,
// why, info and compare build one per trace. Nothing that reads a snapshot
// recomputes a table or re-parses the metadata.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "core/explain/explanation.h"
#include "core/run/engine_run.h"
#include "core/run/script_run.h"
#include "core/snapshot/founding_answer.h"
#include "core/store/activity_index.h"
#include "core/store/event_store.h"
#include "core/tables/key_averages.h"

namespace attnscope {

struct TraceSnapshot {
  std::shared_ptr<const EventStore> store;
  std::optional<EngineRun> engine;  // our engine's "attnscope" object, when the trace has one
  std::optional<ScriptRun> record;  // a recorded script's "attnscope_record" object, when it has one
  ActivityIndex index;
  std::shared_ptr<const KeyAverages> torchByName, torchByInputShape;
  std::shared_ptr<const KeyAverages> correctedByName, correctedByInputShape;
  std::shared_ptr<const Explanation> explanation;  // null when built without one
  std::shared_ptr<const FoundingAnswer> answer;    // per step: torch's row vs its real cost (with the explanation)

  const std::shared_ptr<const KeyAverages>& table(Attribution attribution, GroupBy groupBy) const;
};

struct SnapshotOptions {
  bool explain = true;                             // false: no explanation (info needs only the ledger)
  bool shapeTables = true;                         // false: no input-shape tables (they stay null)
  const std::vector<EngineStep>* steps = nullptr;  // steps to explain instead of the trace's own
  bool profilerStepsFirst = false;                 // an engine trace's ProfilerStep#N over its four steps
  // The steps and the diagnosis only: no key_averages table (they stay null), an explanation with steps,
  // their figures and the diagnosis and nothing else. What a rank's summary reads (core/ranks).
  bool stepsOnly = false;
};

std::shared_ptr<const TraceSnapshot> buildSnapshot(std::shared_ptr<const EventStore> store,
                                                   const SnapshotOptions& options = {});
// Borrows `store` (it must outlive the snapshot): for callers that hold a store by value.
std::shared_ptr<const TraceSnapshot> snapshotOf(const EventStore& store, const SnapshotOptions& options = {});

}  // namespace attnscope
