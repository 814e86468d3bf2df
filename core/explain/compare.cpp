#include "core/explain/compare.h"

#include "core/snapshot/trace_snapshot.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/explain/compare_internal.h"
#include "core/run/timing_methods.h"

#include "core/text/json_out.h"

namespace attnscope {

namespace {

// The causal sentence only when the numbers agree with it: less host time
// between launch and sync leaves more GPU work to wait for, and vice versa.
// Deltas are B - A (the one sign convention of every compare output).
std::string explainShift(int64_t hostDelta, int64_t waitDelta) {
  if (hostDelta > 0 && waitDelta < 0)
    return "Less host time before the sync in A, so more of the GPU work was left to wait for.";
  if (hostDelta < 0 && waitDelta > 0)
    return "More host time before the sync in A, so less of the GPU work was left to wait for.";
  if (hostDelta == 0) return "Same host time before the sync.";
  return "The host-time difference does not explain this shift alone (other GPU work queued before the sync "
         "moved too).";
}

// Metric values of each joined kind, in output order.
using Metrics = std::vector<std::pair<const char*, int64_t>>;

Metrics metricsOf(const KeyAverageRow& r) {
  return {{"calls", static_cast<int64_t>(r.calls)},
          {"self_cpu_ns", r.selfCpuNs},
          {"cpu_total_ns", r.cpuTotalNs},
          {"self_device_ns", r.selfDeviceNs},
          {"device_total_ns", r.deviceTotalNs}};
}

Metrics metricsOf(const StepReport& s) {
  return {{"host_ns", s.hostEndNs - s.hostStartNs},
          {"gpu_attributed_ns", s.gpuAttributedNs},
          {"gpu_busy_in_host_window_ns", s.gpuBusyInHostWindowNs},
          {"launches", static_cast<int64_t>(s.launches.size())},
          {"gpu_end_after_host_ns", s.gpuEndNs < 0 ? 0 : s.gpuEndNs - s.hostEndNs},
          {"sync_waits", static_cast<int64_t>(s.syncWaits.size())},
          {"cuda_event_records", static_cast<int64_t>(s.cudaEventRecords)}};
}

Metrics metricsOf(const SyncWait& w) {
  return {{"dur_ns", w.durNs}, {"awaited", static_cast<int64_t>(w.awaited.size())}};
}

// Joins by key, occurrence by occurrence, in A's order then B's leftovers.
template <class T, class KeyFn>
std::vector<Pair<T>> join(const std::vector<T>& a, const std::vector<T>& b, KeyFn key) {
  std::vector<Pair<T>> out;
  std::map<std::string, std::vector<size_t>> inB;
  for (size_t i = 0; i < b.size(); ++i) inB[key(b[i])].push_back(i);
  std::vector<bool> used(b.size(), false);
  for (const T& x : a) {
    Pair<T> p{key(x), x, std::nullopt};
    auto& slots = inB[p.key];
    if (!slots.empty()) {
      p.b = b[slots.front()];
      used[slots.front()] = true;
      slots.erase(slots.begin());
    }
    out.push_back(std::move(p));
  }
  for (size_t i = 0; i < b.size(); ++i)
    if (!used[i]) out.push_back({key(b[i]), std::nullopt, b[i]});
  return out;
}

// Sync waits are joined by API and the ops that issued them, leaving the
// user annotations out.
std::string syncKey(const EventStore& s, const SyncWait& w) {
  std::string k = w.api + " [" + w.issuer + "]";
  for (size_t i = 0; i < w.chainEvents.size(); ++i)
    if (s.event(w.chainEvents[i]).family != Family::UserAnnotation) k += " > " + w.opChain[i];
  return k;
}

// The awaited activity that ran longest (the one the wait is mostly about).
const Awaited* mainAwaited(const SyncWait& w) {
  const Awaited* best = nullptr;
  for (const auto& a : w.awaited)
    if (!best || a.gpuEndNs - a.gpuStartNs > best->gpuEndNs - best->gpuStartNs) best = &a;
  return best;
}

std::string signedUs(int64_t ns) { return (ns >= 0 ? "+" : "-") + usText(ns >= 0 ? ns : -ns); }

void perturbation(const EventStore& ea, const EventStore& eb, const Explanation& a, const Explanation& b,
                  Comparison& c) {
  auto annotations = [](const EventStore& s) {
    uint64_t n = 0;
    for (const Event& e : s.events()) n += e.family == Family::UserAnnotation;
    return n;
  };
  auto span = [](const Explanation& x) {
    return x.steps.empty() ? int64_t{0} : x.steps.back().hostEndNs - x.steps.front().hostStartNs;
  };
  const uint64_t na = annotations(ea), nb = annotations(eb);
  c.perturbation.push_back("scopes: A has " + std::to_string(na) + " user annotations (record_function), B " +
                           std::to_string(nb) + "; the steps' host span is " + spanDurationText(span(a)) + " in A vs " +
                           spanDurationText(span(b)) + " in B (" + (span(b) >= span(a) ? "+" : "-") +
                           spanDurationText(std::abs(span(b) - span(a))) + ", B - A).");
  // One line per wait only when there are few (the attention block's); a training loop's waits are
  // compared by cause among the changes.
  constexpr size_t kMaxWaitLines = 20;
  if (a.syncWaits.size() > kMaxWaitLines || b.syncWaits.size() > kMaxWaitLines) {
    c.perturbation.push_back("sync waits: " + std::to_string(a.syncWaits.size()) + " in A, " +
                             std::to_string(b.syncWaits.size()) + " in B; they are compared by cause (" +
                             std::to_string(a.syncGroups.size()) + " and " + std::to_string(b.syncGroups.size()) +
                             " groups) among the changes.");
  }
  // The waits that moved most first; one that did not move is no change and is not listed.
  std::vector<std::pair<int64_t, std::string>> moved;
  for (const auto& p : c.syncWaits) {
    if (a.syncWaits.size() > kMaxWaitLines || b.syncWaits.size() > kMaxWaitLines) break;
    if (!p.a || !p.b) {
      const SyncWait& w = p.a ? *p.a : *p.b;
      c.perturbation.push_back("sync: " + w.api + " (" + w.issuer + ", " + usText(w.durNs) + ") is only in " +
                               (p.a ? "A" : "B") + ".");
      continue;
    }
    if (p.b->durNs == p.a->durNs) continue;
    std::string t = "sync wait moved: " + p.key + " waited " + usText(p.a->durNs) + " in A vs " + usText(p.b->durNs) +
                    " in B (" + signedUs(p.b->durNs - p.a->durNs) + ", B - A).";
    const Awaited* wa = mainAwaited(*p.a);
    const Awaited* wb = mainAwaited(*p.b);
    if (wa && wb) {
      const int64_t hostA = p.a->startNs - wa->queuedNs, hostB = p.b->startNs - wb->queuedNs;
      t += " It awaited " + std::string(ea.name(ea.event(wa->gpu))).substr(0, 40) + "... (correlation " +
           std::to_string(wa->correlation) + " / " + std::to_string(wb->correlation) + "), which ran " +
           usText(wa->gpuEndNs - wa->gpuStartNs) + " vs " + usText(wb->gpuEndNs - wb->gpuStartNs) +
           " on the GPU; host time from its launch to the sync was " + usText(hostA) + " in A vs " + usText(hostB) +
           " in B. " + explainShift(hostB - hostA, p.b->durNs - p.a->durNs);
    }
    moved.emplace_back(std::abs(p.b->durNs - p.a->durNs), std::move(t));
  }
  std::stable_sort(moved.begin(), moved.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  for (auto& [delta, t] : moved) c.perturbation.push_back(std::move(t));
  c.perturbation.push_back("CUDA-event markers: " + std::to_string(a.ledger.cudaEventRecords) +
                           " cudaEventRecord in A, " + std::to_string(b.ledger.cudaEventRecords) + " in B" +
                           (a.ledger.cudaEventRecords || b.ledger.cudaEventRecords
                                ? " (each op and record_function adds two; their GPU times are not in the files, so "
                                  "event-time shifts can only be counted, not measured, here)."
                                : " (no CUDA-event timing in these traces; GPU times come from kernel records)."));
}

template <class T>
void metricsJson(std::string& out, const Pair<T>& p) {
  const Metrics ma = p.a ? metricsOf(*p.a) : Metrics{};
  const Metrics mb = p.b ? metricsOf(*p.b) : Metrics{};
  const Metrics& names = p.a ? ma : mb;
  out += "{\"key\": " + jsonString(p.key) + ", \"in_a\": " + (p.a ? "true" : "false") +
         ", \"in_b\": " + (p.b ? "true" : "false");
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string n = names[i].first;
    const std::string va = p.a ? std::to_string(ma[i].second) : "null";
    const std::string vb = p.b ? std::to_string(mb[i].second) : "null";
    out += ", \"" + n + "_a\": " + va + ", \"" + n + "_b\": " + vb + ", \"" + n +
           "_delta\": " + (p.a && p.b ? std::to_string(mb[i].second - ma[i].second) : "null");
  }
  out += "}";
}

template <class T>
void metricsCsv(std::string& out, const char* section, const Pair<T>& p) {
  const Metrics ma = p.a ? metricsOf(*p.a) : Metrics{};
  const Metrics mb = p.b ? metricsOf(*p.b) : Metrics{};
  const Metrics& names = p.a ? ma : mb;
  std::string key = p.key;
  for (char& ch : key)
    if (ch == '"') ch = '\'';
  for (size_t i = 0; i < names.size(); ++i) {
    out += std::string(section) + ",\"" + key + "\"," + names[i].first + "," +
           (p.a ? std::to_string(ma[i].second) : "") + "," + (p.b ? std::to_string(mb[i].second) : "") + "," +
           (p.a && p.b ? std::to_string(mb[i].second - ma[i].second) : "") + "\n";
  }
}

template <class T>
void metricsText(std::string& out, const Pair<T>& p) {
  const Metrics ma = p.a ? metricsOf(*p.a) : Metrics{};
  const Metrics mb = p.b ? metricsOf(*p.b) : Metrics{};
  const Metrics& names = p.a ? ma : mb;
  out += "  " + p.key + (p.a && p.b ? "" : p.a ? "  (only in A)" : "  (only in B)") + "\n   ";
  for (size_t i = 0; i < names.size(); ++i) {
    out += std::string(" ") + names[i].first + " " + (p.a ? std::to_string(ma[i].second) : "-") + " / " +
           (p.b ? std::to_string(mb[i].second) : "-");
    if (p.a && p.b && ma[i].second != mb[i].second) out += " (" + std::to_string(mb[i].second - ma[i].second) + ")";
    out += ";";
  }
  out += "\n";
}

}  // namespace

Comparison compareTraces(const TraceSnapshot& sa, const TraceSnapshot& sb, const CompareOptions& opt) {
  const EventStore& ea = *sa.store;
  const EventStore& eb = *sb.store;
  Comparison c;
  c.options = opt;
  c.pathA = ea.meta().sourcePath;
  c.pathB = eb.meta().sourcePath;
  const KeyAverages& ka = *sa.table(opt.attribution, opt.groupBy);
  const KeyAverages& kb = *sb.table(opt.attribution, opt.groupBy);
  c.rows = join(ka.rows, kb.rows, [](const KeyAverageRow& r) {
    return roleName(r.name) + (r.deviceType == DeviceType::Cuda ? " [cuda]" : " [cpu]") +
           (r.inputShapes.empty() ? "" : " " + r.inputShapes);
  });
  const Explanation& a = *sa.explanation;
  const Explanation& b = *sb.explanation;
  c.steps = join(a.steps, b.steps, [](const StepReport& s) { return s.name; });
  compare_detail::compareCauses(a.diagnosis, b.diagnosis, c);
  c.syncWaits = join(a.syncWaits, b.syncWaits, [&](const SyncWait& w) {
    // Each side's events belong to its own store: find which one holds it.
    const bool isA = std::any_of(a.syncWaits.begin(), a.syncWaits.end(), [&](const SyncWait& x) { return &x == &w; });
    return syncKey(isA ? ea : eb, w);
  });
  compare_detail::stepView(sa, sb, c);
  compare_detail::findChanges(sa, sb, c);
  perturbation(ea, eb, a, b, c);
  if (sa.engine && sb.engine) c.engineTiming = compareEngineTiming(*sa.engine, *sb.engine);
  return c;
}

std::vector<EngineTimingChange> compareEngineTiming(const EngineRun& a, const EngineRun& b) {
  std::vector<EngineTimingChange> out;
  for (const TimingSeries& ta : a.timing) {
    const TimingSeries* tb = b.timingOf(ta.method);
    if (!tb) continue;
    // On the CPU neither CUDA events nor CUPTI kernels measure anything.
    if (!timingMeaningful(ta.method, a.device.isCpu() || b.device.isCpu())) continue;
    const std::vector<StepSpread> sa = ta.spread(), sb = tb->spread();
    for (size_t k = 0; k < sa.size() && k < sb.size(); ++k) {
      if (sa[k].n == 0 || sb[k].n == 0) continue;
      EngineTimingChange ch;
      ch.method = ta.method;
      ch.step = k < a.steps.size() ? a.steps[k].name : "step " + std::to_string(k + 1);
      ch.a = sa[k];
      ch.b = sb[k];
      ch.deltaNs = ch.b.medianNs - ch.a.medianNs;
      if (ch.a.n < 2 || ch.b.n < 2)
        ch.verdict = "one iteration";
      else if (insideSpread(ch.b.medianNs, ch.a) && insideSpread(ch.a.medianNs, ch.b))
        ch.verdict = "noise";
      else
        ch.verdict = "change";
      out.push_back(std::move(ch));
    }
  }
  return out;
}

std::string compareText(const Comparison& c, const CompareOutputOptions& opt) {
  std::vector<std::string> lines;
  lines.push_back("A: " + c.pathA);
  lines.push_back("B: " + c.pathB);
  lines.push_back(
      "every difference is B - A; a change smaller than the step-to-step spread (p25-p75) inside both "
      "traces is called noise");
  if (!c.engineTiming.empty()) {
    lines.push_back("measured by the engine, per step: median [p10-p90] over the iterations, A -> B (B - A):");
    for (const EngineTimingChange& t : c.engineTiming) {
      auto fig = [](const StepSpread& s) { return spreadText(s, " [one iteration]"); };
      std::string l = "  " + t.method + " " + t.step + ": " + fig(t.a) + " -> " + fig(t.b) + " (" +
                      signedUs(std::llround(t.deltaNs)) + ")";
      if (t.verdict == "noise")
        l += " noise: inside both runs' spreads";
      else if (t.verdict == "one iteration")
        l += " cannot tell from noise: one iteration has no spread (run with --iters 20)";
      else
        l += " change: a median outside the other run's spread";
      lines.push_back(std::move(l));
    }
  }
  if (!c.causesLine.empty()) lines.push_back(c.causesLine);
  for (std::string& l : compare_detail::stepViewLines(c, opt.all)) lines.push_back(std::move(l));
  size_t noise = 0;
  for (const Change& ch : c.changes) noise += ch.noise;
  lines.push_back(std::string("what changed") + (c.stepPairing == "order" ? ", per step," : " in the steps,") +
                  " ranked by the time at stake: " + std::to_string(c.changes.size() - noise) + " changes" +
                  (noise ? " (and " + std::to_string(noise) + " within the noise)" : std::string()) + ":");
  const size_t maxChanges = opt.all ? SIZE_MAX : 40;
  size_t shown = 0;
  for (const Change& ch : c.changes) {
    if (ch.noise && !opt.all) continue;
    if (shown >= maxChanges) {
      lines.push_back("  ... " + std::to_string(c.changes.size() - noise - shown) + " more (--all)");
      break;
    }
    lines.push_back("  " + std::to_string(++shown) + ". " + ch.text);
  }
  lines.push_back("perturbation:");
  for (const auto& p : c.perturbation) lines.push_back("  - " + p);
  if (opt.all) {
    std::string out = std::string("attribution: ") +
                      (c.options.attribution == Attribution::Torch ? "torch" : "corrected") +
                      " (values A / B (B - A), ns)\nsync waits:\n";
    for (const auto& p : c.syncWaits) metricsText(out, p);
    out += "steps:\n";
    for (const auto& p : c.steps) metricsText(out, p);
    out += "rows:\n";
    for (const auto& p : c.rows) metricsText(out, p);
    size_t from = 0;
    while (from < out.size()) {
      const size_t nl = out.find('\n', from);
      lines.push_back(out.substr(from, nl - from));
      from = nl + 1;
    }
  } else {
    lines.push_back("(each step, sync wait and table row with A, B and B - A: --all, or --format json|csv)");
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!opt.all && i + 1 == kMaxTextLines && lines.size() > kMaxTextLines) {
      out += "(" + std::to_string(lines.size() - i) + " more lines: --all prints everything)\n";
      break;
    }
    out += (opt.all ? lines[i] : clipText(lines[i], kMaxLineChars)) + "\n";
  }
  return out;
}

namespace {

std::string spreadJson(const Spread& s) {
  return "{\"n\": " + std::to_string(s.n) + ", \"median\": " + std::to_string(std::llround(s.median)) +
         ", \"p25\": " + std::to_string(std::llround(s.p25)) + ", \"p75\": " + std::to_string(std::llround(s.p75)) +
         "}";
}

}  // namespace

std::string compareJson(const Comparison& c, const CompareOutputOptions& opt) {
  std::string out = "{\"a\": " + jsonString(c.pathA) + ", \"b\": " + jsonString(c.pathB) +
                    ", \"sign\": \"B - A\", \"attribution\": " +
                    (c.options.attribution == Attribution::Torch ? "\"torch\"" : "\"corrected\"");
  out += ", \"causes_line\": " + jsonString(c.causesLine) + ", \"causes\": [";
  for (size_t i = 0; i < c.causes.size(); ++i) {
    const CauseChange& k = c.causes[i];
    out += (i ? ", " : "") + std::string("{\"code\": ") + jsonString(causeCode(k.code)) +
           ", \"a_ns\": " + std::to_string(std::llround(k.aNs)) + ", \"b_ns\": " + std::to_string(std::llround(k.bNs)) +
           ", \"delta_ns\": " + std::to_string(std::llround(k.deltaNs)) + "}";
  }
  out += "]";
  out += ", \"step_pairing\": " + jsonString(c.stepPairing) + ", \"step_source_a\": " + jsonString(c.stepSourceA) +
         ", \"step_source_b\": " + jsonString(c.stepSourceB) + ", \"steps_a\": " + std::to_string(c.stepsA) +
         ", \"steps_b\": " + std::to_string(c.stepsB) + ", \"step_stats\": [";
  for (size_t i = 0; i < c.stepStats.size(); ++i) {
    const StepStat& s = c.stepStats[i];
    out += (i ? ", " : "") + std::string("{\"metric\": ") + jsonString(s.metric) +
           ", \"label\": " + jsonString(s.label) + ", \"a\": " + spreadJson(s.a) + ", \"b\": " + spreadJson(s.b) +
           ", \"delta_ns\": " + std::to_string(std::llround(s.deltaNs)) +
           ", \"noise\": " + (s.noise ? "true" : "false") + "}";
  }
  out += "], \"engine_timing\": [";
  for (size_t i = 0; i < c.engineTiming.size(); ++i) {
    const EngineTimingChange& t = c.engineTiming[i];
    out += (i ? ", " : "") + std::string("{\"method\": ") + jsonString(t.method) + ", \"step\": " + jsonString(t.step) +
           ", \"a\": " + attnscope::spreadJson(t.a) + ", \"b\": " + attnscope::spreadJson(t.b) +
           ", \"delta_ns\": " + std::to_string(std::llround(t.deltaNs)) + ", \"verdict\": " + jsonString(t.verdict) +
           "}";
  }
  const size_t maxFindings = opt.all ? SIZE_MAX : kMaxJsonVerdicts;
  out += "], \"findings_total\": " + std::to_string(c.changes.size()) + ", \"findings\": [";
  for (size_t i = 0; i < c.changes.size() && i < maxFindings; ++i) {
    const Change& ch = c.changes[i];
    out += (i ? ", " : "") + std::string("{\"rank\": ") + std::to_string(i + 1) + ", \"kind\": " + jsonString(ch.kind) +
           ", \"key\": " + jsonString(ch.key) + ", \"status\": " + jsonString(ch.status) +
           ", \"a_per_step_ns\": " + std::to_string(std::llround(ch.aNs)) +
           ", \"b_per_step_ns\": " + std::to_string(std::llround(ch.bNs)) +
           ", \"delta_per_step_ns\": " + std::to_string(std::llround(ch.deltaNs)) +
           ", \"a_calls_per_step\": " + std::to_string(ch.aCalls) +
           ", \"b_calls_per_step\": " + std::to_string(ch.bCalls) + ", \"a_spread\": " + spreadJson(ch.a) +
           ", \"b_spread\": " + spreadJson(ch.b) + ", \"noise\": " + (ch.noise ? "true" : "false") +
           ", \"text\": " + jsonString(ch.text) + "}";
  }
  out += "]";
  out += ", \"perturbation\": [";
  for (size_t i = 0; i < c.perturbation.size(); ++i) out += (i ? ", " : "") + jsonString(c.perturbation[i]);
  auto section = [&](const char* name, const auto& pairs) {
    out += std::string("], \"") + name + "\": [";
    for (size_t i = 0; i < pairs.size(); ++i) {
      if (i) out += ", ";
      metricsJson(out, pairs[i]);
    }
  };
  section("sync_waits", c.syncWaits);
  section("steps", c.steps);
  section("rows", c.rows);
  return out + "]}\n";
}

std::string compareCsv(const Comparison& c) {
  std::string out = "section,key,metric,a,b,delta\n";
  for (const auto& p : c.syncWaits) metricsCsv(out, "sync_wait", p);
  for (const auto& p : c.steps) metricsCsv(out, "step", p);
  for (const auto& p : c.rows) metricsCsv(out, "row", p);
  for (const StepStat& st : c.stepStats)
    out += "step_median,\"" + st.label + "\"," + st.metric + "," + std::to_string(std::llround(st.a.median)) + "," +
           std::to_string(std::llround(st.b.median)) + "," + std::to_string(std::llround(st.deltaNs)) + "\n";
  for (const EngineTimingChange& t : c.engineTiming)
    out += "engine_timing,\"" + t.method + " " + t.step + "\",median_ns," + std::to_string(std::llround(t.a.medianNs)) +
           "," + std::to_string(std::llround(t.b.medianNs)) + "," + std::to_string(std::llround(t.deltaNs)) + "\n";
  for (const Change& ch : c.changes) {
    std::string key = ch.kind + ": " + ch.key;
    for (char& q : key)
      if (q == '"') q = '\'';
    out += "change,\"" + key + "\",per_step_ns," + std::to_string(std::llround(ch.aNs)) + "," +
           std::to_string(std::llround(ch.bNs)) + "," + std::to_string(std::llround(ch.deltaNs)) + "\n";
  }
  return out;
}

}  // namespace attnscope
