#include "core/store/device_activity.h"

namespace attnscope {

bool isAcceleratorLane(const Lane& lane) { return lane.kind == LaneKind::Other && lane.label.starts_with("MTIA "); }

bool isDeviceWork(const EventStore& s, const Event& e) {
  if (isGpuWork(e.family)) return true;
  if (e.family != Family::Other || e.dur <= 0 || !isAcceleratorLane(s.lanes()[e.lane])) return false;
  const std::string_view n = s.name(e);
  return n != "event_wait" && n != "event_record" && n != "synchronize";
}

bool isAcceleratorCopy(std::string_view name) { return name.starts_with("dma_"); }

}  // namespace attnscope
