// Steps and their per-step figures; explainTrace() puts the explanation together.
//
// Which steps a trace has, in order of preference:
//   1. ProfilerStep#N annotations on a CPU thread (torch.profiler's schedule): exactly those.
//   2. Our engine's four workload steps (its metadata), per iteration.
//   3. The record_function scopes on the thread with the most of them (inside a single
//      outermost scope, the scopes one level down), with the ops between two scopes as one
//      "(between A and B)" step; the attention block's four steps (QK MATMUL, SCALE, SOFTMAX
//      PASS, AV MATMUL) when its ops are there, wrapped or not.
//   4. No scope at all: one step, the whole trace.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <unordered_map>

#include "core/explain/explanation.h"
#include "core/run/engine_run.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/store/device_activity.h"
#include "core/store/span_log.h"
#include "core/store/threads.h"
#include "core/store/work_counters.h"
#include "core/tables/attribution.h"

namespace attnscope {

namespace {

// Traces this large fill their steps' figures on the threads free to help.
constexpr size_t kParallelStepEvents = 200'000;

bool isProfilerStepName(std::string_view n) {
  constexpr std::string_view prefix = "ProfilerStep#";
  if (!n.starts_with(prefix) || n.size() == prefix.size()) return false;
  return std::all_of(n.begin() + static_cast<long>(prefix.size()), n.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

bool isAnnotationOrOp(Family f) { return f == Family::UserAnnotation || f == Family::CpuOp; }

StepReport stepOf(const EventStore& s, EventId id) {
  const Event& e = s.event(id);
  StepReport r;
  r.name = std::string(s.name(e));
  r.wrapped = e.family == Family::UserAnnotation;
  r.event = id;
  r.lane = e.lane;
  r.hostStartNs = e.start;
  r.hostEndNs = e.end();
  return r;
}

// The thread with the most user annotations, else the most ops.
uint32_t laneWithMostOps(const EventStore& s) {
  uint32_t best = UINT32_MAX;
  uint64_t bestOps = 0;
  for (uint32_t i = 0; i < s.lanes().size(); ++i) {
    if (s.lanes()[i].kind != LaneKind::CpuThread) continue;
    uint64_t ops = 0;  // annotations first: they mark the user's steps
    for (const Event& e : s.laneEvents(i))
      ops += e.family == Family::CpuOp ? 1 : e.family == Family::UserAnnotation ? (1ull << 32) : 0;
    if (ops > bestOps) {
      bestOps = ops;
      best = i;
    }
  }
  return best;
}

// "aten::matmul", "aten::matmul #2", ...: steps are joined by name in compare.
void makeNamesUnique(std::vector<StepReport>& steps) {
  std::unordered_map<std::string, int> seen;
  for (auto& st : steps) {
    const int n = ++seen[st.name];
    if (n > 1) st.name += " #" + std::to_string(n);
  }
}

// The annotations and ops of lane `ln` whose nearest enclosing annotation/op is `parent`
// (kNoEvent: top level), starting at event `from`, in start order.
std::vector<EventId> topLevelIn(const EventStore& s, uint32_t ln, EventId parent, EventId from) {
  const Lane& lane = s.lanes()[ln];
  std::vector<EventId> items;
  for (EventId i = from; i < lane.end; ++i) {
    const Event& e = s.event(i);
    if (parent != kNoEvent && e.start >= s.event(parent).end()) break;
    if (isAnnotationOrOp(e.family) && enclosingOp(s, i) == parent) items.push_back(i);
  }
  return items;
}

// One step made of consecutive items (a run of ops, or the ops a workload step runs).
StepReport stepOfItems(const EventStore& s, const std::vector<EventId>& items, size_t first, size_t last,
                       std::string name) {
  if (first == last) {
    StepReport r = stepOf(s, items[first]);
    if (!name.empty()) r.name = std::move(name);
    return r;
  }
  StepReport r;
  r.name = std::move(name);
  r.lane = s.event(items[first]).lane;
  r.hostStartNs = s.event(items[first]).start;
  for (size_t i = first; i <= last; ++i) r.hostEndNs = std::max(r.hostEndNs, s.event(items[i]).end());
  return r;
}

// The attention block's four steps, wrapped or not, when `items` are its ops:
// QK MATMUL up to the first aten::matmul, SCALE up to the softmax, SOFTMAX
// PASS, AV MATMUL (the next matmul). A wrapped step is its annotation.
std::vector<StepReport> attentionSteps(const EventStore& s, const std::vector<EventId>& items) {
  static constexpr std::array<std::string_view, 4> kNames = {"QK MATMUL", "SCALE", "SOFTMAX PASS", "AV MATMUL"};
  auto nameAt = [&](size_t i) { return s.name(s.event(items[i])); };
  auto find = [&](size_t from, auto pred) {
    for (size_t i = from; i < items.size(); ++i)
      if (pred(nameAt(i))) return i;
    return items.size();
  };
  const size_t qk = find(0, [](std::string_view n) { return n == "QK MATMUL" || n == "aten::matmul"; });
  const size_t sm = find(qk + 1, [](std::string_view n) { return n == "SOFTMAX PASS" || n == "aten::softmax"; });
  const size_t av = find(sm + 1, [](std::string_view n) { return n == "AV MATMUL" || n == "aten::matmul"; });
  // Every item must belong to a step: the block, not a loop of them or a larger model.
  if (av + 1 != items.size() || sm <= qk + 1) return {};
  // SCALE: one annotation, or the ops between; nothing else may be annotated there.
  for (size_t i = qk + 1; i < sm; ++i)
    if (s.event(items[i]).family == Family::UserAnnotation && nameAt(i) != "SCALE") return {};
  const std::array<std::pair<size_t, size_t>, 4> spans = {std::pair{size_t{0}, qk}, std::pair{qk + 1, sm - 1},
                                                          std::pair{sm, sm}, std::pair{av, av}};
  std::vector<StepReport> out;
  for (size_t k = 0; k < 4; ++k) {
    auto [a, b] = spans[k];
    // A wrapped step is its own annotation; ops before it (QK's transpose) stay outside.
    for (size_t i = a; i <= b; ++i)
      if (nameAt(i) == kNames[k]) a = b = i;
    StepReport r = stepOfItems(s, items, a, b, std::string(kNames[k]));
    r.wrapped = a == b && nameAt(a) == kNames[k];
    out.push_back(std::move(r));
  }
  return out;
}

// Annotations are steps; the ops between two of them are one step.
std::vector<StepReport> annotationSteps(const EventStore& s, const std::vector<EventId>& items) {
  std::vector<StepReport> steps;
  size_t runStart = 0;
  bool inRun = false;
  auto closeRun = [&](size_t end, std::string_view next) {
    if (!inRun) return;
    const std::string before = steps.empty() ? std::string() : steps.back().name;  // the last annotation before the run
    std::string name = before.empty() ? "(before " + std::string(next) + ")"
                       : next.empty() ? "(after " + before + ")"
                                      : "(between " + before + " and " + std::string(next) + ")";
    steps.push_back(stepOfItems(s, items, runStart, end - 1, std::move(name)));
    steps.back().event = kNoEvent;
    steps.back().wrapped = false;
    inRun = false;
  };
  for (size_t i = 0; i < items.size(); ++i) {
    const Event& e = s.event(items[i]);
    if (e.family == Family::UserAnnotation) {
      closeRun(i, s.name(e));
      steps.push_back(stepOf(s, items[i]));
    } else if (!inRun) {
      inRun = true;
      runStart = i;
    }
  }
  closeRun(items.size(), {});
  return steps;
}

// The annotations one level down inside a step (nearest enclosing annotation: the step's).
std::vector<Region> regionsOf(const EventStore& s, const StepReport& st) {
  std::vector<Region> out;
  if (st.event == kNoEvent) return out;
  const Lane& lane = s.lanes()[st.lane];
  for (EventId i = st.event + 1; i < lane.end; ++i) {
    const Event& e = s.event(i);
    if (e.start >= st.hostEndNs) break;
    if (e.family != Family::UserAnnotation) continue;
    EventId p = e.parent;  // the nearest enclosing annotation (a 2021 trace's ProfilerStep is an op)
    while (p != kNoEvent && p != st.event && s.event(p).family != Family::UserAnnotation) p = s.event(p).parent;
    if (p != st.event) continue;
    out.push_back({std::string(s.name(e)), i, e.start, e.end(), 0, 0});
  }
  return out;
}

void fillRegionFigures(const EventStore& s, const ActivityIndex& index, Region& r) {
  for (EventId id : index.callsIn(r.hostStartNs, r.hostEndNs)) {
    const Event& e = s.event(id);
    if (e.correlation <= 0 || s.callOfCorrelation(e.correlation) != id) continue;
    for (EventId g : s.byCorrelation(e.correlation)) {
      if (!isGpuWork(s.event(g).family)) continue;
      r.gpuAttributedNs += s.event(g).dur;
      r.launches++;
    }
  }
}

bool isGraphLaunch(std::string_view api) { return api == "cudaGraphLaunch" || api == "hipGraphLaunch"; }

}  // namespace

WorkKind workKind(const EventStore& s, EventId gpu) {
  const Event& e = s.event(gpu);
  if (e.family == Family::GpuMemcpy) return WorkKind::Memcpy;
  if (e.family == Family::GpuMemset) return WorkKind::Memset;
  std::string_view n = s.name(e);
  // Another accelerator's device work (device_activity.h): its DMA transfers are copies.
  if (e.family == Family::Other && isAcceleratorCopy(n)) return WorkKind::Memcpy;
  for (size_t i = 0; i + 4 <= n.size(); ++i) {
    const auto lower = [&](size_t k) { return static_cast<char>(n[i + k] | 0x20); };
    if ((lower(0) == 'n' || lower(0) == 'r') && lower(1) == 'c' && lower(2) == 'c' && lower(3) == 'l')
      return WorkKind::Communication;
  }
  return WorkKind::Kernel;
}

std::string_view workKindName(WorkKind k) {
  switch (k) {
    case WorkKind::Kernel:
      return "kernel";
    case WorkKind::Memcpy:
      return "memcpy";
    case WorkKind::Memset:
      return "memset";
    case WorkKind::Communication:
      return "communication";
  }
  return "kernel";
}

std::vector<StepReport> findSteps(const EventStore& s, const std::vector<EngineStep>* engine, std::string* source) {
  std::vector<StepReport> steps;
  if (engine) {
    *source = "engine";
    for (const auto& w : *engine) {
      StepReport r;
      r.name = w.name;
      r.wrapped = w.wrapped;
      r.hostStartNs = w.hostStartNs;
      r.hostEndNs = w.hostEndNs;
      steps.push_back(std::move(r));
    }
    return steps;
  }
  // 1. torch.profiler's ProfilerStep#N, on whichever CPU thread carries them.
  for (uint32_t ln = 0; ln < s.lanes().size(); ++ln) {
    if (s.lanes()[ln].kind != LaneKind::CpuThread) continue;
    const Lane& lane = s.lanes()[ln];
    for (EventId i = lane.begin; i < lane.end; ++i) {
      const Event& e = s.event(i);
      if (isAnnotationOrOp(e.family) && isProfilerStepName(s.name(e))) steps.push_back(stepOf(s, i));
    }
  }
  if (!steps.empty()) {
    *source = "profiler_steps";
    std::stable_sort(steps.begin(), steps.end(),
                     [](const StepReport& a, const StepReport& b) { return a.hostStartNs < b.hostStartNs; });
    for (StepReport& st : steps) st.wrapped = true;
    makeNamesUnique(steps);
    return steps;
  }
  // 3. The scopes of the thread with the most of them (one outermost scope: the ones inside it).
  const uint32_t ln = laneWithMostOps(s);
  if (ln == UINT32_MAX) {
    *source = "none";
    return steps;
  }
  std::vector<EventId> items = topLevelIn(s, ln, kNoEvent, s.lanes()[ln].begin);
  if (items.size() == 1 && s.event(items[0]).family == Family::UserAnnotation) {
    std::vector<EventId> inner = topLevelIn(s, ln, items[0], items[0] + 1);
    if (!inner.empty()) items = std::move(inner);
  }
  const bool annotated =
      std::any_of(items.begin(), items.end(), [&](EventId id) { return s.event(id).family == Family::UserAnnotation; });
  steps = attentionSteps(s, items);
  if (!steps.empty()) {
    *source = "annotations";
  } else if (annotated) {
    *source = "annotations";
    steps = annotationSteps(s, items);
  } else {
    // 4. Nothing annotated: the whole trace is the step.
    *source = "whole_trace";
    StepReport r;
    r.name = "(whole trace)";
    r.lane = ln;
    r.hostStartNs = s.minTime();
    r.hostEndNs = s.maxTime();
    steps.push_back(std::move(r));
    return steps;
  }
  std::stable_sort(steps.begin(), steps.end(),
                   [](const StepReport& a, const StepReport& b) { return a.hostStartNs < b.hostStartNs; });
  makeNamesUnique(steps);
  return steps;
}

void fillStepFigures(const EventStore& s, const ActivityIndex& index, StepReport& st, int64_t scanEndNs) {
  const size_t first = st.launches.size();
  for (EventId id : index.callsIn(st.hostStartNs, std::min(st.hostEndNs, scanEndNs))) {
    const Event& e = s.event(id);
    const std::string_view api = s.name(e);
    if (api == "cudaEventRecord" || api == "hipEventRecord") st.cudaEventRecords++;
    // Only the first call of a correlation launched its GPU work (launchOf).
    if (e.correlation <= 0 || s.callOfCorrelation(e.correlation) != id) continue;
    const bool graph = isGraphLaunch(api);
    for (EventId g : s.byCorrelation(e.correlation)) {
      const Event& ge = s.event(g);
      if (!isGpuWork(ge.family)) continue;
      Launch l;
      l.launch = id;
      l.gpu = g;
      l.op = gpuOwner(s, g).op;
      l.correlation = e.correlation;
      l.launchNs = e.start;
      l.gpuStartNs = ge.start;
      l.gpuEndNs = ge.end();
      l.graph = graph;
      st.launches.push_back(l);
      st.gpuAttributedNs += ge.dur;
      switch (workKind(s, g)) {
        case WorkKind::Kernel:
          st.kernelNs += ge.dur;
          break;
        case WorkKind::Memcpy:
          st.memcpyNs += ge.dur;
          break;
        case WorkKind::Memset:
          st.memsetNs += ge.dur;
          break;
        case WorkKind::Communication:
          st.communicationNs += ge.dur;
          break;
      }
      st.graphLaunches += graph;
      st.spillOutNs += std::max<int64_t>(0, ge.end() - std::max(ge.start, st.hostEndNs));
      st.gpuStartNs = st.gpuStartNs < 0 ? ge.start : std::min(st.gpuStartNs, ge.start);
      st.gpuEndNs = std::max(st.gpuEndNs, ge.end());
    }
  }
  // Thread by thread, each by start (the store's order), as reports list them.
  std::sort(
      st.launches.begin() + static_cast<std::ptrdiff_t>(first), st.launches.end(),
      [](const Launch& a, const Launch& b) { return a.launch != b.launch ? a.launch < b.launch : a.gpu < b.gpu; });
  st.gpuBusyInHostWindowNs = index.gpuBusyWithin(st.hostStartNs, st.hostEndNs);
  st.idleNs = std::max<int64_t>(0, st.hostNs() - st.gpuBusyInHostWindowNs);
}

namespace {

// Work launched before each step that ran inside it (torch and HTA charge it to the step by time).
void fillSpillIn(const EventStore& s, const ActivityIndex& index, std::vector<StepReport>& steps) {
  std::vector<int64_t> starts;
  for (const StepReport& st : steps) starts.push_back(st.hostStartNs);
  for (size_t i = 0; i < steps.size(); ++i) {
    StepReport& st = steps[i];
    for (EventId g : index.gpuWorkStartingIn(st.hostStartNs - index.maxGpuDurNs(), st.hostEndNs)) {
      const Event& ge = s.event(g);
      const int64_t overlap = std::min(ge.end(), st.hostEndNs) - std::max(ge.start, st.hostStartNs);
      if (overlap <= 0) continue;
      const EventId launch = launchOf(s, g);
      const int64_t launchedAt = launch != kNoEvent ? s.event(launch).start : ge.start;
      if (launchedAt >= st.hostStartNs) continue;
      st.spillInNs += overlap;
      // The step that launched it, if a step's window holds the launch.
      const auto it = std::upper_bound(starts.begin(), starts.end(), launchedAt);
      if (it == starts.begin()) continue;
      const int from = static_cast<int>(it - starts.begin()) - 1;
      if (from >= static_cast<int>(i) || launchedAt >= steps[static_cast<size_t>(from)].hostEndNs) continue;
      if (std::find(st.spillFrom.begin(), st.spillFrom.end(), from) == st.spillFrom.end()) st.spillFrom.push_back(from);
    }
    std::sort(st.spillFrom.begin(), st.spillFrom.end());
  }
}

// The group key of a sync wait: its op chain without ProfilerStep#N, then the call.
std::string groupKey(const EventStore& s, const SyncWait& w) {
  std::string key;
  for (size_t i = 0; i + 1 < w.chainEvents.size(); ++i) {
    const Event& e = s.event(w.chainEvents[i]);
    if (!isAnnotationOrOp(e.family) || isProfilerStepName(s.name(e))) continue;
    key += std::string(s.name(e)) + " > ";
  }
  return (key.empty() ? std::string("(no op) > ") : key) + w.api;
}

std::vector<SyncGroup> groupSyncWaits(const EventStore& s, std::vector<SyncWait>& waits) {
  std::vector<SyncGroup> groups;
  std::unordered_map<std::string, size_t> at;
  std::vector<std::unordered_map<std::string, int64_t>> awaited;
  for (size_t i = 0; i < waits.size(); ++i) {
    SyncWait& w = waits[i];
    const std::string key = groupKey(s, w);
    auto [it, fresh] = at.emplace(key, groups.size());
    if (fresh) {
      groups.push_back({key, w.api, 0, 0, 0, {}, {}, {}});
      awaited.emplace_back();
    }
    SyncGroup& g = groups[it->second];
    g.count++;
    g.totalNs += w.durNs;
    g.maxNs = std::max(g.maxNs, w.durNs);
    g.waits.push_back(static_cast<int>(i));
    if (w.step >= 0 && (g.steps.empty() || g.steps.back() != w.step)) g.steps.push_back(w.step);
    for (const Awaited& aw : w.awaited) {
      const int64_t overlap = std::min(aw.gpuEndNs, w.startNs + w.durNs) - std::max(aw.gpuStartNs, w.startNs);
      if (overlap > 0) awaited[it->second][std::string(s.name(s.event(aw.gpu)))] += overlap;
    }
  }
  for (size_t k = 0; k < groups.size(); ++k) {
    std::vector<std::pair<std::string, int64_t>> top(awaited[k].begin(), awaited[k].end());
    std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    if (top.size() > 3) top.resize(3);
    groups[k].awaitedTop = std::move(top);
  }
  // Largest first; the waits point at their group.
  std::vector<size_t> order(groups.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return groups[a].totalNs != groups[b].totalNs ? groups[a].totalNs > groups[b].totalNs
                                                  : groups[a].key < groups[b].key;
  });
  std::vector<SyncGroup> sorted;
  for (size_t k : order) {
    for (int w : groups[k].waits) waits[static_cast<size_t>(w)].group = static_cast<int>(sorted.size());
    sorted.push_back(std::move(groups[k]));
  }
  return sorted;
}

}  // namespace

namespace {
Explanation explainPart(const TraceSnapshot& snap, const std::vector<EngineStep>* steps, bool profilerStepsFirst,
                        bool stepsOnly, Helpers* helpers = nullptr);
}  // namespace

Explanation explainTrace(const TraceSnapshot& snap, const std::vector<EngineStep>* steps, bool profilerStepsFirst,
                         bool stepsOnly) {
  if (stepsOnly) return explainPart(snap, steps, profilerStepsFirst, true);
  Explanation a = explainPart(snap, steps, profilerStepsFirst, false);
  finishWithTables(snap, a);
  return a;
}

Explanation explainWithoutTables(const TraceSnapshot& snap, const std::vector<EngineStep>* steps,
                                 bool profilerStepsFirst, Helpers* helpers) {
  return explainPart(snap, steps, profilerStepsFirst, false, helpers);
}

void finishWithTables(const TraceSnapshot& snap, Explanation& a) { finishWithLedger(snap, a, computeLedger(snap)); }

void finishWithLedger(const TraceSnapshot& snap, Explanation& a, Ledger ledger) {
  a.ledger = std::move(ledger);
  a.verdicts = findVerdicts(*snap.store, snap.index, a);
}

namespace {

Explanation explainPart(const TraceSnapshot& snap, const std::vector<EngineStep>* steps, bool profilerStepsFirst,
                        bool stepsOnly, Helpers* helpers) {
  workCounters().explanations++;
  const EventStore& s = *snap.store;
  Explanation a;
  a.partial = s.meta().partial;
  // Our engine's traces name their four steps and host windows: use them.
  const EngineRun* engine = snap.engine ? &*snap.engine : nullptr;
  // The trace's own steps first when asked (a multi-rank engine run's ProfilerStep#N); the engine's
  // windows only when it has none.
  bool found = false;
  if (profilerStepsFirst && !steps) {
    a.steps = findSteps(s, nullptr, &a.stepSource);
    found = a.stepSource == "profiler_steps" || !engine || engine->steps.empty();
  }
  const bool engineSteps = !found && !steps && engine && !engine->steps.empty();
  std::vector<EngineStep> engineWindows;
  if (engineSteps) {
    engineWindows = engine->windows();
    steps = &engineWindows;
  }
  if (!found) a.steps = findSteps(s, steps, &a.stepSource);
  // A recorded script that stopped inside a step: that step ran until the script ended (or failed),
  // so it is not a step of the loop; it stays in the trace and out of the figures.
  if (snap.record && !snap.record->openStep.empty() && a.stepSource == "profiler_steps")
    std::erase_if(a.steps, [&](const StepReport& st) { return st.name == snap.record->openStep; });
  if (engineSteps && !engine->device.isCpu()) {
    // The events measurement's CUDA-event time per step (iteration i, step k); a CPU run has no CUDA events.
    if (const TimingSeries* ev = engine->timingOf("events")) {
      for (size_t i = 0; i < a.steps.size(); ++i) {
        const size_t iter = i / kStepCount, step = i % kStepCount;
        if (iter < ev->steps.size() && step < ev->steps[iter].size() && ev->steps[iter][step] >= 0)
          a.steps[i].eventNs = ev->steps[iter][step];
      }
    }
  }
  if (engine) a.runNotes = engine->notes;
  if (snap.record) {
    a.runNotes = scriptRunNotes(*snap.record);
    // A script that failed while recording: its trace holds the steps before the failure. (One that
    // ended inside the schedule is whole: its notes say what it traced.)
    if (snap.record->partial && snap.record->status == "failed" && a.partial.empty())
      a.partial = "the script failed during its recording, in " +
                  (snap.record->openStep.empty() ? std::string("its last step") : snap.record->openStep) +
                  ", which is left out";
  }
  if (engineSteps) {
    const TimingSeries* host = engine->timingOf("host");
    const TimingSeries* torch = engine->timingOf("torch");
    const std::vector<StepSpread> hs = host ? host->spread() : std::vector<StepSpread>{};
    const std::vector<StepSpread> ts = torch ? torch->spread() : std::vector<StepSpread>{};
    for (size_t k = 0; k < engine->steps.size() && k < kStepCount; ++k) {
      ProfilerInflation p;
      p.step = engine->steps[k].name;
      std::vector<int64_t> windows;  // each iteration's window of the step
      for (const RunIteration& it : engine->steps[k].iterations) windows.push_back(it.hostEndNs - it.hostStartNs);
      p.collector = spreadOf(std::move(windows));
      if (k < hs.size()) p.noProfiler = hs[k];
      if (k < ts.size()) p.torch = ts[k];
      if (p.noProfiler.n > 0 && p.collector.n > 0) a.inflation.push_back(std::move(p));
    }
  }
  // Steps are in start order; one that overlaps the next ends its scan there.
  std::vector<int64_t> nextStart(a.steps.size(), INT64_MAX);
  for (size_t i = 0; i + 1 < a.steps.size(); ++i) nextStart[i] = a.steps[i + 1].hostStartNs;
  auto fillStep = [&](size_t i) {
    StepReport& st = a.steps[i];
    fillStepFigures(s, snap.index, st, nextStart[i]);
    if (stepsOnly) return;
    st.regions = regionsOf(s, st);
    for (Region& r : st.regions) fillRegionFigures(s, snap.index, r);
  };
  // Each step reads the store and writes only itself: a large trace's, shared by the threads free.
  {
    const spans::Span sp("explain: steps' figures");
    if (helpers && a.steps.size() > 1 && s.size() >= parallelMinEvents(kParallelStepEvents))
      helpers->forEach(a.steps.size(), fillStep);
    else
      for (size_t i = 0; i < a.steps.size(); ++i) fillStep(i);
  }
  if (stepsOnly) {
    a.diagnosis = diagnose(s, a);
    return a;
  }
  std::optional<spans::Span> waits(std::in_place, "explain: spill-in, sync waits");
  fillSpillIn(s, snap.index, a.steps);
  a.syncWaits = findSyncWaits(s, snap.index);
  std::vector<int64_t> starts;
  for (const StepReport& st : a.steps) starts.push_back(st.hostStartNs);
  for (size_t w = 0; w < a.syncWaits.size(); ++w) {
    // The last step starting at or before the wait, if its window holds it.
    SyncWait& sw = a.syncWaits[w];
    const auto it = std::upper_bound(starts.begin(), starts.end(), sw.startNs);
    if (it == starts.begin()) continue;
    const size_t i = static_cast<size_t>(it - starts.begin()) - 1;
    StepReport& st = a.steps[i];
    if (sw.startNs >= st.hostEndNs) continue;
    sw.step = static_cast<int>(i);
    st.syncWaits.push_back(static_cast<int>(w));
    st.syncWaitNs += sw.durNs;
  }
  a.syncGroups = groupSyncWaits(s, a.syncWaits);
  waits.reset();
  // The diagnosis before the findings (finishWithTables): they read it (a step is called launch-bound
  // only where it agrees). It reads neither torch's tables nor the ledger.
  a.diagnosis = diagnose(s, a, helpers);
  return a;
}

}  // namespace

}  // namespace attnscope
