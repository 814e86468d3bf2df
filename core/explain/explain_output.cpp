// explain's text and JSON (schema: docs/explain-schema.md).
#include <cmath>
#include <cstdint>
#include <set>
#include <unordered_map>

#include "core/explain/explanation.h"
#include "core/explain/glossary.h"
#include "core/run/engine_run.h"
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
  const Family f = s.event(id).family;
  const std::string_view w = gpuWorkWord(f);
  return std::string(w.empty() ? familyName(f) : w);
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

std::string stepJson(const EventStore& s, const Explanation& an, const StepReport& st, std::set<EventId>& cited,
                     bool all) {
  std::string out = "{\"name\": " + jsonString(st.name) + ", \"wrapped\": " + (st.wrapped ? "true" : "false");
  out += ", \"event\": " + (st.event == kNoEvent ? std::string("null") : std::to_string(st.event));
  if (st.event != kNoEvent) cited.insert(st.event);
  out +=
      ", \"host_start_ns\": " + std::to_string(st.hostStartNs) + ", \"host_end_ns\": " + std::to_string(st.hostEndNs);
  out += ", \"gpu_start_ns\": " + optNs(st.gpuStartNs) + ", \"gpu_end_ns\": " + optNs(st.gpuEndNs);
  out += ", \"gpu_attributed_ns\": " + std::to_string(st.gpuAttributedNs);
  out += ", \"kernel_ns\": " + std::to_string(st.kernelNs) + ", \"memcpy_ns\": " + std::to_string(st.memcpyNs) +
         ", \"memset_ns\": " + std::to_string(st.memsetNs) +
         ", \"communication_ns\": " + std::to_string(st.communicationNs);
  out += ", \"gpu_busy_in_host_window_ns\": " + std::to_string(st.gpuBusyInHostWindowNs);
  out += ", \"idle_ns\": " + std::to_string(st.idleNs) + ", \"sync_wait_ns\": " + std::to_string(st.syncWaitNs);
  out += ", \"spill_out_ns\": " + std::to_string(st.spillOutNs) + ", \"spill_in_ns\": " + std::to_string(st.spillInNs) +
         ", \"spill_from\": [";
  for (size_t i = 0; i < st.spillFrom.size(); ++i)
    out += (i ? ", " : "") + jsonString(an.steps[static_cast<size_t>(st.spillFrom[i])].name);
  out += "], \"graph_launches\": " + std::to_string(st.graphLaunches);
  out += ", \"event_ns\": " + (st.eventNs ? std::to_string(*st.eventNs) : std::string("null"));
  out += ", \"cuda_event_records\": " + std::to_string(st.cudaEventRecords) + ", \"regions\": [";
  for (size_t i = 0; i < st.regions.size(); ++i) {
    const Region& r = st.regions[i];
    out += (i ? ", " : "") + std::string("{\"name\": ") + jsonString(r.name) +
           ", \"event\": " + std::to_string(r.event) + ", \"host_start_ns\": " + std::to_string(r.hostStartNs) +
           ", \"host_end_ns\": " + std::to_string(r.hostEndNs) +
           ", \"gpu_attributed_ns\": " + std::to_string(r.gpuAttributedNs) +
           ", \"launches\": " + std::to_string(r.launches) + "}";
  }
  // The launches themselves, the first kMaxJsonLaunchesPerStep of them (--all: every one): a step of a
  // large model launches thousands, and their dump made explain's JSON twice as slow as `info`.
  const size_t shown = all ? st.launches.size() : std::min(st.launches.size(), kMaxJsonLaunchesPerStep);
  out += "], \"launches_total\": " + std::to_string(st.launches.size()) + ", \"launches\": [";
  for (size_t i = 0; i < shown; ++i) {
    const Launch& l = st.launches[i];
    out += (i ? ", " : "") + std::string("{\"api\": ") +
           (l.launch == kNoEvent ? std::string("null") : jsonString(s.name(s.event(l.launch)))) +
           ", \"name\": " + jsonString(s.name(s.event(l.gpu))) + ", \"kind\": " + jsonString(kindOf(s, l.gpu)) +
           ", \"correlation\": " + std::to_string(l.correlation) +
           ", \"op\": " + (l.op == kNoEvent ? std::string("null") : jsonString(s.name(s.event(l.op)))) +
           ", \"launch_ns\": " + std::to_string(l.launchNs) + ", \"gpu_start_ns\": " + std::to_string(l.gpuStartNs) +
           ", \"gpu_end_ns\": " + std::to_string(l.gpuEndNs) + ", \"latency_ns\": " + std::to_string(l.latencyNs()) +
           ", \"graph\": " + (l.graph ? "true" : "false") + ", \"launch_event\": " + std::to_string(l.launch) +
           ", \"gpu_event\": " + std::to_string(l.gpu) + "}";
  }
  out += "], \"sync_waits\": [";
  for (size_t i = 0; i < st.syncWaits.size(); ++i) {
    const SyncWait& w = an.syncWaits[static_cast<size_t>(st.syncWaits[i])];
    out += (i ? ", " : "") + std::string("{\"index\": ") + std::to_string(st.syncWaits[i]) +
           ", \"api\": " + jsonString(w.api) + ", \"dur_ns\": " + std::to_string(w.durNs) + "}";
  }
  return out + "]}";
}

std::string groupJson(const SyncGroup& g) {
  std::string out = "{\"key\": " + jsonString(g.key) + ", \"api\": " + jsonString(g.api) +
                    ", \"count\": " + std::to_string(g.count) + ", \"total_ns\": " + std::to_string(g.totalNs) +
                    ", \"max_ns\": " + std::to_string(g.maxNs) + ", \"steps\": [";
  for (size_t i = 0; i < g.steps.size(); ++i) out += (i ? ", " : "") + std::to_string(g.steps[i]);
  out += "], \"awaited\": [";
  for (size_t i = 0; i < g.awaitedTop.size(); ++i)
    out += (i ? ", " : "") + std::string("{\"name\": ") + jsonString(g.awaitedTop[i].first) +
           ", \"ns\": " + std::to_string(g.awaitedTop[i].second) + "}";
  return out + "]}";
}

// The verdicts shown: at most perStep per step and perTrace for the whole trace, in rank order.
std::vector<const Verdict*> boundedVerdicts(const Explanation& a, size_t perStep, size_t perTrace, size_t total) {
  std::vector<const Verdict*> out;
  std::unordered_map<std::string, size_t> perStepCount;
  size_t traceCount = 0;
  for (const Verdict& v : a.verdicts) {
    if (out.size() >= total) break;
    if (v.step.empty()) {
      if (traceCount++ >= perTrace) continue;
    } else if (perStepCount[v.step]++ >= perStep) {
      continue;
    }
    out.push_back(&v);
  }
  return out;
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

std::string explainJson(const EventStore& s, const Explanation& a, const ExplainOutputOptions& opt) {
  std::set<EventId> cited;
  std::string out = "{\"trace\": " + jsonString(s.meta().sourcePath) + ", \"step_source\": " + jsonString(a.stepSource);
  out += ", \"partial\": " + (a.partial.empty() ? std::string("null") : jsonString(a.partial));
  out += ", \"diagnosis\": " + diagnosisJson(a.diagnosis);
  out += ", \"answer\": " + (opt.answerJson.empty() ? std::string("null") : opt.answerJson);
  out += ", \"founding_answer\": " + (opt.foundingJson.empty() ? std::string("null") : opt.foundingJson);
  for (const auto* list : {&a.diagnosis.causes, &a.diagnosis.minor})
    for (const DiagnosedCause& c : *list) {
      cited.insert(c.evidence.begin(), c.evidence.end());
      for (const EvidenceItem& it : c.items) cited.insert(it.events.begin(), it.events.end());
    }
  out += ", \"steps\": [";
  for (size_t i = 0; i < a.steps.size(); ++i) out += (i ? ", " : "") + stepJson(s, a, a.steps[i], cited, opt.all);
  out += "], \"sync_waits\": [";
  for (size_t i = 0; i < a.syncWaits.size(); ++i) out += (i ? ", " : "") + syncJson(s, a.syncWaits[i], cited);
  out += "], \"sync_groups\": [";
  for (size_t i = 0; i < a.syncGroups.size(); ++i) out += (i ? ", " : "") + groupJson(a.syncGroups[i]);
  out += "], \"profiler_inflation\": [";
  for (size_t i = 0; i < a.inflation.size(); ++i) {
    const ProfilerInflation& p = a.inflation[i];
    out += (i ? ", " : "") + std::string("{\"step\": ") + jsonString(p.step) +
           ", \"no_profiler\": " + spreadJson(p.noProfiler) + ", \"collector\": " + spreadJson(p.collector) +
           ", \"torch\": " + (p.torch.n ? spreadJson(p.torch) : std::string("null")) + "}";
  }
  out += "], \"run_notes\": [";
  for (size_t i = 0; i < a.runNotes.size(); ++i) out += (i ? ", " : "") + jsonString(a.runNotes[i]);
  out += "], \"ledger\": " + ledgerJson(s, a.ledger, false);
  for (const auto& d : a.ledger.doubleCounting) cited.insert(d.evidence.begin(), d.evidence.end());
  cited.insert(a.ledger.unlinkedGpu.begin(), a.ledger.unlinkedGpu.end());
  out += ", \"verdicts\": [";
  std::set<std::string> keys;
  const auto shown = opt.all ? boundedVerdicts(a, SIZE_MAX, SIZE_MAX, SIZE_MAX)
                             : boundedVerdicts(a, SIZE_MAX, SIZE_MAX, kMaxJsonVerdicts);
  for (size_t i = 0; i < shown.size(); ++i) {
    const Verdict& v = *shown[i];
    out += (i ? ", " : "") + std::string("{\"step\": ") + (v.step.empty() ? "null" : jsonString(v.step)) +
           ", \"kind\": " + jsonString(v.kind) + ", \"ns\": " + std::to_string(v.ns < 0 ? 0 : v.ns) +
           ", \"text\": " + jsonString(opt.all ? v.text : clipText(v.text, kMaxVerdictChars)) +
           ", \"evidence\": " + idList(v.evidence, cited) + ", \"glossary\": [";
    for (size_t k = 0; k < v.glossary.size(); ++k) {
      out += (k ? ", " : "") + jsonString(v.glossary[k]);
      keys.insert(v.glossary[k]);
    }
    out += "]}";
  }
  out += "], \"verdicts_total\": " + std::to_string(a.verdicts.size()) + ", \"glossary\": {";
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

std::string explainText(const EventStore& s, const Explanation& a, const ExplainOutputOptions& opt) {
  std::vector<std::string> lines;
  auto line = [&](std::string text) { lines.push_back(std::move(text)); };
  const size_t maxSteps = opt.all ? SIZE_MAX : 40;
  const size_t maxGroups = opt.all ? SIZE_MAX : 10;
  line("trace: " + s.meta().sourcePath);
  if (!a.partial.empty())
    line("PARTIAL TRACE: " + a.partial +
         (s.meta().partial.empty() ? std::string() : " (work recorded after the cut is missing)"));
  if (!opt.headline.empty()) line(opt.headline);
  if (!a.diagnosis.headline.empty()) {
    if (opt.headline.empty()) line(a.diagnosis.headline);
    line("causes, ranked by the time at stake (" + std::to_string(a.diagnosis.steps.size()) + " step(s), " +
         spanDurationText(a.diagnosis.wallNs) + " of wall time):");
    for (size_t i = 0; i < a.diagnosis.causes.size() && i < (opt.all ? SIZE_MAX : 6); ++i) {
      const DiagnosedCause& c = a.diagnosis.causes[i];
      std::string tags(causeCode(c.code));
      for (size_t k = 0; k < c.hints.size(); ++k) tags += (k ? ", " : "; ") + c.hints[k];
      line("  " + std::to_string(i + 1) + ". " + c.text + " [" + tags + "]");
    }
  }
  for (const std::string& l : opt.answerLines) line(l);
  if (!a.inflation.empty()) {  // engine runs: first, what each step costs
    // The step's cost is its time with no profiler; the rest of its host time in this trace is
    // the collector's own work, and torch.profiler's next to it.
    line(
        "profiler inflation, each step's host time (median [p10-p90] over the iterations): no profiler | under "
        "attnscope's collector (this trace) | under torch.profiler");
    auto added = [](const StepSpread& x, const StepSpread& base) {
      const int64_t d = std::llround(x.medianNs - base.medianNs);
      return " (" + std::string(d >= 0 ? "+" : "-") + usText(d >= 0 ? d : -d) +
             (insideSpread(x.medianNs, base) ? ", within the no-profiler spread" : "") + ")";
    };
    for (const ProfilerInflation& p : a.inflation)
      line("  " + p.step + ": " + spreadText(p.noProfiler) + " | " + spreadText(p.collector) +
           added(p.collector, p.noProfiler) + " | " +
           (p.torch.n ? spreadText(p.torch) + added(p.torch, p.noProfiler) : std::string("not measured")));
    line("  (a step costs its no-profiler time; what a profiler adds is the profiler's own work, not the step's)");
  }
  if (!a.runNotes.empty()) {
    line("what the run recorded:");
    for (const std::string& n : a.runNotes) line("  " + n);
  }
  line("steps (" + a.stepSource + "): " + std::to_string(a.steps.size()));
  if (!a.steps.empty())
    line(
        "  step: host time | GPU work it launched: sum (kernel, copy, memset, communication) | GPU busy, idle in "
        "its window | sync wait | spill out/in");
  for (size_t i = 0; i < a.steps.size() && i < maxSteps; ++i) {
    const StepReport& st = a.steps[i];
    std::string t = "  " + st.name + (st.wrapped ? " [wrapped]" : "") + ": host " + spanDurationText(st.hostNs());
    if (st.launches.empty()) {
      t += " | launched no GPU work";
    } else {
      t += " | " + std::to_string(st.launches.size()) + " GPU activities, " + spanDurationText(st.gpuAttributedNs);
      std::string split;
      for (auto [name, ns] : {std::pair{"kernel", st.kernelNs}, std::pair{"copy", st.memcpyNs},
                              std::pair{"memset", st.memsetNs}, std::pair{"communication", st.communicationNs}})
        if (ns && ns != st.gpuAttributedNs)
          split += (split.empty() ? "" : ", ") + std::string(name) + " " + spanDurationText(ns);
      if (!split.empty()) t += " (" + split + ")";
      t += st.gpuEndNs > st.hostEndNs ? ", ran until " + spanDurationText(st.gpuEndNs - st.hostEndNs) + " after it"
                                      : ", done " + spanDurationText(st.hostEndNs - st.gpuEndNs) + " before its end";
    }
    t += " | busy " + spanDurationText(st.gpuBusyInHostWindowNs) + ", idle " + spanDurationText(st.idleNs);
    if (st.syncWaitNs) t += " | sync " + spanDurationText(st.syncWaitNs);
    if (st.spillOutNs || st.spillInNs)
      t += " | spill " + spanDurationText(st.spillOutNs) + " / " + spanDurationText(st.spillInNs);
    if (st.cudaEventRecords) t += " | " + std::to_string(st.cudaEventRecords) + " cudaEventRecord";
    line(std::move(t));
    if (opt.all) {
      for (const Region& r : st.regions)
        line("      region " + r.name + ": host " + spanDurationText(r.hostEndNs - r.hostStartNs) + ", launched " +
             std::to_string(r.launches) + " GPU activities, " + spanDurationText(r.gpuAttributedNs));
      for (const auto& l : st.launches)
        line("      " + std::string(s.name(s.event(l.gpu))).substr(0, 60) + " (correlation " +
             std::to_string(l.correlation) + "): " + spanDurationText(l.gpuEndNs - l.gpuStartNs) + ", launch latency " +
             spanDurationText(l.latencyNs()));
    } else if (a.steps.size() <= 12 && st.launches.size() <= 8) {
      for (const auto& l : st.launches)
        line("      " + std::string(s.name(s.event(l.gpu))).substr(0, 60) + " (correlation " +
             std::to_string(l.correlation) + "): " + spanDurationText(l.gpuEndNs - l.gpuStartNs) + ", launch latency " +
             spanDurationText(l.latencyNs()));
    }
  }
  if (a.steps.size() > maxSteps) line("  ... and " + std::to_string(a.steps.size() - maxSteps) + " more steps (--all)");
  line("sync waits: " + std::to_string(a.syncWaits.size()) + " in " + std::to_string(a.syncGroups.size()) +
       " group(s) by cause");
  for (size_t i = 0; i < a.syncGroups.size() && i < maxGroups; ++i) {
    const SyncGroup& g = a.syncGroups[i];
    std::string t = "  " + std::to_string(g.count) + "x " + g.key + ": " + spanDurationText(g.totalNs) +
                    " total, longest " + spanDurationText(g.maxNs);
    if (!g.awaitedTop.empty()) {
      t += "; awaited";
      for (size_t k = 0; k < g.awaitedTop.size(); ++k)
        t += (k ? ", " : " ") + g.awaitedTop[k].first.substr(0, 60) + " (" + spanDurationText(g.awaitedTop[k].second) +
             ")";
    }
    line(std::move(t));
  }
  if (a.syncGroups.size() > maxGroups)
    line("  ... and " + std::to_string(a.syncGroups.size() - maxGroups) + " more groups (--all)");
  {
    const std::string ledger = ledgerText(a.ledger);
    size_t p = 0;
    while (p < ledger.size()) {
      const size_t nl = ledger.find('\n', p);
      line(ledger.substr(p, nl == std::string::npos ? std::string::npos : nl - p));
      if (nl == std::string::npos) break;
      p = nl + 1;
    }
  }
  const auto shown = opt.all ? boundedVerdicts(a, SIZE_MAX, SIZE_MAX, SIZE_MAX)
                             : boundedVerdicts(a, kMaxFindingsPerStep, kMaxTraceFindings, SIZE_MAX);
  line("findings (" + std::to_string(shown.size()) + " of " + std::to_string(a.verdicts.size()) +
       ", ranked by the time at stake):");
  std::vector<std::string> glossary;
  for (const Verdict* v : shown) {
    std::string t = "  - " + (v->step.empty() ? std::string() : "[" + v->step + "] ") + v->text;
    (v->kind == "glossary" ? glossary : lines).push_back(std::move(t));
  }
  if (!glossary.empty()) {
    line("glossary:");
    for (std::string& g : glossary) line(std::move(g));
  }
  std::string out;
  const size_t maxLines = opt.all ? SIZE_MAX : kMaxTextLines;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i + 1 == maxLines && lines.size() > maxLines) {
      out += "(" + std::to_string(lines.size() - i) + " more lines: --all prints everything)\n";
      break;
    }
    out += (opt.all ? lines[i] : clipText(lines[i], kMaxLineChars)) + "\n";
  }
  return out;
}

}  // namespace attnscope
