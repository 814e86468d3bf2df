// torch.profiler's key_averages(), reproduced from a trace.
//
// Attribution::Torch follows torch/autograd/profiler.py (PyTorch 2.11):
// events are linked to ops by External id, nested per thread by time
// containment, duplicate single-child nodes removed, memory records counted
// in every CPU event's interval; artifacts included on purpose (the
// profiler's Activity Buffer Request owning a kernel, gpu_user_annotation
// spans as self device time).
//
// Attribution::Corrected (attribution.h): each GPU activity is self device
// time of the op that launched it (runtime call by correlation -> its
// enclosing op, else the op with its External id); the profiler's overhead
// events own nothing; gpu_user_annotation spans and GPU activity rows show
// device totals only (self 0); GPU work with no launch and no op is one
// "[unlinked GPU work]" row. The self device times of all rows then add up
// to the GPU activity durations exactly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/store/event_store.h"

namespace attnscope {

enum class Attribution { Torch, Corrected };
enum class GroupBy { Name, InputShape };
enum class DeviceType : uint8_t { Cpu, Cuda };

// A by-shape row's input shapes when its events recorded none: torch's
// str([]), which is what torch prints for an op without shapes too.
inline constexpr std::string_view kNoInputShapes = "[]";

struct KeyAverageRow {
  std::string name;
  DeviceType deviceType = DeviceType::Cpu;
  bool userAnnotation = false;
  std::string inputShapes;        // torch's str(input_shapes); "" when grouped by name
  Family family = Family::CpuOp;  // family of the first event in the row
  uint64_t calls = 0;
  int64_t selfCpuNs = 0;
  int64_t cpuTotalNs = 0;
  int64_t selfDeviceNs = 0;
  int64_t deviceTotalNs = 0;
  int64_t cpuMemBytes = 0;
  int64_t selfCpuMemBytes = 0;
  int64_t deviceMemBytes = 0;
  int64_t selfDeviceMemBytes = 0;
  ListOf<EventId> events;  // the store events behind this row
};

struct KeyAverages {
  Attribution attribution = Attribution::Torch;
  GroupBy groupBy = GroupBy::Name;
  std::vector<KeyAverageRow> rows;  // in torch's order (first occurrence)
  // Denominators torch uses for the % columns.
  int64_t sumSelfCpuNs = 0;
  int64_t sumSelfDeviceNs = 0;
};

KeyAverages computeKeyAverages(const EventStore& store, GroupBy groupBy, Attribution attribution = Attribution::Torch);

// Both groupings from one pass over the trace (the nesting, linking and
// totals do not depend on the grouping): what the viewer shows.
struct KeyAveragesBothGroupings {
  KeyAverages byName;
  KeyAverages byInputShape;
};
KeyAveragesBothGroupings computeKeyAveragesBothGroupings(const EventStore& store,
                                                         Attribution attribution = Attribution::Torch);

// The profiler's overhead events that torch's key_averages lets own GPU
// work (Kineto gives them the External id of the op running on the main
// thread when they happened), with the GPU activities each one owns there
// (listed once, with the first overhead event inside that op).
struct OverheadOwnership {
  EventId overhead = kNoEvent;
  EventId op = kNoEvent;  // the op whose External id it took
  std::vector<EventId> gpu;
};
std::vector<OverheadOwnership> torchOverheadOwnership(const EventStore& s);

}  // namespace attnscope
