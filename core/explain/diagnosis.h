// The wait-for analysis: each step's wall time split into disjoint parts that add up to the step
// exactly, each part blamed on one cause, and the causes ranked by the time at stake. An expert
// reads a trace as a chain of waits: the step took this long because the device was busy (compute,
// communication, copies), or because it was idle waiting for the host, and the host was late
// because it was blocked (in a copy, a free or malloc, a sync, graph capture, a one-time set-up
// call), in the DataLoader, busy dispatching ops and launches, busy in other CPU work, or idle too.
// Every moment goes to the first rule that applies (diagnosis.cpp lists them in order), so a cause
// is claimed only where the trace shows it: launch_bound never while the host sits blocked.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/explain/spread.h"
#include "core/store/event_store.h"
#include "core/store/intervals.h"

namespace attnscope {
class Helpers;

enum class Cause : uint8_t {
  GpuCompute,     // the device was busy computing (kernels, device copies/memsets not waited on)
  Communication,  // exposed collectives (NCCL/RCCL kernels with no compute beside them)
  BlockingCopy,   // the host blocked in a copy call (pageable or device-to-host) while the device idled or copied
  ExplicitSync,   // the host blocked in a stream/device/event synchronize while the device idled
  Allocator,      // the host in cudaFree/cudaMalloc/hipFree/... while the device idled
  DataLoader,     // the host in the DataLoader while the device idled
  LaunchBound,    // the host busy in ops that launch device work (dispatch) while the device idled
  HostCompute,    // the host busy in ops that launch nothing (or Python) while the device idled
  GraphCapture,   // the host capturing or instantiating a CUDA/HIP graph while the device idled
  OneTimeSetup,   // first-use calls (context creation, lazy module loading, a huge first cudaFree)
  CpuOnly,        // a trace with no device activity at all
  LittleWork,     // the device idle and no host event recorded: nothing to run, nothing traced
  Count
};
inline constexpr int kCauseCount = static_cast<int>(Cause::Count);
std::string_view causeCode(Cause c);  // "gpu_compute", ... (the JSON codes)
std::string causeLabel(Cause c);      // in a few words: "GPU compute", "the DataLoader", "launch-bound"

// One step's wall time, split: parts[c] add up to endNs - startNs exactly.
struct StepWaits {
  std::string name;
  // The step's window: its host window, but a ProfilerStep#N's runs until the step completes, when
  // the GPU work it launched ends (if that is later), and starts where the previous step completed
  // (if that is later): a GPU-bound loop's host runs ahead, its steps' time is the GPU's.
  int64_t startNs = 0, endNs = 0;
  int64_t hostStartNs = 0, hostEndNs = 0;  // the step's own host window (what diagnosedStep matches)
  int64_t parts[kCauseCount] = {};
  int64_t deviceBusyNs = 0;                               // the union of device work inside the step (any device)
  std::vector<std::pair<int64_t, int64_t>> busyByDevice;  // (device index, its busy time in the step)
  int64_t communicationOverlappedNs = 0;                  // collectives' time with compute running beside it
  int64_t spanNs() const { return endNs - startNs; }
};

// One piece of a cause's evidence: events of one kind and name that hold part of its time. Every moment
// of a cause goes to one event at most (the innermost that the rule holding it names), so the items'
// times add up to at most the cause's.
struct EvidenceItem {
  std::string kind;    // "call" (a runtime call), "copy", "allocator", "sync", "op", "region", "kernel",
                       // "collective", "device_copy", "queued", "setup", "untraced" (the host between two
                       // ops of a step, no event), "nothing" (no event anywhere)
  std::string name;    // the call, op or kernel ("cudaMemcpyAsync (Pageable -> Device)"); for untraced and
                       // nothing, what it is in words
  uint64_t count = 0;  // events (or stretches, for untraced and nothing)
  int64_t ns = 0;      // the cause's time they hold
  double share = 0;    // ns over the cause's total
  std::string detail;  // copies: direction, memory, sizes and how the call waited; set-up: what it is
  std::vector<std::pair<std::string, uint64_t>> inside;  // allocator calls and copies: the ops they ran in
  std::string where;            // the module or Python frame around them, when the trace records it
  std::vector<EventId> events;  // the largest of them (at most 5)
};

// A fix the trace supports: its code (docs/explain-schema.md lists the table), what to do, and the
// preconditions that held, with their numbers.
struct Fix {
  std::string code;
  std::string text;
  std::string because;
};

// Work that comes back every Nth step (a validation pass, a checkpoint): named, never set-up.
struct PeriodicWork {
  int every = 0;           // every Nth step
  std::vector<int> steps;  // the indexes of the steps that hold it (into Diagnosis::steps)
  int64_t extraNs = 0;     // median over them of their excess over the median of the other steps
  std::vector<std::pair<std::string, int64_t>> what;  // what ran in them beyond the others ("evaluate()")
  std::string text;  // "every 3rd step (iteration 3, 6, 9): evaluate() and save(), 18.3 ms more"
};

struct DiagnosedCause {
  Cause code = Cause::LittleWork;
  int64_t totalNs = 0;              // over every step
  double share = 0;                 // of the steps' wall time, 0..1
  StepSpread perStep;               // over the steps
  int steps = 0;                    // steps where it holds time
  std::string label;                // a few words: "launch-bound", "the DataLoader"
  std::string text;                 // one sentence with its numbers
  std::string fix;                  // what to do about it ("" when nothing applies)
  std::vector<EventId> evidence;    // the events that show it, largest first
  std::vector<std::string> hints;   // fp32_no_tensor_cores, many_small_kernels
  std::vector<EvidenceItem> items;  // what holds its time, largest first (at most 8)
  std::vector<Fix> fixes;           // the fixes whose preconditions hold (fixes.h); `fix` is the first's text
};

struct Diagnosis {
  std::vector<StepWaits> steps;
  std::vector<DiagnosedCause> causes;  // ranked by totalNs, largest first; the first, then those of 3% or more
  std::vector<DiagnosedCause> minor;   // the rest with time (under 3% of the wall time), ranked
  std::string stepSource;  // where the steps came from: "profiler_steps", "engine", "optimizer_steps", "whole_trace"
  int64_t wallNs = 0;      // the steps' wall time added up
  std::string headline;    // the first cause in one sentence, its largest evidence and its fix ("" when none)
  // "" or "counter_profiling": CUPTI's range profiler replayed the kernels to read their counters; the
  // trace's times are replay, not the program's.
  std::string traceKind;
  // The whole trace's window: the profiler's recorded span (with the events outside it, if any), not only
  // the first to the last event (-1 when the trace has no profiler span).
  int64_t recordStartNs = -1, recordEndNs = -1;
  std::vector<std::string> notes;      // what the windows say of the recording (a step that outlives it)
  std::vector<PeriodicWork> periodic;  // work that recurs every Nth step
  // The moments each cause took, by the rules (merged; before the first-step set-up correction, which
  // moves amounts, not moments): `why` says which of them a row's calls cover.
  Intervals moments[kCauseCount];
};

inline constexpr double kMinorShare = 0.03;

struct Explanation;

// The steps are the explanation's ProfilerStep#N or engine steps; else iterations that end where
// each Optimizer.step#... ends (two or more; the first from the trace's start, what follows the last
// one a step of its own); else one step from the trace's first to its last event.
Diagnosis diagnose(const EventStore& store, const Explanation& x, Helpers* helpers = nullptr);

std::string diagnosisJson(const Diagnosis& d);

// How much of each cause's moments the given intervals (a row's calls, merged) cover, by cause.
std::vector<std::pair<Cause, int64_t>> causesDuring(const Diagnosis& d, const Intervals& when);

// One step's headline: "What cost ProfilerStep#3 most: the DataLoader, 33.1 ms of 150.2 ms (22%)."
// ("" for an empty step). The timeline's overlay opens with it.
std::string stepHeadline(const StepWaits& st);
// A cause that means the host sat blocked (copy, sync, allocator, DataLoader, set-up): while one of
// them leads, no step is launch-bound.
bool blocksHost(Cause c);
// The cause holding most of the step (the first of equals).
Cause topCause(const StepWaits& st);
// The diagnosis's step with exactly this window, or nullptr.
const StepWaits* diagnosedStep(const Diagnosis& d, int64_t startNs, int64_t endNs);

}  // namespace attnscope
