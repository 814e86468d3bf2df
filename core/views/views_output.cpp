// Text, JSON and CSV of the views. Times in JSON and CSV are integer nanoseconds (suffix _ns);
// text uses the unit that fits.
#include <cmath>
#include <cstdio>

#include "core/text/duration.h"
#include "core/text/json_out.h"
#include "core/views/views.h"

namespace attnscope {

namespace {

std::string num(double x, int decimals = 2) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", decimals, x);
  return b;
}

std::string opt(double x, int decimals = 2) { return x < 0 ? "-" : num(x, decimals); }
std::string optJson(double x, int decimals = 3) { return x < 0 ? "null" : num(x, decimals); }
std::string intOpt(int32_t x) { return x == -1 ? "-" : x == -2 ? "varies" : std::to_string(x); }
std::string intOptJson(int32_t x) { return x == -1 ? "null" : x == -2 ? "\"varies\"" : std::to_string(x); }

std::string csvField(std::string s) {
  for (char& c : s)
    if (c == '"') c = '\'';
  return "\"" + s + "\"";
}

std::string familyWord(Family f) {
  const std::string_view w = gpuWorkWord(f);
  return w.empty() ? "sync record" : std::string(w);
}

}  // namespace

// ---- kernels ----

std::string kernelViewText(const KernelView& v, size_t limit) {
  std::string out = "GPU work: " + spanDurationText(v.gpuWorkNs) + " in " + std::to_string(v.rows.size()) +
                    " rows (kernels, copies and memsets by name; sync records last, they are waits, not work)\n";
  out +=
      "kind | calls | total | mean | min | max | share | grid | block | regs | smem | blocks/SM | occupancy % | "
      "Tensor Cores | name | launched by\n";
  size_t n = 0;
  for (const KernelRow& r : v.rows) {
    if (limit && n++ >= limit) {
      out += "... " + std::to_string(v.rows.size() - limit) + " more rows\n";
      break;
    }
    std::string ops;
    for (size_t i = 0; i < r.ops.size() && i < 3; ++i) ops += (i ? ", " : "") + r.ops[i];
    if (r.ops.size() > 3) ops += ", ...";
    out += familyWord(r.family) + " | " + std::to_string(r.calls) + " | " + usText(r.totalNs) + " | " +
           usText(std::llround(r.meanNs)) + " | " + usText(r.minNs) + " | " + usText(r.maxNs) + " | " +
           num(r.sharePct) + "% | " + (r.grid.empty() ? "-" : r.grid) + " | " + (r.block.empty() ? "-" : r.block) +
           " | " + intOpt(r.registersPerThread) + " | " + intOpt(r.sharedMemory) + " | " + opt(r.blocksPerSm) + " | " +
           opt(r.occupancyPct) + " | " + (r.tensorCores ? "yes" : "no") + " | " + r.name +
           (r.op.empty() ? "" : " [" + r.op + "]") + (r.launch.empty() ? "" : " [" + r.launch + "]") + " | " +
           (ops.empty() ? "-" : ops) + "\n";
  }
  return out;
}

std::string kernelViewJson(const KernelView& v) {
  std::string out = "{\"gpu_work_ns\": " + std::to_string(v.gpuWorkNs) + ", \"kernels\": [";
  for (size_t i = 0; i < v.rows.size(); ++i) {
    const KernelRow& r = v.rows[i];
    out += (i ? ", " : "") + std::string("{\"name\": ") + jsonString(r.name) +
           ", \"kind\": " + jsonString(familyWord(r.family)) + ", \"op\": " + jsonString(r.op) +
           ", \"launch\": " + jsonString(r.launch) + ", \"calls\": " + std::to_string(r.calls) +
           ", \"total_ns\": " + std::to_string(r.totalNs) + ", \"mean_ns\": " + num(r.meanNs, 3) +
           ", \"min_ns\": " + std::to_string(r.minNs) + ", \"max_ns\": " + std::to_string(r.maxNs) +
           ", \"share_pct\": " + num(r.sharePct, 4) + ", \"grid\": " + jsonString(r.grid) +
           ", \"block\": " + jsonString(r.block) + ", \"registers_per_thread\": " + intOptJson(r.registersPerThread) +
           ", \"shared_memory\": " + intOptJson(r.sharedMemory) + ", \"blocks_per_sm\": " + optJson(r.blocksPerSm) +
           ", \"warps_per_sm\": " + optJson(r.warpsPerSm) + ", \"occupancy_pct\": " + optJson(r.occupancyPct) +
           ", \"tensor_cores\": " + (r.tensorCores ? "true" : "false") + ", \"launched_by\": [";
    for (size_t k = 0; k < r.ops.size(); ++k) out += (k ? ", " : "") + jsonString(r.ops[k]);
    out += "]}";
  }
  return out + "]}\n";
}

std::string kernelViewCsv(const KernelView& v) {
  std::string out =
      "name,kind,op,launch,calls,total_ns,mean_ns,min_ns,max_ns,share_pct,grid,block,registers_per_thread,"
      "shared_memory,blocks_per_sm,warps_per_sm,occupancy_pct,tensor_cores,launched_by\n";
  for (const KernelRow& r : v.rows) {
    std::string ops;
    for (size_t k = 0; k < r.ops.size(); ++k) ops += (k ? "; " : "") + r.ops[k];
    out += csvField(r.name) + "," + familyWord(r.family) + "," + csvField(r.op) + "," + csvField(r.launch) + "," +
           std::to_string(r.calls) + "," + std::to_string(r.totalNs) + "," + num(r.meanNs, 3) + "," +
           std::to_string(r.minNs) + "," + std::to_string(r.maxNs) + "," + num(r.sharePct, 4) + "," + csvField(r.grid) +
           "," + csvField(r.block) + "," + intOpt(r.registersPerThread) + "," + intOpt(r.sharedMemory) + "," +
           opt(r.blocksPerSm, 3) + "," + opt(r.warpsPerSm, 3) + "," + opt(r.occupancyPct, 3) + "," +
           (r.tensorCores ? "yes" : "no") + "," + csvField(ops) + "\n";
  }
  return out;
}

// ---- memory ----

std::string memoryViewText(const MemoryView& v, size_t limit) {
  if (v.devices.empty()) return "no memory events ([memory]: record with profile_memory=True)\n";
  std::string out;
  for (const DeviceMemory& d : v.devices) {
    out += d.label + ": peak allocated " + bytesText(d.peakAllocated) + " at " +
           spanDurationText(d.peakNs - v.originNs) + " (from the trace's start), peak reserved " +
           (d.peakReserved < 0 ? "-" : bytesText(d.peakReserved)) + ", " + std::to_string(d.curve.size()) +
           " memory events, " + std::to_string(d.allocations.size()) + " allocations\n";
    if (!d.totalsInTrace)
      out +=
          "  (this trace has no Total Allocated: the curve is the net of the allocations and frees seen since it "
          "began)\n";
    if (!d.addressesInTrace) {
      out += "  live at the peak: unknown (this trace has no block addresses to match frees to allocations)\n";
      continue;
    }
    out += "  live at the peak: " + std::to_string(d.liveAtPeak.size()) + " allocations made in the trace, " +
           bytesText(d.peakAllocated - d.allocatedBeforeTrace) + ", and " + bytesText(d.allocatedBeforeTrace) +
           " allocated before the trace began\n";
    size_t n = 0;
    for (const Allocation& a : d.liveAtPeak) {
      if (limit && n++ >= limit) {
        out += "    ... " + std::to_string(d.liveAtPeak.size() - limit) + " more\n";
        break;
      }
      out += "    " + bytesText(a.bytes) + " by " + (a.op.empty() ? "(no op)" : a.op) + " at " +
             spanDurationText(a.allocatedNs - v.originNs) +
             (a.freedNs < 0 ? ", not freed in the trace"
                            : ", freed " + spanDurationText(a.freedNs - a.allocatedNs) + " later") +
             "\n";
    }
  }
  return out;
}

std::string memoryViewJson(const MemoryView& v) {
  auto alloc = [](const Allocation& a) {
    return "{\"bytes\": " + std::to_string(a.bytes) + ", \"op\": " + jsonString(a.op) +
           ", \"allocated_ns\": " + std::to_string(a.allocatedNs) +
           ", \"freed_ns\": " + (a.freedNs < 0 ? std::string("null") : std::to_string(a.freedNs)) +
           ", \"lifetime_ns\": " + (a.freedNs < 0 ? std::string("null") : std::to_string(a.freedNs - a.allocatedNs)) +
           ", \"event\": " + std::to_string(a.event) + "}";
  };
  std::string out = "{\"memory_events\": " + std::to_string(v.events) + ", \"devices\": [";
  for (size_t i = 0; i < v.devices.size(); ++i) {
    const DeviceMemory& d = v.devices[i];
    out += (i ? ", " : "") + std::string("{\"device\": ") + jsonString(d.label) +
           ", \"device_type\": " + std::to_string(d.deviceType) + ", \"device_index\": " + std::to_string(d.device) +
           ", \"peak_allocated\": " + std::to_string(d.peakAllocated) + ", \"peak_ns\": " + std::to_string(d.peakNs) +
           ", \"peak_reserved\": " + (d.peakReserved < 0 ? std::string("null") : std::to_string(d.peakReserved)) +
           ", \"allocated_before_trace\": " +
           (d.allocatedBeforeTrace < 0 ? std::string("null") : std::to_string(d.allocatedBeforeTrace)) +
           ", \"totals_in_trace\": " + (d.totalsInTrace ? "true" : "false") +
           ", \"addresses_in_trace\": " + (d.addressesInTrace ? "true" : "false") + ", \"live_at_peak\": [";
    for (size_t k = 0; k < d.liveAtPeak.size(); ++k) out += (k ? ", " : "") + alloc(d.liveAtPeak[k]);
    out += "], \"curve\": [";
    for (size_t k = 0; k < d.curve.size(); ++k)
      out += (k ? ", " : "") + std::string("[") + std::to_string(d.curve[k].t) + ", " +
             std::to_string(d.curve[k].allocated) + ", " + std::to_string(d.curve[k].reserved) + "]";
    out += "], \"allocations\": [";
    for (size_t k = 0; k < d.allocations.size(); ++k) out += (k ? ", " : "") + alloc(d.allocations[k]);
    out += "]}";
  }
  return out + "]}\n";
}

std::string memoryViewCsv(const MemoryView& v) {
  std::string out = "device,bytes,op,allocated_ns,freed_ns,lifetime_ns,live_at_peak\n";
  for (const DeviceMemory& d : v.devices)
    for (const Allocation& a : d.allocations) {
      bool live = false;
      for (const Allocation& l : d.liveAtPeak) live |= l.event == a.event;
      out += csvField(d.label) + "," + std::to_string(a.bytes) + "," + csvField(a.op) + "," +
             std::to_string(a.allocatedNs) + "," + (a.freedNs < 0 ? "" : std::to_string(a.freedNs)) + "," +
             (a.freedNs < 0 ? "" : std::to_string(a.freedNs - a.allocatedNs)) + "," + (live ? "yes" : "no") + "\n";
    }
  return out;
}

// ---- overview ----

std::string overviewViewText(const OverviewView& v) {
  std::string out = "steps (" + v.stepSource + "): " + std::to_string(v.steps.size()) +
                    "; each moment goes to the first part that applies, so the parts add up to the step\n";
  out += "step | span";
  for (int p = 0; p < kOverviewParts; ++p) out += " | " + std::string(overviewPartName(static_cast<OverviewPart>(p)));
  out += " | GPU util % | SM efficiency % | occupancy %\n";
  auto line = [&](const OverviewStep& o) {
    out += o.name + " | " + spanDurationText(o.spanNs());
    for (int p = 0; p < kOverviewParts; ++p) out += " | " + spanDurationText(o.parts[p]);
    out +=
        " | " + num(o.gpuUtilizationPct, 1) + " | " + opt(o.smEfficiencyPct, 1) + " | " + opt(o.occupancyPct, 1) + "\n";
  };
  for (const OverviewStep& o : v.steps) line(o);
  if (v.steps.size() > 1) line(v.whole);
  return out;
}

std::string overviewViewJson(const OverviewView& v) {
  auto step = [](const OverviewStep& o) {
    std::string s = "{\"name\": " + jsonString(o.name) + ", \"start_ns\": " + std::to_string(o.startNs) +
                    ", \"end_ns\": " + std::to_string(o.endNs) + ", \"span_ns\": " + std::to_string(o.spanNs()) +
                    ", \"parts_ns\": {";
    for (int p = 0; p < kOverviewParts; ++p)
      s += (p ? ", \"" : "\"") + std::string(overviewPartName(static_cast<OverviewPart>(p))) +
           "\": " + std::to_string(o.parts[p]);
    return s + "}, \"gpu_utilization_pct\": " + num(o.gpuUtilizationPct, 3) +
           ", \"sm_efficiency_pct\": " + optJson(o.smEfficiencyPct) +
           ", \"occupancy_pct\": " + optJson(o.occupancyPct) + "}";
  };
  std::string out = "{\"step_source\": " + jsonString(v.stepSource) + ", \"steps\": [";
  for (size_t i = 0; i < v.steps.size(); ++i) out += (i ? ", " : "") + step(v.steps[i]);
  return out + "], \"all_steps\": " + step(v.whole) + "}\n";
}

std::string overviewViewCsv(const OverviewView& v) {
  std::string out = "step,start_ns,span_ns";
  for (int p = 0; p < kOverviewParts; ++p) out += "," + std::string(overviewPartName(static_cast<OverviewPart>(p)));
  out += ",gpu_utilization_pct,sm_efficiency_pct,occupancy_pct\n";
  auto line = [&](const OverviewStep& o) {
    out += csvField(o.name) + "," + std::to_string(o.startNs) + "," + std::to_string(o.spanNs());
    for (int p = 0; p < kOverviewParts; ++p) out += "," + std::to_string(o.parts[p]);
    out += "," + num(o.gpuUtilizationPct, 3) + "," + opt(o.smEfficiencyPct, 3) + "," + opt(o.occupancyPct, 3) + "\n";
  };
  for (const OverviewStep& o : v.steps) line(o);
  return out;
}

// ---- modules ----

std::string moduleViewText(const ModuleView& v, size_t limit) {
  if (!v.present)
    return "no nn.Module events (record with torch.profiler.profile(with_stack=True) or with_modules=True)\n";
  std::string out = "module | calls | host time | self host | GPU time launched | self GPU | GPU activities\n";
  size_t n = 0;
  for (const ModuleNode& m : v.nodes) {
    if (limit && n++ >= limit) {
      out += "... " + std::to_string(v.nodes.size() - limit) + " more modules\n";
      break;
    }
    out += std::string(static_cast<size_t>(2 * m.depth), ' ') + m.name + " | " + std::to_string(m.calls) + " | " +
           usText(m.hostNs) + " | " + usText(m.selfHostNs) + " | " + usText(m.gpuNs) + " | " + usText(m.selfGpuNs) +
           " | " + std::to_string(m.gpuActivities) + "\n";
  }
  return out;
}

std::string moduleViewJson(const ModuleView& v) {
  std::string out = std::string("{\"present\": ") + (v.present ? "true" : "false") + ", \"modules\": [";
  for (size_t i = 0; i < v.nodes.size(); ++i) {
    const ModuleNode& m = v.nodes[i];
    out += (i ? ", " : "") + std::string("{\"name\": ") + jsonString(m.name) + ", \"path\": " + jsonString(m.path) +
           ", \"parent\": " + std::to_string(m.parent) + ", \"depth\": " + std::to_string(m.depth) +
           ", \"calls\": " + std::to_string(m.calls) + ", \"host_ns\": " + std::to_string(m.hostNs) +
           ", \"self_host_ns\": " + std::to_string(m.selfHostNs) + ", \"gpu_ns\": " + std::to_string(m.gpuNs) +
           ", \"self_gpu_ns\": " + std::to_string(m.selfGpuNs) +
           ", \"gpu_activities\": " + std::to_string(m.gpuActivities) + "}";
  }
  return out + "]}\n";
}

std::string moduleViewCsv(const ModuleView& v) {
  std::string out = "path,depth,calls,host_ns,self_host_ns,gpu_ns,self_gpu_ns,gpu_activities\n";
  for (const ModuleNode& m : v.nodes)
    out += csvField(m.path) + "," + std::to_string(m.depth) + "," + std::to_string(m.calls) + "," +
           std::to_string(m.hostNs) + "," + std::to_string(m.selfHostNs) + "," + std::to_string(m.gpuNs) + "," +
           std::to_string(m.selfGpuNs) + "," + std::to_string(m.gpuActivities) + "\n";
  return out;
}

}  // namespace attnscope
