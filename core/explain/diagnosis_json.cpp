// The diagnosis as JSON (docs/explain-schema.md, "diagnosis").
#include <cmath>
#include <cstdio>

#include "core/explain/diagnosis.h"
#include "core/text/json_out.h"

namespace attnscope {

namespace {

std::string num6(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

std::string idsJson(const std::vector<EventId>& ids) {
  std::string out = "[";
  for (size_t k = 0; k < ids.size(); ++k) out += (k ? ", " : "") + std::to_string(ids[k]);
  return out + "]";
}

std::string itemsJson(const std::vector<EvidenceItem>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    const EvidenceItem& it = items[i];
    out += (i ? ", " : "") + std::string("{\"kind\": ") + jsonString(it.kind) + ", \"name\": " + jsonString(it.name) +
           ", \"count\": " + std::to_string(it.count) + ", \"ns\": " + std::to_string(it.ns) +
           ", \"share\": " + num6(it.share) + ", \"detail\": " + jsonString(it.detail) + ", \"inside\": [";
    for (size_t k = 0; k < it.inside.size(); ++k)
      out += (k ? ", " : "") + std::string("{\"op\": ") + jsonString(it.inside[k].first) +
             ", \"count\": " + std::to_string(it.inside[k].second) + "}";
    out += "], \"where\": " + jsonString(it.where) + ", \"events\": " + idsJson(it.events) + "}";
  }
  return out + "]";
}

std::string causesJson(const std::vector<DiagnosedCause>& causes) {
  std::string out = "[";
  for (size_t i = 0; i < causes.size(); ++i) {
    const DiagnosedCause& c = causes[i];
    out += (i ? ", " : "") + std::string("{\"code\": ") + jsonString(causeCode(c.code)) +
           ", \"ns\": " + std::to_string(c.totalNs) + ", \"share\": " + num6(c.share) +
           ", \"per_step\": {\"median_ns\": " + std::to_string(std::llround(c.perStep.medianNs)) +
           ", \"p10_ns\": " + std::to_string(std::llround(c.perStep.p10Ns)) +
           ", \"p90_ns\": " + std::to_string(std::llround(c.perStep.p90Ns)) +
           "}, \"steps\": " + std::to_string(c.steps) + ", \"text\": " + jsonString(c.text) +
           ", \"fix\": " + jsonString(c.fix) + ", \"fixes\": [";
    for (size_t k = 0; k < c.fixes.size(); ++k)
      out += (k ? ", " : "") + std::string("{\"code\": ") + jsonString(c.fixes[k].code) +
             ", \"text\": " + jsonString(c.fixes[k].text) + ", \"because\": " + jsonString(c.fixes[k].because) + "}";
    out += "], \"evidence\": " + idsJson(c.evidence) + ", \"evidence_items\": " + itemsJson(c.items) + ", \"hints\": [";
    for (size_t k = 0; k < c.hints.size(); ++k) out += (k ? ", " : "") + jsonString(c.hints[k]);
    out += "]}";
  }
  return out + "]";
}

}  // namespace

std::string diagnosisJson(const Diagnosis& d) {
  std::string out = "{\"step_source\": " + jsonString(d.stepSource) + ", \"wall_ns\": " + std::to_string(d.wallNs) +
                    ", \"headline\": " + jsonString(d.headline) + ", \"trace_kind\": " + jsonString(d.traceKind) +
                    ", \"recording\": " +
                    (d.recordStartNs < 0 ? std::string("null")
                                         : "{\"start_ns\": " + std::to_string(d.recordStartNs) +
                                               ", \"end_ns\": " + std::to_string(d.recordEndNs) + "}") +
                    ", \"notes\": [";
  for (size_t i = 0; i < d.notes.size(); ++i) out += (i ? ", " : "") + jsonString(d.notes[i]);
  out += "], \"periodic\": [";
  for (size_t i = 0; i < d.periodic.size(); ++i) {
    const PeriodicWork& p = d.periodic[i];
    out += (i ? ", " : "") + std::string("{\"every\": ") + std::to_string(p.every) + ", \"steps\": [";
    for (size_t k = 0; k < p.steps.size(); ++k) out += (k ? ", " : "") + std::to_string(p.steps[k]);
    out += "], \"extra_ns\": " + std::to_string(p.extraNs) + ", \"what\": [";
    for (size_t k = 0; k < p.what.size(); ++k)
      out += (k ? ", " : "") + std::string("{\"name\": ") + jsonString(p.what[k].first) +
             ", \"ns\": " + std::to_string(p.what[k].second) + "}";
    out += "], \"text\": " + jsonString(p.text) + "}";
  }
  out += "], \"causes\": " + causesJson(d.causes) + ", \"minor_causes\": " + causesJson(d.minor);
  out += ", \"steps\": [";
  for (size_t i = 0; i < d.steps.size(); ++i) {
    const StepWaits& st = d.steps[i];
    out += (i ? ", " : "") + std::string("{\"name\": ") + jsonString(st.name) +
           ", \"start_ns\": " + std::to_string(st.startNs) + ", \"end_ns\": " + std::to_string(st.endNs) +
           ", \"host_start_ns\": " + std::to_string(st.hostStartNs) +
           ", \"host_end_ns\": " + std::to_string(st.hostEndNs) +
           ", \"device_busy_ns\": " + std::to_string(st.deviceBusyNs) +
           ", \"communication_overlapped_ns\": " + std::to_string(st.communicationOverlappedNs) + ", \"devices\": [";
    for (size_t k = 0; k < st.busyByDevice.size(); ++k)
      out += (k ? ", " : "") + std::string("{\"device\": ") + std::to_string(st.busyByDevice[k].first) +
             ", \"busy_ns\": " + std::to_string(st.busyByDevice[k].second) + "}";
    out += "], \"parts\": {";
    for (int c = 0; c < kCauseCount; ++c)
      out += (c ? ", " : "") + jsonString(causeCode(static_cast<Cause>(c))) + ": " + std::to_string(st.parts[c]);
    out += "}}";
  }
  return out + "]}";
}

}  // namespace attnscope
