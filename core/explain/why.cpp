#include "core/explain/why.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/explain/explanation.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/tables/attribution.h"
#include "core/tables/key_averages.h"
#include "core/text/json_out.h"

namespace attnscope {

namespace {

std::string nm(const EventStore& s, EventId id) {
  return id == kNoEvent ? "(no op)" : std::string(s.name(s.event(id)));
}

// The first of `set` found walking up from `id` (inclusive), or kNoEvent.
EventId ancestorIn(const EventStore& s, EventId id, const std::set<EventId>& set) {
  for (EventId p = id; p != kNoEvent; p = s.event(p).parent)
    if (set.count(p)) return p;
  return kNoEvent;
}

void rowItems(const TraceSnapshot& snap, std::string_view name, WhyReport& r) {
  const KeyAverages& torch = *snap.torchByName;
  const KeyAverages& corr = *snap.correctedByName;
  for (const KeyAverages* ka : {&torch, &corr}) {
    for (const auto& row : ka->rows) {
      if (row.name != name) continue;
      const std::string mode = ka == &torch ? "torch" : "corrected";
      r.items.push_back({"row",
                         mode + " table, " + (row.deviceType == DeviceType::Cuda ? "CUDA" : "CPU") + " row (" +
                             std::string(familyName(row.family)) + ", " + std::to_string(row.calls) +
                             " calls): Self CUDA " + usText(row.selfDeviceNs) + ", CUDA total " +
                             usText(row.deviceTotalNs) + ", Self CPU " + usText(row.selfCpuNs),
                         row.selfDeviceNs, row.events});
    }
  }
}

void cpuItems(const TraceSnapshot& snap, const std::set<EventId>& mine, WhyReport& r) {
  const EventStore& s = *snap.store;
  int64_t ownNs = 0;
  std::vector<EventId> own;
  std::map<std::string, std::pair<int64_t, std::vector<EventId>>> children;
  const std::span<const EventId> gpu = snap.index.gpuWorkByStart();
  for (EventId g : gpu) {
    const GpuOwner o = gpuOwner(s, g);
    if ((o.op != kNoEvent && mine.count(o.op)) || (o.launch != kNoEvent && mine.count(o.launch))) {
      own.push_back(g);
      ownNs += s.event(g).dur;
      continue;
    }
    if (o.op == kNoEvent) continue;
    if (ancestorIn(s, o.op, mine) == kNoEvent) continue;
    auto& c = children[nm(s, o.op)];
    c.first += s.event(g).dur;
    c.second.push_back(g);
  }
  std::string ownText = "launched itself: " + std::to_string(own.size()) + " GPU activities, " + usText(ownNs);
  for (size_t i = 0; i < own.size() && i < 5; ++i)
    ownText += (i ? ", " : ": ") + nm(s, own[i]) + " (correlation " + std::to_string(s.event(own[i]).correlation) + ")";
  r.items.push_back({"own", ownText, ownNs, own});
  int64_t childNs = 0;
  for (const auto& [child, c] : children) {
    childNs += c.first;
    r.items.push_back({"children",
                       "launched by " + child + " inside it: " + std::to_string(c.second.size()) + " GPU activities, " +
                           usText(c.first),
                       c.first, c.second});
  }
  if (!own.empty() || childNs > 0) return;

  // Nothing of its own: where did the GPU work near it go?
  int64_t from = INT64_MAX, to = INT64_MIN;
  uint32_t lane = UINT32_MAX;
  for (EventId id : mine) {
    from = std::min(from, s.event(id).start);
    to = std::max(to, s.event(id).end());
    lane = s.event(id).lane;
  }
  const std::set<EventId> overheadOwned = [&] {
    std::set<EventId> out;
    for (const auto& o : torchOverheadOwnership(s)) out.insert(o.gpu.begin(), o.gpu.end());
    return out;
  }();
  std::vector<EventId> near;
  for (EventId g : gpu)
    if (s.event(g).start < to && s.event(g).end() > from) near.push_back(g);
  if (near.empty()) {  // the next GPU work after it
    for (EventId g : gpu)
      if (s.event(g).start >= to) {
        near.push_back(g);
        break;
      }
  }
  if (near.empty()) {
    r.items.push_back(
        {"near", "no GPU work ran during or after it: it launched none and there was none to show", 0, {}});
    return;
  }
  // A long op can overlap thousands of activities: the first kNearShown, then one line for the rest.
  constexpr size_t kNearShown = 10;
  if (near.size() > kNearShown) {
    int64_t restNs = 0;
    for (size_t i = kNearShown; i < near.size(); ++i) restNs += s.event(near[i]).dur;
    const size_t rest = near.size() - kNearShown;
    near.resize(kNearShown);
    r.items.push_back({"near",
                       std::to_string(rest) + " more GPU activities ran during it (" + usText(restNs) +
                           "); the first " + std::to_string(kNearShown) + " follow",
                       restNs,
                       {}});
  }
  for (EventId g : near) {
    const GpuOwner o = gpuOwner(s, g);
    std::string where;
    if (!o.linked())
      where = "unlinked (no runtime call and no op carries its ids)";
    else if (o.op == kNoEvent)
      where = "launched by " + nm(s, o.launch) + " outside any op";
    else if (s.event(o.op).lane != lane)
      where = "launched by " + nm(s, o.op) + " on another thread (" + s.lanes()[s.event(o.op).lane].label + ")";
    else
      where = "launched by " + nm(s, o.op) + " (not inside it)";
    if (overheadOwned.count(g)) where += "; in torch's table the profiler's overhead event also owns it";
    std::vector<EventId> ev{g};
    if (o.op != kNoEvent) ev.push_back(o.op);
    r.items.push_back({"near",
                       nm(s, g) + " (correlation " + std::to_string(s.event(g).correlation) + ", " +
                           usText(s.event(g).dur) + ", ran during or after it): " + where,
                       s.event(g).dur, ev});
  }
}

void deviceItems(const TraceSnapshot& snap, const std::vector<EventId>& spans, const std::vector<EventId>& work,
                 WhyReport& r) {
  const EventStore& s = *snap.store;
  for (EventId sp : spans) {
    const Event& e = s.event(sp);
    int64_t inside = 0;
    std::vector<EventId> ev{sp};
    for (EventId g : snap.index.gpuWorkStartingBefore(e.end()))
      if (s.event(g).start >= e.start && s.event(g).end() <= e.end() && s.event(g).lane == e.lane) {
        inside += s.event(g).dur;
        ev.push_back(g);
      }
    r.items.push_back({"span",
                       "gpu_user_annotation: a device-side span of " + usText(e.dur) +
                           " from its first to its last GPU activity; " + std::to_string(ev.size() - 1) +
                           " activities inside it sum to " + usText(inside) +
                           ". torch counts the whole span as this row's Self CUDA, on top of the "
                           "kernels' own rows; the corrected table shows it as a total only.",
                       e.dur, ev});
  }
  std::map<std::string, std::pair<int64_t, std::vector<EventId>>> byOp;
  for (EventId g : work) {
    const GpuOwner o = gpuOwner(s, g);
    auto& slot = byOp[o.linked() ? nm(s, o.op != kNoEvent ? o.op : o.launch) : "(unlinked)"];
    slot.first += s.event(g).dur;
    slot.second.push_back(g);
  }
  for (const auto& [op, slot] : byOp)
    r.items.push_back(
        {"launched_by",
         "GPU work launched by " + op + ": " + std::to_string(slot.second.size()) + " runs, " + usText(slot.first),
         slot.first, slot.second});
}

}  // namespace

namespace {

// What the diagnosis blamed while this row's calls ran (or its kernels ran), by cause: the same split
// `explain` ranks, so the row and the headline can be read together.
void diagnosisItem(const TraceSnapshot& snap, const std::set<EventId>& cpu, const std::vector<EventId>& work,
                   WhyReport& r) {
  if (!snap.explanation) return;  // a snapshot built without its explanation
  const EventStore& s = *snap.store;
  const Diagnosis& d = snap.explanation->diagnosis;
  if (d.steps.empty()) return;
  Intervals when;
  for (EventId id : cpu) when.emplace_back(s.event(id).start, s.event(id).end());
  for (EventId id : work) when.emplace_back(s.event(id).start, s.event(id).end());
  const auto during = causesDuring(d, merged(std::move(when)));
  if (during.empty()) return;
  std::string text = "while its calls ran, the diagnosis blamed the steps' time on ";
  int64_t total = 0;
  for (size_t i = 0; i < during.size() && i < 4; ++i) {
    text += (i ? ", " : "") + causeLabel(during[i].first) + " " + spanDurationText(during[i].second);
    total += during[i].second;
  }
  if (during.size() > 4) text += " and " + std::to_string(during.size() - 4) + " more";
  text += " (the causes `explain` ranks; its headline: " +
          (d.causes.empty() ? std::string("none") : d.causes.front().label) + ")";
  r.items.push_back({"diagnosis", text, total, {}});
}

}  // namespace

WhyReport whyRow(const TraceSnapshot& snap, std::string_view name) {
  const EventStore& s = *snap.store;
  WhyReport r;
  r.name = std::string(name);
  std::set<EventId> cpu;
  std::vector<EventId> spans, work;
  for (EventId i = 0; i < s.events().size(); ++i) {
    const Event& e = s.event(i);
    if (s.name(e) != name) continue;
    if (e.family == Family::GpuUserAnnotation)
      spans.push_back(i);
    else if (isGpuWork(e.family))
      work.push_back(i);
    else if (e.family == Family::CpuOp || e.family == Family::UserAnnotation || e.family == Family::CudaRuntime ||
             e.family == Family::CudaDriver || e.family == Family::Overhead)
      cpu.insert(i);
  }
  r.found = !cpu.empty() || !spans.empty() || !work.empty();
  if (!r.found) return r;
  rowItems(snap, name, r);
  if (!cpu.empty()) cpuItems(snap, cpu, r);
  if (!spans.empty() || !work.empty()) deviceItems(snap, spans, work, r);
  diagnosisItem(snap, cpu, work, r);
  return r;
}

namespace {

// The same row (name, device, annotation, shapes) in another table, or null.
const KeyAverageRow* sameRow(const KeyAverages& ka, const KeyAverageRow& row) {
  for (const KeyAverageRow& r : ka.rows)
    if (r.name == row.name && r.deviceType == row.deviceType && r.userAnnotation == row.userAnnotation &&
        r.inputShapes == row.inputShapes)
      return &r;
  return nullptr;
}

std::string rowText(const std::string& mode, const KeyAverageRow& row) {
  return mode + " table, " + (row.deviceType == DeviceType::Cuda ? "CUDA" : "CPU") + " row (" +
         std::string(familyName(row.family)) + ", " + std::to_string(row.calls) +
         (row.calls == 1 ? " call" : " calls") + (row.inputShapes.empty() ? "" : ", input shapes " + row.inputShapes) +
         "): Self CUDA " + usText(row.selfDeviceNs) + ", CUDA total " + usText(row.deviceTotalNs) + ", Self CPU " +
         usText(row.selfCpuNs);
}

}  // namespace

WhyReport whyTableRow(const TraceSnapshot& snap, const KeyAverageRow& row, GroupBy groupBy) {
  const EventStore& s = *snap.store;
  WhyReport r;
  r.name = row.inputShapes.empty() ? row.name : row.name + " " + row.inputShapes;
  r.found = !row.events.empty();
  if (!r.found) return r;
  const KeyAverageRow* torch = sameRow(*snap.table(Attribution::Torch, groupBy), row);
  const KeyAverageRow* corr = sameRow(*snap.table(Attribution::Corrected, groupBy), row);
  // What the row aggregates: its events' own names when torch renamed them (ProfilerStep#N ->
  // ProfilerStep*), their count, and the threads or streams they ran on.
  {
    std::set<std::string> names;
    std::set<uint32_t> lanes;
    for (EventId id : row.events) {
      if (names.size() < 50) names.insert(nm(s, id));
      lanes.insert(s.event(id).lane);
    }
    std::string t =
        "this row aggregates " + std::to_string(row.events.size()) + " event" + (row.events.size() == 1 ? "" : "s");
    if (names.size() > 1 || (names.size() == 1 && *names.begin() != row.name)) {
      t += " named ";
      size_t k = 0;
      for (const auto& n : names) {
        if (k == 6) {
          t += ", ...";
          break;
        }
        t += (k++ ? ", " : "") + n;
      }
    }
    t += " on " + std::to_string(lanes.size()) + (lanes.size() == 1 ? " thread or stream" : " threads or streams");
    if (!row.inputShapes.empty()) t += ", all with input shapes " + row.inputShapes;
    r.items.push_back({"aggregates", t + ".", 0, {}});
  }
  if (torch) r.items.push_back({"row", rowText("torch", *torch), torch->selfDeviceNs, torch->events});
  if (corr) r.items.push_back({"row", rowText("corrected", *corr), corr->selfDeviceNs, corr->events});
  // Why torch's CUDA total is not the GPU work the row's ops launched.
  if (torch && corr && torch->deviceTotalNs != corr->deviceTotalNs) {
    const std::set<EventId> mine(row.events.begin(), row.events.end());
    int64_t overheadNs = 0;
    std::vector<EventId> evidence;
    std::string which;
    for (const auto& o : torchOverheadOwnership(s)) {
      // An overhead event nested inside one of the row's ops: torch adds its GPU work to their totals too.
      // torch nests it by time, whatever thread the profiler recorded it on.
      const Event& oe = s.event(o.overhead);
      const bool inside =
          ancestorIn(s, o.overhead, mine) != kNoEvent || std::any_of(mine.begin(), mine.end(), [&](EventId m) {
            const Event& me = s.event(m);
            return me.start <= oe.start && oe.end() <= me.end();
          });
      if (!inside) continue;
      for (EventId g : o.gpu) {
        overheadNs += s.event(g).dur;
        evidence.push_back(g);
      }
      evidence.push_back(o.overhead);
      which = nm(s, o.overhead);
    }
    const int64_t gap = torch->deviceTotalNs - corr->deviceTotalNs;
    std::string text = "torch's CUDA total (" + usText(torch->deviceTotalNs) + ") is " + usText(gap < 0 ? -gap : gap) +
                       (gap < 0 ? " less" : " more") + " than the GPU work this row's ops launched (" +
                       usText(corr->deviceTotalNs) + ")";
    if (overheadNs > 0) {
      text += ": " + usText(overheadNs) + " of it is counted twice, once as the ops' own kernels and once through '" +
              which +
              "', the profiler's own event that ran inside one of them and that torch's table also lets own that "
              "work (it takes the External id of the op running when it happened)";
      if (overheadNs != gap) text += "; " + usText(gap - overheadNs) + " comes from the rest of torch's rules";
    } else if (row.userAnnotation && row.deviceType == DeviceType::Cuda) {
      text +=
          ": this is the device-side span of a record_function (from the start of its first kernel to the end "
          "of its last, idle gaps included), which torch counts whole";
    }
    r.items.push_back({"difference", text + ".", gap, evidence});
  }
  std::set<EventId> cpu;
  std::vector<EventId> spans, work;
  for (EventId id : row.events) {
    const Family f = s.event(id).family;
    if (f == Family::GpuUserAnnotation)
      spans.push_back(id);
    else if (isGpuWork(f))
      work.push_back(id);
    else
      cpu.insert(id);
  }
  if (!cpu.empty()) cpuItems(snap, cpu, r);
  if (!spans.empty() || !work.empty()) deviceItems(snap, spans, work, r);
  diagnosisItem(snap, cpu, work, r);
  return r;
}

TableRowRef findTableRow(const TraceSnapshot& snap, std::string_view shown) {
  auto pick = [&](const KeyAverages* ka, GroupBy g, bool withShapes) -> TableRowRef {
    if (!ka) return {};
    const KeyAverageRow* best = nullptr;
    for (const KeyAverageRow& r : ka->rows) {
      const bool match = withShapes ? r.name.size() + 1 + r.inputShapes.size() == shown.size() &&
                                          shown.substr(0, r.name.size()) == r.name && shown[r.name.size()] == ' ' &&
                                          shown.substr(r.name.size() + 1) == r.inputShapes
                                    : r.name == shown;
      if (match && (!best || (best->deviceType != DeviceType::Cpu && r.deviceType == DeviceType::Cpu))) best = &r;
    }
    return best ? TableRowRef{best, g} : TableRowRef{};
  };
  if (TableRowRef r = pick(snap.table(Attribution::Torch, GroupBy::Name).get(), GroupBy::Name, false); r.row) return r;
  if (TableRowRef r = pick(snap.table(Attribution::Torch, GroupBy::InputShape).get(), GroupBy::InputShape, true); r.row)
    return r;
  return {};
}

WhyReport whyShownRow(const TraceSnapshot& snap, std::string_view shown) {
  const TableRowRef ref = findTableRow(snap, shown);
  if (!ref.row) return whyRow(snap, shown);
  WhyReport r = whyTableRow(snap, *ref.row, ref.groupBy);
  r.name = std::string(shown);
  for (const KeyAverageRow& other : snap.table(Attribution::Torch, ref.groupBy)->rows) {
    if (&other == ref.row || other.name != ref.row->name || other.inputShapes != ref.row->inputShapes) continue;
    const WhyReport more = whyTableRow(snap, other, ref.groupBy);
    r.items.insert(r.items.end(), more.items.begin(), more.items.end());
  }
  return r;
}

std::string whyText(const EventStore&, const WhyReport& r) {
  std::string out = r.name + "\n";
  for (const auto& it : r.items) out += "  " + it.section + ": " + it.text + "\n";
  return out;
}

std::string whyJson(const EventStore& s, const WhyReport& r) {
  std::set<EventId> cited;
  std::string out = "{\"name\": " + jsonString(r.name) + ", \"items\": [";
  for (size_t i = 0; i < r.items.size(); ++i) {
    const WhyItem& it = r.items[i];
    out += (i ? ", " : "") + std::string("{\"section\": ") + jsonString(it.section) +
           ", \"text\": " + jsonString(it.text) + ", \"ns\": " + std::to_string(it.ns) + ", \"evidence\": [";
    for (size_t k = 0; k < it.evidence.size(); ++k) {
      out += (k ? ", " : "") + std::to_string(it.evidence[k]);
      cited.insert(it.evidence[k]);
    }
    out += "]}";
  }
  out += "], \"events\": {";
  bool first = true;
  for (EventId id : cited) {
    out += (first ? "\"" : ", \"") + std::to_string(id) + "\": " + eventJson(s, id);
    first = false;
  }
  return out + "}}\n";
}

}  // namespace attnscope
