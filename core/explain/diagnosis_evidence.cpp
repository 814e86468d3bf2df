// The evidence of a cause: every moment it holds goes to one event, the innermost that the rule holding
// it names (a runtime call before the op around it, an op before its region), and the events are
// grouped by kind and name: how many, the time they hold and its share of the cause; for copies their
// direction, memory and sizes and how the call waited; for allocator calls and copies the ops they ran
// in; the module or Python frame around them when the trace records one.
#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "core/explain/diagnosis_internal.h"
#include "core/store/device_activity.h"
#include "core/tables/attribution.h"
#include "core/text/duration.h"

namespace attnscope::diag {

namespace {

// What is left of a set of moments, taken piece by piece (a moment goes to the first event that asks).
class Unclaimed {
 public:
  explicit Unclaimed(const Intervals& v) {
    for (const auto& [a, b] : v) left_.emplace_hint(left_.end(), a, b);
  }
  int64_t take(int64_t a, int64_t b) {
    int64_t got = 0;
    auto it = left_.upper_bound(a);
    if (it != left_.begin() && std::prev(it)->second > a) --it;
    while (it != left_.end() && it->first < b) {
      const int64_t s = it->first, e = it->second;
      const int64_t cs = std::max(s, a), ce = std::min(e, b);
      got += ce - cs;
      it = left_.erase(it);
      if (s < cs) left_.emplace(s, cs);
      if (ce < e) {
        left_.emplace(ce, e);
        break;
      }
    }
    return got;
  }

 private:
  std::map<int64_t, int64_t> left_;
};

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

struct Acc {
  EvidenceItem item;
  std::vector<std::pair<int64_t, EventId>> held;
  std::map<std::string, uint64_t> inside;
  std::vector<int64_t> bytes;
  int64_t callNs = 0, waitedNs = 0, copyNs = 0;  // copies: their calls, the wait before the copy started, the copy
};

std::string_view kindOf(const EventStore& s, const RuleSet& r, int rule, EventId id) {
  const Event& e = s.event(id);
  if (rule == kHostGap) return "untraced";
  if (rule == kSyncDrained) return "sync";
  if (isDeviceWork(s, e)) {
    if (rule == kQueued || rule == kQueuedComm) return "queued";
    if (rule == kComm) return "collective";
    return e.family == Family::Kernel || !isGpuWork(e.family) ? "kernel" : "device_copy";
  }
  if (r.setup[id] != SetupKind::None) return "setup";
  switch (e.family) {
    case Family::CudaRuntime:
    case Family::CudaDriver:
    case Family::Other:
      switch (callKind(s.name(e))) {
        case CallKind::Allocator:
          return "allocator";
        case CallKind::Copy:
          return "copy";
        case CallKind::Sync:
          return "sync";
        default:
          return "call";
      }
    case Family::CpuOp:
      return "op";
    case Family::PythonFunction:
      return "frame";
    default:
      return "region";
  }
}

// "cudaMemcpyAsync (Pageable -> Device)": a copy call with its copy's direction and memory.
std::string copyLabel(const EventStore& s, EventId call) {
  std::string label(s.name(s.event(call)));
  const EventId c = copyOfCall(s, call);
  if (c == kNoEvent) return label;
  const std::string_view cn = s.name(s.event(c));
  const size_t open = cn.find('(');
  if (open != std::string_view::npos) label += " " + std::string(cn.substr(open));
  return label;
}

}  // namespace

EventId copyOfCall(const EventStore& s, EventId call) {
  const Event& e = s.event(call);
  if (e.correlation <= 0) return kNoEvent;
  for (EventId id : s.byCorrelation(e.correlation))
    if (s.event(id).family == Family::GpuMemcpy) return id;
  return kNoEvent;
}

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
  std::unordered_map<std::string, Acc> acc;
  for (int rule = 0; rule < kRuleCount; ++rule) {
    if (causeOfRule(rule, r.anyDevice) != c || taken[rule].empty()) continue;
    const RuleEvents& re = r.rules[rule];
    // The innermost first: deeper events, then shorter ones.
    std::vector<size_t> order(re.events.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const Event& x = s.event(re.events[a]);
      const Event& y = s.event(re.events[b]);
      if (x.depth != y.depth) return x.depth > y.depth;
      return re.spans[a].second - re.spans[a].first < re.spans[b].second - re.spans[b].first;
    });
    Unclaimed left(taken[rule]);
    for (size_t k : order) {
      EventId id = re.events[k];
      const int64_t held = left.take(re.spans[k].first, re.spans[k].second);
      // A waited-on device copy is its call's evidence: the host sat in the call.
      if (rule == kCopyWaited)
        if (const EventId call = launchOf(s, id); call != kNoEvent) id = call;
      if (held <= 0) continue;
      const std::string_view kind = kindOf(s, r, rule, id);
      std::string name;
      if (kind == "untraced")
        name = "the step's thread between its ops, nothing recorded (code the profiler does not see)";
      else if (kind == "copy")
        name = copyLabel(s, id);
      else
        name = std::string(s.name(s.event(id)));
      Acc& a = acc[std::string(kind) + '\x1f' + name];
      if (a.item.name.empty()) {
        a.item.kind = std::string(kind);
        a.item.name = name;
        if (kind == "setup") a.item.detail = std::string(setupWords(r.setup[id]));
        if (kind == "sync" && rule == kSyncDrained)
          a.item.detail = "the device idle from its return until the next work started";
      }
      ++a.item.count;
      a.item.ns += held;
      a.held.emplace_back(held, id);
      const Event& e = s.event(id);
      if (kind == "allocator" || kind == "copy" || kind == "sync") {
        const EventId op = innermostCpuOp(s, id);
        if (op != kNoEvent) a.inside[std::string(s.name(s.event(op)))]++;
      }
      if (kind == "copy") {
        const EventId cp = copyOfCall(s, id);
        a.callNs += e.dur;
        if (cp != kNoEvent) {
          const Event& g = s.event(cp);
          if (g.args != kNoArgs && s.args()[g.args].bytes > 0) a.bytes.push_back(s.args()[g.args].bytes);
          a.waitedNs += std::clamp<int64_t>(g.start - e.start, 0, e.dur);
          a.copyNs += std::max<int64_t>(0, std::min(g.end(), e.end()) - std::max(g.start, e.start));
        }
      }
    }
  }
  if (!nothing.empty()) {
    Acc& a = acc["nothing"];
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
    it.share = causeNs > 0 ? static_cast<double>(it.ns) / static_cast<double>(causeNs) : 0;
    out.push_back(std::move(it));
  }
  std::sort(out.begin(), out.end(),
            [](const EvidenceItem& x, const EvidenceItem& y) { return x.ns != y.ns ? x.ns > y.ns : x.name < y.name; });
  if (out.size() > 8) out.resize(8);
  return out;
}

}  // namespace attnscope::diag
