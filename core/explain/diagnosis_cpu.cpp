// A CPU-only profile's steps, by what their own thread did: the step's direct children (torch's
// top-level ops and regions) by kind; the rest of the window, where no op ran, is the thread waiting on
// a collective that runs on another thread (gloo's), or else Python between ops. And the ops that cost
// most, by self time on those threads.
#include <algorithm>
#include <unordered_map>

#include "core/explain/diagnosis_internal.h"
#include "core/explain/explanation.h"

namespace attnscope::diag {

namespace {

bool isCollective(std::string_view n) {
  return startsWith(n, "c10d::") || startsWith(n, "gloo:") || startsWith(n, "record_param_comms") ||
         startsWith(n, "nccl:");
}

// The thread with the most top-level op time (steps with no thread of their own).
uint32_t busiestLane(const EventStore& s) {
  std::unordered_map<uint32_t, int64_t> opNs;
  for (const Event& e : s.events())
    if (e.family == Family::CpuOp && e.parent == kNoEvent && e.dur > 0) opNs[e.lane] += e.dur;
  uint32_t best = UINT32_MAX;
  int64_t most = 0;
  for (const auto& [lane, ns] : opNs)
    if (ns > most || (ns == most && lane < best)) most = ns, best = lane;
  return best;
}

}  // namespace

CpuSplit cpuSplit(const EventStore& s, const Explanation& x, const Windows& w) {
  (void)x;
  CpuSplit out;
  int64_t parts[6] = {};
  static constexpr const char* kNames[6] = {"backward",      "forward and other ops", "the DataLoader",
                                            "the optimizer", "communication",         "Python between ops"};
  const uint32_t mainLane = busiestLane(s);
  // Collectives in flight on any thread, by name (the steps' own thread's are its children).
  std::vector<std::pair<std::pair<int64_t, int64_t>, std::pair<uint32_t, uint32_t>>> collectives;  // span, (lane, name)
  for (const Event& e : s.events())
    if (e.dur > 0 && (e.family == Family::CpuOp || e.family == Family::UserAnnotation) && isCollective(s.name(e)))
      collectives.push_back({{e.start, e.end()}, {e.lane, e.name}});
  std::unordered_map<uint32_t, int64_t> waitedOn;                         // collective name -> the thread's wait in it
  std::unordered_map<uint32_t, std::pair<int64_t, uint64_t>> selfByName;  // ops under compute children
  std::unordered_map<EventId, int> topKind;                               // an event's child-of-the-step kind
  uint64_t waits = 0, gaps = 0;
  // An op's self time in [a, b) (its span in the window): its own, less its child ops' there. The children's
  // time is gathered in one pass over the window's events (childNs, by index from the window's first): a
  // scan from each op to its end was quadratic where ops overlap without nesting (200,000 overlapping ops
  // took 14 s).
  std::vector<int64_t> childNs;
  EventId childFrom = 0;
  auto addSelf = [&](EventId id, int64_t a, int64_t b) {
    const Event& e = s.event(id);
    const int64_t self = b - a - childNs[id - childFrom];
    auto& [ns, calls] = selfByName[e.name];
    ns += std::max<int64_t>(0, self);
    ++calls;
  };
  EventId loaderExample = kNoEvent;
  for (const Window& win : w.list) {
    const uint32_t laneId = win.lane != UINT32_MAX ? win.lane : mainLane;
    if (laneId == UINT32_MAX) continue;
    const EventId owner = win.lane != UINT32_MAX ? win.event : kNoEvent;
    const auto [first, last] = s.visibleRange(laneId, win.hostStartNs, win.hostEndNs);
    childFrom = first;
    childNs.assign(last - first, 0);
    for (EventId c = first; c < last; ++c) {
      const Event& ch = s.event(c);
      if (ch.family != Family::CpuOp || ch.parent == kNoEvent || ch.parent < first || ch.parent >= c) continue;
      const Event& p = s.event(ch.parent);
      const int64_t a = std::max({p.start, win.hostStartNs, ch.start});
      const int64_t b = std::min({p.end(), win.hostEndNs, ch.end()});
      if (b > a) childNs[ch.parent - first] += b - a;
    }
    Intervals covered;
    for (EventId id = first; id < last; ++id) {
      const Event& e = s.event(id);
      if (e.dur <= 0 || id == owner) continue;
      const int64_t a = std::max(e.start, win.hostStartNs), b = std::min(e.end(), win.hostEndNs);
      if (b <= a) continue;
      if (e.parent != owner) {
        const auto up = topKind.find(e.parent);
        if (up == topKind.end()) continue;
        topKind[id] = up->second;
        // The ops under compute (forward, backward, the optimizer, other ops): their self time.
        if (e.family == Family::CpuOp && up->second != 2 && up->second != 4) addSelf(id, a, b);
        continue;
      }
      if (e.family != Family::CpuOp && e.family != Family::UserAnnotation && e.family != Family::PythonFunction)
        continue;
      const std::string_view n = s.name(e);
      int k = 1;
      if (startsWith(n, "autograd::engine::evaluate_function"))
        k = 0;
      else if (isDataLoader(n))
        k = 2;
      else if (startsWith(n, "Optimizer."))
        k = 3;
      else if (isCollective(n))
        k = 4;
      parts[k] += b - a;
      covered.emplace_back(a, b);
      topKind[id] = k;
      if (k == 2 && loaderExample == kNoEvent) loaderExample = id;
      if (e.family == Family::CpuOp && k != 2 && k != 4) addSelf(id, a, b);
    }
    // Where no op ran: waiting on a collective another thread runs, or Python.
    Intervals rest{{win.hostStartNs, win.hostEndNs}};
    takeCovered(rest, merged(std::move(covered)));
    for (const auto& [span, who] : collectives) {
      if (who.first == laneId) continue;
      const Intervals in = intersected(rest, Intervals{span});
      int64_t ns = 0;
      for (const auto& [a, b] : in) ns += b - a;
      if (ns > 0) waitedOn[who.second] += ns;
    }
    Intervals flight;
    for (const auto& [span, who] : collectives)
      if (who.first != laneId && span.second > win.hostStartNs && span.first < win.hostEndNs) flight.push_back(span);
    Intervals waited;
    const int64_t wait = takeCovered(rest, merged(std::move(flight)), &waited);
    parts[4] += wait;
    out.collectiveWaitNs += wait;
    waits += waited.size();
    gaps += rest.size();
    for (const auto& [a, b] : rest) parts[5] += b - a;
  }
  for (int k = 0; k < 6; ++k)
    if (parts[k] > 0) out.parts.emplace_back(kNames[k], parts[k]);
  std::stable_sort(out.parts.begin(), out.parts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  int64_t most = 0;
  for (const auto& [name, ns] : waitedOn)
    if (ns > most) most = ns, out.collective = std::string(s.strings().view(name));
  std::vector<std::pair<std::pair<int64_t, uint64_t>, std::string>> hot;
  for (const auto& [name, t] : selfByName) {
    out.opsNs += t.first;
    hot.push_back({t, std::string(s.strings().view(name))});
  }
  std::sort(hot.begin(), hot.end(), [](const auto& a, const auto& b) {
    return a.first.first != b.first.first ? a.first.first > b.first.first : a.second < b.second;
  });
  // The evidence: each moment of the steps' thread once.
  auto item = [&](std::string kind, std::string name, uint64_t count, int64_t ns, std::string detail = {}) {
    if (ns <= 0) return;
    EvidenceItem it;
    it.kind = std::move(kind);
    it.name = std::move(name);
    it.count = count;
    it.ns = ns;
    it.detail = std::move(detail);
    out.items.push_back(std::move(it));
  };
  int64_t hotNs = 0;
  for (size_t k = 0; k < hot.size() && k < 3; ++k) {
    out.hotOps.emplace_back(hot[k].second, hot[k].first.first);
    item("op", hot[k].second, hot[k].first.second, hot[k].first.first, "self time");
    hotNs += hot[k].first.first;
  }
  uint64_t otherCalls = 0;
  for (size_t k = 3; k < hot.size(); ++k) otherCalls += hot[k].first.second;
  item("op", "other ops", otherCalls, out.opsNs - hotNs, "self time");
  // The compute children's own time outside any op (a region's, the autograd engine's): with the ops'.
  const int64_t computeParts = parts[0] + parts[1] + parts[3];
  item("region", "regions and frames around the ops (their own time)", 0, computeParts - out.opsNs);
  item("collective_wait", "waiting for " + out.collective + " on another thread", waits, out.collectiveWaitNs);
  item("op", "the collectives' own ops on the steps' thread", 0, parts[4] - out.collectiveWaitNs);
  item("region", loaderExample != kNoEvent ? std::string(s.name(s.event(loaderExample))) : "the DataLoader", 0,
       parts[2]);
  item("untraced", "the steps' thread between its ops, nothing recorded (Python)", gaps, parts[5]);
  std::sort(out.items.begin(), out.items.end(),
            [](const EvidenceItem& a, const EvidenceItem& b) { return a.ns != b.ns ? a.ns > b.ns : a.name < b.name; });
  return out;
}

}  // namespace attnscope::diag
