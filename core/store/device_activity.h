// Device activity: what ran on a device, one definition for every view that counts it (Overview,
// Kernels, the diagnosis, the activity index's device-busy union). GPU kernels, copies and memsets
// (CUPTI's or roctracer's records), and other accelerators' work on lanes of their own: MTIA's
// command-processor events (Kineto's mtia_ccp_events, on a process named "MTIA <n>"), but for the
// stream waits, event records and synchronize mirrors there, which are bookkeeping, not work.
// A counter-profiling trace's cuda_profiler_range events are not device activity: CUPTI's range
// profiler writes them with times split evenly over the recording (EventStore::profilerRangeEvents).
#pragma once

#include <string_view>

#include "core/store/event_store.h"

namespace attnscope {

// A lane of another accelerator's device process ("MTIA 17 / Stream 108").
bool isAcceleratorLane(const Lane& lane);
bool isDeviceWork(const EventStore& s, const Event& e);
// For an accelerator lane's event (isDeviceWork and not isGpuWork): a DMA transfer is a copy.
bool isAcceleratorCopy(std::string_view name);

}  // namespace attnscope
