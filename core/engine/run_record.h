// The run's record (EngineRun, core/run/engine_run.h), assembled from its passes' results and the
// trace pass's store: the steps' host windows with the GPU work each launched, every method's
// series (CUPTI's is the GPU time of each window's work), the trace pass's collection counters and
// every note. engine::run only orchestrates the passes; what the trace says about them is built here.
#pragma once

#include <string>
#include <vector>

#include "core/engine/measurement.h"
#include "core/run/engine_run.h"
#include "core/store/event_store.h"

namespace attnscope::engine {

// `results` in the timing table's order with the trace (cupti) pass first; `notes` are the
// orchestration's own (the passes' notes follow them).
EngineRun recordRun(const RunConfig& cfg, const std::vector<MeasurementResult>& results, const EventStore& store,
                    const RunVersions& versions, const RunDeviceInfo& device, std::vector<std::string> notes);

}  // namespace attnscope::engine
