// What a trace says about its steps, found from its events: host windows,
// the GPU work each step launched (by correlation), sync waits with the op
// chain that issued them and the GPU work they awaited, an accounting
// ledger, and verdicts in plain words that carry their numbers and the ids
// of the events that prove them. `attnscope-cli explain` prints it; the
// JSON schema is documented in docs/explain-schema.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/explain/diagnosis.h"
#include "core/store/event_store.h"
#include "core/text/duration.h"

namespace attnscope {
class Helpers;

// A step's host window given by the caller (our engine's metadata names the
// four workload steps and says which were wrapped in a record_function).
struct EngineStep {
  std::string name;
  bool wrapped = false;
  int64_t hostStartNs = 0;
  int64_t hostEndNs = 0;
};

// What a GPU activity is, for the split of a step's GPU work.
enum class WorkKind : uint8_t { Kernel, Memcpy, Memset, Communication };
// Communication: a kernel whose name says NCCL or RCCL (collectives run as kernels).
WorkKind workKind(const EventStore& store, EventId gpu);
std::string_view workKindName(WorkKind k);  // "kernel", "memcpy", "memset", "communication"

// One GPU activity (kernel, copy, memset) queued from a step.
struct Launch {
  EventId launch = kNoEvent;  // runtime call (cudaLaunchKernel, ...), kNoEvent if none
  EventId gpu = kNoEvent;
  EventId op = kNoEvent;  // the op that launched it (attribution.h)
  int64_t correlation = kNoId;
  int64_t launchNs = 0;  // runtime call start (or GPU start when there is none)
  int64_t gpuStartNs = 0;
  int64_t gpuEndNs = 0;
  bool graph = false;  // a CUDA/HIP graph replay launched it (its kernels share the cudaGraphLaunch's correlation)
  int64_t latencyNs() const { return gpuStartNs - launchNs; }
};

// An annotation one level down inside a step (a ProfilerStep's "## forward ##",
// "Optimizer.step#SGD.step", an nn.Module's scope, ...).
struct Region {
  std::string name;
  EventId event = kNoEvent;
  int64_t hostStartNs = 0;
  int64_t hostEndNs = 0;
  int64_t gpuAttributedNs = 0;  // the GPU work launched while it ran (any thread)
  uint64_t launches = 0;
};

struct Awaited {
  EventId gpu = kNoEvent;
  int64_t correlation = kNoId;
  int64_t gpuStartNs = 0;
  int64_t gpuEndNs = 0;
  int64_t queuedNs = 0;  // when it was queued (its runtime call's start)
};

// A host call that blocks until GPU work finishes.
struct SyncWait {
  EventId ev = kNoEvent;
  std::string api;  // cudaStreamSynchronize, ...
  int64_t startNs = 0;
  int64_t durNs = 0;
  std::vector<std::string> opChain;  // outermost ... innermost, then the call itself
  std::vector<EventId> chainEvents;  // the events behind opChain (same order)
  std::string issuer;                // "op" (inside an op), "profiler", "user" (Python frame), "unknown"
  std::vector<Awaited> awaited;      // queued before it, finishing during it
  int step = -1;                     // index of the step whose window holds it
  int group = -1;                    // index into Explanation::syncGroups
};

// Sync waits with the same cause: the same op chain (ProfilerStep#N left out,
// so a loop's waits fall together) ending in the same call.
struct SyncGroup {
  std::string key;  // "op > op > call", or "(no op) > call"
  std::string api;  // the call, with a copy's direction ("cudaMemcpyAsync (Device -> Pageable)")
  uint64_t count = 0;
  int64_t totalNs = 0;
  int64_t maxNs = 0;
  std::vector<int> waits;  // indexes into Explanation::syncWaits, in time order
  std::vector<int> steps;  // the steps they fall in (distinct, in order)
  // What they waited for: GPU work by name, with the time of it that overlapped the waits (top 3).
  std::vector<std::pair<std::string, int64_t>> awaitedTop;
};

struct StepReport {
  std::string name;
  bool wrapped = false;
  EventId event = kNoEvent;    // the annotation or op the step comes from (none for EngineStep or a group of ops)
  uint32_t lane = UINT32_MAX;  // its thread (UINT32_MAX for EngineStep); launches count from every thread
  int64_t hostStartNs = 0;
  int64_t hostEndNs = 0;
  std::vector<Launch> launches;
  int64_t gpuStartNs = -1;            // first start of the work it launched (-1: none)
  int64_t gpuEndNs = -1;              // last end
  int64_t gpuAttributedNs = 0;        // sum of the durations of the work it launched
  int64_t gpuBusyInHostWindowNs = 0;  // union of all GPU work clipped to the host window
  std::optional<int64_t> eventNs;     // CUDA-event time, when the trace carries it
  uint64_t cudaEventRecords = 0;      // cudaEventRecord calls inside the window
  std::vector<int> syncWaits;         // indexes into Explanation::syncWaits
  std::vector<Region> regions;        // annotations one level down, in time order
  // The work it launched, split by kind (they add up to gpuAttributedNs).
  int64_t kernelNs = 0, memcpyNs = 0, memsetNs = 0, communicationNs = 0;
  int64_t idleNs = 0;          // host window minus gpuBusyInHostWindowNs: the GPU had nothing to run
  int64_t syncWaitNs = 0;      // host time in the sync waits that started inside the window
  int64_t spillOutNs = 0;      // of the work it launched, the time that ran after its window closed
  int64_t spillInNs = 0;       // work launched before the window that ran inside it
  std::vector<int> spillFrom;  // the earlier steps that launched that work (distinct)
  uint64_t graphLaunches = 0;  // of its launches, GPU activities a graph replay ran
  int64_t hostNs() const { return hostEndNs - hostStartNs; }
};

struct DoubleCount {
  std::string kind;  // "gpu_user_annotation_as_self", "self_device_pct_over_100", "overhead_owns_gpu"
  std::string name;
  int64_t ns = 0;
  double pct = 0;  // torch's Self CUDA % where it applies
  std::vector<EventId> evidence;
};

// One reason torch's "Self CUDA time total" differs from the GPU activities' durations.
struct GapCause {
  std::string cause;  // "cuda_sync_rows", "gpu_activities_outside_rows", "other"
  int64_t ns = 0;
  std::string text;  // plain words
};

struct Ledger {
  std::string timing;  // "cupti" (CUDA activity records), "roctracer" (HIP's), "cuda_events" (event records,
                       // no kernels), "none"
  int64_t wallSpanNs = 0;
  uint64_t gpuActivities = 0;
  int64_t gpuActivitySumNs = 0;
  int64_t gpuUnionNs = 0;
  int64_t torchSelfDeviceTotalNs = 0;    // torch's "Self CUDA time total"
  int64_t torchSelfDeviceAllRowsNs = 0;  // every row's Self CUDA added up (double counts)
  int64_t correctedSelfDeviceNs = 0;     // corrected mode, all rows
  std::vector<DoubleCount> doubleCounting;
  std::vector<EventId> unlinkedGpu;
  int64_t unlinkedGpuNs = 0;
  std::vector<EventId> overheadOwnedGpu;
  int64_t overheadOwnedGpuNs = 0;
  uint64_t cudaEventRecords = 0;
  uint64_t launchesWithoutGpuRecord = 0;             // runtime launches whose GPU work is not in the trace
  std::optional<uint64_t> droppedRecords;            // engine traces (not read from imported ones)
  std::optional<uint64_t> recordsWithoutTimestamps;  // engine traces: CUPTI could not time them, left out
  // torchSelfDeviceTotalNs - gpuActivitySumNs, and what makes it up (the causes add up to it exactly).
  int64_t torchGapNs = 0;
  std::vector<GapCause> torchGapCauses;
};

struct Verdict {
  std::string step;  // "" for the whole trace
  int64_t ns = 0;    // the time at stake: findings are ranked by it
  std::string kind;  // no_kernel, ran_after_window, under_op_rows, swallowed_by_overhead, sync_wait,
                     // per_step_cuda_time, event_timing, glossary
  std::string text;
  std::vector<EventId> evidence;
  std::vector<std::string> glossary;  // glossary keys it refers to
};

// Engine runs: one step's host time with no profiler (the host pass), under
// our collector (this trace's windows) and under torch.profiler (the torch
// pass), each a median with its spread over the iterations (n = 0: that pass
// did not run). The difference from the first is the profiler's own work.
struct ProfilerInflation {
  std::string step;
  StepSpread noProfiler, collector, torch;
};

struct Explanation {
  std::vector<StepReport> steps;
  std::vector<ProfilerInflation> inflation;  // engine runs only
  std::vector<std::string> runNotes;         // engine runs: what the run says about its own recording
  std::vector<SyncWait> syncWaits;
  std::vector<SyncGroup> syncGroups;  // by total time, largest first
  Ledger ledger;
  std::vector<Verdict> verdicts;  // ranked: the most time at stake first
  Diagnosis diagnosis;            // each step's wall time blamed on causes, ranked (diagnosis.h)
  // "profiler_steps" (ProfilerStep#N), "engine" (our engine's steps), "annotations" (record_function
  // scopes and the op runs between them; the attention block's four steps when its ops are there),
  // "whole_trace" (no annotation: one step), "none" (no CPU thread)
  std::string stepSource;
  std::string partial;  // non-empty: the trace was cut or salvaged (what the reader said); kernels may be missing
};

class ActivityIndex;
struct KeyAverages;
struct EngineRun;
struct TraceSnapshot;

// The explanation of a snapshot's trace from the pieces it already holds
// (store, activity index, both by-name tables, engine metadata): nothing is
// recomputed. Steps are `steps` when given, else the engine's when the
// trace has them, else the user annotations (and, inside the outermost
// annotation, the top-level ops that no annotation covers).
// `profilerStepsFirst`: a trace of our engine that also carries ProfilerStep#N (a multi-rank run's) is
// explained by those, one per iteration, instead of the engine's four steps per iteration (the job view's).
// `stepsOnly`: the steps with their figures and the diagnosis, nothing else (no regions, sync waits,
// ledger or findings): what a rank's summary reads (core/ranks).
Explanation explainTrace(const TraceSnapshot& snap, const std::vector<EngineStep>* steps = nullptr,
                         bool profilerStepsFirst = false, bool stepsOnly = false);
// explainTrace in two parts, so that the first can run while torch's tables are computed: every part
// that reads the store and the activity index (steps, regions, sync waits, the diagnosis), then the
// parts that read torch's tables (the ledger, and the findings that read it). explainTrace is the
// first then the second. `helpers`, when given, are threads free to share the longest work (the
// diagnosis's evidence, cause by cause).
Explanation explainWithoutTables(const TraceSnapshot& snap, const std::vector<EngineStep>* steps = nullptr,
                                 bool profilerStepsFirst = false, Helpers* helpers = nullptr);
void finishWithTables(const TraceSnapshot& snap, Explanation& a);
// The same, with the ledger already computed from the snapshot's tables (computeLedger).
void finishWithLedger(const TraceSnapshot& snap, Explanation& a, Ledger ledger);

// Pieces, for callers that need only one.
std::vector<StepReport> findSteps(const EventStore& store, const std::vector<EngineStep>* steps, std::string* source);
// Fills the step's launches (the calls starting in its host window, or up
// to `scanEndNs` when that is earlier: explainTrace ends a step where the
// next one starts, so overlapping steps do not each take every launch) and
// its GPU figures. A correlation's GPU work goes with its first call.
void fillStepFigures(const EventStore& store, const ActivityIndex& index, StepReport& step,
                     int64_t scanEndNs = INT64_MAX);
std::vector<SyncWait> findSyncWaits(const EventStore& store, const ActivityIndex& index);
// The device copy a memcpy call queued (same correlation), or kNoEvent; a call's name with its copy's
// direction and memory ("cudaMemcpyAsync (Pageable -> Device)"; other calls: their name).
EventId copyOfCall(const EventStore& store, EventId call);
std::string callLabel(const EventStore& store, EventId call);
// What torch's sums say against what the GPU did; `engine` (may be null) gives the dropped-record count.
Ledger computeLedger(const EventStore& store, const ActivityIndex& index, const KeyAverages& torchByName,
                     const KeyAverages& correctedByName, const EngineRun* engine);
Ledger computeLedger(const TraceSnapshot& snap);
// Ranked by the time at stake, largest first.
std::vector<Verdict> findVerdicts(const EventStore& store, const ActivityIndex& index, const Explanation& a);

// Output bounds: by default the text has at most kMaxTextLines lines of at
// most kMaxLineChars characters, and at most kMaxFindingsPerStep findings
// per step and kMaxTraceFindings for the whole trace; the JSON keeps every
// step and sync wait, the first kMaxJsonLaunchesPerStep launches of each step
// (and their count) and at most kMaxJsonVerdicts verdicts of at most
// kMaxVerdictChars characters. `all` lifts every bound.
struct ExplainOutputOptions {
  bool all = false;
  // The attention block's answer table (core/snapshot/answer_table.h), built by the caller from the
  // snapshot: its lines follow the diagnosis in the text; its JSON is the "answer" key (null: none).
  std::vector<std::string> answerLines;
  std::string answerJson;
  // The founding answer (core/snapshot/founding_answer.h) of any trace with steps: its JSON is the
  // "founding_answer" key (null: none). `headline`, when set (an engine run on the CPU), opens the
  // text in place of the diagnosis's headline, which then heads the ranked causes.
  std::string foundingJson;
  std::string headline;
};
inline constexpr size_t kMaxTextLines = 200;
inline constexpr size_t kMaxLineChars = 400;
inline constexpr size_t kMaxFindingsPerStep = 10;
inline constexpr size_t kMaxTraceFindings = 20;
inline constexpr size_t kMaxJsonVerdicts = 100;
inline constexpr size_t kMaxVerdictChars = 1000;
inline constexpr size_t kMaxJsonLaunchesPerStep = 50;

std::string explainText(const EventStore& store, const Explanation& a, const ExplainOutputOptions& opt = {});
std::string explainJson(const EventStore& store, const Explanation& a, const ExplainOutputOptions& opt = {});
std::string ledgerText(const Ledger& l);
// withEvents: add an "events" object describing every event id it cites.
std::string ledgerJson(const EventStore& store, const Ledger& l, bool withEvents);

// The JSON object that lets a reader find an event in the trace file.
std::string eventJson(const EventStore& store, EventId id);

}  // namespace attnscope
