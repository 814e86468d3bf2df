// explain's text and JSON (schema: docs/explain-schema.md).
#include <set>

#include "core/explain/explanation.h"
#include "core/explain/glossary.h"
#include "core/text/json_out.h"

namespace attnscope {

namespace {

// Kineto prints microseconds with up to three decimals: "5367878834488.945".
std::string usDecimal(int64_t ns) {
  std::string out = std::to_string(ns / 1000);
  int64_t frac = ns % 1000;
  if (frac < 0) frac = -frac;
  if (frac) {
    std::string f = std::to_string(frac);
    f.insert(0, 3 - f.size(), '0');
    while (f.back() == '0') f.pop_back();
    out += "." + f;
  }
  return out;
}

std::string idList(const std::vector<EventId>& ids, std::set<EventId>& cited) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    out += (i ? ", " : "") + std::to_string(ids[i]);
    cited.insert(ids[i]);
  }
  return out + "]";
}

std::string kindOf(const EventStore& s, EventId id) {
  switch (s.event(id).family) {
    case Family::Kernel:
      return "kernel";
    case Family::GpuMemcpy:
      return "memcpy";
    case Family::GpuMemset:
      return "memset";
    default:
      return std::string(familyName(s.event(id).family));
  }
}

std::string optNs(int64_t v) { return v < 0 ? "null" : std::to_string(v); }

std::string syncJson(const EventStore& s, const SyncWait& w, std::set<EventId>& cited) {
  std::string out = "{\"api\": " + jsonString(w.api) + ", \"event\": " + std::to_string(w.ev);
  cited.insert(w.ev);
  out += ", \"start_ns\": " + std::to_string(w.startNs) + ", \"dur_ns\": " + std::to_string(w.durNs);
  out += ", \"issuer\": " + jsonString(w.issuer) + ", \"op_chain\": [";
  for (size_t i = 0; i < w.opChain.size(); ++i) out += (i ? ", " : "") + jsonString(w.opChain[i]);
  out += "], \"op_chain_events\": " + idList(w.chainEvents, cited) + ", \"awaited\": [";
  for (size_t i = 0; i < w.awaited.size(); ++i) {
    const Awaited& a = w.awaited[i];
    cited.insert(a.gpu);
    out += (i ? ", " : "") + std::string("{\"name\": ") + jsonString(s.name(s.event(a.gpu))) +
           ", \"kind\": " + jsonString(kindOf(s, a.gpu)) + ", \"correlation\": " + std::to_string(a.correlation) +
           ", \"gpu_start_ns\": " + std::to_string(a.gpuStartNs) + ", \"gpu_end_ns\": " + std::to_string(a.gpuEndNs) +
           ", \"queued_ns\": " + std::to_string(a.queuedNs) + ", \"event\": " + std::to_string(a.gpu) + "}";
  }
  return out + "]}";
}

std::string stepJson(const EventStore& s, const Explanation& an, const StepReport& st, std::set<EventId>& cited) {
  std::string out = "{\"name\": " + jsonString(st.name) + ", \"wrapped\": " + (st.wrapped ? "true" : "false");
  out += ", \"event\": " + (st.event == kNoEvent ? std::string("null") : std::to_string(st.event));
  if (st.event != kNoEvent) cited.insert(st.event);
  out +=
      ", \"host_start_ns\": " + std::to_string(st.hostStartNs) + ", \"host_end_ns\": " + std::to_string(st.hostEndNs);
  out += ", \"gpu_start_ns\": " + optNs(st.gpuStartNs) + ", \"gpu_end_ns\": " + optNs(st.gpuEndNs);
  out += ", \"gpu_attributed_ns\": " + std::to_string(st.gpuAttributedNs);
  out += ", \"gpu_busy_in_host_window_ns\": " + std::to_string(st.gpuBusyInHostWindowNs);
  out += ", \"event_ns\": " + (st.eventNs ? std::to_string(*st.eventNs) : std::string("null"));
  out += ", \"cuda_event_records\": " + std::to_string(st.cudaEventRecords) + ", \"launches\": [";
  for (size_t i = 0; i < st.launches.size(); ++i) {
    const Launch& l = st.launches[i];
    cited.insert(l.gpu);
    if (l.launch != kNoEvent) cited.insert(l.launch);
    if (l.op != kNoEvent) cited.insert(l.op);
    out += (i ? ", " : "") + std::string("{\"api\": ") + jsonString(s.name(s.event(l.launch))) +
           ", \"name\": " + jsonString(s.name(s.event(l.gpu))) + ", \"kind\": " + jsonString(kindOf(s, l.gpu)) +
           ", \"correlation\": " + std::to_string(l.correlation) +
           ", \"op\": " + (l.op == kNoEvent ? std::string("null") : jsonString(s.name(s.event(l.op)))) +
           ", \"launch_ns\": " + std::to_string(l.launchNs) + ", \"gpu_start_ns\": " + std::to_string(l.gpuStartNs) +
           ", \"gpu_end_ns\": " + std::to_string(l.gpuEndNs) + ", \"latency_ns\": " + std::to_string(l.latencyNs()) +
           ", \"launch_event\": " + std::to_string(l.launch) + ", \"gpu_event\": " + std::to_string(l.gpu) + "}";
  }
  out += "], \"sync_waits\": [";
  for (size_t i = 0; i < st.syncWaits.size(); ++i) {
    const SyncWait& w = an.syncWaits[static_cast<size_t>(st.syncWaits[i])];
    out += (i ? ", " : "") + std::string("{\"index\": ") + std::to_string(st.syncWaits[i]) +
           ", \"api\": " + jsonString(w.api) + ", \"dur_ns\": " + std::to_string(w.durNs) + "}";
  }
  return out + "]}";
}

}  // namespace

std::string eventJson(const EventStore& s, EventId id) {
  const Event& e = s.event(id);
  std::string out = "{\"name\": " + jsonString(s.name(e)) + ", \"cat\": " + jsonString(familyName(e.family));
  out += ", \"ts\": \"" + usDecimal(e.start) + "\", \"dur\": \"" + usDecimal(e.dur) + "\"";
  out += ", \"ts_ns\": " + std::to_string(e.start) + ", \"dur_ns\": " + std::to_string(e.dur);
  if (e.correlation > 0) out += ", \"correlation\": " + std::to_string(e.correlation);
  if (e.externalId > 0) out += ", \"external_id\": " + std::to_string(e.externalId);
  return out + ", \"lane\": " + jsonString(s.lanes()[e.lane].label) + "}";
}

std::string explainJson(const EventStore& s, const Explanation& a) {
  std::set<EventId> cited;
  std::string out = "{\"trace\": " + jsonString(s.meta().sourcePath) + ", \"step_source\": " + jsonString(a.stepSource);
  out += ", \"steps\": [";
  for (size_t i = 0; i < a.steps.size(); ++i) out += (i ? ", " : "") + stepJson(s, a, a.steps[i], cited);
  out += "], \"sync_waits\": [";
  for (size_t i = 0; i < a.syncWaits.size(); ++i) out += (i ? ", " : "") + syncJson(s, a.syncWaits[i], cited);
  out += "], \"ledger\": " + ledgerJson(s, a.ledger, false);
  for (const auto& d : a.ledger.doubleCounting) cited.insert(d.evidence.begin(), d.evidence.end());
  cited.insert(a.ledger.unlinkedGpu.begin(), a.ledger.unlinkedGpu.end());
  out += ", \"verdicts\": [";
  std::set<std::string> keys;
  for (size_t i = 0; i < a.verdicts.size(); ++i) {
    const Verdict& v = a.verdicts[i];
    out += (i ? ", " : "") + std::string("{\"step\": ") + (v.step.empty() ? "null" : jsonString(v.step)) +
           ", \"kind\": " + jsonString(v.kind) + ", \"text\": " + jsonString(v.text) +
           ", \"evidence\": " + idList(v.evidence, cited) + ", \"glossary\": [";
    for (size_t k = 0; k < v.glossary.size(); ++k) {
      out += (k ? ", " : "") + jsonString(v.glossary[k]);
      keys.insert(v.glossary[k]);
    }
    out += "]}";
  }
  out += "], \"glossary\": {";
  bool first = true;
  for (const auto& k : keys) {
    const GlossaryEntry* g = glossaryFor(k);
    if (!g) continue;
    out += (first ? "" : ", ") + jsonString(k) + ": " + jsonString(g->text);
    first = false;
  }
  out += "}, \"events\": {";
  first = true;
  for (EventId id : cited) {
    out += (first ? "\"" : ", \"") + std::to_string(id) + "\": " + eventJson(s, id);
    first = false;
  }
  return out + "}}\n";
}

std::string explainText(const EventStore& s, const Explanation& a) {
  std::string out = "trace: " + s.meta().sourcePath + "\n";
  out += "steps (" + a.stepSource + "): " + std::to_string(a.steps.size()) + "\n";
  for (const auto& st : a.steps) {
    out += "  " + st.name + (st.wrapped ? " [wrapped]" : "") + ": host " + usText(st.hostEndNs - st.hostStartNs);
    if (st.launches.empty())
      out += ", launched no GPU work";
    else
      out += ", launched " + std::to_string(st.launches.size()) + " GPU activities, " + usText(st.gpuAttributedNs) +
             " (GPU window " + usText(st.gpuEndNs - st.gpuStartNs) + ", ends " +
             (st.gpuEndNs > st.hostEndNs ? usText(st.gpuEndNs - st.hostEndNs) + " after"
                                         : usText(st.hostEndNs - st.gpuEndNs) + " before") +
             " the host window closes)";
    out += ", GPU busy in window " + usText(st.gpuBusyInHostWindowNs);
    if (st.cudaEventRecords) out += ", " + std::to_string(st.cudaEventRecords) + " cudaEventRecord";
    out += "\n";
    for (const auto& l : st.launches)
      out += "      " + std::string(s.name(s.event(l.gpu))).substr(0, 60) + " (correlation " +
             std::to_string(l.correlation) + "): " + usText(l.gpuEndNs - l.gpuStartNs) + ", launch latency " +
             usText(l.latencyNs()) + "\n";
  }
  out += "sync waits: " + std::to_string(a.syncWaits.size()) + "\n";
  for (const auto& w : a.syncWaits) {
    out += "  " + w.api + " " + usText(w.durNs) + " (" + w.issuer + "): ";
    for (size_t i = 0; i < w.opChain.size(); ++i) out += (i ? " > " : "") + w.opChain[i];
    out += "\n";
    for (const auto& aw : w.awaited)
      out += "      awaited " + std::string(s.name(s.event(aw.gpu))).substr(0, 60) + " (correlation " +
             std::to_string(aw.correlation) + "), ended " + usText(aw.gpuEndNs - w.startNs) + " into the wait\n";
  }
  out += ledgerText(a.ledger);
  out += "verdicts:\n";
  for (const auto& v : a.verdicts) {
    if (v.kind == "glossary") continue;
    out += "  - " + (v.step.empty() ? std::string() : "[" + v.step + "] ") + v.text + "\n";
  }
  out += "glossary:\n";
  for (const auto& v : a.verdicts)
    if (v.kind == "glossary") out += "  - " + v.text + "\n";
  return out;
}

}  // namespace attnscope
