// The diagnosis's pieces, for its own files: the rules a moment is blamed by (diagnosis_rules.cpp), the
// steps' windows and the first-use work (diagnosis_setup.cpp), the evidence (diagnosis_evidence.cpp), the
// facts the fixes check (diagnosis_facts.cpp) and a CPU-only profile's split (diagnosis_cpu.cpp).
// diagnosis.cpp puts them together.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/explain/diagnosis.h"
#include "core/explain/fixes.h"
#include "core/store/event_store.h"
#include "core/store/intervals.h"

namespace attnscope {

struct Explanation;

namespace diag {

inline bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
inline bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

// What a host call is, by its name (CUDA runtime and driver, HIP, MTIA's runtime).
enum class CallKind : uint8_t { Allocator, Copy, Sync, Capture, Other };
CallKind callKind(std::string_view n);
bool isDataLoader(std::string_view n);
bool isStepMark(std::string_view n);

// The rules, in the order a moment is blamed (the first that holds takes it).
enum Rule : int {
  kStarved,      // a compute kernel runs, nothing is queued behind it and the host is dispatching, not
                 // blocked: the host, not the device, sets the pace          -> launch_bound
  kCompute,      // a compute kernel runs on a device                         -> gpu_compute
  kComm,         // a collective runs, no compute beside it                   -> communication
  kCopyWaited,   // a device copy runs while the host is blocked in a copy    -> blocking_copy
  kDeviceOther,  // a copy or memset runs                                     -> gpu_compute
  kSetup,        // the host in first-use work the trace records               -> one_time_setup
  kAlloc,        // the host in cudaFree/cudaMalloc/...                        -> allocator
  kCopy,         // the host in a copy call                                    -> blocking_copy
  kQueuedComm,   // work already queued (a collective next): a device waits   -> communication
  kQueued,       // work already queued, nothing runs: the device waits on a dependency the trace
                 // does not show, or the trace's clocks disagree             -> little_work
  kSync,         // the host in a synchronize                                  -> explicit_sync
  kSyncDrained,  // the device idle after a synchronize's return, for as long as the sync waited on
                 // work (the host would have run on beside that work without it), until the next
                 // work starts (but for the host's own compute and the DataLoader) -> explicit_sync
  kCapture,      // the host capturing or instantiating a graph                -> graph_capture
  kLoader,       // the host in the DataLoader                                 -> data_loader
  kDispatch,     // the host in an op that launches device work, or a launch   -> launch_bound
  kHostOther,    // the host in an op that launches nothing, or Python         -> host_compute
  kHostGap,      // the step's own thread between two of its ops, no event: the host runs code the
                 // profiler does not record (Python)                          -> host_compute
  kRuleCount
};
extern const Cause kRuleCause[kRuleCount];
// Rules up to this one are the device's (busy time); the rest blame an idle device on the host.
constexpr int kLastDeviceRule = 4;  // kDeviceOther
// Traces this large build their rules, and split their steps by them, on the threads free to help.
constexpr size_t kParallelRuleEvents = 200'000;
// The cause a rule's moments go to (a trace with no device activity: cpu_only for the host's rules).
Cause causeOfRule(int rule, bool anyDevice);

struct RuleEvents {
  Intervals cover;              // merged
  std::vector<EventId> events;  // what made it (for evidence)
  Intervals spans;              // the stretch each of them put in (a queued kernel's: launch to start)
};

// First-use work the trace records, by what it is.
enum class SetupKind : uint8_t {
  None,
  Context,     // the runtime's context creation (the first calls of a process: cudaFree(0), stream priority, ...)
  FirstAlloc,  // the first huge cudaFree/cudaMalloc (the context's lazy creation, the allocator's first segment)
  ModuleLoad,  // lazy module and kernel loading (a first launch far longer than the name's others)
  Autotune,    // cuDNN's/MIOpen's algorithm search (a convolution timing candidates)
  Compile,     // torch.compile's compilation (Dynamo, Inductor, Triton)
  CommInit,    // a communicator's creation (NCCL/RCCL)
  FirstUse,    // another runtime call's first use
};
std::string_view setupWords(SetupKind k);  // "CUDA context creation", ...
// The kind of first-use work each event is (SetupKind::None for most).
std::vector<SetupKind> setupKinds(const EventStore& s);

struct Window {
  std::string name;
  int64_t startNs = 0, endNs = 0;          // the window the split covers
  int64_t hostStartNs = 0, hostEndNs = 0;  // the step's own host window
  uint32_t lane = UINT32_MAX;              // the step's thread (ProfilerStep#N), else UINT32_MAX
  EventId event = kNoEvent;                // its annotation
};

struct Windows {
  std::vector<Window> list;
  std::string source;  // Diagnosis::stepSource
  int64_t recordStartNs = -1, recordEndNs = -1;
  std::vector<std::string> notes;
};
Windows findWindows(const EventStore& s, const Explanation& x);

struct RuleSet {
  RuleEvents rules[kRuleCount];
  bool anyDevice = false;
  std::map<int64_t, Intervals> deviceWork;  // each device's work, merged
  Intervals backlog;                        // device work launched before the first step
  std::vector<SetupKind> setup;             // per event
  std::vector<EventId> autotuneOps;         // convolutions that timed candidates
  uint64_t kernels = 0;
  // Compute kernels whose launch call the trace records, and of them those that ran inside it (started
  // after the call began and ended before it returned: the launch waited for its kernel).
  uint64_t launchedKernels = 0, kernelsInLaunch = 0;
  int64_t kernelNs = 0, shortKernelNs = 0, kernelMedianNs = 0, gemmNs = 0, gemmTcNs = 0;
};
// `helpers`: threads free to share the work (a large trace's), or null.
RuleSet buildRules(const EventStore& s, const Explanation& x, const Windows& w, Helpers* helpers = nullptr);

// The evidence of one cause: its moments (by rule) given to the innermost event that made them, grouped.
// `nothing`: the moments no rule took (little_work or cpu_only's rest).
std::vector<EvidenceItem> evidenceItems(const EventStore& s, Cause c, const RuleSet& r, const Intervals* taken,
                                        const Intervals& nothing, int64_t causeNs);
// "the module or Python frame" around an event, when the trace records stacks or module scopes ("" if none).
std::string whereOf(const EventStore& s, EventId id);
// The innermost op (cpu_op) around a host event, or kNoEvent.
EventId innermostCpuOp(const EventStore& s, EventId id);

// Work that recurs every Nth step (after the per-step split).
std::vector<PeriodicWork> findPeriodic(const EventStore& s, const Diagnosis& d, const Windows& w);

// A CPU-only profile: the steps' own thread by kind (largest first), the hot ops by self time, and the
// time the thread waited on a collective running on another thread (gloo).
struct CpuSplit {
  std::vector<std::pair<std::string, int64_t>> parts;
  std::vector<std::pair<std::string, int64_t>> hotOps;  // by self time on the steps' threads, top 3
  int64_t opsNs = 0;                                    // all ops' self time there
  int64_t collectiveWaitNs = 0;                         // of "communication": the thread waiting, no op
  std::string collective;                               // the collective it waited on most ("gloo:all_reduce")
  // The evidence, each moment once: the hot ops' self time (and the other ops' together), the waits on
  // collectives, the DataLoader, the collectives' own ops, Python between ops.
  std::vector<EvidenceItem> items;
};
CpuSplit cpuSplit(const EventStore& s, const Explanation& x, const Windows& w);

// What the trace's names say, for the fixes: the store only, so it is read beside the evidence. `facts`
// holds them (DDP, FSDP, ROCm, stacks, the loader, pageable copies, empty_cache's calls), the rest unset.
struct TraceNameFacts {
  FixFacts facts;
  std::set<uint32_t> compiled;  // the names of compiled regions
};
TraceNameFacts traceNameFacts(const EventStore& s);

// What the fixes check (fixes.h), read from the trace: the rules' events, what each rule took, the
// causes' evidence (every item, by cause code), for a CPU-only profile its split, and its names.
FixFacts fixFacts(const EventStore& s, const Diagnosis& d, const RuleSet& r, const Intervals* taken, const Windows& w,
                  const std::vector<EvidenceItem>* items, const CpuSplit& cpu, const TraceNameFacts& names);

}  // namespace diag
}  // namespace attnscope
