// A generator of Kineto-layout traces whose causes are known by construction, for the diagnosis's
// gates (test_diagnosis_gen) and its fixes' tests (test_diagnosis_fixes).
//
// A trace is ProfilerStep#N windows on one main thread (pid 100, tid 100), device work on GPU 0's
// streams 7 (compute, copies) and 20 (collectives). Each step is a run of segments; a segment lasts L
// ns, starts with an event at its start and holds one cause for all of its time but a few us, which it
// books exactly (the booking follows the diagnosis's documented rules: a kernel running is compute, a
// kernel launched and not started is idle work, a host in a copy call with the device idle is a
// blocking copy, ...). Each segment also says which fixes' preconditions it puts in the trace.
// Segments:
//   compute       an op launches kernels that then run back to back (fp32 GEMMs, Tensor Core GEMMs or
//                 elementwise)
//   launchBound   8 us ops, each launching one 2 us kernel that starts when its launch returns (or, with
//                 CUDA_LAUNCH_BLOCKING=1, inside its launch call)
//   hostOps       an op that launches nothing
//   hostGap       a 1 us op, then nothing recorded until the next segment (the script's own Python)
//   copyH2D       a copy op whose cudaMemcpyAsync (pageable) or cudaMemcpy (pinned) lasts as long as its copy
//   readBack      aten::item: a D2H copy of 4 bytes behind a kernel that starts late (a dependency)
//   userSync      an op launches a kernel; cudaDeviceSynchronize with no op around waits for it; then
//                 Python until a last op launches the next kernel. Without the sync the host would have
//                 run that Python beside the kernel: the device's idle after the return is the sync's
//                 for as long as it waited on the kernel, the rest is host work. As long as the kernel
//                 (syncs that cost), or several times longer (sync then untraced host work: the syncs
//                 cost little, the host's own code much)
//   captureGraph  torch.cuda.graph(): a warm-up kernel, the prologue (synchronize, gc.collect(),
//                 empty_cache's cudaFree calls, capture_begin's RNG state: a cudaMalloc and two fill_
//                 kernels), BeginCapture, an op allocating from the graph's pool, EndCapture, instantiate
//   step edges    untraced host work with no op at a step's start after a synchronize that waited on
//                 nothing (time.sleep or numpy right after torch.cuda.synchronize()), or at its end, with
//                 or without a synchronize on a kernel before it
//   alloc         cudaFree calls (under 1 ms) inside torch.cuda.empty_cache, inside an op, or bare
//   loader        the DataLoader's __next__, single-process or with workers
//   comm          a collective (all-reduce or send/recv, one or many small ones), on time or late
//   setup         first-use work in the first step: a huge first cudaFree, a slow first launch (lazy
//                 module loading), a convolution autotuning, Dynamo compiling
// CPU-only traces have no device at all: ops, the DataLoader, Python between ops, and a gloo
// all-reduce on another thread that the main thread waits for.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/explain/diagnosis.h"

namespace attnscope::kgen {

struct Truth {
  int64_t ns[kCauseCount] = {};  // the time each cause holds, by construction
  int64_t wallNs = 0;
  std::set<std::string> allowed;  // fixes whose preconditions the trace holds
  int periodicEvery = 0;          // 0: no periodic work
  bool cpuOnly = false;
  std::string recipe;  // what was built, in words (for the misses)
  Cause first() const {
    int top = 0;
    for (int c = 1; c < kCauseCount; ++c)
      if (ns[c] > ns[top]) top = c;
    return static_cast<Cause>(top);
  }
  double share(Cause c) const {
    return wallNs > 0 ? static_cast<double>(ns[static_cast<int>(c)]) / static_cast<double>(wallNs) : 0;
  }
};

class Builder {
 public:
  static constexpr int kPid = 100, kMain = 100, kGloo = 101, kStream = 7, kCommStream = 20;
  int64_t now = 1'000'000'000;  // ns
  Truth truth;

  // --- low level ---
  void x(const char* cat, const std::string& name, int64_t ts, int64_t dur, int pid, int tid,
         const std::string& args = {}) {
    char head[160];
    std::snprintf(head, sizeof head, "%s{\"ph\":\"X\",\"cat\":\"%s\",\"ts\":%lld.%03lld,\"dur\":%lld.%03lld,",
                  first_ ? "" : ",", cat, static_cast<long long>(ts / 1000), static_cast<long long>(ts % 1000),
                  static_cast<long long>(dur / 1000), static_cast<long long>(dur % 1000));
    first_ = false;
    events_ += head;
    events_ += "\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"name\":\"" + name +
               "\",\"args\":{" + args + "}}";
    lo_ = std::min(lo_, ts);
    hi_ = std::max(hi_, ts + dur);
  }
  void op(const std::string& name, int64_t ts, int64_t dur, const char* cat = "cpu_op") {
    x(cat, name, ts, dur, kPid, kMain);
  }
  void call(const std::string& name, int64_t ts, int64_t dur, int64_t corr = 0) {
    x("cuda_runtime", name, ts, dur, kPid, kMain, corr ? "\"correlation\":" + std::to_string(corr) : std::string());
  }
  // A launch call and the kernel it queued.
  void launch(int64_t callTs, int64_t callDur, const std::string& kernel, int64_t kTs, int64_t kDur,
              int stream = kStream) {
    const int64_t c = corr_++;
    call("cudaLaunchKernel", callTs, callDur, c);
    x("kernel", kernel, kTs, kDur, 0, stream,
      "\"device\":0,\"stream\":" + std::to_string(stream) + ",\"correlation\":" + std::to_string(c));
    if (stream == kStream && kernelKind_ != 2) kernelDurs.push_back(kDur);
    if (kernelKind_ != 2) {
      ++launchedKernels_;
      kernelsInLaunch_ += callTs <= kTs && kTs + kDur <= callTs + callDur;
    }
    if (kernel.find("gemm") != std::string::npos || kernel.find("conv") != std::string::npos)
      (kernel.find("xmma") != std::string::npos ? tcGemmNs_ : fp32GemmNs_) += kDur;
  }
  void memcpy(const std::string& api, int64_t callTs, int64_t callDur, const std::string& copyName, int64_t cTs,
              int64_t cDur, int64_t bytes) {
    const int64_t c = corr_++;
    call(api, callTs, callDur, c);
    x("gpu_memcpy", copyName, cTs, cDur, 0, kStream,
      "\"device\":0,\"stream\":7,\"correlation\":" + std::to_string(c) + ",\"bytes\":" + std::to_string(bytes));
  }
  void book(Cause c, int64_t ns) { truth.ns[static_cast<int>(c)] += ns; }

  // --- steps ---
  void beginStep() { stepStart_ = now; }
  // Ends the step with a 2 us op that launches nothing (host work) and writes its ProfilerStep. tail: 0
  // nothing more; 1 the script's untraced code (no op) for tailNs until the step ends; 2 the same after
  // an op's kernel and a synchronize waiting for it (the kernel a tenth of tailNs).
  void endStep(int tail = 0, int64_t tailNs = 0) {
    op("aten::zero_", now, 2000);
    book(cpuOnly_ ? Cause::CpuOnly : Cause::HostCompute, 2000);
    cpuParts[0] += 2000;
    now += 2000;
    if (tail == 2) {
      // An op launches a kernel (dispatch 700 ns, queued 300 ns), the sync waits for it and 500 ns more.
      const int64_t kd = std::max<int64_t>(tailNs / 10, 10'000);
      op("aten::mul", now, 1000);
      launch(now + 200, 500, "mul_kernel", now + 1000, kd);
      call("cudaDeviceSynchronize", now + 1000, kd + 500);
      book(Cause::LaunchBound, 700);
      book(Cause::LittleWork, 300);
      book(Cause::GpuCompute, kd);
      now += 1500 + kd;
      // The idle after the return: the sync's for as long as it waited on the kernel, then host work.
      const int64_t drained = std::min(kd, tailNs);
      book(Cause::ExplicitSync, 500 + drained);
      book(Cause::HostCompute, tailNs - drained);
      hostGapNs_ += tailNs - drained;
      syncSteps_.insert(steps_);
      now += tailNs;
    } else if (tail == 1) {
      book(Cause::HostCompute, tailNs);
      hostGapNs_ += tailNs;
      now += tailNs;
    }
    x("user_annotation", "ProfilerStep#" + std::to_string(++steps_), stepStart_, now - stepStart_, kPid, kMain);
    truth.wallNs += now - stepStart_;
  }
  int steps() const { return steps_; }
  void setCpuOnly() { cpuOnly_ = truth.cpuOnly = true; }

  // --- segments (L in ns) ---
  // flavour: 0 fp32 GEMM (no Tensor Cores), 1 Tensor Core GEMM, 2 elementwise.
  void compute(int64_t L, int flavour) {
    static const char* kNames[] = {"volta_sgemm_128x64_nn",
                                   "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
                                   "vectorized_elementwise_kernel<4, MulFunctor<float>>"};
    flavour_.insert(flavour);
    const int n = static_cast<int>(std::clamp<int64_t>(L / 100'000, 1, 8));
    op("aten::mm", now, 2000);
    const int64_t each = (L - 2000) / n;
    for (int i = 0; i < n; ++i) {
      const int64_t kTs = now + 2000 + i * each;
      const int64_t kDur = i + 1 == n ? L - 2000 - i * each : each;
      launch(now + 1000 + i * 100, 90, kNames[flavour], kTs, kDur);
    }
    // The op launches (1,090 ns of dispatch), the first kernel waits queued until the op ends.
    book(Cause::LaunchBound, 1090);
    book(Cause::LittleWork, 910);
    book(Cause::GpuCompute, L - 2000);
    computeNs_[flavour] += L - 2000;
    now += L;
  }
  // blocking: each launch returns only after its kernel ends (CUDA_LAUNCH_BLOCKING=1): the kernel runs
  // inside the call, the host still in its op's dispatch throughout.
  void launchBound(int64_t L, bool blocking = false) {
    const int64_t n = std::max<int64_t>(1, L / 8000);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t t = now + i * 8000;
      op("aten::add", t, 8000);
      launch(t + 1000, 4000, "elementwise_add_kernel", blocking ? t + 2000 : t + 5000, 2000);
    }
    book(Cause::LaunchBound, n * 8000);
    launchBoundSeen_ = true;
    now += n * 8000;
  }
  void hostOps(int64_t L, const std::string& name = "aten::cat") {
    op(name, now, L);
    book(cpuOnly_ ? Cause::CpuOnly : Cause::HostCompute, L);
    cpuParts[0] += L;
    now += L;
  }
  void hostGap(int64_t L) {
    op("aten::randn", now, 1000);
    book(cpuOnly_ ? Cause::CpuOnly : Cause::HostCompute, L);
    hostGapNs_ += L - 1000;
    cpuParts[0] += 1000;
    cpuParts[1] += L - 1000;
    now += L;
  }
  void copyH2D(int64_t L, bool pinned) {
    op("aten::copy_", now, L);
    memcpy(pinned ? "cudaMemcpy" : "cudaMemcpyAsync", now + 1000, L - 2000,
           pinned ? "Memcpy HtoD (Pinned -> Device)" : "Memcpy HtoD (Pageable -> Device)", now + 2000, L - 4000,
           int64_t{4} << 20);
    book(Cause::LaunchBound, 2000);
    book(Cause::BlockingCopy, L - 2000);
    if (!pinned) pageableH2D_ = true;
    now += L;
  }
  void readBack(int64_t L) {
    op("aten::item", now, L);
    launch(now + 300, 500, "reduce_kernel", now + L - 6000, 3000);
    memcpy("cudaMemcpyAsync", now + 1000, L - 2000, "Memcpy DtoH (Device -> Pageable)", now + L - 3000, 1000, 4);
    book(Cause::LaunchBound, 1800);
    book(Cause::LittleWork, 200);
    book(Cause::GpuCompute, 3000);
    book(Cause::BlockingCopy, L - 5000);
    readBack_ = true;
    now += L;
  }
  // gapOverKernel >= 1: the Python after the sync over the kernel's length.
  void userSync(int64_t L, double gapOverKernel = 1.0) {
    const int64_t kd = static_cast<int64_t>(static_cast<double>(L - 4500) / (1.0 + gapOverKernel));
    const int64_t gap = L - 4500 - kd;  // the sync's return to the last op
    op("aten::mul", now, 1000);
    launch(now + 200, 500, "mul_kernel", now + 1000, kd);
    call("cudaDeviceSynchronize", now + 1000, kd + 500);
    op("aten::add", now + L - 3000, 3000);
    launch(now + L - 2500, 500, "add_kernel", now + L - 2000, 1000);
    // Dispatch: the first op (700 ns), the last op around its kernel (3 us: nothing queued behind the
    // kernel, the host dispatching). The first kernel queued 300 ns, then runs kd; the sync's own 500 ns.
    book(Cause::LaunchBound, 3700);
    book(Cause::LittleWork, 300);
    book(Cause::GpuCompute, kd);
    book(Cause::ExplicitSync, 500 + std::min(kd, gap));
    book(Cause::HostCompute, gap - std::min(kd, gap));
    hostGapNs_ += gap - std::min(kd, gap);
    syncSteps_.insert(steps_);
    now += L;
  }
  // variant: 0 inside torch.cuda.empty_cache, 1 inside an op, 2 bare calls
  void alloc(int64_t L, int variant) {
    const int64_t n = std::max<int64_t>(10, (L - 1000 + 799'999) / 800'000);
    const int64_t each = (L - 1000) / n;
    if (variant == 0) x("python_function", "torch/cuda/memory.py(192): empty_cache", now, L, kPid, kMain);
    if (variant == 1) op("aten::miopen_convolution", now, L);
    for (int64_t i = 0; i < n; ++i) call("cudaFree", now + 500 + i * each, i + 1 == n ? L - 1000 - i * each : each);
    maxAllocCall_ = std::max(maxAllocCall_, each + (L - 1000) % n);
    book(Cause::HostCompute, 1000);
    book(Cause::Allocator, L - 1000);
    allocVariants_.insert(variant);
    if (variant == 1) allocInOp_ += n;
    now += L;
  }
  void loader(int64_t L, bool workers) {
    op(workers ? "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"
               : "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
       now, L, "user_annotation");
    book(cpuOnly_ ? Cause::CpuOnly : Cause::DataLoader, L);
    loaderWorkers_.insert(workers);
    cpuParts[3] += L;
    now += L;
  }
  // kind: 0 all-reduce, 1 send/recv (all-to-all); many: that many small kernels; late: the first kernel
  // starts halfway through (another rank late).
  void comm(int64_t L, int kind, int many, bool late) {
    const char* name = kind == 0 ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL" : "ncclDevKernel_SendRecv";
    const int n = std::max(1, many);
    op("record_param_comms", now, 2000);
    const int64_t q = late ? (L - 2000) / 2 : 0;
    const int64_t each = (L - 2000 - q) / n;
    kernelKind_ = 2;
    for (int i = 0; i < n; ++i) {
      const int64_t kTs = now + 2000 + q + i * each;
      launch(now + 500 + i * 30, 20, name, kTs, i + 1 == n ? L - 2000 - q - i * each : each, kCommStream);
      collectiveDurs_.push_back(each);
    }
    kernelKind_ = 0;
    // Dispatch until the first launch returns, then the collective queued or running.
    book(Cause::LaunchBound, 520);
    book(Cause::Communication, L - 520);
    commKinds_.insert(kind);
    if (late) lateComm_ = true;
    now += L;
  }
  // The same as userSync, but the synchronize is inside an op, after a small copy queued behind the
  // kernel: aten::item's device-to-host read (a read-back), or aten::copy_ moving an input to the device.
  void readBackSync(int64_t L, bool toHost = true) {
    const int64_t kd = L / 4;
    op(toHost ? "aten::item" : "aten::copy_", now, kd + 1700);
    launch(now + 200, 500, "sum_kernel", now + 1000, kd);
    memcpy("cudaMemcpyAsync", now + 800, 100,
           toHost ? "Memcpy DtoH (Device -> Pinned)" : "Memcpy HtoD (Pinned -> Device)", now + 1000 + kd, 100, 4);

    call("cudaStreamSynchronize", now + 1000, kd + 600);
    op("aten::add", now + L - 3000, 3000);
    launch(now + L - 2500, 500, "add_kernel", now + L - 2000, 1000);
    // The sync waited kd + 100 (the kernel and the copy): the idle after its return is its own for that
    // long (100 ns of it still inside the op), then Python until the last op.
    const int64_t gap = L - 4700 - kd;
    book(Cause::LaunchBound, 3700);
    book(Cause::LittleWork, 200);
    book(Cause::BlockingCopy, 100);
    book(Cause::GpuCompute, kd + 100);
    book(Cause::ExplicitSync, 600 + std::min(kd, gap));
    book(Cause::HostCompute, gap - std::min(kd, gap));
    hostGapNs_ += gap - std::min(kd, gap);
    now += L;
  }
  // A graph captured (BeginCapture to EndCapture, three launches recorded into it, nothing run).
  void capture(int64_t L) {
    call("cudaStreamBeginCapture", now, 2000);
    for (int k = 0; k < 3; ++k) call("cudaLaunchKernel", now + 3000 + k * 1000, 500, corr_++);
    call("cudaStreamEndCapture", now + L - 2000, 2000);
    book(Cause::GraphCapture, L);
    now += L;
  }
  // torch.cuda.graph() (L >= 100 us): a warm-up op whose kernel runs 20 us, then the capture from the
  // prologue's synchronize: gc.collect() (nothing recorded), empty_cache's two cudaFree calls,
  // capture_begin's RNG state (aten::empty with a cudaMalloc, two aten::fill_ with 2 us kernels that
  // run), BeginCapture, an op whose output mallocs from the graph's private pool and whose three launches
  // are recorded (nothing runs), EndCapture and the graph's instantiation. All of it graph capture but
  // the kernels that ran and the warm-up op's dispatch and queue.
  void captureGraph(int64_t L) {
    const int64_t t0 = now, w = 20'000, R = L - 3500 - w;
    op("aten::linear", t0, 3000);
    launch(t0 + 500, 500, "gelu_kernel", t0 + 3000, w);
    call("cudaDeviceSynchronize", t0 + 3000, w + 500);
    int64_t c = t0 + 3500 + w + R / 5;  // gc.collect()
    for (int k = 0; k < 2; ++k, c += R * 3 / 20) call("cudaFree", c, R * 3 / 20);
    op("aten::empty", c, R / 10);
    call("cudaMalloc", c + 200, R / 10 - 400);
    c += R / 10;
    for (int k = 0; k < 2; ++k, c += 4000) {
      op("aten::fill_", c, 4000);
      launch(c + 500, 500, "fill_kernel", c + 1000, 2000);
    }
    call("cudaStreamBeginCapture", c, 1000);
    c += 1000;
    const int64_t opL = R * 3 / 20;
    op("aten::addmm", c, opL);
    call("cudaMalloc", c + 200, opL / 2);
    for (int k = 0; k < 3; ++k) call("cudaLaunchKernel", c + opL / 2 + 400 + k * 1000, 500, corr_++);
    c += opL;
    call("cudaStreamEndCapture", c, 1000);
    c += 1000;
    call("cudaGraphInstantiateWithFlags", c, t0 + L - c);
    book(Cause::LaunchBound, 1000);
    book(Cause::LittleWork, 2000);
    book(Cause::GpuCompute, w + 4000);
    book(Cause::GraphCapture, L - 3000 - w - 4000);
    captureSteps_.insert(steps_);
    now += L;
  }
  // The step's start: a synchronize that waits on nothing (8 us, the device idle), then the script's
  // untraced code for L - 8 us (torch.cuda.synchronize(); time.sleep(...) as the loop's first lines).
  void syncThenSleep(int64_t L) {
    call("cudaDeviceSynchronize", now, 8000);
    book(Cause::ExplicitSync, 8000);
    book(Cause::HostCompute, L - 8000);
    hostGapNs_ += L - 8000;
    syncSteps_.insert(steps_);
    now += L;
  }
  // An op of that name that launches nothing (a marker: DDP's, FSDP's, a compiled region's).
  void marker(const std::string& name) {
    op(name, now, 500);
    book(cpuOnly_ ? Cause::CpuOnly : Cause::HostCompute, 500);
    cpuParts[0] += 500;
    now += 500;
  }
  // Counter profiling: CUPTI's range profiler writes each kernel's range with the span split evenly.
  void profilerRanges(int n, int64_t from, int64_t to) {
    for (int i = 0; i < n; ++i)
      x("cuda_profiler_range", "kernel_" + std::to_string(i), from + (to - from) / n * i, (to - from) / n, 0, 0,
        "\"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum\":1000");
  }
  // Top-level keys added to the trace ("distributedInfo": ...).
  std::string extraKeys;
  void ddpMarker() {
    op("DistributedDataParallel.forward", now, 500);
    book(Cause::HostCompute, 500);
    ddp_ = true;
    now += 500;
  }
  // kind: 0 a huge first cudaFree, 1 a slow first launch, 2 a convolution autotuning, 3 Dynamo compiling
  void setup(int64_t L, int kind) {
    if (kind == 0) {
      call("cudaFree", now, L);
      book(Cause::OneTimeSetup, L);
    } else if (kind == 1) {
      op("aten::mm", now, L);
      launch(now + 100, L - 300, "gemm_first", now + L - 200, 100);
      book(Cause::OneTimeSetup, L - 300);
      book(Cause::LaunchBound, 300);
    } else if (kind == 2) {
      op("aten::cudnn_convolution", now, L);
      for (int k = 0; k < 3; ++k) {
        const int64_t c = now + 1000 + k * ((L - 2000) / 3);
        launch(c, 500, "conv_algo_" + std::to_string(k), c + 500, 20'000);
        call("cudaEventSynchronize", c + 500, 20'200);
      }
      // The chosen algorithm runs last, inside the op: the device's next work after the last
      // synchronize (which would otherwise hold the idle after it, up to the next segment's work).
      launch(now + L - 1000, 500, "conv_chosen", now + L - 500, 100);
      book(Cause::GpuCompute, 60'100);
      book(Cause::OneTimeSetup, L - 60'100);

      autotuneSteps_.insert(steps_);
    } else {
      x("python_function", "torch/_dynamo/convert_frame.py(1024): _compile", now, L, kPid, kMain);
      book(Cause::OneTimeSetup, L);
      compileSteps_.insert(steps_);
    }
    setupKinds_.insert(kind);
    if (steps_ == 0) firstStepSetup_ = true;
    now += L;
  }
  // CPU only: the main thread launches a gloo all-reduce (a 0.5 us op) and waits for it, running on
  // the gloo thread, with no op of its own.
  void glooWait(int64_t L) {
    op("c10d::allreduce_", now, 500);
    x("cpu_op", "gloo:all_reduce", now + 200, L - 200, kPid, kGloo);
    book(Cause::CpuOnly, L);
    cpuParts[2] += L;
    now += L;
  }

  // The fixes whose preconditions the trace holds, from what was built (fixes.h's conditions).
  void decideFixes() {
    auto& a = truth.allowed;
    if (truth.cpuOnly) {
      const int64_t top = *std::max_element(cpuParts, cpuParts + 4);
      if (top == cpuParts[3]) a.insert(loaderWorkers_.count(true) ? "cpu_loader_faster" : "cpu_loader_workers");
      if (top == cpuParts[2]) a.insert("cpu_ranks");
      if (top == cpuParts[1]) a.insert("cpu_python");
      if (top == cpuParts[0]) a.insert("cpu_ops");
      return;
    }
    // GEMM/convolution kernels (the fp32 ones: compute's, autotuning's candidates, a slow first launch's)
    // hold 20% of the compute or more, none on Tensor Cores.
    if (fp32GemmNs_ > 0 && tcGemmNs_ == 0 && fp32GemmNs_ * 5 >= truth.ns[static_cast<int>(Cause::GpuCompute)])
      a.insert("tensor_cores");
    std::vector<int64_t> k = kernelDurs;
    std::sort(k.begin(), k.end());
    int64_t total = 0, shortNs = 0;
    for (int64_t d : k) total += d, shortNs += d < 10'000 ? d : 0;
    if (k.size() >= 200 && k[k.size() / 2] < 10'000 && shortNs * 4 >= total) a.insert("fuse_small_kernels");
    if (ddp_ && commKinds_.count(0)) a.insert("ddp_buckets");
    if (commKinds_.count(1)) a.insert("all_to_all");
    if (lateComm_) a.insert("late_rank");
    std::vector<int64_t> cd = collectiveDurs_;
    std::sort(cd.begin(), cd.end());
    if (!ddp_ && !cd.empty() && cd.size() >= 20 * static_cast<size_t>(steps_) && cd[cd.size() / 2] < 100'000)
      a.insert("coalesce_collectives");
    if (pageableH2D_) a.insert("pin_memory");
    if (readBack_) a.insert("read_back_less");
    if (syncSteps_.size() >= 2 || (steps_ == 1 && !syncSteps_.empty())) a.insert("remove_sync");
    if (allocVariants_.count(0)) a.insert("empty_cache");
    if (allocVariants_.count(2)) a.insert("empty_cache_untraced");
    if (allocInOp_ > 3) a.insert("allocator_cache");
    if (loaderWorkers_.count(false)) a.insert("loader_workers");
    if (loaderWorkers_.count(true)) a.insert("loader_faster");
    if (!k.empty() && k[k.size() / 2] < 50'000) a.insert("fewer_launches");
    // (torch.cuda.empty_cache's own Python frame is code the profiler does not record between ops too.)
    if (hostGapNs_ > 0 || allocVariants_.count(0)) a.insert("move_host_work");

    a.insert("host_ops");  // every step ends in an op that launches nothing
    if (firstStepSetup_) a.insert("warm_up");
    if (autotuneSteps_.size() >= 2) a.insert("fixed_shapes");
    if (compileSteps_.size() >= 2) a.insert("recompiles");
    if (captureSteps_.size() >= 2) a.insert("capture_once");
    if (launchedKernels_ >= 10 && kernelsInLaunch_ * 2 >= launchedKernels_) a.insert("launch_blocking");
  }
  int64_t maxAllocCall() const { return maxAllocCall_; }

  std::string json() const {
    char span[200];
    std::snprintf(
        span, sizeof span,
        ",{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\",\"pid\":\"Spans\",\"tid\":\"PyTorch "
        "Profiler\",\"ts\":%lld.000,\"dur\":%lld.000}",
        static_cast<long long>(lo_ / 1000 - 10), static_cast<long long>((hi_ - lo_) / 1000 + 20));
    return "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100\",\"computeMajor\":9,"
           "\"computeMinor\":0}]," +
           extraKeys + "\"traceEvents\":[" + events_ + span + "]}";
  }

  std::vector<int64_t> kernelDurs;  // compute-stream kernels
  // A CPU-only trace's steps' thread by kind: ops, Python between ops, a collective (its op and the wait),
  // the DataLoader.
  int64_t cpuParts[4] = {};

 private:
  std::string events_;
  bool first_ = true;
  int64_t corr_ = 1, stepStart_ = 0, lo_ = INT64_MAX, hi_ = INT64_MIN;
  int steps_ = 0;
  bool cpuOnly_ = false;
  int kernelKind_ = 0;
  std::set<int> flavour_;
  std::map<int, int64_t> computeNs_;
  bool launchBoundSeen_ = false, pageableH2D_ = false, readBack_ = false, ddp_ = false, lateComm_ = false,
       firstStepSetup_ = false;
  int64_t hostGapNs_ = 0, maxAllocCall_ = 0, fp32GemmNs_ = 0, tcGemmNs_ = 0;
  uint64_t allocInOp_ = 0, launchedKernels_ = 0, kernelsInLaunch_ = 0;
  std::set<int> syncSteps_, captureSteps_, allocVariants_, commKinds_, setupKinds_, autotuneSteps_, compileSteps_;
  std::set<bool> loaderWorkers_;
  std::vector<int64_t> collectiveDurs_;
};

}  // namespace attnscope::kgen
