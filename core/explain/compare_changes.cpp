// The step view of a comparison (per-step medians with their spread) and the
// ranked changes (ops, kernels, sync groups), both per step: a trace with
// more steps does not look slower for it.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <regex>

#include "core/explain/compare.h"
#include "core/explain/compare_internal.h"
#include "core/snapshot/trace_snapshot.h"

namespace attnscope {

Spread spreadOf(std::vector<double> v) {
  Spread s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto pct = [&](double q) {
    const double pos = q * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  s.median = pct(0.5);
  s.p25 = pct(0.25);
  s.p75 = pct(0.75);
  return s;
}

std::string roleName(const std::string& name) {
  static const std::regex dataLoader(R"(^enumerate\(DataLoader\)#_\w*DataLoaderIter\.__next__$)");
  if (name.rfind("enumerate(DataLoader)#", 0) == 0 && std::regex_match(name, dataLoader))
    return "enumerate(DataLoader)#*.__next__";
  return name;
}

namespace {

// Noise: both traces have a spread (two steps or more) and the change is smaller than each.
bool isNoise(const Spread& a, const Spread& b, double delta) {
  return a.n >= 2 && b.n >= 2 && std::fabs(delta) < std::min(a.iqr(), b.iqr());
}

std::string signedSpan(double ns) {
  const int64_t v = std::llround(ns);
  return (v >= 0 ? "+" : "-") + spanDurationText(v >= 0 ? v : -v);
}

std::string span(double ns) { return spanDurationText(std::llround(ns)); }

std::string perStep(double x) {
  char b[32];
  std::snprintf(b, sizeof b, x == std::floor(x) ? "%.0f" : "%.1f", x);
  return b;
}

// Which step's host window holds time t (-1: none). Steps are in time order.
struct StepWindows {
  std::vector<int64_t> start, end;
  explicit StepWindows(const Explanation& x) {
    for (const auto& st : x.steps) {
      start.push_back(st.hostStartNs);
      end.push_back(st.hostEndNs);
    }
  }
  int at(int64_t t) const {
    auto it = std::upper_bound(start.begin(), start.end(), t);
    if (it == start.begin()) return -1;
    const size_t i = static_cast<size_t>(it - start.begin()) - 1;
    return t < end[i] ? static_cast<int>(i) : -1;
  }
  size_t size() const { return start.size(); }
};

// One thing's values per step in one trace.
struct Series {
  std::vector<double> ns, calls;
  std::vector<EventId> events;
  void add(size_t step, double v, EventId ev) {
    ns[step] += v;
    calls[step] += 1;
    if (events.size() < 5000) events.push_back(ev);
  }
};

using SeriesMap = std::map<std::pair<std::string, std::string>, Series>;  // (kind, key) -> per step

Series& slot(SeriesMap& m, const std::string& kind, const std::string& key, size_t steps) {
  Series& s = m[{kind, key}];
  if (s.ns.empty()) s.ns.assign(steps, 0), s.calls.assign(steps, 0);
  return s;
}

// Self time of every event: its duration less its children's on the same lane.
std::vector<int64_t> selfTimes(const EventStore& s) {
  std::vector<int64_t> self(s.events().size());
  for (EventId id = 0; id < self.size(); ++id) self[id] += s.event(id).dur;
  for (EventId id = 0; id < self.size(); ++id)
    if (s.event(id).parent != kNoEvent) self[s.event(id).parent] -= s.event(id).dur;
  return self;
}

// `iterations`: the steps are repeats of one loop (one value per step); else they are different
// parts of one pass (the attention block's four steps) and everything in them is one value.
SeriesMap seriesOf(const TraceSnapshot& snap, GroupBy groupBy, bool iterations) {
  const EventStore& s = *snap.store;
  const Explanation& x = *snap.explanation;
  const StepWindows win(x);
  const size_t n = iterations ? win.size() : std::min<size_t>(win.size(), 1);
  SeriesMap m;
  if (n == 0) return m;
  // Ops: the table's CPU rows, Self CPU of their events inside the steps.
  const std::vector<int64_t> self = selfTimes(s);
  for (const KeyAverageRow& r : snap.table(Attribution::Torch, groupBy)->rows) {
    if (r.deviceType != DeviceType::Cpu) continue;
    const std::string key = roleName(r.name) + (r.inputShapes.empty() ? "" : " " + r.inputShapes);
    Series* ser = nullptr;
    for (EventId id : r.events) {
      const int st = win.at(s.event(id).start);
      if (st < 0) continue;
      if (!ser) ser = &slot(m, "op", key, n);
      ser->add(iterations ? static_cast<size_t>(st) : 0, static_cast<double>(self[id]), id);
    }
  }
  // Kernels, copies, memsets: by name, in the step that launched them.
  for (size_t st = 0; st < win.size(); ++st)
    for (const Launch& l : x.steps[st].launches)
      slot(m, "kernel", std::string(s.name(s.event(l.gpu))), n)
          .add(iterations ? st : 0, static_cast<double>(s.event(l.gpu).dur), l.gpu);
  // Sync waits: by cause.
  for (const SyncWait& w : x.syncWaits) {
    if (w.step < 0 || w.group < 0 || static_cast<size_t>(w.step) >= win.size()) continue;
    slot(m, "sync_group", x.syncGroups[static_cast<size_t>(w.group)].key, n)
        .add(iterations ? static_cast<size_t>(w.step) : 0, static_cast<double>(w.durNs), w.ev);
  }
  return m;
}

double mean(const std::vector<double>& v) {
  double t = 0;
  for (double x : v) t += x;
  return v.empty() ? 0 : t / static_cast<double>(v.size());
}

std::string kindWords(const std::string& kind) {
  if (kind == "op") return "op";
  if (kind == "kernel") return "GPU";
  return "sync waits";
}

std::string changeText(const Change& ch, const std::string& per) {
  // Kernel names run to hundreds of characters: 120 of them, so the figures come first.
  const std::string what = kindWords(ch.kind) + " " + clipText(ch.key, 123);
  const std::string measure = ch.kind == "op" ? "Self CPU " : ch.kind == "kernel" ? "GPU time " : "waited ";
  const std::string unit = ch.kind == "sync_group" ? " waits" : " calls";  // counts per step are means
  std::string t;
  if (ch.status == "appeared")
    t = what + ": only in B, " + measure + span(ch.bNs) + per + " (" + perStep(ch.bCalls) + unit + ")";
  else if (ch.status == "disappeared")
    t = what + ": only in A, " + measure + span(ch.aNs) + per + " (" + perStep(ch.aCalls) + unit + ")";
  else
    t = what + ": " + measure + span(ch.aNs) + " -> " + span(ch.bNs) + per + " (" + signedSpan(ch.deltaNs) + "), " +
        perStep(ch.aCalls) + " -> " + perStep(ch.bCalls) + unit;
  if (ch.noise)
    t += "; noise: the step-to-step spread is " + span(ch.a.iqr()) + " in A and " + span(ch.b.iqr()) + " in B";
  return t;
}

}  // namespace

namespace compare_detail {

void stepView(const TraceSnapshot& sa, const TraceSnapshot& sb, Comparison& c) {
  const Explanation& a = *sa.explanation;
  const Explanation& b = *sb.explanation;
  c.stepSourceA = a.stepSource;
  c.stepSourceB = b.stepSource;
  c.stepsA = a.steps.size();
  c.stepsB = b.steps.size();
  if (a.stepSource == "profiler_steps" && b.stepSource == "profiler_steps") {
    // A schedule's step numbers differ between runs: the i-th step of A goes with the i-th of B.
    c.stepPairing = "order";
    c.steps.clear();
    for (size_t i = 0; i < std::max(a.steps.size(), b.steps.size()); ++i) {
      Pair<StepReport> p;
      if (i < a.steps.size()) p.a = a.steps[i];
      if (i < b.steps.size()) p.b = b.steps[i];
      const std::string na = p.a ? p.a->name : "-", nb = p.b ? p.b->name : "-";
      p.key = na == nb ? na : na + " | " + nb;
      c.steps.push_back(std::move(p));
    }
  } else {
    c.stepPairing = "name";
    // Different parts of one pass: a median over them says nothing, nor does their spread.
    return;
  }
  struct M {
    const char* metric;
    const char* label;
    int64_t (*get)(const StepReport&);
  };
  static const M metrics[] = {
      {"host_ns", "host time", [](const StepReport& s) { return s.hostNs(); }},
      {"gpu_work_ns", "GPU work launched", [](const StepReport& s) { return s.gpuAttributedNs; }},
      {"gpu_busy_ns", "GPU busy in the step", [](const StepReport& s) { return s.gpuBusyInHostWindowNs; }},
      {"idle_ns", "GPU idle in the step", [](const StepReport& s) { return s.idleNs; }},
      {"sync_wait_ns", "sync wait", [](const StepReport& s) { return s.syncWaitNs; }},
      {"communication_ns", "communication", [](const StepReport& s) { return s.communicationNs; }},
      {"spill_out_ns", "GPU work run after the step", [](const StepReport& s) { return s.spillOutNs; }},
  };
  for (const M& m : metrics) {
    std::vector<double> va, vb;
    for (const auto& st : a.steps) va.push_back(static_cast<double>(m.get(st)));
    for (const auto& st : b.steps) vb.push_back(static_cast<double>(m.get(st)));
    StepStat s{m.metric, m.label, spreadOf(va), spreadOf(vb), 0, false};
    s.deltaNs = s.b.median - s.a.median;
    s.noise = isNoise(s.a, s.b, s.deltaNs);
    c.stepStats.push_back(std::move(s));
  }
}

void findChanges(const TraceSnapshot& sa, const TraceSnapshot& sb, Comparison& c) {
  const bool iterations = c.stepPairing == "order";
  const SeriesMap ma = seriesOf(sa, c.options.groupBy, iterations);
  const SeriesMap mb = seriesOf(sb, c.options.groupBy, iterations);
  const size_t nA = iterations ? c.stepsA : std::min<size_t>(c.stepsA, 1);
  const size_t nB = iterations ? c.stepsB : std::min<size_t>(c.stepsB, 1);
  std::map<std::pair<std::string, std::string>, std::pair<const Series*, const Series*>> all;
  for (const auto& [k, v] : ma) all[k].first = &v;
  for (const auto& [k, v] : mb) all[k].second = &v;
  const std::vector<double> zerosA(nA, 0.0), zerosB(nB, 0.0);
  for (const auto& [k, v] : all) {
    Change ch;
    ch.kind = k.first;
    ch.key = k.second;
    const std::vector<double>& na = v.first ? v.first->ns : zerosA;
    const std::vector<double>& nb = v.second ? v.second->ns : zerosB;
    ch.aNs = mean(na);
    ch.bNs = mean(nb);
    ch.aCalls = v.first ? mean(v.first->calls) : 0;
    ch.bCalls = v.second ? mean(v.second->calls) : 0;
    ch.deltaNs = ch.bNs - ch.aNs;
    if (std::llround(ch.deltaNs) == 0 && ch.aCalls == ch.bCalls) continue;
    ch.status = !v.first ? "appeared" : !v.second ? "disappeared" : "changed";
    ch.a = spreadOf(na);
    ch.b = spreadOf(nb);
    ch.noise = ch.status == "changed" && isNoise(ch.a, ch.b, ch.deltaNs);
    if (v.first) ch.evidenceA = v.first->events;
    if (v.second) ch.evidenceB = v.second->events;
    ch.text = changeText(ch, iterations ? " per step" : " in the steps");
    c.changes.push_back(std::move(ch));
  }
  std::stable_sort(c.changes.begin(), c.changes.end(),
                   [](const Change& x, const Change& y) { return std::fabs(x.deltaNs) > std::fabs(y.deltaNs); });
}

void compareCauses(const Diagnosis& a, const Diagnosis& b, Comparison& c) {
  auto perStep = [](const Diagnosis& d) {
    std::array<double, kCauseCount> v{};
    if (d.steps.empty()) return v;
    for (const StepWaits& st : d.steps)
      for (int k = 0; k < kCauseCount; ++k) v[static_cast<size_t>(k)] += static_cast<double>(st.parts[k]);
    for (double& x : v) x /= static_cast<double>(d.steps.size());
    return v;
  };
  const auto pa = perStep(a), pb = perStep(b);
  for (int k = 0; k < kCauseCount; ++k) {
    const size_t i = static_cast<size_t>(k);
    if (pa[i] == 0 && pb[i] == 0) continue;
    c.causes.push_back({static_cast<Cause>(k), pa[i], pb[i], pb[i] - pa[i]});
  }
  std::stable_sort(c.causes.begin(), c.causes.end(), [](const CauseChange& x, const CauseChange& y) {
    return std::abs(x.deltaNs) > std::abs(y.deltaNs);
  });
  // One line: the causes that moved by at least 1% of the longer step, largest change first.
  const double scale = std::max(a.steps.empty() ? 0.0 : static_cast<double>(a.wallNs) / a.steps.size(),
                                b.steps.empty() ? 0.0 : static_cast<double>(b.wallNs) / b.steps.size());
  std::string line;
  for (const CauseChange& k : c.causes) {
    if (std::abs(k.deltaNs) < 0.01 * scale || line.size() > 300) continue;
    const int64_t d = std::llround(k.deltaNs);
    // In the user's words first, the code (what the JSON and the explain output key on) after.
    line += (line.empty() ? "" : "; ") + causeLabel(k.code) + " [" + std::string(causeCode(k.code)) + "] " +
            spanDurationText(std::llround(k.aNs)) + " -> " + spanDurationText(std::llround(k.bNs)) + " (" +
            (d >= 0 ? "+" : "-") + spanDurationText(d >= 0 ? d : -d) + ")";
  }
  if (!line.empty()) c.causesLine = "what the time went to, per step (the diagnosis's causes, A -> B): " + line;
}

std::vector<std::string> stepViewLines(const Comparison& c, bool all) {
  std::vector<std::string> out;
  out.push_back("steps: " + std::to_string(c.stepsA) + " in A (" + c.stepSourceA + "), " + std::to_string(c.stepsB) +
                " in B (" + c.stepSourceB + "), paired " +
                (c.stepPairing == "order" ? "in time order (ProfilerStep#N of a schedule)" : "by name"));
  if (c.stepStats.empty())
    out.push_back(
        "the steps are different parts of one pass, not repeats of a loop: no medians; the changes are "
        "totals over the steps");
  else
    out.push_back("per step, median [p25-p75] over the steps, A -> B (B - A):");
  for (const StepStat& s : c.stepStats) {
    std::string l = "  " + s.label + ": " + span(s.a.median) + " [" + span(s.a.p25) + "-" + span(s.a.p75) + "] -> " +
                    span(s.b.median) + " [" + span(s.b.p25) + "-" + span(s.b.p75) + "] (" + signedSpan(s.deltaNs) + ")";
    if (s.noise) l += " noise: within the step-to-step spread of both";
    out.push_back(std::move(l));
  }
  out.push_back("step by step, A | B: host, GPU busy, idle, sync wait (B - A):");
  const size_t maxPairs = all ? SIZE_MAX : 20;
  size_t shown = 0;
  for (const auto& p : c.steps) {
    if (shown++ >= maxPairs) {
      out.push_back("  ... " + std::to_string(c.steps.size() - maxPairs) + " more step pairs (--all)");
      break;
    }
    if (!p.a || !p.b) {
      out.push_back("  " + p.key + ": only in " + (p.a ? "A" : "B"));
      continue;
    }
    auto d = [](int64_t x, int64_t y) { return signedSpan(static_cast<double>(y - x)); };
    out.push_back("  " + p.key + ": host " + spanDurationText(p.a->hostNs()) + " -> " +
                  spanDurationText(p.b->hostNs()) + " (" + d(p.a->hostNs(), p.b->hostNs()) + "), busy " +
                  d(p.a->gpuBusyInHostWindowNs, p.b->gpuBusyInHostWindowNs) + ", idle " + d(p.a->idleNs, p.b->idleNs) +
                  ", sync wait " + d(p.a->syncWaitNs, p.b->syncWaitNs));
  }
  return out;
}

}  // namespace compare_detail

}  // namespace attnscope
