#include <algorithm>
#include <map>

#include "core/snapshot/trace_snapshot.h"
#include "core/tables/attribution.h"
#include "core/views/views.h"

namespace attnscope {

MemoryView memoryView(const TraceSnapshot& snap) {
  const EventStore& s = *snap.store;
  MemoryView v;
  v.originNs = s.minTime();
  std::map<std::pair<int32_t, int32_t>, DeviceMemory> byDevice;  // (GPU first: type 1 sorts after 0, fixed below)
  std::map<std::pair<int32_t, int32_t>, std::map<int64_t, std::vector<size_t>>> open;  // addr -> open allocations
  // Each allocation's and free's place on its device's curve (the peak is a place, not a time:
  // several events can share a timestamp).
  std::map<std::pair<int32_t, int32_t>, std::vector<std::pair<size_t, size_t>>> places;
  std::map<std::pair<int32_t, int32_t>, size_t> peakPlace;
  std::map<std::pair<int32_t, int32_t>, int64_t> net;  // Bytes added up, for traces without totals
  std::vector<EventId> mem;
  for (EventId id = 0; id < s.events().size(); ++id)
    if (s.event(id).family == Family::Memory && s.event(id).args != kNoArgs) mem.push_back(id);
  std::stable_sort(mem.begin(), mem.end(), [&](EventId a, EventId b) { return s.event(a).start < s.event(b).start; });
  for (EventId id : mem) {
    const Event& e = s.event(id);
    const EventArgs a = s.argsAt(e.args);
    if (a.totalAllocated < 0 && a.bytes == 0) continue;
    ++v.events;
    const auto key = std::pair{a.deviceType, a.device};
    DeviceMemory& d = byDevice[key];
    if (d.curve.empty()) {
      d.deviceType = a.deviceType;
      d.device = a.device;
      d.label = a.deviceType == 0 ? "CPU" : "GPU " + std::to_string(a.device);
    }
    const int64_t total = a.totalAllocated >= 0 ? a.totalAllocated : (net[key] += a.bytes);
    if (a.totalAllocated < 0) d.totalsInTrace = false;
    if (!a.hasAddr) d.addressesInTrace = false;
    d.curve.push_back({e.start, total, a.totalReserved, id});
    const size_t place = d.curve.size() - 1;
    if (total > d.peakAllocated || place == 0) {
      d.peakAllocated = total;
      d.peakNs = e.start;
      peakPlace[key] = place;
    }
    d.peakReserved = std::max(d.peakReserved, a.totalReserved);
    if (a.bytes > 0) {
      Allocation al;
      al.bytes = a.bytes;
      al.allocatedNs = e.start;
      al.event = id;
      const EventId op = enclosingOp(s, id);
      if (op != kNoEvent) al.op = std::string(s.name(s.event(op)));
      d.allocations.push_back(std::move(al));
      places[key].push_back({place, SIZE_MAX});
      if (a.hasAddr) open[key][a.addr].push_back(d.allocations.size() - 1);
    } else if (a.bytes < 0 && a.hasAddr) {
      auto& slots = open[key][a.addr];
      if (!slots.empty()) {
        Allocation& al = d.allocations[slots.back()];
        al.freedNs = e.start;
        al.freeEvent = id;
        places[key][slots.back()].second = place;
        slots.pop_back();
      }
    }
  }
  for (auto& [key, d] : byDevice) {
    if (!d.addressesInTrace) {
      // Frees cannot be matched to allocations: what was live at the peak is unknown.
      d.allocatedBeforeTrace = -1;
      v.devices.push_back(std::move(d));
      continue;
    }
    int64_t live = 0;
    const size_t peak = peakPlace[key];
    const auto& pl = places[key];
    for (size_t i = 0; i < d.allocations.size(); ++i) {
      // Made at or before the peak, and not freed by then.
      if (pl[i].first > peak || pl[i].second <= peak) continue;
      d.liveAtPeak.push_back(d.allocations[i]);
      live += d.allocations[i].bytes;
    }
    std::stable_sort(d.liveAtPeak.begin(), d.liveAtPeak.end(),
                     [](const Allocation& x, const Allocation& y) { return x.bytes > y.bytes; });
    d.allocatedBeforeTrace = d.peakAllocated - live;
    v.devices.push_back(std::move(d));
  }
  // GPUs by index first, the CPU last.
  std::stable_sort(v.devices.begin(), v.devices.end(), [](const DeviceMemory& a, const DeviceMemory& b) {
    const bool ga = a.deviceType != 0, gb = b.deviceType != 0;
    if (ga != gb) return ga;
    return a.device < b.device;
  });
  return v;
}

}  // namespace attnscope
