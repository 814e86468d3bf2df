#include <algorithm>

#include "core/explain/explanation.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/store/device_activity.h"
#include "core/store/intervals.h"
#include "core/views/views.h"

namespace attnscope {

std::string_view overviewPartName(OverviewPart p) {
  static constexpr std::string_view k[] = {"communication", "kernel",      "memcpy",    "memset",
                                           "cpu_runtime",   "data_loader", "other_cpu", "gpu_idle"};
  return k[static_cast<int>(p)];
}

std::string_view overviewPartLabel(OverviewPart p) {
  static constexpr std::string_view k[] = {
      "Communication (NCCL/RCCL)",     "Kernel",     "Memcpy",          "Memset",
      "CPU runtime (launches, syncs)", "DataLoader", "Other CPU (ops)", "GPU idle (nothing running)"};
  return k[static_cast<int>(p)];
}

namespace {

// Events of each part, sorted by start, with the longest duration (to find those overlapping a window).
struct PartEvents {
  std::vector<EventId> ids;
  int64_t maxDur = 0;
};

}  // namespace

OverviewView overviewView(const TraceSnapshot& snap) {
  const EventStore& s = *snap.store;
  const Explanation& x = *snap.explanation;
  OverviewView v;
  v.stepSource = x.stepSource;
  PartEvents parts[kOverviewParts];
  std::vector<bool> stepEvent(s.events().size(), false);
  for (const StepReport& st : x.steps)
    if (st.event != kNoEvent) stepEvent[st.event] = true;
  for (EventId id = 0; id < s.events().size(); ++id) {
    const Event& e = s.event(id);
    int p = -1;
    if (isDeviceWork(s, e)) {  // the one definition (device_activity.h): MTIA's work too
      switch (workKind(s, id)) {
        case WorkKind::Communication:
          p = static_cast<int>(OverviewPart::Communication);
          break;
        case WorkKind::Kernel:
          p = static_cast<int>(OverviewPart::Kernel);
          break;
        case WorkKind::Memcpy:
          p = static_cast<int>(OverviewPart::Memcpy);
          break;
        case WorkKind::Memset:
          p = static_cast<int>(OverviewPart::Memset);
          break;
      }
    } else if (e.family == Family::CudaRuntime || e.family == Family::CudaDriver) {
      p = static_cast<int>(OverviewPart::Runtime);
    } else if ((e.family == Family::CpuOp || e.family == Family::UserAnnotation) && !stepEvent[id] &&
               s.name(e).rfind("enumerate(DataLoader)", 0) == 0) {
      p = static_cast<int>(OverviewPart::DataLoader);
    } else if (e.family == Family::CpuOp && !stepEvent[id]) {
      p = static_cast<int>(OverviewPart::OtherCpu);
    }
    if (p < 0 || e.dur <= 0) continue;
    parts[p].ids.push_back(id);
    parts[p].maxDur = std::max(parts[p].maxDur, e.dur);
  }
  for (auto& pe : parts)
    std::stable_sort(pe.ids.begin(), pe.ids.end(),
                     [&](EventId a, EventId b) { return s.event(a).start < s.event(b).start; });

  auto fill = [&](OverviewStep& o) {
    Intervals remaining{{o.startNs, o.endNs}};
    for (int p = 0; p < kOverviewParts - 1; ++p) {
      const PartEvents& pe = parts[p];
      Intervals iv;
      auto first = std::lower_bound(pe.ids.begin(), pe.ids.end(), o.startNs - pe.maxDur,
                                    [&](EventId id, int64_t t) { return s.event(id).start < t; });
      for (auto it = first; it != pe.ids.end() && s.event(*it).start < o.endNs; ++it) {
        const Event& e = s.event(*it);
        if (e.end() > o.startNs) iv.emplace_back(std::max(e.start, o.startNs), std::min(e.end(), o.endNs));
      }
      o.parts[p] = takeCovered(remaining, merged(std::move(iv)));
    }
    int64_t idle = 0;
    for (const auto& [a, b] : remaining) idle += b - a;
    o.parts[static_cast<int>(OverviewPart::Idle)] = idle;
    const int64_t gpu = o.parts[0] + o.parts[1] + o.parts[2] + o.parts[3];
    o.gpuUtilizationPct = o.spanNs() > 0 ? 100.0 * static_cast<double>(gpu) / static_cast<double>(o.spanNs()) : 0;
    // SM efficiency and occupancy: kernel time inside the step, weighted, where Kineto wrote them.
    double smW = 0, occW = 0, smNs = 0, occNs = 0;
    const PartEvents& k = parts[static_cast<int>(OverviewPart::Kernel)];
    auto first = std::lower_bound(k.ids.begin(), k.ids.end(), o.startNs - k.maxDur,
                                  [&](EventId id, int64_t t) { return s.event(id).start < t; });
    for (auto it = first; it != k.ids.end() && s.event(*it).start < o.endNs; ++it) {
      const Event& e = s.event(*it);
      if (e.end() <= o.startNs || e.args == kNoArgs) continue;
      const double d = static_cast<double>(std::min(e.end(), o.endNs) - std::max(e.start, o.startNs));
      const EventArgs a = s.argsAt(e.args);
      if (a.blocksPerSm >= 0) smW += std::min<double>(a.blocksPerSm, 1.0) * d, smNs += d;
      if (a.occupancyPct >= 0) occW += a.occupancyPct * d, occNs += d;
    }
    if (smNs > 0) o.smEfficiencyPct = 100.0 * smW / smNs;
    if (occNs > 0) o.occupancyPct = occW / occNs;
  };
  double smW = 0, smNs = 0, occW = 0, occNs = 0;
  for (const StepReport& st : x.steps) {
    OverviewStep o;
    o.name = st.name;
    o.startNs = st.hostStartNs;
    o.endNs = st.hostEndNs;
    fill(o);
    for (int p = 0; p < kOverviewParts; ++p) v.whole.parts[p] += o.parts[p];
    v.whole.endNs += o.spanNs();
    const double gpuNs = static_cast<double>(o.parts[1]);
    if (o.smEfficiencyPct >= 0) smW += o.smEfficiencyPct * gpuNs, smNs += gpuNs;
    if (o.occupancyPct >= 0) occW += o.occupancyPct * gpuNs, occNs += gpuNs;
    v.steps.push_back(std::move(o));
  }
  v.whole.name = "all steps";
  const int64_t gpu = v.whole.parts[0] + v.whole.parts[1] + v.whole.parts[2] + v.whole.parts[3];
  v.whole.gpuUtilizationPct =
      v.whole.spanNs() > 0 ? 100.0 * static_cast<double>(gpu) / static_cast<double>(v.whole.spanNs()) : 0;
  if (smNs > 0) v.whole.smEfficiencyPct = smW / smNs;
  if (occNs > 0) v.whole.occupancyPct = occW / occNs;
  return v;
}

}  // namespace attnscope
