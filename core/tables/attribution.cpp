#include "core/tables/attribution.h"

namespace attnscope {

EventId launchOf(const EventStore& s, EventId gpu) {
  const Event& g = s.event(gpu);
  return g.correlation > 0 ? s.callOfCorrelation(g.correlation) : kNoEvent;
}

EventId enclosingOp(const EventStore& s, EventId ev) {
  for (EventId p = s.event(ev).parent; p != kNoEvent; p = s.event(p).parent) {
    const Family f = s.event(p).family;
    if (f == Family::CpuOp || f == Family::UserAnnotation) return p;
  }
  return kNoEvent;
}

GpuOwner gpuOwner(const EventStore& s, EventId gpu) {
  GpuOwner o;
  o.launch = launchOf(s, gpu);
  if (o.launch != kNoEvent) {
    o.op = enclosingOp(s, o.launch);
    if (o.op == kNoEvent) o.op = s.opOfExternalId(s.event(o.launch).externalId);
  }
  if (o.op == kNoEvent) o.op = s.opOfExternalId(s.event(gpu).externalId);
  return o;
}

}  // namespace attnscope
