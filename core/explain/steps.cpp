// Steps (engine windows, user annotations or top-level ops) and their
// per-step figures; explainTrace() puts the analysis together.
#include <algorithm>
#include <unordered_map>

#include "core/explain/explanation.h"
#include "core/run/engine_metadata.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/store/work_counters.h"
#include "core/tables/attribution.h"

namespace attnscope {

namespace {

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

}  // namespace

std::vector<StepReport> findSteps(const EventStore& s, const std::vector<EngineStep>* windows, std::string* source) {
  std::vector<StepReport> steps;
  if (windows) {
    *source = "engine";
    for (const auto& w : *windows) {
      StepReport r;
      r.name = w.name;
      r.wrapped = w.wrapped;
      r.hostStartNs = w.hostStartNs;
      r.hostEndNs = w.hostEndNs;
      steps.push_back(std::move(r));
    }
    return steps;
  }
  // The top-level annotations and ops of the thread with the most ops.
  // One outermost annotation around everything: its inner annotations are
  // wrapped steps and the top-level ops between them unwrapped ones.
  const uint32_t ln = laneWithMostOps(s);
  if (ln == UINT32_MAX) {
    *source = "none";
    return steps;
  }
  const Lane& lane = s.lanes()[ln];
  auto topLevelIn = [&](EventId parent, EventId from) {
    std::vector<EventId> items;
    for (EventId i = from; i < lane.end; ++i) {
      const Event& e = s.event(i);
      if (parent != kNoEvent && e.start >= s.event(parent).end()) break;
      if ((e.family == Family::UserAnnotation || e.family == Family::CpuOp) && enclosingOp(s, i) == parent)
        items.push_back(i);
    }
    return items;
  };
  std::vector<EventId> items = topLevelIn(kNoEvent, lane.begin);
  if (items.size() == 1 && s.event(items[0]).family == Family::UserAnnotation) {
    std::vector<EventId> inner = topLevelIn(items[0], items[0] + 1);
    if (!inner.empty()) items = std::move(inner);
  }
  bool annotated = false;
  for (EventId id : items) {
    steps.push_back(stepOf(s, id));
    annotated = annotated || steps.back().wrapped;
  }
  *source = annotated ? "annotations" : "top_level_ops";
  std::stable_sort(steps.begin(), steps.end(),
                   [](const StepReport& a, const StepReport& b) { return a.hostStartNs < b.hostStartNs; });
  makeNamesUnique(steps);
  return steps;
}

void fillStepFigures(const EventStore& s, const ActivityIndex& index, StepReport& st, int64_t scanEndNs) {
  const size_t first = st.launches.size();
  for (EventId id : index.callsIn(st.hostStartNs, std::min(st.hostEndNs, scanEndNs))) {
    const Event& e = s.event(id);
    if (s.name(e) == "cudaEventRecord") st.cudaEventRecords++;
    // Only the first call of a correlation launched its GPU work (launchOf).
    if (e.correlation <= 0 || s.callOfCorrelation(e.correlation) != id) continue;
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
      st.launches.push_back(l);
      st.gpuAttributedNs += ge.dur;
      st.gpuStartNs = st.gpuStartNs < 0 ? ge.start : std::min(st.gpuStartNs, ge.start);
      st.gpuEndNs = std::max(st.gpuEndNs, ge.end());
    }
  }
  // Thread by thread, each by start (the store's order), as reports list them.
  std::sort(
      st.launches.begin() + static_cast<std::ptrdiff_t>(first), st.launches.end(),
      [](const Launch& a, const Launch& b) { return a.launch != b.launch ? a.launch < b.launch : a.gpu < b.gpu; });
  st.gpuBusyInHostWindowNs = index.gpuBusyWithin(st.hostStartNs, st.hostEndNs);
}

Explanation explainTrace(const TraceSnapshot& snap, const std::vector<EngineStep>* steps) {
  workCounters().explanations++;
  const EventStore& s = *snap.store;
  Explanation a;
  // Our engine's traces name their four steps and host windows: use them.
  const EngineMetadata* engine = snap.engine ? &*snap.engine : nullptr;
  const bool engineSteps = !steps && engine && !engine->steps.empty();
  if (engineSteps) steps = &engine->steps;
  a.steps = findSteps(s, steps, &a.stepSource);
  if (engineSteps) {
    // The events measurement's CUDA-event time per step (iteration i, step k).
    if (const TimingSeries* ev = engine->timingOf("events")) {
      for (size_t i = 0; i < a.steps.size(); ++i) {
        const size_t iter = i / kStepCount, step = i % kStepCount;
        if (iter < ev->steps.size() && step < ev->steps[iter].size() && ev->steps[iter][step] >= 0)
          a.steps[i].eventNs = ev->steps[iter][step];
      }
    }
  }
  for (size_t i = 0; i < a.steps.size(); ++i) {
    // Steps are in start order; one that overlaps the next ends its scan there.
    const int64_t next = i + 1 < a.steps.size() ? a.steps[i + 1].hostStartNs : INT64_MAX;
    fillStepFigures(s, snap.index, a.steps[i], next);
  }
  a.syncWaits = findSyncWaits(s, snap.index);
  for (size_t w = 0; w < a.syncWaits.size(); ++w) {
    SyncWait& sw = a.syncWaits[w];
    for (size_t i = 0; i < a.steps.size(); ++i) {
      StepReport& st = a.steps[i];
      if (sw.startNs >= st.hostStartNs && sw.startNs < st.hostEndNs) {
        sw.step = static_cast<int>(i);
        st.syncWaits.push_back(static_cast<int>(w));
        break;
      }
    }
  }
  a.ledger = computeLedger(snap);
  a.verdicts = findVerdicts(s, a);
  return a;
}

}  // namespace attnscope
