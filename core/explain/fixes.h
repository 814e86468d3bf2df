// The fixes the diagnosis may offer, in one table: each fix belongs to a cause, needs conditions the
// trace must show (checked against FixFacts, which diagnosis_facts.cpp reads from the trace), and says
// what held when it is offered. A cause whose fixes' conditions all fail gets no fix: the diagnosis then
// says what it knows (its evidence) and nothing more. docs/explain-schema.md lists the table.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/explain/diagnosis.h"

namespace attnscope {

// What the trace shows that a fix may need. Times are the cause's own (what its moments hold).
struct FixFacts {
  bool counterProfiling = false;  // a range-profiler trace: no timing of it is the program's
  bool mtia = false, rocm = false;
  // gpu_compute
  bool fp32NoTensorCores = false;  // GEMM/conv kernels >= 20% of compute, none on Tensor Cores
  std::string precision;           // what reduced precision this device runs well
  bool manySmallKernels = false;   // >= 200 kernels, median under 10 us, short ones >= 25% of kernel time
  bool compiled = false;           // compiled regions (CompiledFunction, Torch-Compiled Region) run through
                                   // a fifth of the steps' time or more

  // communication
  bool ddpReducer = false;  // DistributedDataParallel's reducer is in the trace
  bool fsdp = false;
  int64_t commNs = 0;                       // exposed communication
  int64_t allReduceNs = 0, allToAllNs = 0;  // of it: all-reduce, all-to-all/send-recv kernels
  int64_t queuedCommNs = 0;                 // of it: launched, not started (another rank late)
  int64_t overlappedCommNs = 0;             // not part of it: collectives beside compute
  uint64_t collectives = 0;                 // collective kernels in the steps
  int64_t collectiveMedianNs = 0;           // their median duration
  // blocking_copy (and the DataLoader's pin_memory)
  int64_t copyNs = 0;
  int64_t pageableH2DWaitIsCopyNs = 0;  // of it: host-to-device copies from pageable memory whose call
                                        // time is mostly the copy itself
  uint64_t pageableH2DCopies = 0;       // host-to-device copies from pageable memory, anywhere in the steps
  int64_t smallD2HBehindQueueNs = 0;    // of copyNs: small (<= 64 KiB) device-to-host copies whose call
                                        // waited behind queued device work
  std::string smallD2HOp;               // the op that issued them most ("aten::item")
  uint64_t smallD2HCopies = 0;
  // explicit_sync
  int64_t syncNs = 0;
  int64_t readBackSyncNs = 0;  // of it: synchronizes inside read-back ops (aten::item, aten::to, ...)
  int64_t userSyncNs = 0;      // of it: synchronizes no op issued (torch.cuda.synchronize() in Python)
  std::string userSyncCall;
  int userSyncSteps = 0;  // steps that hold them
  // allocator
  int64_t allocNs = 0;
  uint64_t emptyCacheCalls = 0;       // recorded calls of torch.cuda.empty_cache
  int64_t allocInEmptyCacheNs = 0;    // allocator time inside them
  int64_t allocInOpsRecurringNs = 0;  // frees inside ops, past each op's first three
  uint64_t allocInOpsCalls = 0;       // those calls

  std::string allocOp;     // the op the allocator calls ran in most
  int64_t bareFreeNs = 0;  // of allocNs: frees outside any op, region or Python frame (the allocator emptying
                           // its cache: torch.cuda.empty_cache() where the trace does not record the call)
  uint64_t bareFrees = 0;
  int bareFreeSteps = 0;
  // data_loader
  bool loaderSingleProcess = false, loaderWorkers = false;
  // launch_bound
  int64_t launchNs = 0;
  int64_t kernelMedianNs = 0;
  uint64_t launchedKernels = 0;  // compute kernels whose launch call the trace records
  uint64_t kernelsInLaunch = 0;  // of them: ran inside their launch call (synchronous launches)
  // host_compute
  int64_t hostNs = 0;
  int64_t hostGapNs = 0;  // of it: code the profiler does not record: the step's thread between two of its
                          // ops with nothing recorded, a region's or a Python frame's own time
  bool withStack = false;
  // graph_capture
  int captureSteps = 0;
  // one_time_setup
  int64_t setupNs = 0;
  int64_t firstUseNs = 0;  // of it: first-use work in the first step (or the only window)
  int autotuneSteps = 0;   // steps where a convolution autotuned
  int compileSteps = 0;    // steps with compilation in them
  size_t steps = 0;
  // little_work
  int64_t queuedIdleNs = 0;  // work launched and not yet started, nothing running
  // cpu_only
  std::vector<std::pair<std::string, int64_t>> cpuParts;  // the steps' own thread by kind, largest first
  std::vector<std::pair<std::string, int64_t>> hotOps;    // ops by self time there, top 3
  int64_t opsSelfNs = 0;                                  // all ops' self time there
  std::string cpuTop;  // the largest part of the steps' own thread ("Python between ops", ...)
  int64_t cpuTopNs = 0, cpuNs = 0;
  int64_t cpuCollectiveWaitNs = 0;
  std::string cpuCollective;
  int rank = -1, worldSize = 0;
  std::string jobFolder;  // recorded with `record --nproc`: the folder of the job's traces
};

struct FixRule {
  std::string_view code;
  Cause cause;
  std::string_view needs;  // the conditions, in words (the docs' table)
  bool (*holds)(const FixFacts&);
  std::string (*text)(const FixFacts&);
  std::string (*because)(const FixFacts&);
};

std::span<const FixRule> fixTable();
// The fixes of a cause whose conditions hold, in the table's order.
std::vector<Fix> fixesFor(Cause c, const FixFacts& f);

}  // namespace attnscope
