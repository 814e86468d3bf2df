// The accounting ledger: what torch's table adds up vs what the GPU did.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>

#include "core/explain/explanation.h"
#include "core/run/engine_run.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/tables/attribution.h"
#include "core/tables/key_averages.h"
#include "core/text/json_out.h"

namespace attnscope {

namespace {

// Calls that queue GPU work: kernel launches, copies, memsets, graph replays (CUDA and HIP).
bool isLaunchApi(std::string_view n) {
  for (std::string_view p :
       {"cudaLaunch", "cuLaunch", "cudaMemcpy", "cudaMemset", "cuMemcpy", "cuMemset", "cudaGraphLaunch", "hipLaunch",
        "hipExtLaunch", "hipModuleLaunch", "hipExtModuleLaunch", "hipMemcpy", "hipMemset", "hipGraphLaunch"})
    if (n.starts_with(p)) return true;
  return false;
}

std::string idList(const std::vector<EventId>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  return out + "]";
}

}  // namespace

Ledger computeLedger(const TraceSnapshot& snap) {
  return computeLedger(*snap.store, snap.index, *snap.torchByName, *snap.correctedByName,
                       snap.engine ? &*snap.engine : nullptr);
}

Ledger computeLedger(const EventStore& s, const ActivityIndex& index, const KeyAverages& torch,
                     const KeyAverages& corrected, const EngineRun* engine) {
  Ledger l;
  if (engine) {
    l.droppedRecords = engine->collection.droppedRecords;
    l.recordsWithoutTimestamps = engine->collection.recordsWithoutTimestamps;
  }
  l.wallSpanNs = s.maxTime() - s.minTime();
  const std::span<const EventId> byStart = index.gpuWorkByStart();
  l.gpuActivities = byStart.size();
  for (EventId id : byStart) {
    l.gpuActivitySumNs += s.event(id).dur;
    if (!gpuOwner(s, id).linked()) {
      l.unlinkedGpu.push_back(id);
      l.unlinkedGpuNs += s.event(id).dur;
    }
  }
  l.gpuUnionNs = index.gpuBusyTotal();
  // The correlations GPU work carries, once (a trace may give thousands of
  // launches one correlation: asking byCorrelation per launch is quadratic).
  std::vector<int64_t> gpuCorrelations;
  for (EventId id : byStart)
    if (s.event(id).correlation > 0) gpuCorrelations.push_back(s.event(id).correlation);
  std::sort(gpuCorrelations.begin(), gpuCorrelations.end());
  bool hip = false;
  for (EventId i = 0; i < s.events().size(); ++i) {
    const Event& e = s.event(i);
    if (e.family != Family::CudaRuntime && e.family != Family::CudaDriver) continue;
    const std::string_view n = s.name(e);
    hip = hip || n.starts_with("hip");
    if (n == "cudaEventRecord" || n == "hipEventRecord") l.cudaEventRecords++;
    if (!isLaunchApi(n)) continue;
    l.launchesWithoutGpuRecord +=
        !(e.correlation > 0 && std::binary_search(gpuCorrelations.begin(), gpuCorrelations.end(), e.correlation));
  }
  // ROCm traces carry HIP's runtime under Kineto's CUDA categories; their GPU records come from roctracer.
  l.timing = l.gpuActivities ? (hip ? "roctracer" : "cupti") : l.cudaEventRecords ? "cuda_events" : "none";

  l.torchSelfDeviceTotalNs = torch.sumSelfDeviceNs;
  for (const auto& r : torch.rows) {
    l.torchSelfDeviceAllRowsNs += r.selfDeviceNs;
    const double pct = torch.sumSelfDeviceNs
                           ? 100.0 * static_cast<double>(r.selfDeviceNs) / static_cast<double>(torch.sumSelfDeviceNs)
                           : 0.0;
    if (r.deviceType == DeviceType::Cuda && r.userAnnotation && r.selfDeviceNs > 0)
      l.doubleCounting.push_back({"gpu_user_annotation_as_self", r.name, r.selfDeviceNs, pct, r.events});
    if (pct > 100.0) l.doubleCounting.push_back({"self_device_pct_over_100", r.name, r.selfDeviceNs, pct, r.events});
  }
  for (const auto& o : torchOverheadOwnership(s)) {
    DoubleCount d{"overhead_owns_gpu", std::string(s.name(s.event(o.overhead))), 0, 0, {o.overhead}};
    for (EventId g : o.gpu) {
      d.ns += s.event(g).dur;
      d.evidence.push_back(g);
      l.overheadOwnedGpu.push_back(g);
    }
    l.overheadOwnedGpuNs += d.ns;
    l.doubleCounting.push_back(std::move(d));
  }
  l.correctedSelfDeviceNs = corrected.sumSelfDeviceNs;

  // Why torch's total is not the GPU activities' sum: its device rows, by kind.
  l.torchGapNs = l.torchSelfDeviceTotalNs - l.gpuActivitySumNs;
  int64_t syncRows = 0, activityRows = 0;
  uint64_t syncCount = 0;
  for (const auto& r : torch.rows) {
    if (r.deviceType != DeviceType::Cuda || r.userAnnotation) continue;
    if (r.family == Family::CudaSync) {
      syncRows += r.selfDeviceNs;
      syncCount += r.calls;
    } else {
      activityRows += r.selfDeviceNs;
    }
  }
  if (syncRows != 0)
    l.torchGapCauses.push_back({"cuda_sync_rows", syncRows,
                                spanDurationText(syncRows) + " of " + std::to_string(syncCount) +
                                    " CUDA synchronization records (cuda_sync: Context Sync, Stream Sync, Stream Wait "
                                    "Event) that torch counts as device time: they are waits, not GPU work"});
  if (activityRows != l.gpuActivitySumNs)
    l.torchGapCauses.push_back({"gpu_activities_outside_rows", activityRows - l.gpuActivitySumNs,
                                spanDurationText(activityRows - l.gpuActivitySumNs) +
                                    " by which torch's kernel, copy and memset rows differ from the activities' "
                                    "durations (activities torch leaves out of its rows)"});
  const int64_t other = l.torchGapNs - syncRows - (activityRows - l.gpuActivitySumNs);
  if (other != 0) l.torchGapCauses.push_back({"other", other, spanDurationText(other) + " not explained by the above"});
  return l;
}

std::string ledgerText(const Ledger& l) {
  std::string out = "ledger (timing: " + l.timing + ")\n";
  out += "  wall span of the trace:             " + spanDurationText(l.wallSpanNs) + "\n";
  out += "  GPU activities:                     " + std::to_string(l.gpuActivities) + ", durations sum " +
         spanDurationText(l.gpuActivitySumNs) + ", union (busy) " + spanDurationText(l.gpuUnionNs) + "\n";
  out += "  torch Self CUDA time total:         " + spanDurationText(l.torchSelfDeviceTotalNs) + "\n";
  out += "  torch Self CUDA, all rows added:    " + spanDurationText(l.torchSelfDeviceAllRowsNs) +
         " (ops and their kernels both count)\n";
  if (l.torchGapNs != 0) {
    out += "  torch total minus GPU activities:   " + spanDurationText(l.torchGapNs) + "\n";
    for (const auto& c : l.torchGapCauses) out += "    " + c.cause + ": " + c.text + "\n";
  }
  out += "  corrected Self CUDA, all rows:      " + spanDurationText(l.correctedSelfDeviceNs) +
         (l.correctedSelfDeviceNs == l.gpuActivitySumNs ? " (= GPU activity sum)\n" : " (differs from GPU sum!)\n");
  for (const auto& d : l.doubleCounting) {
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.2f%%", d.pct);
    if (d.kind == "gpu_user_annotation_as_self")
      out += "  double count: gpu_user_annotation '" + d.name + "' span " + spanDurationText(d.ns) +
             " counted as Self CUDA (" + pct + ")\n";
    else if (d.kind == "self_device_pct_over_100")
      out += "  double count: '" + d.name + "' Self CUDA % is " + pct + " (over 100)\n";
    else
      out += "  double count: profiler event '" + d.name + "' owns " + std::to_string(d.evidence.size() - 1) +
             " GPU activities, " + spanDurationText(d.ns) + " (torch mode)\n";
  }
  out += "  unlinked GPU activities:            " + std::to_string(l.unlinkedGpu.size()) + ", " +
         spanDurationText(l.unlinkedGpuNs) + "\n";
  out += "  GPU activities owned by overhead:   " + std::to_string(l.overheadOwnedGpu.size()) + ", " +
         spanDurationText(l.overheadOwnedGpuNs) + "\n";
  if (l.cudaEventRecords) out += "  cudaEventRecord calls:              " + std::to_string(l.cudaEventRecords) + "\n";
  if (l.launchesWithoutGpuRecord)
    out += "  launches with no GPU record:        " + std::to_string(l.launchesWithoutGpuRecord) + "\n";
  out += "  dropped records:                    " +
         (l.droppedRecords ? std::to_string(*l.droppedRecords) : std::string("not recorded in this trace")) + "\n";
  if (l.recordsWithoutTimestamps && *l.recordsWithoutTimestamps)
    out += "  records CUPTI could not time:       " + std::to_string(*l.recordsWithoutTimestamps) +
           " (left out, not placed at time 0)\n";
  return out;
}

std::string ledgerJson(const EventStore& s, const Ledger& l, bool withEvents) {
  std::string out = "{\"timing\": " + jsonString(l.timing);
  out += ", \"wall_span_ns\": " + std::to_string(l.wallSpanNs);
  out += ", \"gpu_activities\": " + std::to_string(l.gpuActivities);
  out += ", \"gpu_activity_sum_ns\": " + std::to_string(l.gpuActivitySumNs);
  out += ", \"gpu_union_ns\": " + std::to_string(l.gpuUnionNs);
  out += ", \"torch_self_device_total_ns\": " + std::to_string(l.torchSelfDeviceTotalNs);
  out += ", \"torch_self_device_all_rows_ns\": " + std::to_string(l.torchSelfDeviceAllRowsNs);
  out += ", \"corrected_self_device_ns\": " + std::to_string(l.correctedSelfDeviceNs);
  out += ", \"torch_total_gap\": {\"gap_ns\": " + std::to_string(l.torchGapNs) + ", \"causes\": [";
  for (size_t i = 0; i < l.torchGapCauses.size(); ++i) {
    const GapCause& c = l.torchGapCauses[i];
    out += (i ? ", " : "") + std::string("{\"cause\": ") + jsonString(c.cause) + ", \"ns\": " + std::to_string(c.ns) +
           ", \"text\": " + jsonString(c.text) + "}";
  }
  out += "]}";
  out += ", \"double_counting\": [";
  std::set<EventId> cited;
  for (size_t i = 0; i < l.doubleCounting.size(); ++i) {
    const DoubleCount& d = l.doubleCounting[i];
    out += (i ? ", " : "") + std::string("{\"kind\": ") + jsonString(d.kind) + ", \"name\": " + jsonString(d.name) +
           ", \"ns\": " + std::to_string(d.ns) + ", \"self_device_pct\": " + jsonNumber(d.pct) +
           ", \"evidence\": " + idList(d.evidence) + "}";
    cited.insert(d.evidence.begin(), d.evidence.end());
  }
  out += "], \"unlinked_gpu\": {\"count\": " + std::to_string(l.unlinkedGpu.size()) +
         ", \"ns\": " + std::to_string(l.unlinkedGpuNs) + ", \"events\": " + idList(l.unlinkedGpu) + "}";
  out += ", \"overhead_owned_gpu\": {\"count\": " + std::to_string(l.overheadOwnedGpu.size()) +
         ", \"ns\": " + std::to_string(l.overheadOwnedGpuNs) + ", \"events\": " + idList(l.overheadOwnedGpu) + "}";
  out += ", \"cuda_event_records\": " + std::to_string(l.cudaEventRecords);
  out += ", \"launches_without_gpu_record\": " + std::to_string(l.launchesWithoutGpuRecord);
  out += ", \"dropped_records\": " + (l.droppedRecords ? std::to_string(*l.droppedRecords) : std::string("null"));
  out += ", \"records_without_timestamps\": " +
         (l.recordsWithoutTimestamps ? std::to_string(*l.recordsWithoutTimestamps) : std::string("null"));
  if (withEvents) {
    cited.insert(l.unlinkedGpu.begin(), l.unlinkedGpu.end());
    out += ", \"events\": {";
    bool first = true;
    for (EventId id : cited) {
      out += (first ? "\"" : ", \"") + std::to_string(id) + "\": " + eventJson(s, id);
      first = false;
    }
    out += "}";
  }
  return out + "}";
}

}  // namespace attnscope
