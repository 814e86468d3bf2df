// Who launched a piece of GPU work, found from the trace alone: the GPU
// record's correlation id leads to the runtime call that queued it
// (cudaLaunchKernel, cudaMemcpyAsync, ...), and the runtime call's
// enclosing op on its thread (or, failing that, the op carrying the same
// External id) is the op that launched it. Used by the corrected table,
// explain, why and the ledger.
#pragma once

#include <cstdint>
#include <vector>

#include "core/store/event_store.h"

namespace attnscope {

// The runtime or driver call with the same correlation id, or kNoEvent.
EventId launchOf(const EventStore& s, EventId gpu);
// Innermost cpu_op or user_annotation enclosing `ev` on its thread, or kNoEvent.
EventId enclosingOp(const EventStore& s, EventId ev);

struct GpuOwner {
  EventId launch = kNoEvent;  // the runtime/driver call that queued it
  EventId op = kNoEvent;      // the op that was running when it was queued
  bool linked() const { return launch != kNoEvent || op != kNoEvent; }
};
// Launch by correlation, then op by nesting of the launch, then by External id.
GpuOwner gpuOwner(const EventStore& s, EventId gpu);

}  // namespace attnscope
