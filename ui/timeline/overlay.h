// The explain overlay's content for one step (or any user annotation or
// op): its host window, the GPU work it launched (from the analysis API:
// StepReport launches by correlation), the gap between them, the sync
// waits inside the window with the GPU work they awaited, and a legend in
// words built from those numbers only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/explain/explanation.h"
#include "core/store/activity_index.h"

namespace attnscope::ui {

struct ExplainOverlay {
  std::string name;
  EventId event = kNoEvent;        // the annotation or op (none for an engine step window)
  uint32_t hostLane = UINT32_MAX;  // its thread (UINT32_MAX: shade every CPU thread)
  int64_t hostStartNs = 0, hostEndNs = 0;
  std::vector<Launch> launches;
  int64_t gpuStartNs = -1, gpuEndNs = -1;  // -1: it launched nothing
  int64_t gpuAttributedNs = 0;
  int64_t lastLaunchNs = -1;        // start of its last launch call
  std::vector<SyncWait> syncWaits;  // inside the host window (any thread)
  std::string legend;               // plain words, numbers from the fields above
  // The time range that shows all of it (host, GPU, awaited work).
  int64_t extentStartNs = 0, extentEndNs = 0;
};

// A step of the analysis (index into a.steps).
ExplainOverlay overlayForStep(const EventStore& s, const Explanation& a, int step);
// Any user annotation or op; `index` is the snapshot's ActivityIndex.
ExplainOverlay overlayForEvent(const EventStore& s, const Explanation& a, const ActivityIndex& index, EventId ev);

// Steps first..last (indexes into a.steps, inclusive) as one host window,
// named `name`, with `note` said first in the legend.
ExplainOverlay overlayForSteps(const EventStore& s, const Explanation& a, const ActivityIndex& index, int first,
                               int last, const std::string& name, const std::string& note);

// A region by name when no step carries it: "A..B" (steps A through B), or
// one of the attention workload's steps (QK MATMUL, SCALE, SOFTMAX PASS, AV
// MATMUL) left unwrapped in an imported trace, found from the ops its code
// runs (SCALE: from the op after QK's aten::matmul up to the op before the
// softmax). Returns false when it cannot be found; *note says how it was.
bool findRegion(const Explanation& a, std::string_view name, int* first, int* last, std::string* note);

// The step named `name` (exact, then case-insensitive), or -1.
int findStepByName(const Explanation& a, std::string_view name);
// The first user annotation (else op) named `name`, or kNoEvent.
EventId findAnnotationOrOp(const EventStore& s, std::string_view name);

}  // namespace attnscope::ui
