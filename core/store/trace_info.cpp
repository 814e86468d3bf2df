#include "core/store/trace_info.h"

#include <cstdio>

#include "core/text/duration.h"
#include "core/text/json_out.h"

namespace attnscope {

namespace {

std::string withCommas(uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string s;
  s.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s.push_back(',');
    s.push_back(digits[i]);
  }
  return s;
}

std::string_view laneKindName(LaneKind k) {
  switch (k) {
    case LaneKind::CpuThread:
      return "cpu_thread";
    case LaneKind::GpuStream:
      return "gpu_stream";
    case LaneKind::Other:
      return "other";
  }
  return "other";
}

}  // namespace

std::string traceSummaryLine(const EventStore& s) {
  uint64_t gpu = 0;
  for (int f = 0; f < kFamilyCount; ++f)
    if (isGpuFamily(static_cast<Family>(f))) gpu += s.familyCount(static_cast<Family>(f));
  return withCommas(s.events().size()) + " events (" + withCommas(gpu) + " on GPU) · " +
         std::to_string(s.lanes().size()) + " lanes · " + spanDurationText(s.maxTime() - s.minTime()) + " · " +
         withCommas(s.badTotal()) + " bad";
}

std::string traceInfoText(const EventStore& s) {
  std::string out;
  const auto& m = s.meta();
  out += "trace: " + m.sourcePath + "\n";
  out += "summary: " + traceSummaryLine(s) + "\n";
  out += "events: " + withCommas(s.events().size()) + "\n";
  out += "span: " + spanDurationText(s.maxTime() - s.minTime()) + "\n";
  if (m.baseTimeNanoseconds) out += "baseTimeNanoseconds: " + std::to_string(m.baseTimeNanoseconds) + "\n";
  out += "events per family:\n";
  for (int f = 0; f < kFamilyCount; ++f) {
    const uint64_t n = s.familyCount(static_cast<Family>(f));
    if (n == 0) continue;
    char buf[128];
    std::snprintf(buf, sizeof buf, "  %-22s %12s\n", std::string(familyName(static_cast<Family>(f))).c_str(),
                  withCommas(n).c_str());
    out += buf;
  }
  out += "flows linked: " + withCommas(s.links().size()) + "\n";
  out += "lanes: " + std::to_string(s.lanes().size()) + "\n";
  for (const auto& l : s.lanes()) {
    out += "  " + l.label + ": " + withCommas(l.end - l.begin) + " events";
    if (l.kind == LaneKind::CpuThread) out += ", max depth " + std::to_string(l.maxDepth);
    out += "\n";
  }
  if (!m.devices.empty()) {
    out += "devices:\n";
    for (const auto& d : m.devices)
      out += "  " + std::to_string(d.id) + ": " + d.name + " (sm_" + std::to_string(d.computeMajor) +
             std::to_string(d.computeMinor) + ", " + std::to_string(d.numSms) + " SMs, " +
             std::to_string(d.totalGlobalMem >> 20) + " MiB)\n";
  }
  if (m.cudaRuntimeVersion || m.cuptiVersion)
    out += "cuda runtime " + std::to_string(m.cudaRuntimeVersion) + ", driver " + std::to_string(m.cudaDriverVersion) +
           ", cupti " + std::to_string(m.cuptiVersion) + "\n";
  out += "bad events: " + withCommas(s.badTotal()) + "\n";
  for (int k = 0; k < kBadKindCount; ++k) {
    const BadCount& b = s.bad(static_cast<BadKind>(k));
    if (b.count == 0 || !EventStore::isError(static_cast<BadKind>(k))) continue;
    out += "  " + std::string(badKindName(static_cast<BadKind>(k))) + ": " + withCommas(b.count) + " (first at byte " +
           std::to_string(b.firstOffset) + ": " + b.firstDetail + ")\n";
  }
  if (s.noteTotal()) out += "notes (not errors):\n";
  for (int k = 0; k < kBadKindCount; ++k) {
    const BadCount& b = s.bad(static_cast<BadKind>(k));
    if (b.count == 0 || EventStore::isError(static_cast<BadKind>(k))) continue;
    out += "  " + std::string(badKindName(static_cast<BadKind>(k))) + ": " + withCommas(b.count) + " (first at byte " +
           std::to_string(b.firstOffset) + ": " + b.firstDetail + ")\n";
  }
  return out;
}

std::string traceInfoJson(const EventStore& s, std::string_view extraMembers) {
  std::string out = "{\"trace\": " + jsonString(s.meta().sourcePath);
  out += ", \"events\": " + std::to_string(s.events().size());
  out += ", \"span_ns\": " + std::to_string(s.maxTime() - s.minTime());
  out += ", \"start_ns\": " + std::to_string(s.minTime());
  out += ", \"base_time_ns\": " + std::to_string(s.meta().baseTimeNanoseconds);
  out += ", \"families\": {";
  bool first = true;
  for (int f = 0; f < kFamilyCount; ++f) {
    const uint64_t n = s.familyCount(static_cast<Family>(f));
    if (n == 0) continue;
    if (!first) out += ", ";
    first = false;
    out += jsonString(familyName(static_cast<Family>(f))) + ": " + std::to_string(n);
  }
  out += "}, \"flows\": " + std::to_string(s.links().size());
  out += ", \"lanes\": [";
  first = true;
  for (const auto& l : s.lanes()) {
    if (!first) out += ", ";
    first = false;
    out += "{\"kind\": " + jsonString(laneKindName(l.kind)) + ", \"pid\": " + std::to_string(l.pid) +
           ", \"tid\": " + std::to_string(l.tid) + ", \"label\": " + jsonString(l.label) +
           ", \"events\": " + std::to_string(l.end - l.begin) + "}";
  }
  out += "], \"devices\": [";
  first = true;
  for (const auto& d : s.meta().devices) {
    if (!first) out += ", ";
    first = false;
    out += "{\"id\": " + std::to_string(d.id) + ", \"name\": " + jsonString(d.name) +
           ", \"total_global_mem\": " + std::to_string(d.totalGlobalMem) + ", \"compute\": \"" +
           std::to_string(d.computeMajor) + "." + std::to_string(d.computeMinor) +
           "\", \"num_sms\": " + std::to_string(d.numSms) + "}";
  }
  out += "], \"bad_events\": {\"total\": " + std::to_string(s.badTotal()) +
         ", \"notes_total\": " + std::to_string(s.noteTotal());
  for (int k = 0; k < kBadKindCount; ++k) {
    const BadCount& b = s.bad(static_cast<BadKind>(k));
    if (b.count == 0) continue;
    out += ", " + jsonString(badKindName(static_cast<BadKind>(k))) + ": {\"count\": " + std::to_string(b.count) +
           ", \"first_offset\": " + std::to_string(b.firstOffset) + ", \"detail\": " + jsonString(b.firstDetail) + "}";
  }
  out += "}";
  if (!extraMembers.empty()) out += ", " + std::string(extraMembers);
  out += "}\n";
  return out;
}

}  // namespace attnscope
