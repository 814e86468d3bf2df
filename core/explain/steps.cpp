// Steps (engine windows, user annotations or top-level ops) and their
// per-step figures; explainTrace() puts the analysis together.
#include <algorithm>
#include <unordered_map>

#include "core/explain/explanation.h"
#include "core/run/engine_metadata.h"
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

std::vector<EventId> gpuWorkByStart(const EventStore& s) {
  std::vector<EventId> ids;
  for (EventId i = 0; i < s.events().size(); ++i)
    if (isGpuWork(s.event(i).family)) ids.push_back(i);
  std::stable_sort(ids.begin(), ids.end(), [&](EventId a, EventId b) { return s.event(a).start < s.event(b).start; });
  return ids;
}

int64_t gpuBusyWithin(const EventStore& s, const std::vector<EventId>& byStart, int64_t t0, int64_t t1) {
  int64_t busy = 0;
  int64_t curStart = 0, curEnd = 0;
  bool open = false;
  for (EventId id : byStart) {
    const Event& e = s.event(id);
    const int64_t a = std::max(e.start, t0);
    const int64_t b = std::min(e.end(), t1);
    if (e.start >= t1) break;
    if (b <= a) continue;
    if (open && a <= curEnd) {
      curEnd = std::max(curEnd, b);
      continue;
    }
    if (open) busy += curEnd - curStart;
    curStart = a;
    curEnd = b;
    open = true;
  }
  if (open) busy += curEnd - curStart;
  return busy;
}

StepIndex::StepIndex(const EventStore& s) {
  for (EventId i = 0; i < s.events().size(); ++i) {
    const Family f = s.event(i).family;
    if (f == Family::CudaRuntime || f == Family::CudaDriver) calls_.push_back(i);
  }
  std::stable_sort(calls_.begin(), calls_.end(),
                   [&](EventId a, EventId b) { return s.event(a).start < s.event(b).start; });
  callStart_.reserve(calls_.size());
  for (EventId id : calls_) callStart_.push_back(s.event(id).start);
  int64_t before = 0;
  for (EventId id : gpuWorkByStart(s)) {
    const Event& e = s.event(id);
    if (e.dur <= 0) continue;
    if (!busyEnd_.empty() && e.start <= busyEnd_.back()) {
      busyEnd_.back() = std::max(busyEnd_.back(), e.end());
      continue;
    }
    if (!busyEnd_.empty()) before += busyEnd_.back() - busyStart_.back();
    busyStart_.push_back(e.start);
    busyEnd_.push_back(e.end());
    busyBefore_.push_back(before);
  }
}

std::span<const EventId> StepIndex::callsIn(int64_t t0, int64_t t1) const {
  const auto a = std::lower_bound(callStart_.begin(), callStart_.end(), t0);
  const auto b = std::lower_bound(a, callStart_.end(), t1);
  return {calls_.data() + (a - callStart_.begin()), static_cast<size_t>(b - a)};
}

int64_t StepIndex::gpuBusyWithin(int64_t t0, int64_t t1) const {
  // The intervals ending after t0 and starting before t1, clipped to the window.
  const size_t k0 = static_cast<size_t>(std::upper_bound(busyEnd_.begin(), busyEnd_.end(), t0) - busyEnd_.begin());
  const size_t k1 =
      static_cast<size_t>(std::lower_bound(busyStart_.begin(), busyStart_.end(), t1) - busyStart_.begin());
  if (k0 >= k1) return 0;
  const int64_t last = busyEnd_[k1 - 1] - busyStart_[k1 - 1];
  int64_t busy = busyBefore_[k1 - 1] + last - busyBefore_[k0];
  busy -= std::max<int64_t>(0, t0 - busyStart_[k0]);
  busy -= std::max<int64_t>(0, busyEnd_[k1 - 1] - t1);
  return busy;
}

void fillStepFigures(const EventStore& s, const StepIndex& index, StepReport& st, int64_t scanEndNs) {
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

Explanation explainTrace(const EventStore& s, const std::vector<EngineStep>* windows) {
  Explanation a;
  // Our engine's traces name their four steps and host windows: use them.
  const std::optional<EngineMetadata> engine = windows ? std::nullopt : readEngineMetadata(s);
  if (engine && !engine->windows.empty()) windows = &engine->windows;
  a.steps = findSteps(s, windows, &a.stepSource);
  if (engine) {
    // The events pass's CUDA-event time per step (iteration i, step k).
    auto ev = engine->timing.find("events");
    for (size_t i = 0; i < a.steps.size() && ev != engine->timing.end(); ++i) {
      const size_t iter = i / 4, step = i % 4;
      if (iter < ev->second.size() && step < ev->second[iter].size() && ev->second[iter][step] >= 0)
        a.steps[i].eventNs = ev->second[iter][step];
    }
  }
  const StepIndex index(s);
  for (size_t i = 0; i < a.steps.size(); ++i) {
    // Steps are in start order; one that overlaps the next ends its scan there.
    const int64_t next = i + 1 < a.steps.size() ? a.steps[i + 1].hostStartNs : INT64_MAX;
    fillStepFigures(s, index, a.steps[i], next);
  }
  a.syncWaits = findSyncWaits(s);
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
  a.ledger = computeLedger(s);
  a.verdicts = findVerdicts(s, a);
  return a;
}

}  // namespace attnscope
