// An independent count of a trace's CPU time, for checking the Self CPU
// column's total: on every CPU thread, the time covered by the outermost
// ops, annotations and runtime/driver calls (each moment of a thread counted
// once, however deep the nesting). The profiler's own overhead records are
// left out: they happened inside an op of the thread they interrupted, whose
// time already covers them. Computed from the store's lanes alone, without
// the table code.
#pragma once

#include <cstdint>

#include "core/store/event_store.h"

namespace attnscope::testutil {

inline int64_t outermostCpuNs(const EventStore& s) {
  int64_t total = 0;
  for (uint32_t lane = 0; lane < s.lanes().size(); ++lane) {
    if (s.lanes()[lane].kind != LaneKind::CpuThread) continue;
    int64_t coveredUntil = INT64_MIN;
    for (const Event& e : s.laneEvents(lane)) {  // in start order
      const bool counted = e.family == Family::CpuOp || e.family == Family::UserAnnotation ||
                           e.family == Family::CudaRuntime || e.family == Family::CudaDriver;
      if (!counted || e.start < coveredUntil) continue;
      total += e.dur;
      coveredUntil = e.end();
    }
  }
  return total;
}

}  // namespace attnscope::testutil
