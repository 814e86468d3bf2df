// The evidence of a cause: every moment it holds goes to one event, the innermost that the rule holding
// it names (a runtime call before the op around it, an op before its region), and the events are
// grouped by kind and name: how many, the time they hold and its share of the cause; for copies their
// direction, memory and sizes and how the call waited; for allocator calls and copies the ops they ran
// in; the module or Python frame around them when the trace records one.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <queue>
#include <unordered_map>

#include "core/explain/diagnosis_internal.h"
#include "core/explain/explanation.h"
#include "core/store/device_activity.h"
#include "core/store/parallel_sort.h"
#include "core/store/span_log.h"
#include "core/tables/attribution.h"
#include "core/text/duration.h"

namespace attnscope::diag {

namespace {

std::string bytesText(int64_t b) {
  char buf[32];
  if (b >= (int64_t{1} << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / 1048576.0);
  else if (b >= 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

// A group of evidence: its kind (one of kindOf's literals), the events' interned name, a copy's device
// copy's name, and whether the time is a synchronize's drained queue.
struct GroupKey {
  const char* kind;
  uint32_t name, copy;
  bool drained;
  bool operator<(const GroupKey& o) const {
    if (kind != o.kind) return std::string_view(kind) < std::string_view(o.kind);
    if (name != o.name) return name < o.name;
    if (copy != o.copy) return copy < o.copy;
    return drained < o.drained;
  }
};

struct Acc {
  EvidenceItem item;
  std::vector<std::pair<int64_t, EventId>> held;
  std::map<std::string, uint64_t> inside;
  std::vector<int64_t> bytes;
  int64_t callNs = 0, waitedNs = 0, copyNs = 0;  // copies: their calls, the wait before the copy started, the copy
  uint32_t first = UINT32_MAX;                   // the place of the event its text came from
  Acc* joined = nullptr;                         // a part's group: the group it was joined into
};

std::string_view kindOf(const EventStore& s, const RuleSet& r, int rule, EventId id,
                        std::unordered_map<uint32_t, CallKind>& calls) {
  const Event& e = s.event(id);
  if (rule == kHostGap) return "untraced";
  if (rule == kSyncDrained) return "sync";
  // A capture's span is held by the EndCapture that closed it (diagnosis_rules.cpp).
  if (rule == kCapture && contains(s.name(e), "EndCapture")) return "capture";
  if (isDeviceWork(s, e)) {
    if (rule == kQueued || rule == kQueuedComm) return "queued";
    if (rule == kComm) return "collective";
    return e.family == Family::Kernel || !isGpuWork(e.family) ? "kernel" : "device_copy";
  }
  if (r.setup[id] != SetupKind::None) return "setup";
  switch (e.family) {
    case Family::CudaRuntime:
    case Family::CudaDriver:
    case Family::Other: {
      auto [it, fresh] = calls.try_emplace(e.name, CallKind::Other);
      if (fresh) it->second = callKind(s.name(e));
      switch (it->second) {
        case CallKind::Allocator:
          return "allocator";
        case CallKind::Copy:
          return "copy";
        case CallKind::Sync:
          return "sync";
        default:
          return "call";
      }
    }
    case Family::CpuOp:
      return "op";
    case Family::PythonFunction:
      return "frame";
    default:
      return "region";
  }
}

// out: make(k) for each k in [0, n) that keep(k), in k's order. In `ways` parts on threads of their own
// when more than one: each part's count, then each part's items at their place (no second copy).
template <typename T, typename Keep, typename Make>
void keptInParts(size_t n, size_t ways, const Keep& keep, const Make& make, std::vector<T>& out) {
  if (ways <= 1) {
    for (size_t k = 0; k < n; ++k)
      if (keep(k)) out.push_back(make(k));
    return;
  }
  std::vector<size_t> at(ways + 1, 0);
  runParts(ways, [&](size_t p) {
    size_t count = 0;
    for (size_t k = n * p / ways; k < n * (p + 1) / ways; ++k) count += keep(k) ? 1 : 0;
    at[p + 1] = count;
  });
  for (size_t p = 0; p < ways; ++p) at[p + 1] += at[p];
  out.resize(at[ways]);
  runParts(ways, [&](size_t p) {
    size_t w = at[p];
    for (size_t k = n * p / ways; k < n * (p + 1) / ways; ++k)
      if (keep(k)) out[w++] = make(k);
  });
}

}  // namespace

EventId innermostCpuOp(const EventStore& s, EventId id) {
  for (EventId p = s.event(id).parent; p != kNoEvent; p = s.event(p).parent)
    if (s.event(p).family == Family::CpuOp) return p;
  return kNoEvent;
}

std::string whereOf(const EventStore& s, EventId id) {
  EventId from = id;
  if (isGpuWork(s.event(id).family)) from = launchOf(s, id);
  if (from == kNoEvent) return {};
  std::string module, frame;
  for (EventId p = s.event(from).parent; p != kNoEvent && (module.empty() || frame.empty()); p = s.event(p).parent) {
    const Event& e = s.event(p);
    if (e.family != Family::PythonFunction) continue;
    const std::string_view n = s.name(e);
    if (module.empty() && startsWith(n, "nn.Module: ")) module = std::string(n.substr(11));
    if (frame.empty() && contains(n, ".py(") && !startsWith(n, "torch/") && !contains(n, "site-packages") &&
        !contains(n, "dist-packages"))
      frame = std::string(n);
  }
  if (!module.empty() && !frame.empty()) return "module " + module + ", " + frame;
  return !module.empty() ? "module " + module : frame;
}

std::vector<EvidenceItem> evidenceItems(const EventStore& s, Cause c, const RuleSet& r, const Intervals* taken,
                                        const Intervals& nothing, int64_t causeNs) {
  std::map<GroupKey, Acc> acc;
  std::unordered_map<uint32_t, CallKind> callKinds;
  // An event's hold on the cause: the event (after the store is read, the one the evidence names), its
  // place in the order the time was handed out in (over every rule of the cause), the time it holds.
  struct Hit {
    EventId ev;
    uint32_t arrival;
    int64_t held;
    Acc* acc;
  };
  uint32_t arrival = 0;
  const auto& depthOf = s.columns().depth;
  for (int rule = 0; rule < kRuleCount; ++rule) {
    if (causeOfRule(rule, r.anyDevice) != c || taken[rule].empty()) continue;
    const RuleEvents& re = r.rules[rule];
    // The innermost first: deeper events, then shorter ones (then in the rule's order). The keys are
    // sorted by value: a rule can hold a hundred thousand kernels.
    struct Key {
      int64_t depth, span, start;
      uint32_t k;
      EventId ev;
      bool operator<(const Key& o) const {
        if (depth != o.depth) return depth > o.depth;
        if (span != o.span) return span < o.span;
        return k < o.k;
      }
    };
    // Only the events whose stretch meets what the rule took (a binary search each) are ordered.
    const Intervals& mine = taken[rule];
    auto meets = [&](size_t k) {
      const auto [a, b] = re.spans[k];
      auto it = std::lower_bound(mine.begin(), mine.end(), std::make_pair(a, INT64_MIN));
      return (it != mine.end() && it->first < b) || (it != mine.begin() && std::prev(it)->second > a);
    };
    auto keyOf = [&](size_t k) {
      const auto [a, b] = re.spans[k];
      return Key{depthOf[re.events[k]], b - a, a, static_cast<uint32_t>(k), re.events[k]};
    };
    std::optional<spans::Span> phase(std::in_place, "evidence: keys");
    std::vector<Key> order;
    const size_t n = re.events.size();
    const size_t ways = n >= parallelMinEvents(size_t{1} << 18) ? workerThreads() : 1;
    keptInParts(n, ways, meets, keyOf, order);

    // Device work does not nest: its rules keep their order.
    // (A large trace's largest cause spends most of its time in these sorts: a large one is split over
    // threads, parallel_sort.h. This one and the sort of `starts` are strict total orders (k and rank are
    // unique), so the result is std::sort's.)
    phase.emplace("evidence: sort");
    if (rule > kLastDeviceRule && rule != kQueued && rule != kQueuedComm)
      parallelSort(order.begin(), order.end(), std::less<Key>());
    phase.emplace("evidence: starts");
    // What each event holds: every moment the rule took goes to the first event in that order whose
    // stretch covers it. Swept in time, the stretches open at a moment in a heap with the first in the
    // order on top (a trace larger than memory reads its arrays front to back, not at random); a
    // stretch's time comes in pieces, merged once they are sorted by event.
    struct Start {
      int64_t start, end;
      uint32_t rank;
      EventId ev;
    };
    std::vector<Start> starts;
    keptInParts(
        order.size(), ways, [&](size_t i) { return order[i].span > 0; },
        [&](size_t i) {
          return Start{order[i].start, order[i].start + order[i].span, static_cast<uint32_t>(i), order[i].ev};
        },
        starts);
    const uint32_t rankBase = arrival;
    arrival += static_cast<uint32_t>(order.size());
    std::vector<Key>().swap(order);
    parallelSort(starts.begin(), starts.end(), [](const Start& x, const Start& y) {
      return x.start != y.start ? x.start < y.start : x.rank < y.rank;
    });
    phase.emplace("evidence: sweep");
    struct Open {
      uint32_t rank;
      int64_t end;
      EventId ev;
      bool operator<(const Open& o) const { return rank > o.rank; }  // the first in the order on top
    };
    // Pieces [p0, p1) of what the rule took, from the start `q` of the first stretch not yet open. The
    // event on top at a moment is the first in the order of those open then, so a part that begins later
    // starts from the stretches open at its first moment and hands out what one sweep would there.
    auto sweep = [&](size_t p0, size_t p1, std::vector<Hit>& hits) {
      std::priority_queue<Open> open;
      size_t q = 0;
      if (p0 > 0 && p0 < p1) {
        const int64_t t0 = mine[p0].first;
        q = static_cast<size_t>(
            std::upper_bound(starts.begin(), starts.end(), t0, [](int64_t t, const Start& x) { return t < x.start; }) -
            starts.begin());
        for (size_t k = 0; k < q; ++k)
          if (starts[k].end > t0) open.push({starts[k].rank, starts[k].end, starts[k].ev});
      }
      for (size_t j = p0; j < p1; ++j) {
        const auto& piece = mine[j];
        int64_t t = piece.first;
        while (t < piece.second) {
          for (; q < starts.size() && starts[q].start <= t; ++q)
            open.push({starts[q].rank, starts[q].end, starts[q].ev});
          while (!open.empty() && open.top().end <= t) open.pop();
          const int64_t nextStart = q < starts.size() ? starts[q].start : INT64_MAX;
          if (open.empty()) {
            t = std::min(piece.second, nextStart);
            continue;
          }
          const Open& top = open.top();
          const int64_t until = std::min({piece.second, top.end, nextStart});
          if (!hits.empty() && hits.back().ev == top.ev && hits.back().arrival == rankBase + top.rank)
            hits.back().held += until - t;
          else
            hits.push_back({top.ev, rankBase + top.rank, until - t, nullptr});
          t = until;
        }
      }
    };
    std::vector<Hit> hits;
    if (ways <= 1 || mine.size() < 2 * ways) {
      sweep(0, mine.size(), hits);
    } else {
      // In parts of about as many stretches each, split where the pieces begin (a piece is not split);
      // the parts' hits in turn are one sweep's, but for a stretch cut at a part's edge into two hits,
      // which are summed below with the rest of its pieces.
      std::vector<size_t> from(ways + 1, mine.size());
      from[0] = 0;
      for (size_t p = 1; p < ways; ++p) {
        const int64_t t = starts.empty() ? 0 : starts[starts.size() * p / ways].start;
        from[p] = std::max(
            from[p - 1], static_cast<size_t>(std::lower_bound(mine.begin(), mine.end(), std::make_pair(t, INT64_MIN)) -
                                             mine.begin()));
      }
      std::vector<std::vector<Hit>> partHits(ways);
      runParts(ways, [&](size_t p) { sweep(from[p], from[p + 1], partHits[p]); });
      size_t total = 0;
      for (const auto& h : partHits) total += h.size();
      hits.reserve(total);
      for (auto& h : partHits) {
        hits.insert(hits.end(), h.begin(), h.end());
        std::vector<Hit>().swap(h);
      }
    }
    std::vector<Start>().swap(starts);
    phase.emplace("evidence: by event");
    // The store is then read in the events' own order, and the five largest of each group are chosen in
    // the first order again, as they came.
    // (Pieces of one stretch compare equal here: they are summed whatever their order.)
    parallelSort(hits.begin(), hits.end(),
                 [](const Hit& x, const Hit& y) { return x.ev != y.ev ? x.ev < y.ev : x.arrival < y.arrival; });
    {
      size_t w = 0;  // a stretch's pieces, merged
      for (size_t i = 0; i < hits.size(); ++i) {
        if (w > 0 && hits[w - 1].ev == hits[i].ev && hits[w - 1].arrival == hits[i].arrival)
          hits[w - 1].held += hits[i].held;
        else
          hits[w++] = hits[i];
      }
      hits.resize(w);
    }
    phase.emplace("evidence: grouping");
    auto group = [&](Hit& h, std::map<GroupKey, Acc>& into, std::unordered_map<uint32_t, CallKind>& kinds) {
      EventId id = h.ev;
      // A waited-on device copy is its call's evidence: the host sat in the call.
      if (rule == kCopyWaited)
        if (const EventId call = launchOf(s, id); call != kNoEvent) id = call;
      h.ev = id;
      const int64_t held = h.held;
      const std::string_view kind = kindOf(s, r, rule, id, kinds);
      // Grouped by kind and interned name (a copy's also by its device copy's name, which says the
      // direction): the text is built once per group, from the event that came first.
      const EventId cp = kind == "copy" ? copyOfCall(s, id) : kNoEvent;
      const GroupKey gk{kind.data(), kind == "untraced" || kind == "capture" ? UINT32_MAX : s.event(id).name,
                        cp == kNoEvent ? UINT32_MAX : s.event(cp).name, rule == kSyncDrained};
      Acc& a = into[gk];
      h.acc = &a;
      if (h.arrival < a.first) {
        a.first = h.arrival;
        a.item.kind = std::string(kind);
        a.item.name = kind == "untraced"  ? "the step's thread between its ops, nothing recorded (code the profiler "
                                            "does not see)"
                      : kind == "capture" ? "graph capture"
                      : kind == "copy"    ? callLabel(s, id)
                                          : std::string(s.name(s.event(id)));
        a.item.detail.clear();
        if (kind == "setup") a.item.detail = std::string(setupWords(r.setup[id]));
        if (kind == "capture")
          a.item.detail = "each from torch.cuda.graph's synchronize (or BeginCapture) to its cudaStreamEndCapture";
        if (kind == "sync" && rule == kSyncDrained)
          a.item.detail = "the device idle after its return, as long as the sync had waited on work";
      }
      ++a.item.count;
      a.item.ns += held;
      const Event& e = s.event(id);
      if (kind == "allocator" || kind == "copy" || kind == "sync") {
        const EventId op = innermostCpuOp(s, id);
        if (op != kNoEvent) a.inside[std::string(s.name(s.event(op)))]++;
      }
      if (kind == "copy") {
        a.callNs += e.dur;
        if (cp != kNoEvent) {
          const Event& g = s.event(cp);
          if (g.args != kNoArgs && s.argsColumns().bytes[g.args] > 0) a.bytes.push_back(s.argsColumns().bytes[g.args]);
          a.waitedNs += std::clamp<int64_t>(g.start - e.start, 0, e.dur);
          a.copyNs += std::max<int64_t>(0, std::min(g.end(), e.end()) - std::max(g.start, e.start));
        }
      }
    };
    if (ways <= 1) {
      for (Hit& h : hits) group(h, acc, callKinds);
    } else {
      // In parts, each into groups of its own, then joined: the sums add up, and a group's text comes from
      // the hit that came first in any part.
      const size_t m = hits.size();
      std::vector<std::map<GroupKey, Acc>> partAcc(ways);
      std::vector<std::unordered_map<uint32_t, CallKind>> partKinds(ways);
      runParts(ways, [&](size_t p) {
        for (size_t i = m * p / ways; i < m * (p + 1) / ways; ++i) group(hits[i], partAcc[p], partKinds[p]);
      });
      for (auto& part : partAcc)
        for (auto& [key, l] : part) {
          Acc& g = acc[key];
          if (l.first < g.first) {
            g.first = l.first;
            g.item.kind = std::move(l.item.kind);
            g.item.name = std::move(l.item.name);
            g.item.detail = std::move(l.item.detail);
          }
          g.item.count += l.item.count;
          g.item.ns += l.item.ns;
          for (const auto& [op, count] : l.inside) g.inside[op] += count;
          g.bytes.insert(g.bytes.end(), l.bytes.begin(), l.bytes.end());
          g.callNs += l.callNs;
          g.waitedNs += l.waitedNs;
          g.copyNs += l.copyNs;
          l.joined = &g;
        }
      runParts(ways, [&](size_t p) {
        for (size_t i = m * p / ways; i < m * (p + 1) / ways; ++i) hits[i].acc = hits[i].acc->joined;
      });
    }
    phase.emplace("evidence: top five");
    parallelSort(hits.begin(), hits.end(), [](const Hit& x, const Hit& y) { return x.arrival < y.arrival; });
    for (const Hit& h : hits) {
      // The five largest, kept as they come.
      auto& top = h.acc->held;
      if (top.size() < 5 || h.held > top.back().first) {
        if (top.size() == 5) top.pop_back();
        top.insert(std::upper_bound(top.begin(), top.end(), std::make_pair(h.held, h.ev),
                                    [](const auto& x, const auto& y) {
                                      return x.first != y.first ? x.first > y.first : x.second < y.second;
                                    }),
                   {h.held, h.ev});
      }
    }
  }
  if (!nothing.empty()) {
    Acc& a = acc[GroupKey{"nothing", UINT32_MAX, UINT32_MAX, false}];
    a.item.kind = "nothing";
    a.item.name = "no event recorded anywhere (the device idle, the host not traced)";
    for (const auto& [x, y] : nothing) {
      ++a.item.count;
      a.item.ns += y - x;
    }
  }
  std::vector<EvidenceItem> out;
  for (auto& [key, a] : acc) {
    EvidenceItem& it = a.item;
    std::sort(a.held.begin(), a.held.end(), [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first > y.first : x.second < y.second;
    });
    for (size_t k = 0; k < a.held.size() && k < 5; ++k) it.events.push_back(a.held[k].second);
    std::vector<std::pair<std::string, uint64_t>> inside(a.inside.begin(), a.inside.end());
    std::stable_sort(inside.begin(), inside.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    if (inside.size() > 3) inside.resize(3);
    it.inside = std::move(inside);
    if (!a.bytes.empty()) {
      std::sort(a.bytes.begin(), a.bytes.end());
      const int64_t lo = a.bytes.front(), hi = a.bytes.back(), med = a.bytes[a.bytes.size() / 2];
      it.detail = (lo == hi ? bytesText(med) + " each"
                            : bytesText(med) + " median (" + bytesText(lo) + " to " + bytesText(hi) + ")");
    }
    if (a.callNs > 0) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s%.0f%% of the calls' time waiting for earlier work, %.0f%% the copy itself",
                    it.detail.empty() ? "" : "; ",
                    100.0 * static_cast<double>(a.waitedNs) / static_cast<double>(a.callNs),
                    100.0 * static_cast<double>(a.copyNs) / static_cast<double>(a.callNs));
      it.detail += buf;
    }
    if (!it.events.empty() && it.kind != "untraced") it.where = whereOf(s, it.events.front());
    // Where the script's untraced code ran longest: after which recorded event.
    if (it.kind == "untraced" && !a.held.empty()) {
      const Event& e = s.event(a.held.front().second);
      const std::string name(s.name(e));
      it.detail = "the longest " + spanDurationText(a.held.front().first) +
                  (isStepMark(name) ? ", at the start of " + name : ", after " + name);
    }
    it.share = causeNs > 0 ? static_cast<double>(it.ns) / static_cast<double>(causeNs) : 0;
    out.push_back(std::move(it));
  }
  std::sort(out.begin(), out.end(),
            [](const EvidenceItem& x, const EvidenceItem& y) { return x.ns != y.ns ? x.ns > y.ns : x.name < y.name; });
  if (out.size() > 8) out.resize(8);
  return out;
}

}  // namespace attnscope::diag
