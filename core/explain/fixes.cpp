#include "core/explain/fixes.h"

#include <cstdio>

#include "core/text/duration.h"

namespace attnscope {

namespace {

std::string ms(int64_t ns) { return spanDurationText(ns); }

std::string share(int64_t part, int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%",
                whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

std::string count(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

// At least half of `whole` (and some of it at all).
bool half(int64_t part, int64_t whole) { return whole > 0 && part * 2 >= whole; }

std::string allocEnv(const FixFacts& f) {
  return f.rocm ? "PYTORCH_NO_HIP_MEMORY_CACHING" : "PYTORCH_NO_CUDA_MEMORY_CACHING";
}

std::string ranksAdvice(const FixFacts& f) {
  std::string where = f.jobFolder.empty() ? std::string("the job's folder of traces") : f.jobFolder;
  std::string out;
  if (f.worldSize == 2 && f.rank >= 0)
    out = "rank " + std::to_string(f.rank) + " waited for rank " + std::to_string(1 - f.rank) + " in " +
          f.cpuCollective + ": see what rank " + std::to_string(1 - f.rank) + " did meanwhile (";
  else
    out = "this rank waited for another in " + f.cpuCollective + ": find which one and what it did (";
  return out + "attnscope-cli ranks " + where + ")";
}

const FixRule kTable[] = {
    {"counter_profiling", Cause::Count,
     "the trace is a counter-profiling one (events of cat cuda_profiler_range): its timings are replay",
     [](const FixFacts& f) { return f.counterProfiling; },
     [](const FixFacts&) {
       return std::string(
           "to time the program, profile it again without counters (torch.profiler with CUDA activity, no "
           "CUPTI range-profiler metrics): each kernel was replayed to read them");
     },
     [](const FixFacts&) { return std::string("the trace holds CUPTI range-profiler events (cuda_profiler_range)"); }},
    // gpu_compute
    {"tensor_cores", Cause::GpuCompute,
     "GEMM/convolution kernels hold 20% or more of the compute and none of them runs on Tensor Cores",
     [](const FixFacts& f) { return f.fp32NoTensorCores; },
     [](const FixFacts& f) { return "put the fp32 matmuls and convolutions on Tensor Cores: " + f.precision; },
     [](const FixFacts&) { return std::string("its GEMM and convolution kernels run in fp32, none on Tensor Cores"); }},
    {"fuse_small_kernels", Cause::GpuCompute,
     "200 or more kernels, their median under 10 us, the short ones 25% or more of the kernel time",
     [](const FixFacts& f) { return f.manySmallKernels; },
     [](const FixFacts& f) {
       return f.compiled ? std::string(
                               "the compiled model still runs many small kernels: fewer graph breaks, "
                               "CUDA graphs (torch.compile(mode=\"reduce-overhead\"))")
                         : std::string(
                               "fuse the many small kernels: torch.compile (Inductor fuses elementwise "
                               "chains), or fused implementations (fused optimizers, SDPA)");
     },
     [](const FixFacts& f) { return "its kernels' median is " + ms(f.kernelMedianNs); }},
    // communication
    {"ddp_buckets", Cause::Communication,
     "DistributedDataParallel's reducer is in the trace and all-reduce kernels hold half or more of the "
     "exposed communication",
     [](const FixFacts& f) { return f.ddpReducer && half(f.allReduceNs, f.commNs); },
     [](const FixFacts&) {
       return std::string(
           "overlap the gradient all-reduce with backward: DDP(bucket_cap_mb=...) with fewer, "
           "larger buckets, gradient_as_bucket_view=True; or send less (a bf16 compression hook)");
     },
     [](const FixFacts& f) {
       return "DDP's reducer is in the trace; all-reduce kernels hold " + ms(f.allReduceNs) + " (" +
              share(f.allReduceNs, f.commNs) + ") of the exposed communication";
     }},
    {"fsdp_prefetch", Cause::Communication, "FullyShardedDataParallel is in the trace",
     [](const FixFacts& f) { return f.fsdp && f.commNs > 0; },
     [](const FixFacts&) {
       return std::string(
           "overlap FSDP's all-gathers with compute: forward_prefetch=True, "
           "backward_prefetch=BackwardPrefetch.BACKWARD_PRE, larger wrapping units");
     },
     [](const FixFacts&) { return std::string("FSDP is in the trace"); }},
    {"all_to_all", Cause::Communication,
     "all-to-all or send/receive kernels hold half or more of the exposed communication",
     [](const FixFacts& f) { return half(f.allToAllNs, f.commNs); },
     [](const FixFacts&) {
       return std::string(
           "an all-to-all lasts as long as its most loaded pair of ranks: balance what each rank sends (the "
           "sharding of embedding tables, the split sizes), overlap the exchange with compute (pipeline the "
           "next batch's input distribution, as TorchRec's TrainPipelineSparseDist does), or send fewer bytes");
     },
     [](const FixFacts& f) {
       return "all-to-all / send-receive kernels hold " + ms(f.allToAllNs) + " (" + share(f.allToAllNs, f.commNs) +
              ") of the exposed communication";
     }},
    {"late_rank", Cause::Communication,
     "the collectives sat launched but not started for 30% or more of the exposed communication",
     [](const FixFacts& f) { return f.commNs > 0 && f.queuedCommNs * 10 >= f.commNs * 3; },
     [](const FixFacts&) {
       return std::string(
           "the collectives waited to start: another rank (or a stream this one waits on) was "
           "late; open the ranks' traces together (attnscope-cli ranks FOLDER) to see who");
     },
     [](const FixFacts& f) {
       return ms(f.queuedCommNs) + " (" + share(f.queuedCommNs, f.commNs) +
              ") of the exposed communication the collectives sat launched but not started";
     }},
    {"coalesce_collectives", Cause::Communication,
     "no DDP or FSDP, 20 or more collectives a step, their median under 100 us, all-to-all not the larger part",
     [](const FixFacts& f) {
       return !f.ddpReducer && !f.fsdp && f.commNs > 0 && f.steps > 0 && f.collectives >= 20 * f.steps &&
              f.collectiveMedianNs < 100'000 && !half(f.allToAllNs, f.commNs);
     },
     [](const FixFacts&) {
       return std::string(
           "coalesce the small collectives (flatten them into one, or torch.distributed's "
           "coalescing) and overlap them with compute");
     },
     [](const FixFacts& f) { return count(f.collectives) + " collectives, median " + ms(f.collectiveMedianNs); }},
    // blocking_copy
    {"pin_memory", Cause::BlockingCopy,
     "host-to-device copies from pageable memory hold half or more of the blocking copies, and their calls' "
     "time is mostly the copy itself",
     [](const FixFacts& f) { return half(f.pageableH2DWaitIsCopyNs, f.copyNs); },
     [](const FixFacts&) {
       return std::string(
           "pin the host memory the input comes from (DataLoader(pin_memory=True), or "
           "tensor.pin_memory()) and copy with .to(device, non_blocking=True)");
     },
     [](const FixFacts& f) {
       return "copies from pageable host memory hold " + ms(f.pageableH2DWaitIsCopyNs) + " (" +
              share(f.pageableH2DWaitIsCopyNs, f.copyNs) +
              ") of the blocking copies, the copy itself most of "
              "each call";
     }},
    {"read_back_less", Cause::BlockingCopy,
     "small device-to-host copies (64 KiB or less) whose calls waited behind queued device work hold half or "
     "more of the cause",
     [](const FixFacts& f) { return half(f.smallD2HBehindQueueNs, f.copyNs); },
     [](const FixFacts& f) {
       return "the host reads small results back (" + (f.smallD2HOp.empty() ? std::string("a copy") : f.smallD2HOp) +
              ": .item(), .cpu(), .tolist(), printing a tensor) and each read waits for the work queued before it: "
              "read less often (keep the values on the device, read them once every N steps) or later in the step";
     },
     [](const FixFacts& f) {
       return count(f.smallD2HCopies) + " device-to-host copies of 64 KiB or less waited behind queued work";
     }},
    // explicit_sync
    {"read_back_less", Cause::ExplicitSync,
     "synchronizes inside read-back ops (aten::item, nonzero, ..., or a copy op whose copy runs device-to-host) "
     "hold half or more of the cause",

     [](const FixFacts& f) { return half(f.readBackSyncNs, f.syncNs); },
     [](const FixFacts& f) {
       return "the host reads small results back (" + (f.smallD2HOp.empty() ? std::string("a copy") : f.smallD2HOp) +
              ": .item(), .cpu(), .tolist()) and synchronizes each time: read less often (keep the values on the "
              "device, read them once every N steps)";
     },
     [](const FixFacts& f) {
       return "synchronizes inside read-back ops (" + f.smallD2HOp + ") hold " + ms(f.readBackSyncNs) + " (" +
              share(f.readBackSyncNs, f.syncNs) + ")";
     }},
    {"remove_sync", Cause::ExplicitSync,
     "synchronizes that no op issued (the script's own) hold half or more of the cause, in two steps or more "
     "(or the only one)",
     [](const FixFacts& f) {
       return half(f.userSyncNs, f.syncNs) && (f.userSyncSteps >= 2 || (f.steps == 1 && f.userSyncSteps == 1));
     },
     [](const FixFacts& f) {
       return "remove the " + f.userSyncCall +
              " from the step (torch.cuda.synchronize(): time with CUDA events, or sync once per N steps)";
     },
     [](const FixFacts& f) {
       return f.userSyncCall + " with no op around it holds " + ms(f.userSyncNs) + " (" +
              share(f.userSyncNs, f.syncNs) + "), in " + std::to_string(f.userSyncSteps) + " step(s)";
     }},
    // allocator
    {"empty_cache_untraced", Cause::Allocator,
     "the trace records no call of torch.cuda.empty_cache and no Python stacks; frees outside any op, region or "
     "Python frame hold 20% or more of the allocator's time, in two steps or more (or the only one)",
     [](const FixFacts& f) {
       return f.emptyCacheCalls == 0 && !f.withStack && f.allocNs > 0 && f.bareFreeNs * 5 >= f.allocNs &&
              (f.bareFreeSteps >= 2 || (f.steps == 1 && f.bareFreeSteps == 1));
     },
     [](const FixFacts&) {
       return std::string(
           "the caching allocator gave its blocks back outside any op, as torch.cuda.empty_cache() does: stop "
           "calling it in the loop (the trace has no Python stacks to show the call: with_stack=True finds it)");
     },
     [](const FixFacts& f) {
       return count(f.bareFrees) + " frees outside any op hold " + ms(f.bareFreeNs) + " (" +
              share(f.bareFreeNs, f.allocNs) + " of the allocator's time), in " + std::to_string(f.bareFreeSteps) +
              " step(s)";
     }},
    {"empty_cache", Cause::Allocator,
     "the trace records calls of torch.cuda.empty_cache and they hold 20% or more of the allocator's time",
     [](const FixFacts& f) { return f.emptyCacheCalls > 0 && f.allocInEmptyCacheNs * 5 >= f.allocNs && f.allocNs > 0; },
     [](const FixFacts&) {
       return std::string(
           "stop calling torch.cuda.empty_cache() in the loop: the caching allocator then keeps its "
           "blocks instead of freeing and allocating them again");
     },
     [](const FixFacts& f) {
       return count(f.emptyCacheCalls) + " empty_cache call(s) hold " + ms(f.allocInEmptyCacheNs) + " (" +
              share(f.allocInEmptyCacheNs, f.allocNs) + ") of the allocator's time";
     }},
    {"allocator_cache", Cause::Allocator,
     "frees (cudaFree, hipFree) inside ops, past each op's first three, hold half or more of the allocator's time",
     [](const FixFacts& f) { return half(f.allocInOpsRecurringNs, f.allocNs); },
     [](const FixFacts& f) {
       return "the caching allocator frees and allocates device memory inside " +
              (f.allocOp.empty() ? std::string("ops") : f.allocOp) + " again and again: check that " + allocEnv(f) +
              " is not set, and whether the cache is at the memory limit (torch.cuda.memory_stats()"
              "['num_alloc_retries'] > 0: it frees its blocks and retries): lower the peak (a smaller batch, "
              "activation checkpointing) or PYTORCH_" +
              std::string(f.rocm ? "HIP" : "CUDA") + "_ALLOC_CONF=expandable_segments:True";
     },
     [](const FixFacts& f) {
       return count(f.allocInOpsCalls) + " frees inside ops (past each op's first three) hold " +

              ms(f.allocInOpsRecurringNs) + " (" + share(f.allocInOpsRecurringNs, f.allocNs) + ")";
     }},
    // data_loader
    {"loader_workers", Cause::DataLoader, "the DataLoader runs in the main process (_SingleProcessDataLoaderIter)",
     [](const FixFacts& f) { return f.loaderSingleProcess; },
     [](const FixFacts& f) {
       return "load in worker processes: DataLoader(num_workers > 0, persistent_workers=True" +
              std::string(f.pageableH2DCopies > 0 ? ", pin_memory=True" : "") + ")";
     },
     [](const FixFacts&) { return std::string("the DataLoader runs in the main process"); }},
    {"loader_faster", Cause::DataLoader, "the DataLoader has worker processes (_MultiProcessingDataLoaderIter)",
     [](const FixFacts& f) { return f.loaderWorkers; },
     [](const FixFacts&) {
       return std::string(
           "the main process waited for its DataLoader workers: more of them (num_workers), "
           "prefetch_factor, or batches cheaper to build (the dataset's __getitem__, collate_fn)");
     },
     [](const FixFacts&) { return std::string("the DataLoader has worker processes and the main process waited"); }},
    // launch_bound
    {"launch_blocking", Cause::LaunchBound,
     "kernels that ran inside their own launch call (the call returned after its kernel ended) are half or more of "
     "the 10 or more compute kernels whose launch the trace records",
     [](const FixFacts& f) {
       return f.launchNs > 0 && f.launchedKernels >= 10 && f.kernelsInLaunch * 2 >= f.launchedKernels;
     },
     [](const FixFacts&) {
       return std::string(
           "the launches are synchronous: each waited for its kernel to end (CUDA_LAUNCH_BLOCKING=1, or a debugger "
           "or sanitizer): unset it to time the program, its launches then queue ahead of the device");
     },
     [](const FixFacts& f) {
       return count(f.kernelsInLaunch) + " of " + count(f.launchedKernels) +
              " kernels ran inside their own launch call";
     }},
    {"fewer_launches", Cause::LaunchBound, "not compiled; compute kernels in the trace, their median under 50 us",
     [](const FixFacts& f) {
       return !f.compiled && f.launchNs > 0 && f.kernelMedianNs > 0 && f.kernelMedianNs < 50'000;
     },
     [](const FixFacts&) {
       return std::string("fewer, larger kernels: torch.compile (fuses ops), CUDA graphs, larger batches");
     },
     [](const FixFacts& f) {
       return "the host's dispatch set the pace; the kernels' median is " + ms(f.kernelMedianNs);
     }},
    {"graphs_when_compiled", Cause::LaunchBound,
     "compiled: compiled regions (CompiledFunction, Torch-Compiled Region) run through a fifth of the steps' time or "
     "more",

     [](const FixFacts& f) { return f.compiled && f.launchNs > 0; },
     [](const FixFacts&) {
       return std::string(
           "the model is compiled but still launches op by op: CUDA graphs "
           "(torch.compile(mode=\"reduce-overhead\")), fewer graph breaks, larger batches");
     },
     [](const FixFacts&) {
       return std::string("the trace has compiled regions and the host's dispatch set the pace");
     }},
    // host_compute
    {"move_host_work", Cause::HostCompute,
     "code the profiler does not record (the step's thread between two of its ops with nothing recorded, a "
     "region's or Python frame's own time) holds half or more of the host work",
     [](const FixFacts& f) { return half(f.hostGapNs, f.hostNs); },
     [](const FixFacts& f) {
       return "the step's thread runs code the profiler does not record between its ops (Python: data "
              "preparation, numpy, logging): move it out of the loop (DataLoader workers, inputs prepared ahead) or "
              "vectorise it" +
              std::string(f.withStack ? "" : "; profile with with_stack=True to see where it is");
     },
     [](const FixFacts& f) {
       return ms(f.hostGapNs) + " (" + share(f.hostGapNs, f.hostNs) +
              ") in code the profiler does not record between ops, the device idle";
     }},
    {"host_ops", Cause::HostCompute, "ops and runtime calls that launch no device work hold more than half of it",
     [](const FixFacts& f) { return f.hostNs > 0 && (f.hostNs - f.hostGapNs) * 2 > f.hostNs; },
     [](const FixFacts&) {
       return std::string(
           "CPU work that launches nothing holds the step (the evidence names it): put it on the "
           "device, move it out of the step, or make it cheaper");
     },
     [](const FixFacts& f) { return ms(f.hostNs - f.hostGapNs) + " in ops and calls that launch nothing"; }},
    // graph_capture
    {"capture_once", Cause::GraphCapture, "graphs are captured in two steps or more",
     [](const FixFacts& f) { return f.captureSteps >= 2; },
     [](const FixFacts&) {
       return std::string(
           "capture once and replay the graph every step (torch.cuda.graph or "
           "make_graphed_callables outside the loop)");
     },
     [](const FixFacts& f) { return "capture runs in " + std::to_string(f.captureSteps) + " steps"; }},
    // one_time_setup
    {"warm_up", Cause::OneTimeSetup, "first-use work in the first step (or the only window) holds half or more of it",
     [](const FixFacts& f) { return half(f.firstUseNs, f.setupNs); },
     [](const FixFacts&) {
       return std::string(
           "profile after a warm-up (torch.profiler.schedule(wait=1, warmup=1, active=3)): the "
           "set-up runs once, the later steps do not pay it");
     },
     [](const FixFacts& f) { return ms(f.firstUseNs) + " of first-use work in the first step"; }},
    {"fixed_shapes", Cause::OneTimeSetup, "convolutions autotune in two steps or more (new input shapes)",
     [](const FixFacts& f) { return f.autotuneSteps >= 2; },
     [](const FixFacts&) {
       return std::string(
           "cuDNN autotunes every new input shape (torch.backends.cudnn.benchmark): keep the shapes "
           "fixed (pad or bucket them); with shapes that never repeat, benchmark=False skips the search");
     },
     [](const FixFacts& f) { return "autotuning runs in " + std::to_string(f.autotuneSteps) + " steps"; }},
    {"recompiles", Cause::OneTimeSetup, "compilation runs in two steps or more",
     [](const FixFacts& f) { return f.compileSteps >= 2; },
     [](const FixFacts&) {
       return std::string(
           "torch.compile compiles again in later steps: keep shapes and Python values stable "
           "(torch._dynamo.mark_dynamic, dynamic=True); TORCH_LOGS=recompiles says why");
     },
     [](const FixFacts& f) { return "compilation runs in " + std::to_string(f.compileSteps) + " steps"; }},
    // cpu_only
    {"cpu_loader_workers", Cause::CpuOnly,
     "the DataLoader is the largest part of the steps' thread and runs in the main process",
     [](const FixFacts& f) { return f.cpuTop == "the DataLoader" && f.loaderSingleProcess; },
     [](const FixFacts&) {
       return std::string("load in worker processes: DataLoader(num_workers > 0, persistent_workers=True)");
     },
     [](const FixFacts& f) { return "the DataLoader holds " + share(f.cpuTopNs, f.cpuNs) + " of the steps' thread"; }},
    {"cpu_loader_faster", Cause::CpuOnly,
     "the DataLoader is the largest part of the steps' thread and has worker processes",
     [](const FixFacts& f) { return f.cpuTop == "the DataLoader" && f.loaderWorkers; },
     [](const FixFacts&) {
       return std::string(
           "the main process waited for its DataLoader workers: more of them (num_workers), "
           "prefetch_factor, or batches cheaper to build");
     },
     [](const FixFacts& f) { return "the DataLoader holds " + share(f.cpuTopNs, f.cpuNs) + " of the steps' thread"; }},
    {"cpu_ranks", Cause::CpuOnly,
     "communication is the largest part of the steps' thread and the thread mostly waited in a collective",
     [](const FixFacts& f) { return f.cpuTop == "communication" && half(f.cpuCollectiveWaitNs, f.cpuTopNs); },
     [](const FixFacts& f) { return ranksAdvice(f); },
     [](const FixFacts& f) {
       return "the steps' thread waited " + ms(f.cpuCollectiveWaitNs) + " in " + f.cpuCollective + " (" +
              share(f.cpuCollectiveWaitNs, f.cpuNs) + ")";
     }},
    {"cpu_python", Cause::CpuOnly, "Python between ops (no event) is the largest part of the steps' thread",
     [](const FixFacts& f) { return f.cpuTop == "Python between ops"; },
     [](const FixFacts& f) {
       return "the time between ops is Python's own (the loop, per-element work such as .item() or .tolist(), "
              "logging; with tiny ops, the interpreter's dispatch): vectorise it, give each op more work (larger "
              "batches), or move it out of the step" +
              std::string(f.withStack ? "" : "; with_stack=True shows where it is");
     },
     [](const FixFacts& f) {
       return "Python between ops holds " + share(f.cpuTopNs, f.cpuNs) + " of the steps' thread";
     }},
    {"cpu_ops", Cause::CpuOnly, "ops (forward, backward, the optimizer) are the largest part of the steps' thread",
     [](const FixFacts& f) {
       return f.cpuTop == "forward and other ops" || f.cpuTop == "backward" || f.cpuTop == "the optimizer";
     },
     [](const FixFacts&) {
       return std::string(
           "the ops are the work (the evidence names the hot ones): fewer or cheaper ops "
           "(torch.compile's CPU backend, fused ops), more intra-op threads (torch.set_num_threads), "
           "or a GPU");
     },
     [](const FixFacts& f) { return f.cpuTop + " holds " + share(f.cpuTopNs, f.cpuNs) + " of the steps' thread"; }},
};

}  // namespace

std::span<const FixRule> fixTable() { return kTable; }

std::vector<Fix> fixesFor(Cause c, const FixFacts& f) {
  std::vector<Fix> out;
  for (const FixRule& r : kTable) {
    // A counter-profiling trace gets one fix, on its first cause; nothing else it shows is the program's.
    if (f.counterProfiling != (r.code == "counter_profiling")) continue;
    if (r.cause != c && r.cause != Cause::Count) continue;
    if (!r.holds(f)) continue;
    out.push_back({std::string(r.code), r.text(f), r.because(f)});
  }
  return out;
}

}  // namespace attnscope
