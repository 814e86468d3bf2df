// Two traces of the same workload side by side. Steps are paired by order
// when both traces have ProfilerStep#N steps, else by name (the attention
// block's four steps); table rows are joined by name (and input shapes when
// grouped so), with the DataLoader iterator's variants taken as one role;
// kernels by name; sync waits one by one (API and op chain, annotations left
// out) and by cause (the explanation's sync groups). What changed is ranked
// by the time at stake per step, and a change smaller than the
// step-to-step spread inside both traces is called noise. The perturbation
// summary says what wrapping changed (host time added by scopes, how sync
// waits moved and why, CUDA-event markers). Every difference is B - A.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/explain/diagnosis.h"
#include "core/explain/explanation.h"
#include "core/run/engine_run.h"
#include "core/tables/key_averages.h"

namespace attnscope {

struct CompareOptions {
  GroupBy groupBy = GroupBy::Name;
  Attribution attribution = Attribution::Torch;
};

// One joined pair; a side is absent when the other trace has no match.
template <class T>
struct Pair {
  std::string key;
  std::optional<T> a;
  std::optional<T> b;
};

// A per-step figure over a trace's steps: the median and the 25th/75th
// percentiles (linear interpolation, as numpy.percentile).
struct Spread {
  size_t n = 0;
  double median = 0, p25 = 0, p75 = 0;
  double iqr() const { return p75 - p25; }
};
Spread spreadOf(std::vector<double> values);

// One per-step metric of the steps (host time, GPU work, busy, idle, sync wait,
// communication, spill), each trace's median and spread, and the median's change.
struct StepStat {
  std::string metric;  // host_ns, gpu_work_ns, gpu_busy_ns, idle_ns, sync_wait_ns, communication_ns, spill_out_ns
  std::string label;   // the user's words
  Spread a, b;
  double deltaNs = 0;  // b.median - a.median
  bool noise = false;  // |delta| below the p25-p75 spread of both traces
};

// Two engine runs: one step as one timing method measured it in both, the
// median over the iterations with its p10-p90 spread. "noise": each run's
// median lies inside the other's p10-p90, so the difference is inside both
// runs' spreads; "change": it is not; "one iteration": a run has a single
// iteration, so there is no spread to tell a change from noise.
struct EngineTimingChange {
  std::string method;  // cupti, events, host, host-sync, torch
  std::string step;    // "QK MATMUL"
  StepSpread a, b;
  double deltaNs = 0;  // b.medianNs - a.medianNs
  std::string verdict;
};
std::vector<EngineTimingChange> compareEngineTiming(const EngineRun& a, const EngineRun& b);

// A cause of the diagnosis, per step in each trace (its time over every step / the steps).
struct CauseChange {
  Cause code = Cause::LittleWork;
  double aNs = 0, bNs = 0;
  double deltaNs = 0;  // bNs - aNs
};

// Something that changed between the traces, with its time per step.
struct Change {
  std::string kind;         // "op" (Self CPU), "kernel" (GPU time, also copies and memsets), "sync_group" (wait time)
  std::string key;          // row name, kernel name or the sync group's op chain
  std::string status;       // "changed", "appeared" (only in B), "disappeared" (only in A)
  double aNs = 0, bNs = 0;  // per step (the sum inside the steps' windows divided by the steps)
  double deltaNs = 0;       // bNs - aNs; findings are ranked by |deltaNs|
  double aCalls = 0, bCalls = 0;              // per step
  Spread a, b;                                // of the per-step values
  bool noise = false;                         // |delta| below the p25-p75 spread of both traces
  std::string text;                           // one line in plain words, B - A
  std::vector<EventId> evidenceA, evidenceB;  // its events in each trace (in the steps)
};

struct Comparison {
  CompareOptions options;
  std::string pathA, pathB;
  std::vector<Pair<KeyAverageRow>> rows;
  std::vector<Pair<StepReport>> steps;
  std::vector<Pair<SyncWait>> syncWaits;
  std::vector<std::string> perturbation;  // plain sentences with numbers
  // The step view: how steps were paired ("order": ProfilerStep#N in time order; "name"), how many
  // each trace has, and the per-step medians with their spread.
  std::string stepPairing;
  std::string stepSourceA, stepSourceB;
  size_t stepsA = 0, stepsB = 0;
  std::vector<StepStat> stepStats;
  // Both traces engine runs: each method's figure per step, A and B.
  std::vector<EngineTimingChange> engineTiming;
  // Ops, kernels and sync groups that changed, ranked by |time per step|, largest first (all of them;
  // the outputs bound what they print).
  std::vector<Change> changes;
  // The diagnosis's causes in A and B, by |change per step|, largest first; and that in one line:
  // "causes, per step: data_loader 33.1 ms -> 1.9 ms (-31.2 ms); blocking_copy ... (+12.0 ms)".
  std::vector<CauseChange> causes;
  std::string causesLine;
};

// The key under which a table row is joined: its name (with torch's ProfilerStep*), the device
// side and shapes, with DataLoader iterators of either kind taken as one role
// ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" and
// "..._MultiProcessingDataLoaderIter.__next__" are both "enumerate(DataLoader)#*.__next__").
std::string roleName(const std::string& name);

// Output bounds, as explain's: text at most kMaxTextLines lines of at most kMaxLineChars characters;
// JSON complete but at most kMaxJsonVerdicts findings. `all` lifts them.
struct CompareOutputOptions {
  bool all = false;
};

struct TraceSnapshot;

// Both snapshots need their explanation (buildSnapshot's default).
Comparison compareTraces(const TraceSnapshot& a, const TraceSnapshot& b, const CompareOptions& opt = {});
std::string compareText(const Comparison& c, const CompareOutputOptions& opt = {});
std::string compareJson(const Comparison& c, const CompareOutputOptions& opt = {});
std::string compareCsv(const Comparison& c);  // section,key,metric,a,b,delta

}  // namespace attnscope
