// Findings in plain words, each with its numbers, the time at stake (they
// are ranked by it) and the events behind it. Similar items are aggregated
// (ops by GPU time, sync waits by cause, gaps by step), never listed one by
// one: a finding is a sentence or two whatever the trace's size.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <set>
#include <unordered_map>

#include "core/explain/explanation.h"
#include "core/explain/glossary.h"
#include "core/explain/thresholds.h"
#include "core/explain/verdicts_detail.h"
#include "core/store/activity_index.h"
#include "core/store/threads.h"
#include "core/tables/attribution.h"
#include "core/tables/key_averages.h"

namespace attnscope {

using verdicts_detail::aggregateAcrossSteps;
using verdicts_detail::count;

namespace {

// The diagnosis's wait-for split is the judge of launch-bound: a step is called so only when the
// diagnosis ranks launch_bound among its causes and no blocked host (copy, sync, allocator, DataLoader,
// set-up) outranks it.
bool diagnosisSaysLaunchBound(const Diagnosis& d) {
  for (const DiagnosedCause& c : d.causes) {
    if (c.code == Cause::LaunchBound) return true;
    if (blocksHost(c.code)) return false;
  }
  return false;
}

namespace th = thresholds;

// Event names in sentences; kernel names are cut (the evidence has them whole).
std::string nameOf(const EventStore& s, EventId id) {
  if (id == kNoEvent) return "(none)";
  const std::string_view n = s.name(s.event(id));
  return n.size() > 56 ? std::string(n.substr(0, 48)) + "..." : std::string(n);
}

std::string cut(std::string_view n, size_t max = 56) {
  return n.size() > max ? std::string(n.substr(0, max - 8)) + "..." : std::string(n);
}

std::string corrText(int64_t c) { return c > 0 ? "correlation " + std::to_string(c) : "no correlation"; }

std::string pct(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * share);
  return buf;
}

// Which step's host window holds time t: its name or "".
std::string stepAt(const Explanation& a, int64_t t) {
  for (const auto& st : a.steps)
    if (t >= st.hostStartNs && t < st.hostEndNs) return st.name;
  return "";
}

void addEvidence(Verdict& v, const std::vector<EventId>& ids) {
  for (EventId id : ids) {
    if (v.evidence.size() >= th::kMaxEvidence) return;
    v.evidence.push_back(id);
  }
}

bool hasGpuRecords(const Explanation& a) { return a.ledger.timing == "cupti" || a.ledger.timing == "roctracer"; }

// ---- per step -------------------------------------------------------------------

// Which op rows hold the step's GPU time: each op with its work, the largest first.
void underOpRows(const EventStore& s, const StepReport& st, const std::vector<EventId>& self,
                 std::vector<Verdict>& out) {
  std::map<EventId, std::pair<int64_t, std::vector<EventId>>> byOp;
  for (const auto& l : st.launches) {
    auto& slot = byOp[l.op];
    slot.first += l.gpuEndNs - l.gpuStartNs;
    slot.second.push_back(l.gpu);
  }
  if (byOp.size() == 1 && byOp.begin()->first == st.event) return;
  // Ops with one name are one entry ("aten::mm 12.3 ms in 340 activities").
  struct ByName {
    std::string name;
    int64_t ns = 0;
    std::vector<EventId> gpu;
    std::vector<EventId> ops;
  };
  std::vector<ByName> names;
  std::unordered_map<std::string, size_t> at;
  for (const auto& [op, slot] : byOp) {
    const std::string n = nameOf(s, op);
    auto [it, fresh] = at.emplace(n, names.size());
    if (fresh) names.push_back({n, 0, {}, {}});
    ByName& b = names[it->second];
    b.ns += slot.first;
    b.gpu.insert(b.gpu.end(), slot.second.begin(), slot.second.end());
    if (op != kNoEvent) b.ops.push_back(op);
  }
  std::stable_sort(names.begin(), names.end(), [](const ByName& a, const ByName& b) { return a.ns > b.ns; });
  Verdict v{st.name, st.gpuAttributedNs, "under_op_rows", "", self, {"Self CUDA", "CUDA total"}};
  if (st.wrapped)
    v.text = st.name +
             " is a record_function: its own row has Self CUDA 0 (it launches nothing itself) and "
             "CUDA total " +
             spanDurationText(st.gpuAttributedNs) + " from the ops inside it. The GPU time is under: ";
  else if (st.event != kNoEvent)
    v.text = st.name + "'s CUDA total (" + spanDurationText(st.gpuAttributedNs) +
             ") is Self CUDA of the ops inside it that launched the work: ";
  else
    v.text = st.name + " was not wrapped, so it has no row of its own; its GPU time (" +
             spanDurationText(st.gpuAttributedNs) + ") is under: ";
  if (st.wrapped) v.glossary.push_back("user_annotation");
  int64_t restNs = 0;
  size_t restOps = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    const ByName& b = names[i];
    if (i >= th::kListItems) {
      restNs += b.ns;
      ++restOps;
      continue;
    }
    v.text += (i ? "; " : "") + b.name + " " + spanDurationText(b.ns) + " (";
    if (b.gpu.size() <= 3) {
      for (size_t k = 0; k < b.gpu.size(); ++k)
        v.text += (k ? ", " : "") + nameOf(s, b.gpu[k]) + ", " + corrText(s.event(b.gpu[k]).correlation);
    } else {
      v.text += count(b.gpu.size()) + " GPU activities";
    }
    v.text += ")";
    addEvidence(v, b.ops);
    addEvidence(
        v, std::vector<EventId>(b.gpu.begin(), b.gpu.begin() + static_cast<long>(std::min<size_t>(3, b.gpu.size()))));
  }
  if (restOps) v.text += "; and " + count(restOps) + " more ops with " + spanDurationText(restNs);
  v.text += ".";
  out.push_back(std::move(v));
}

// The step's sync waits, one finding per cause (group).
void syncFindings(const EventStore& s, const Explanation& a, const StepReport& st, const std::vector<EventId>& self,
                  std::vector<Verdict>& out) {
  std::map<int, std::vector<int>> byGroup;  // group -> this step's waits in it
  for (int wi : st.syncWaits) byGroup[a.syncWaits[static_cast<size_t>(wi)].group].push_back(wi);
  for (const auto& [group, waits] : byGroup) {
    const SyncWait& w0 = a.syncWaits[static_cast<size_t>(waits[0])];
    Verdict v{st.name, 0, "sync_wait", "", self, {w0.api.substr(0, w0.api.find(' '))}};
    if (waits.size() == 1) {
      const SyncWait& w = w0;
      v.ns = w.durNs;
      std::string chain;
      for (size_t i = 0; i < w.opChain.size(); ++i) chain += (i ? " > " : "") + w.opChain[i];
      v.text = st.name + " spent " + spanDurationText(w.durNs) + " of its " + spanDurationText(st.hostNs()) +
               " host time in " + chain + ".";
      if (w.awaited.empty()) {
        v.text += " Nothing queued before it was still running: it waited for no GPU work.";
      } else {
        v.text += " It waited for:";
        size_t shown = 0;
        int64_t restNs = 0;
        for (const auto& aw : w.awaited) {
          if (shown >= th::kListItems) {
            restNs += aw.gpuEndNs - aw.gpuStartNs;
            continue;
          }
          ++shown;
          const GpuOwner o = gpuOwner(s, aw.gpu);
          const std::string from = stepAt(a, aw.queuedNs);
          v.text += " " + nameOf(s, aw.gpu) + " (" + corrText(aw.correlation) + ", " +
                    spanDurationText(aw.gpuEndNs - aw.gpuStartNs) + " on the GPU, launched by " + nameOf(s, o.op) +
                    (from.empty() ? std::string() : " in " + from) + ", " + spanDurationText(aw.gpuEndNs - w.startNs) +
                    " of it after the wait began);";
          addEvidence(v, {aw.gpu});
          if (o.launch != kNoEvent) addEvidence(v, {o.launch});
        }
        if (w.awaited.size() > shown)
          v.text += " and " + count(w.awaited.size() - shown) + " more (" + spanDurationText(restNs) + ");";
        v.text.back() = '.';
        v.text += " So this host time is mostly earlier GPU work finishing, not " + st.name + "'s own.";
      }
      addEvidence(v, w.chainEvents);
    } else {
      const SyncGroup& g = a.syncGroups[static_cast<size_t>(group)];
      int64_t total = 0, max = 0;
      for (int wi : waits) {
        const SyncWait& w = a.syncWaits[static_cast<size_t>(wi)];
        total += w.durNs;
        max = std::max(max, w.durNs);
        addEvidence(v, {w.ev});
      }
      v.ns = total;
      v.text = st.name + " waited " + spanDurationText(total) + " (" +
               pct(st.hostNs() ? double(total) / st.hostNs() : 0) + " of its host time) in " + count(waits.size()) +
               " calls of " + g.key + " (longest " + spanDurationText(max) + ").";
      if (!g.awaitedTop.empty()) {
        v.text += " Across the trace they waited mostly for";
        for (size_t i = 0; i < g.awaitedTop.size(); ++i)
          v.text +=
              (i ? ", " : " ") + cut(g.awaitedTop[i].first) + " (" + spanDurationText(g.awaitedTop[i].second) + ")";
        v.text += ".";
      }
    }
    out.push_back(std::move(v));
  }
}

// Stretches inside [t0, t1) where the GPU ran nothing, from kIdleGapMinNs up.
struct Gaps {
  uint64_t count = 0;
  int64_t totalNs = 0;
  int64_t longestNs = 0;
  int64_t longestStartNs = 0;
};

Gaps idleGaps(const ActivityIndex& index, int64_t t0, int64_t t1) {
  Gaps g;
  const auto& starts = index.busyStarts();
  const auto& ends = index.busyEnds();
  // The first busy interval ending after t0.
  size_t k = static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), t0) - ends.begin());
  int64_t cursor = t0;
  auto gap = [&](int64_t a, int64_t b) {
    if (b - a < th::kIdleGapMinNs) return;
    g.count++;
    g.totalNs += b - a;
    if (b - a > g.longestNs) {
      g.longestNs = b - a;
      g.longestStartNs = a;
    }
  };
  for (; k < starts.size() && starts[k] < t1; ++k) {
    if (starts[k] > cursor) gap(cursor, starts[k]);
    cursor = std::max(cursor, ends[k]);
  }
  if (cursor < t1) gap(cursor, t1);
  return g;
}

// The innermost op or annotation running on `lane` at time t, or kNoEvent.
EventId runningAt(const EventStore& s, uint32_t lane, int64_t t) {
  if (lane == UINT32_MAX) return kNoEvent;
  const auto [b, e] = s.visibleRange(lane, t, t + 1);
  EventId best = kNoEvent;
  for (EventId i = b; i < e; ++i) {
    const Event& ev = s.event(i);
    if ((ev.family != Family::CpuOp && ev.family != Family::UserAnnotation) || ev.start > t || ev.end() <= t) continue;
    if (best == kNoEvent || ev.depth > s.event(best).depth) best = i;
  }
  return best;
}

void gapFindings(const EventStore& s, const ActivityIndex& index, const StepReport& st, const Diagnosis& diagnosis,
                 const std::vector<EventId>& self, std::vector<Verdict>& out) {
  if (st.hostNs() <= 0) return;
  const Gaps g = idleGaps(index, st.hostStartNs, st.hostEndNs);
  const double idleShare = double(st.idleNs) / double(st.hostNs());
  // Launch-bound: the GPU mostly idle while the CPU queued many short kernels.
  const uint64_t launches = st.launches.size();
  if (launches >= th::kLaunchBoundMinLaunches && 1.0 - idleShare < th::kLaunchBoundMaxBusyShare) {
    const double perLaunchGpu = double(st.gpuAttributedNs) / double(launches);
    const double perLaunchHost = double(st.hostNs()) / double(launches);
    if (perLaunchGpu < perLaunchHost && diagnosisSaysLaunchBound(diagnosis)) {
      Verdict v{st.name, st.idleNs, "launch_bound", "", self, {"launch latency"}};
      v.text = st.name + " looks launch-bound: the GPU was busy " + pct(1.0 - idleShare) + " of its " +
               spanDurationText(st.hostNs()) + " while the CPU launched " + count(launches) +
               " GPU activities, one every " + spanDurationText(int64_t(perLaunchHost)) + " on average, each running " +
               spanDurationText(int64_t(perLaunchGpu)) +
               " on average: the GPU waits for the CPU to queue work. Fewer, larger kernels (torch.compile, "
               "CUDA graphs, larger batches) shrink the " +
               spanDurationText(st.idleNs) + " of idle time.";
      out.push_back(std::move(v));
      return;  // the idle time is this finding's
    }
  }
  if (g.count == 0 || double(g.totalNs) < th::kIdleFindingMinShare * double(st.hostNs())) return;
  Verdict v{st.name, g.totalNs, "gpu_idle", "", self, {}};
  EventId cpu = runningAt(s, st.lane, g.longestStartNs + g.longestNs / 2);
  if (cpu == st.event) cpu = kNoEvent;  // the step itself: between its ops
  v.text = "Inside " + st.name + " the GPU sat idle for " + spanDurationText(g.totalNs) + " (" +
           pct(double(g.totalNs) / double(st.hostNs())) + " of its host time) in " + count(g.count) +
           " gap(s) of at least " + spanDurationText(th::kIdleGapMinNs) + "; the longest, " +
           spanDurationText(g.longestNs) + " at +" + spanDurationText(g.longestStartNs - st.hostStartNs) +
           ", came while the CPU was in " +
           (cpu == kNoEvent ? std::string("no op (between the step's ops: its Python code, the data loader)")
                            : nameOf(s, cpu)) +
           ".";
  if (cpu != kNoEvent) v.evidence.push_back(cpu);
  // A host that runs ahead: the step's own GPU work ran after its host window. The diagnosis counts
  // the step until that work ends, so the idle host window is not the step's cost: say so, and stake
  // only what the diagnosis left idle.
  if (const StepWaits* w = diagnosedStep(diagnosis, st.hostStartNs, st.hostEndNs);
      w && w->endNs > st.hostEndNs && st.spillOutNs > 0) {
    v.text += " Its own GPU work ran after the window closed (" + spanDurationText(st.spillOutNs) +
              " of it past the close): the step lasts until that work ends, " + spanDurationText(w->spanNs()) +
              ", and the diagnosis finds the device busy " + spanDurationText(w->deviceBusyNs) + " of it.";
    v.ns = std::min(v.ns, w->parts[static_cast<int>(Cause::LittleWork)]);
  }
  out.push_back(std::move(v));
}

void spillFindings(const Explanation& a, const StepReport& st, const std::vector<EventId>& self,
                   std::vector<Verdict>& out) {
  if (st.spillOutNs >= th::kSpillMinNs) {
    Verdict v{st.name, st.spillOutNs, "spill", "", self, {}};
    const size_t i = static_cast<size_t>(&st - a.steps.data());
    const std::string next = i + 1 < a.steps.size() ? a.steps[i + 1].name : std::string();
    v.text = spanDurationText(st.spillOutNs) + " of the GPU work " + st.name +
             " launched ran after its host window closed" +
             (next.empty() ? std::string(".")
                           : " (into " + next +
                                 "). Tools that charge GPU time to the step it ran in (torch.profiler's step "
                                 "view, HTA) count that time in " +
                                 next + "; by launch it is " + st.name + "'s.");
    out.push_back(std::move(v));
  }
  if (st.spillInNs >= th::kSpillMinNs && !st.spillFrom.empty()) {
    Verdict v{st.name, st.spillInNs, "spill", "", self, {}};
    std::string from;
    for (size_t k = 0; k < st.spillFrom.size() && k < th::kListItems; ++k)
      from += (k ? ", " : "") + a.steps[static_cast<size_t>(st.spillFrom[k])].name;
    v.text = spanDurationText(st.spillInNs) + " of the GPU time inside " + st.name +
             "'s window was work launched earlier (by " + from + "): by time it looks like " + st.name +
             "'s, by launch it is not.";
    out.push_back(std::move(v));
  }
}

void communicationFinding(const EventStore& s, const StepReport& st, const std::vector<EventId>& self,
                          std::vector<Verdict>& out) {
  if (st.communicationNs <= 0) return;
  // How much of the communication ran while compute kernels were running.
  std::vector<std::pair<int64_t, int64_t>> comm, compute;
  for (const Launch& l : st.launches) {
    const WorkKind k = workKind(s, l.gpu);
    if (k == WorkKind::Communication) comm.emplace_back(l.gpuStartNs, l.gpuEndNs);
    if (k == WorkKind::Kernel) compute.emplace_back(l.gpuStartNs, l.gpuEndNs);
  }
  auto merge = [](std::vector<std::pair<int64_t, int64_t>>& v) {
    std::sort(v.begin(), v.end());
    std::vector<std::pair<int64_t, int64_t>> m;
    for (const auto& iv : v) {
      if (!m.empty() && iv.first <= m.back().second)
        m.back().second = std::max(m.back().second, iv.second);
      else
        m.push_back(iv);
    }
    v = std::move(m);
  };
  merge(comm);
  merge(compute);
  int64_t commUnion = 0, overlap = 0;
  size_t j = 0;
  for (const auto& c : comm) {
    commUnion += c.second - c.first;
    while (j < compute.size() && compute[j].second <= c.first) ++j;
    for (size_t k = j; k < compute.size() && compute[k].first < c.second; ++k)
      overlap += std::min(c.second, compute[k].second) - std::max(c.first, compute[k].first);
  }
  uint64_t n = 0;
  for (const Launch& l : st.launches) n += workKind(s, l.gpu) == WorkKind::Communication;
  Verdict v{st.name, st.communicationNs, "communication", "", self, {}};
  v.text = st.name + " launched " + count(n) + " communication kernels (NCCL/RCCL), " +
           spanDurationText(st.communicationNs) + " of GPU time (" +
           pct(st.gpuAttributedNs ? double(st.communicationNs) / st.gpuAttributedNs : 0) +
           " of the work it launched); " + pct(commUnion ? double(overlap) / double(commUnion) : 0) +
           " of their time overlapped compute kernels.";
  out.push_back(std::move(v));
}

void overheadFindings(const EventStore& s, const StepReport& st, const std::vector<OverheadOwnership>& overhead,
                      const std::vector<EventId>& self, std::vector<Verdict>& out) {
  std::set<EventId> mine;
  for (const Launch& l : st.launches) mine.insert(l.gpu);
  for (const auto& o : overhead) {
    std::vector<EventId> owned;
    int64_t ns = 0;
    for (EventId g : o.gpu)
      if (mine.count(g)) {
        owned.push_back(g);
        ns += s.event(g).dur;
      }
    if (owned.empty()) continue;
    Verdict v{st.name, ns, "swallowed_by_overhead", "", self, {"Activity Buffer Request"}};
    v.text = "In torch's table the profiler's own event '" + nameOf(s, o.overhead) + "' also owns " +
             spanDurationText(ns) + " of " + st.name + "'s GPU work (" + nameOf(s, owned[0]) + ", " +
             corrText(s.event(owned[0]).correlation) + "): it ran while " + nameOf(s, o.op) + " (External id " +
             std::to_string(o.op == kNoEvent ? -1 : s.event(o.op).externalId) +
             ") was running on the main thread and took that op's External id. The corrected attribution gives "
             "this time to " +
             nameOf(s, o.op) + " only.";
    addEvidence(v, {o.overhead});
    if (o.op != kNoEvent) addEvidence(v, {o.op});
    addEvidence(v, owned);
    out.push_back(std::move(v));
  }
}

void stepVerdicts(const EventStore& s, const ActivityIndex& index, const Explanation& a, const StepReport& st,
                  const std::vector<OverheadOwnership>& overhead, std::vector<Verdict>& out) {
  const std::vector<EventId> self = st.event != kNoEvent ? std::vector<EventId>{st.event} : std::vector<EventId>{};
  const int64_t hostNs = st.hostNs();
  if (st.launches.empty()) {
    // Traces without GPU records say so once for the whole trace.
    if (hasGpuRecords(a))
      out.push_back({st.name,
                     hostNs,
                     "no_kernel",
                     st.name +
                         " launched no GPU work: no kernel, copy or memset was queued by a runtime call "
                         "inside its host window (" +
                         spanDurationText(hostNs) + "). Its GPU time is 0 because it has none." +
                         (a.partial.empty() ? "" : " (This trace was cut: what it launched may be missing.)"),
                     self,
                     {"host window"}});
  } else {
    std::vector<EventId> gpuIds;
    for (const auto& l : st.launches) gpuIds.push_back(l.gpu);
    if (st.gpuEndNs > st.hostEndNs) {
      // The GPU work that ran after the window (durations, not the elapsed time to the last end).
      int64_t workAfter = 0;
      for (const auto& l : st.launches)
        workAfter += std::max<int64_t>(0, l.gpuEndNs - std::max(l.gpuStartNs, st.hostEndNs));
      Verdict v{st.name, st.gpuEndNs - st.hostEndNs, "ran_after_window", "", self, {"host window", "launch latency"}};
      v.text = st.name + "'s GPU work (" + count(st.launches.size()) + " activities, " +
               spanDurationText(st.gpuAttributedNs) + ") ran from " + spanDurationText(st.gpuStartNs - st.hostStartNs) +
               " to " + spanDurationText(st.gpuEndNs - st.hostStartNs) +
               " after the step began on the CPU; its host window closed at " + spanDurationText(hostNs) +
               ", and its work went on " + spanDurationText(st.gpuEndNs - st.hostEndNs) + " longer (" +
               spanDurationText(workAfter) + " of its GPU work ran after the window). Only " +
               spanDurationText(st.gpuBusyInHostWindowNs) +
               " of GPU busy time (any step's) falls inside the window: a host timer around " + st.name +
               " without a sync measures launch cost, not its GPU time.";
      addEvidence(v, gpuIds);
      out.push_back(std::move(v));
    }
    underOpRows(s, st, self, out);
    overheadFindings(s, st, overhead, self, out);
    communicationFinding(s, st, self, out);
  }
  syncFindings(s, a, st, self, out);
  if (hasGpuRecords(a)) {
    gapFindings(s, index, st, a.diagnosis, self, out);
    spillFindings(a, st, self, out);
  }
}

// ---- the whole trace ---------------------------------------------------------------

void traceVerdicts(const EventStore& s, const Explanation& a, std::vector<Verdict>& out) {
  const Ledger& l = a.ledger;
  if (!a.partial.empty()) {
    out.push_back({"",
                   INT64_MAX,
                   "partial_trace",
                   s.meta().partial.empty()
                       ? "This trace is partial (" + a.partial +
                             "): the steps here are the ones the script completed before it stopped."
                       : "This trace was cut and salvaged (" + a.partial +
                             "): work recorded after the cut is missing, so a step that \"launched no GPU work\" may "
                             "only have lost its records.",
                   {},
                   {}});
  }
  if (l.timing == "none" && l.cudaEventRecords == 0) {
    out.push_back({"",
                   INT64_MAX - 1,
                   "no_gpu_activity",
                   "This trace has no GPU activity: no kernel, copy or memset was recorded (a CPU-only profile, or "
                   "the GPU activities were not collected), so every step's GPU figures are 0.",
                   {},
                   {}});
  }
  if (l.timing == "cuda_events") {
    std::map<int64_t, int> perExt;
    std::vector<EventId> records;
    for (EventId i = 0; i < s.events().size(); ++i) {
      const Event& e = s.event(i);
      if (e.family == Family::CudaRuntime && s.name(e) == "cudaEventRecord") {
        perExt[e.externalId]++;
        if (records.size() < 4) records.push_back(i);
      }
    }
    size_t pairs = 0;
    for (const auto& [ext, n] : perExt) pairs += ext > 0 && n == 2;
    Verdict v{"", INT64_MAX - 2, "event_timing", "", records, {"cudaEventRecord"}};
    v.text = "This trace has CUDA-event timing without kernels: " + std::to_string(l.cudaEventRecords) +
             " cudaEventRecord calls (" + std::to_string(pairs) +
             " ops have exactly two, at entry and exit, by External id) and no kernel, copy or memset record; " +
             std::to_string(l.launchesWithoutGpuRecord) +
             " launch calls have no GPU record. This is torch.autograd.profiler.profile(use_cuda=True): the CUDA "
             "time torch printed for an op is the GPU-timeline distance between the markers recorded at its "
             "entry and exit, not the duration of its kernels. The markers' GPU timestamps are not in the file, "
             "so that time cannot be read back from it. It measures queue position as much as work: on an idle "
             "GPU a marker completes as soon as it is submitted, so an op that launches nothing still gets CUDA "
             "time close to its CPU time; on a busy GPU the start marker waits behind earlier queued work, so time "
             "moves between neighbouring ops, and every added record_function adds two more markers.";
    out.push_back(std::move(v));
  }
  if (hasGpuRecords(a) && !a.steps.empty()) {
    // A summary of the steps' figures: ranked after the findings about them.
    Verdict v{"", 0, "per_step_cuda_time", "", {}, {"correlation", "Self CUDA"}};
    v.text =
        "Every step's CUDA time, wrapped or not, is the GPU time of the work it launched, found by "
        "correlation (per op: the table with corrected attribution):";
    size_t shown = 0;
    int64_t restNs = 0;
    size_t rest = 0;
    for (const auto& st : a.steps) {
      if (st.launches.empty()) continue;
      if (shown >= 2 * th::kListItems) {
        restNs += st.gpuAttributedNs;
        ++rest;
        continue;
      }
      ++shown;
      v.text += " " + st.name + " " + spanDurationText(st.gpuAttributedNs) + ";";
      if (st.event != kNoEvent) addEvidence(v, {st.event});
    }
    if (rest) v.text += " and " + count(rest) + " more steps, " + spanDurationText(restNs) + ";";
    v.text.back() = '.';
    if (shown) out.push_back(std::move(v));
  }
  // Graph replays: one launch call queued many kernels.
  {
    uint64_t kernels = 0, replays = 0;
    int64_t ns = 0;
    std::vector<EventId> calls;
    // The two names' ids, looked up once (a trace without them has no replay to find).
    uint32_t cudaLaunch = 0, hipLaunch = 0;
    const bool hasCuda = s.strings().find("cudaGraphLaunch", &cudaLaunch);
    const bool hasHip = s.strings().find("hipGraphLaunch", &hipLaunch);
    for (EventId i = 0; (hasCuda || hasHip) && i < s.events().size(); ++i) {
      const Event& e = s.event(i);
      if ((e.family != Family::CudaRuntime && e.family != Family::CudaDriver) || e.correlation <= 0) continue;
      if (!(hasCuda && e.name == cudaLaunch) && !(hasHip && e.name == hipLaunch)) continue;
      if (s.callOfCorrelation(e.correlation) != i) continue;
      ++replays;
      if (calls.size() < th::kMaxEvidence) calls.push_back(i);
      for (EventId g : s.byCorrelation(e.correlation))
        if (isGpuWork(s.event(g).family)) {
          ++kernels;
          ns += s.event(g).dur;
        }
    }
    if (kernels) {
      Verdict v{"", ns, "graph_replay", "", calls, {}};
      v.text = count(kernels) + " GPU activities (" + spanDurationText(ns) + ") ran from " + count(replays) +
               " CUDA graph replays (cudaGraphLaunch/hipGraphLaunch): one launch call queued each graph's kernels, "
               "which share its correlation id, so their time belongs to the op that replayed the graph.";
      out.push_back(std::move(v));
    }
  }
  // Sync waits: copies that block, and causes that repeat in every step.
  for (const SyncGroup& g : a.syncGroups) {
    const bool copy = g.api.find("Memcpy") != std::string::npos;
    const bool loop = a.stepSource == "profiler_steps" && g.steps.size() >= th::kSyncLoopMinSteps;
    if (!copy && !loop) continue;
    Verdict v{"", g.totalNs, copy ? "sync_copy" : "sync_in_loop", "", {}, {g.api.substr(0, g.api.find(' '))}};
    for (int wi : g.waits) addEvidence(v, {a.syncWaits[static_cast<size_t>(wi)].ev});
    if (copy)
      v.text = count(g.count) + " copies made the CPU wait " + spanDurationText(g.totalNs) + " (longest " +
               spanDurationText(g.maxNs) + "): " + g.key +
               ". A synchronous cudaMemcpy, or an async copy to pageable host memory, blocks until the copy and "
               "the work queued before it are done; pinned memory (pin_memory=True) and non_blocking=True let "
               "the CPU go on.";
    else
      v.text = g.key + " synchronized " + count(g.count) + " times in " + count(g.steps.size()) + " of the " +
               count(a.steps.size()) + " steps: " + spanDurationText(g.totalNs) + " of host time (longest " +
               spanDurationText(g.maxNs) + ") inside the step loop.";
    if (!g.awaitedTop.empty()) {
      v.text += " It waited mostly for";
      for (size_t i = 0; i < g.awaitedTop.size(); ++i)
        v.text += (i ? ", " : " ") + cut(g.awaitedTop[i].first) + " (" + spanDurationText(g.awaitedTop[i].second) + ")";
      v.text += ".";
    }
    out.push_back(std::move(v));
  }
  if (!a.syncWaits.empty()) {
    std::map<std::string, int> byApi;
    size_t inAnnotation = 0, byProfiler = 0;
    Verdict v{"", 0, "sync_summary", "", {}, {}};
    for (const auto& w : a.syncWaits) {
      byApi[w.api]++;
      byProfiler += w.issuer == "profiler";
      const EventId parent = s.event(w.ev).parent;
      inAnnotation += parent != kNoEvent && s.event(parent).family == Family::UserAnnotation;
      v.ns += w.durNs;
      addEvidence(v, {w.ev});
    }
    v.text = count(a.syncWaits.size()) + " synchronizing calls (" + spanDurationText(v.ns) + " of host time):";
    size_t shown = 0;
    for (const auto& [api, n] : byApi) {
      if (shown++ >= th::kListItems * 2) break;
      v.text += " " + count(static_cast<uint64_t>(n)) + " " + api + ",";
    }
    if (byApi.size() > th::kListItems * 2) v.text += " ...,";
    v.text.back() = '.';
    v.text += " " + count(byProfiler) + " issued by the profiler itself (a torch/profiler Python frame encloses it); " +
              count(inAnnotation) + " directly inside a record_function (the rest are inside ops or outside any op).";
    out.push_back(std::move(v));
  }
  if (l.torchGapNs != 0) {
    Verdict v{"", l.torchGapNs < 0 ? -l.torchGapNs : l.torchGapNs, "torch_total_gap", "", {}, {"Self CUDA"}};
    v.text = "torch's \"Self CUDA time total\" (" + spanDurationText(l.torchSelfDeviceTotalNs) + ") is " +
             spanDurationText(l.torchGapNs) + " more than the GPU activities' durations (" +
             spanDurationText(l.gpuActivitySumNs) + "):";
    for (size_t i = 0; i < l.torchGapCauses.size(); ++i) v.text += (i ? "; " : " ") + l.torchGapCauses[i].text;
    v.text += ".";
    out.push_back(std::move(v));
  }
  // Glossary: the names in this trace that have an entry.
  std::map<std::string_view, std::pair<uint64_t, std::vector<EventId>>> seen;  // key -> count, first ids
  for (EventId i = 0; i < s.events().size(); ++i) {
    const Event& e = s.event(i);
    std::string_view key;
    if (e.family == Family::GpuUserAnnotation)
      key = "gpu_user_annotation";
    else if (e.family == Family::Overhead || e.family == Family::CudaRuntime || e.family == Family::CudaDriver)
      if (const GlossaryEntry* g = glossaryFor(s.name(e))) key = g->key;
    if (key.empty()) continue;
    auto& [n, ids] = seen[key];
    ++n;
    if (ids.size() < 5) ids.push_back(i);
  }
  for (const auto& [key, entry] : seen) {
    const GlossaryEntry* g = glossaryFor(key);
    Verdict v{"", -1, "glossary", "", entry.second, {std::string(key)}};
    v.text = std::string(key) + " (" + count(entry.first) + " in this trace): " + std::string(g->text);
    out.push_back(std::move(v));
  }
}

}  // namespace

namespace {
// Traces this large find their steps' findings on two threads.
constexpr size_t kParallelVerdictEvents = 200'000;
}  // namespace

std::vector<Verdict> findVerdicts(const EventStore& s, const ActivityIndex& index, const Explanation& a) {
  std::vector<Verdict> out;
  const std::vector<OverheadOwnership> overhead = torchOverheadOwnership(s);
  // A large trace's steps in two halves on two threads, their findings in step order.
  const bool two = s.size() >= parallelMinEvents(kParallelVerdictEvents) && a.steps.size() >= 2 && workerThreads() >= 2;
  const size_t half = two ? a.steps.size() / 2 : a.steps.size();
  std::vector<Verdict> later;
  runBoth(
      two,
      [&] {
        for (size_t i = 0; i < half; ++i) stepVerdicts(s, index, a, a.steps[i], overhead, out);
      },
      [&] {
        for (size_t i = half; i < a.steps.size(); ++i) stepVerdicts(s, index, a, a.steps[i], overhead, later);
      });
  out.insert(out.end(), std::make_move_iterator(later.begin()), std::make_move_iterator(later.end()));
  aggregateAcrossSteps(a, out);
  traceVerdicts(s, a, out);
  // Ranked by the time at stake (ties keep the order they were found in).
  std::stable_sort(out.begin(), out.end(), [](const Verdict& x, const Verdict& y) { return x.ns > y.ns; });
  return out;
}

}  // namespace attnscope
