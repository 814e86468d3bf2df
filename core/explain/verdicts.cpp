// Verdicts in plain words, each with its numbers and the events behind it.
#include <algorithm>
#include <map>
#include <set>

#include "core/explain/explanation.h"
#include "core/explain/glossary.h"
#include "core/tables/attribution.h"
#include "core/tables/key_averages.h"

namespace attnscope {

namespace {

// Event names in sentences; kernel names are cut (the evidence has them whole).
std::string nameOf(const EventStore& s, EventId id) {
  if (id == kNoEvent) return "(none)";
  const std::string_view n = s.name(s.event(id));
  return n.size() > 56 ? std::string(n.substr(0, 48)) + "..." : std::string(n);
}

std::string corrText(int64_t c) { return c > 0 ? "correlation " + std::to_string(c) : "no correlation"; }

// Which step's host window holds time t on the step's thread: its name or "".
std::string stepAt(const Explanation& a, int64_t t) {
  for (const auto& st : a.steps)
    if (t >= st.hostStartNs && t < st.hostEndNs) return st.name;
  return "";
}

void finishStep(const EventStore& s, const Explanation& a, const StepReport& st,
                const std::vector<OverheadOwnership>& overhead, const std::vector<EventId>& gpuIds,
                std::vector<Verdict>& out);

void stepVerdicts(const EventStore& s, const Explanation& a, const StepReport& st,
                  const std::vector<OverheadOwnership>& overhead, std::vector<Verdict>& out) {
  const std::vector<EventId> self = st.event != kNoEvent ? std::vector<EventId>{st.event} : std::vector<EventId>{};
  const int64_t hostNs = st.hostEndNs - st.hostStartNs;
  if (st.launches.empty()) {
    if (a.ledger.timing != "cupti") return;  // the event_timing verdict speaks for these traces
    out.push_back({st.name,
                   "no_kernel",
                   st.name +
                       " launched no GPU work: no kernel, copy or memset was queued by a runtime call "
                       "inside its host window (" +
                       usText(hostNs) + "). Its GPU time is 0 because it has none.",
                   self,
                   {"host window"}});
    return;
  }
  std::vector<EventId> gpuIds;
  for (const auto& l : st.launches) gpuIds.push_back(l.gpu);

  if (st.gpuEndNs > st.hostEndNs) {
    Verdict v{st.name, "ran_after_window", "", self, {"host window", "launch latency"}};
    v.text = st.name + "'s GPU work (" + std::to_string(st.launches.size()) + " activities, " +
             usText(st.gpuAttributedNs) + ") ran from " + usText(st.gpuStartNs - st.hostStartNs) + " to " +
             usText(st.gpuEndNs - st.hostStartNs) + " after the step began on the CPU; its host window closed at " +
             usText(hostNs) + ", so " + usText(st.gpuEndNs - st.hostEndNs) + " of GPU time came after it. Only " +
             usText(st.gpuBusyInHostWindowNs) +
             " of GPU busy time (any step's) falls inside the window: a host timer around " + st.name +
             " without a sync measures launch cost, not its GPU time.";
    v.evidence.insert(v.evidence.end(), gpuIds.begin(), gpuIds.end());
    out.push_back(std::move(v));
  }

  // Which op rows hold the step's GPU time.
  std::map<EventId, std::pair<int64_t, std::vector<EventId>>> byOp;
  for (const auto& l : st.launches) {
    auto& slot = byOp[l.op];
    slot.first += l.gpuEndNs - l.gpuStartNs;
    slot.second.push_back(l.gpu);
  }
  if (byOp.size() == 1 && byOp.begin()->first == st.event) return finishStep(s, a, st, overhead, gpuIds, out);
  Verdict under{st.name, "under_op_rows", "", self, {"Self CUDA", "CUDA total"}};
  if (st.wrapped)
    under.text = st.name +
                 " is a record_function: its own row has Self CUDA 0 (it launches nothing itself) and "
                 "CUDA total " +
                 usText(st.gpuAttributedNs) + " from the ops inside it. The GPU time is under: ";
  else if (st.event != kNoEvent)
    under.text = st.name + "'s CUDA total (" + usText(st.gpuAttributedNs) +
                 ") is Self CUDA of the ops inside it that launched the work: ";
  else
    under.text = st.name + " was not wrapped, so it has no row of its own; its GPU time (" +
                 usText(st.gpuAttributedNs) + ") is under: ";
  if (st.wrapped) under.glossary.push_back("user_annotation");
  bool first = true;
  for (const auto& [op, slot] : byOp) {
    under.text += (first ? "" : "; ") + nameOf(s, op) + " " + usText(slot.first) + " (";
    for (size_t i = 0; i < slot.second.size(); ++i)
      under.text += (i ? ", " : "") + nameOf(s, slot.second[i]) + ", " + corrText(s.event(slot.second[i]).correlation);
    under.text += ")";
    first = false;
    if (op != kNoEvent) under.evidence.push_back(op);
    under.evidence.insert(under.evidence.end(), slot.second.begin(), slot.second.end());
  }
  under.text += ".";
  out.push_back(std::move(under));
  finishStep(s, a, st, overhead, gpuIds, out);
}

// The verdicts about overhead ownership and sync waits.
void finishStep(const EventStore& s, const Explanation& a, const StepReport& st,
                const std::vector<OverheadOwnership>& overhead, const std::vector<EventId>& gpuIds,
                std::vector<Verdict>& out) {
  const std::vector<EventId> self = st.event != kNoEvent ? std::vector<EventId>{st.event} : std::vector<EventId>{};
  const int64_t hostNs = st.hostEndNs - st.hostStartNs;
  for (const auto& o : overhead) {
    std::vector<EventId> mine;
    int64_t ns = 0;
    for (EventId g : o.gpu)
      if (std::find(gpuIds.begin(), gpuIds.end(), g) != gpuIds.end()) {
        mine.push_back(g);
        ns += s.event(g).dur;
      }
    if (mine.empty()) continue;
    Verdict v{st.name, "swallowed_by_overhead", "", self, {"Activity Buffer Request"}};
    v.text = "In torch's table the profiler's own event '" + nameOf(s, o.overhead) + "' also owns " + usText(ns) +
             " of " + st.name + "'s GPU work (" + nameOf(s, mine[0]) + ", " + corrText(s.event(mine[0]).correlation) +
             "): it ran while " + nameOf(s, o.op) + " (External id " +
             std::to_string(o.op == kNoEvent ? -1 : s.event(o.op).externalId) +
             ") was running on the main thread and took that op's External id. The corrected attribution gives "
             "this time to " +
             nameOf(s, o.op) + " only.";
    v.evidence.push_back(o.overhead);
    if (o.op != kNoEvent) v.evidence.push_back(o.op);
    v.evidence.insert(v.evidence.end(), mine.begin(), mine.end());
    out.push_back(std::move(v));
  }

  for (int wi : st.syncWaits) {
    const SyncWait& w = a.syncWaits[static_cast<size_t>(wi)];
    Verdict v{st.name, "sync_wait", "", self, {w.api.substr(0, w.api.find(' '))}};
    std::string chain;
    for (size_t i = 0; i < w.opChain.size(); ++i) chain += (i ? " > " : "") + w.opChain[i];
    v.text = st.name + " spent " + usText(w.durNs) + " of its " + usText(hostNs) + " host time in " + chain + ".";
    if (w.awaited.empty()) {
      v.text += " Nothing queued before it was still running: it waited for no GPU work.";
    } else {
      v.text += " It waited for:";
      for (const auto& aw : w.awaited) {
        const GpuOwner o = gpuOwner(s, aw.gpu);
        const std::string from = stepAt(a, aw.queuedNs);
        v.text += " " + nameOf(s, aw.gpu) + " (" + corrText(aw.correlation) + ", " +
                  usText(aw.gpuEndNs - aw.gpuStartNs) + " on the GPU, launched by " + nameOf(s, o.op) +
                  (from.empty() ? std::string() : " in " + from) + ", " + usText(aw.gpuEndNs - w.startNs) +
                  " of it after the wait began);";
        v.evidence.push_back(aw.gpu);
        if (o.launch != kNoEvent) v.evidence.push_back(o.launch);
      }
      v.text.back() = '.';
      v.text += " So this host time is mostly earlier GPU work finishing, not " + st.name + "'s own.";
    }
    v.evidence.insert(v.evidence.end(), w.chainEvents.begin(), w.chainEvents.end());
    out.push_back(std::move(v));
  }
}

void traceVerdicts(const EventStore& s, const Explanation& a, std::vector<Verdict>& out) {
  const Ledger& l = a.ledger;
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
    Verdict v{"", "event_timing", "", records, {"cudaEventRecord"}};
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
  if (l.timing == "cupti" && !a.steps.empty()) {
    Verdict v{"", "per_step_cuda_time", "", {}, {"correlation", "Self CUDA"}};
    v.text =
        "Every step's CUDA time, wrapped or not, is the GPU time of the work it launched, found by "
        "correlation (gpu_attributed_ns per step here; per op in `table --attribution corrected`):";
    for (const auto& st : a.steps) {
      if (st.launches.empty()) continue;
      v.text += " " + st.name + " " + usText(st.gpuAttributedNs) + ";";
      if (st.event != kNoEvent) v.evidence.push_back(st.event);
    }
    v.text.back() = '.';
    out.push_back(std::move(v));
  }
  if (!a.syncWaits.empty()) {
    std::map<std::string, int> byApi;
    size_t inAnnotation = 0, byProfiler = 0;
    Verdict v{"", "sync_summary", "", {}, {}};
    for (const auto& w : a.syncWaits) {
      byApi[w.api]++;
      byProfiler += w.issuer == "profiler";
      const EventId parent = s.event(w.ev).parent;
      inAnnotation += parent != kNoEvent && s.event(parent).family == Family::UserAnnotation;
      v.evidence.push_back(w.ev);
    }
    v.text = std::to_string(a.syncWaits.size()) + " synchronizing calls:";
    for (const auto& [api, n] : byApi) v.text += " " + std::to_string(n) + " " + api + ",";
    v.text.back() = '.';
    v.text += " " + std::to_string(byProfiler) +
              " issued by the profiler itself (a torch/profiler Python frame "
              "encloses it); " +
              std::to_string(inAnnotation) +
              " directly inside a record_function (the rest are inside ops or outside any op).";
    out.push_back(std::move(v));
  }
  // Glossary: the names in this trace that have an entry.
  std::map<std::string_view, std::vector<EventId>> seen;
  for (EventId i = 0; i < s.events().size(); ++i) {
    const Event& e = s.event(i);
    std::string_view key;
    if (e.family == Family::GpuUserAnnotation)
      key = "gpu_user_annotation";
    else if (e.family == Family::Overhead || e.family == Family::CudaRuntime || e.family == Family::CudaDriver)
      if (const GlossaryEntry* g = glossaryFor(s.name(e))) key = g->key;
    if (key.empty()) continue;
    auto& ids = seen[key];
    ids.push_back(i);
  }
  for (const auto& [key, ids] : seen) {
    const GlossaryEntry* g = glossaryFor(key);
    Verdict v{"", "glossary", "", {}, {std::string(key)}};
    v.text = std::string(key) + " (" + std::to_string(ids.size()) + " in this trace): " + std::string(g->text);
    v.evidence.assign(ids.begin(), ids.begin() + static_cast<long>(std::min<size_t>(ids.size(), 5)));
    out.push_back(std::move(v));
  }
}

}  // namespace

std::vector<Verdict> findVerdicts(const EventStore& s, const Explanation& a) {
  std::vector<Verdict> out;
  const std::vector<OverheadOwnership> overhead = torchOverheadOwnership(s);
  for (const auto& st : a.steps) stepVerdicts(s, a, st, overhead, out);
  traceVerdicts(s, a, out);
  return out;
}

}  // namespace attnscope
