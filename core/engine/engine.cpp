// Orchestration: device checks, memory estimate, one pass per timing method
// (in this process, or in a child per method when cold or launch-blocking),
// assembly of the trace pass into a Kineto-schema trace with our metadata.
#include "core/engine/engine.h"

#include <ATen/Parallel.h>
#include <c10/core/Device.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <torch/cuda.h>
#include <torch/version.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/engine/clock.h"
#include "core/engine/cupti_collector.h"
#include "core/engine/measurement.h"
#include "core/engine/ranks_launch.h"
#include "core/engine/run_record.h"
#include "core/read/trace_reader.h"
#include "core/run/run_capture.h"
#include "core/run/timing_methods.h"
#include "core/text/json_out.h"
#include "core/write/atomic_file.h"
#include "core/write/trace_writer.h"

extern char** environ;

namespace attnscope::engine {

namespace {

constexpr int kExitOk = 0, kExitInternal = 1, kExitBad = 2, kExitOom = 3;

std::atomic<pid_t> gChild{0};

void onTerminate(int sig) {
  const pid_t c = gChild.load();
  if (c > 0) ::kill(c, SIGTERM);
  ::_exit(128 + sig);  // nothing is written until the end, atomically
}

void installSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onTerminate;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string defaultOut() {
  const auto t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "attnscope-run-%Y%m%d-%H%M%S.json", std::localtime(&t));
  return buf;
}

// Runs one pass in a fresh child process; returns its exit code (or -signal).
int runChild(const std::string& selfExe, const RunConfig& cfg, TimingMethod m, const std::string& passOut) {
  RunConfig c = cfg;
  c.out.clear();
  c.progressJson = false;
  std::vector<std::string> args = {selfExe, "run"};
  for (auto& a : toRunArgs(c)) args.push_back(a);
  args.insert(args.end(), {"--internal-pass", std::string(timingName(m)), "--internal-pass-out", passOut});
  // SIGTERM and SIGINT wait while the child is spawned and recorded, so the handler always knows
  // the child it must stop.
  pid_t pid = 0;
  const int spawned = spawnWithSignalsHeld(std::move(args), [&](pid_t p) {
    pid = p;
    gChild = p;
  });
  if (spawned != 0) return -1000;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  gChild = 0;
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return WEXITSTATUS(status);
}

// The GPU the run used, as the trace's metadata names it.
RunDeviceInfo deviceInfo(int dev) {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) return {};
  return RunDeviceInfo{p.name, std::to_string(p.major) + "." + std::to_string(p.minor), p.multiProcessorCount,
                       static_cast<int64_t>(p.totalGlobalMem)};
}

// The trace's deviceProperties and CUDA versions (Kineto's), for whichever
// process assembles the trace pass.
void fillDeviceInfo(RunCapture* cap, at::Device device) {
  if (!device.is_cuda()) return;
  cudaRuntimeGetVersion(&cap->cudaRuntimeVersion);
  cudaDriverGetVersion(&cap->cudaDriverVersion);
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device.index()) != cudaSuccess) return;
  DeviceProperties d;
  d.id = device.index();
  d.name = p.name;
  d.totalGlobalMem = static_cast<int64_t>(p.totalGlobalMem);
  d.computeMajor = p.major;
  d.computeMinor = p.minor;
  d.numSms = p.multiProcessorCount;
  cap->devices.push_back(d);
}

int childMain(const RunConfig& cfg, at::Device device) {
  RunCapture cap;
  MeasurementResult r;
  TimingMethod m = TimingMethod::Count;
  for (int i = 0; i < kTimingMethodCount; ++i)
    if (cfg.pass == timingName(static_cast<TimingMethod>(i))) m = static_cast<TimingMethod>(i);
  if (m == TimingMethod::Count) {
    std::cerr << "attnscope-cli: run: unknown --internal-pass '" << cfg.pass << "'\n";
    return kExitBad;
  }
  r = runMeasurement(m, cfg, device, &cap, cfg.passOut + ".torch-trace.json");
  r.child = true;
  std::string err;
  if (m == TimingMethod::Cupti) {
    cap.pid = ::getpid();
    fillDeviceInfo(&cap, device);  // a cold or blocking run's trace keeps them too
    const EventStore store = assembleRunStore(cap, &r.collection.assembled);
    r.tracePath = cfg.passOut + ".trace.json";
    if (!writeFileAtomic(r.tracePath, chromeTraceJson(store), &err)) {
      std::cerr << "attnscope-cli: " << err << "\n";
      return kExitBad;
    }
  }
  if (!writeFileAtomic(cfg.passOut, measurementResultJson(r), &err)) {
    std::cerr << "attnscope-cli: " << err << "\n";
    return kExitBad;
  }
  return kExitOk;
}

}  // namespace

std::string capabilities(bool* cudaAvailable) {
  const bool cuda = torch::cuda::is_available();
  if (cudaAvailable) *cudaAvailable = cuda;
  if (!cuda) return "cpu only: no CUDA device or driver visible to LibTorch " TORCH_VERSION;
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  return std::string("cuda: ") + p.name + " (LibTorch " TORCH_VERSION ")";
}

int run(const RunConfig& cfgIn, const std::string& selfExe) {
  installSignalHandlers();
  initClock();
  prepareNvtxInjection();
  RunConfig cfg = cfgIn;
  // CUDA_LAUNCH_BLOCKING must be set before CUDA initialises: set it here
  // for the children, which run every pass of a blocking run.
  if (cfg.sync == SyncMode::Blocking) ::setenv("CUDA_LAUNCH_BLOCKING", "1", 1);

  if (std::getenv("ATTNSCOPE_CUPTI_NO_TSCB")) {
    std::cerr << "attnscope-cli: run: ATTNSCOPE_CUPTI_NO_TSCB is set: it keeps CUPTI on its own clock, so the "
                 "GPU's records and the CPU's would not share a timebase; it is for the overhead benchmark's "
                 "ablations only (unset it to run)\n";
    return kExitBad;
  }
  try {
    // --ranks N: this process launches the ranks (each an engine of its own) and runs no pass.
    if (cfg.ranks > 1 && cfg.rank < 0 && cfg.pass.empty()) return runRanks(cfg, selfExe);
    const bool cudaAvailable = torch::cuda::is_available();
    if (cfg.device == RunDevice::Cuda && !cudaAvailable) {
      std::cerr << "attnscope-cli: run: --device cuda, but no CUDA device or driver is available "
                   "(torch::cuda::is_available() is false); use --device cpu\n";
      return kExitBad;
    }
    if (cfg.device == RunDevice::Auto) {
      cfg.device = cudaAvailable ? RunDevice::Cuda : RunDevice::Cpu;
      if (!cudaAvailable && cfg.pass.empty())
        std::cerr << "attnscope-cli: notice: no CUDA device found; running on the CPU\n";
    }
    if (auto e = fitTimingToDevice(&cfg, cfg.device == RunDevice::Cuda)) {
      std::cerr << "attnscope-cli: " << *e << "\n";
      return kExitBad;
    }
    const int gpuIndex = cfg.device == RunDevice::Cuda ? cfg.deviceIndex : 0;
    if (cfg.device == RunDevice::Cuda) {
      const auto count = static_cast<int>(torch::cuda::device_count());
      if (gpuIndex >= count) {
        std::cerr << "attnscope-cli: run: --device cuda:" << gpuIndex << ", but this machine has " << count
                  << " CUDA device(s) (0 to " << count - 1 << ")\n";
        return kExitBad;
      }
      // Everything of the run on that GPU: the workload, the streams, the
      // events, the syncs, the free-memory check.
      if (const cudaError_t e = cudaSetDevice(gpuIndex); e != cudaSuccess) {
        std::cerr << "attnscope-cli: run: cannot use CUDA device " << gpuIndex << ": " << cudaGetErrorString(e) << "\n";
        return kExitBad;
      }
    }
    const at::Device device(cfg.device == RunDevice::Cuda ? at::kCUDA : at::kCPU,
                            static_cast<c10::DeviceIndex>(gpuIndex));
    if (cfg.rank >= 0 && !device.is_cuda()) {
      // The ranks share the machine's cores: each keeps its share of them for its intra-op threads.
      const long cores = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
      at::set_num_threads(static_cast<int>(std::max(1L, cores / cfg.ranks)));
    }
    if (!cfg.pass.empty()) return childMain(cfg, device);

    // Refuse shapes that clearly cannot fit, before allocating anything.
    const uint64_t need = estimateWorkloadBytes(cfg);
    uint64_t avail = 0;
    if (device.is_cuda()) {
      size_t freeB = 0, totalB = 0;
      cudaMemGetInfo(&freeB, &totalB);
      avail = freeB;
    } else {
      avail = static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(::sysconf(_SC_PAGE_SIZE));
    }
    if (avail && need > avail) {
      std::cerr << "attnscope-cli: run: shape " << runSummary(cfg) << " needs about " << (need >> 20) << " MiB but the "
                << (device.is_cuda() ? "GPU has" : "machine has") << " " << (avail >> 20) << " MiB "
                << (device.is_cuda() ? "free" : "of memory") << "; refusing before allocating\n";
      return kExitOom;
    }

    const std::string out = cfg.out.empty() ? defaultOut() : cfg.out;
    {
      // An unwritable output is known now, not after the passes.
      const auto slash = out.find_last_of('/');
      const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : out.substr(0, slash));
      if (::access(dir.c_str(), W_OK) != 0) {
        std::cerr << "attnscope-cli: run: cannot write " << out << ": " << std::strerror(errno) << "\n";
        return kExitBad;
      }
    }
    const bool childPerMethod = cfg.warmup == 0 || cfg.sync == SyncMode::Blocking;
    progress(cfg, "start", 0, "running " + runSummary(cfg) + " on " + (device.is_cuda() ? "cuda" : "cpu"));

    // The trace pass always runs, and runs last: CUPTI, once it has been set
    // up in a process, stays attached to it (disabling its kinds does not
    // detach it), so a pass after it would not be "no profiler". The host
    // pass, the no-profiler figure each profiler's inflation is measured
    // against, runs right before it: on the H200 box a process's speed
    // drifts by up to 3x over a run, uniformly over every op, so the two
    // passes compared are measured next to each other.
    // ATTNSCOPE_TRACE_FIRST=1 restores the old order (trace, events, host,
    // ...), for the ablation (scripts/gpu-ablate.sh) that measures it.
    // The order is the timing table's passOrder (timing_methods.h).
    std::vector<TimingMethod> methods;
    for (int m = 0; m < kTimingMethodCount; ++m)
      if (cfg.timing[m] || static_cast<TimingMethod>(m) == TimingMethod::Cupti)
        methods.push_back(static_cast<TimingMethod>(m));
    if (!std::getenv("ATTNSCOPE_TRACE_FIRST"))
      std::stable_sort(methods.begin(), methods.end(), [](TimingMethod a, TimingMethod b) {
        return timingInfo(a).passOrder < timingInfo(b).passOrder;
      });

    RunCapture cap;
    std::optional<EventStore> childStore;
    std::vector<MeasurementResult> results;
    std::vector<std::string> notes;
    if (cfg.rank >= 0) {
      const int64_t share = cfg.shape[1] / cfg.ranks;
      notes.push_back(
          "rank " + std::to_string(cfg.rank) + " of " + std::to_string(cfg.ranks) + " (" +
          std::string(backendName(cfg.backend)) +
          ", one process group per pass, its store on 127.0.0.1:" + std::to_string(cfg.storePort) + "): heads " +
          std::to_string(share * cfg.rank) + " to " + std::to_string(share * (cfg.rank + 1) - 1) + " of " +
          std::to_string(cfg.shape[1]) + ", the ranks' outputs all-gathered at the end of AV MATMUL in every call" +
          (device.is_cuda() ? std::string() : "; " + std::to_string(at::get_num_threads()) + " intra-op thread(s)"));
      if (cfg.slowRank >= 0)
        notes.push_back("slow rank " + std::to_string(cfg.slowRank) + ": sleeps " + std::to_string(cfg.slowUs) +
                        " us before each all-gather (slow_rank_sleep, inside AV MATMUL)" +
                        (cfg.rank == cfg.slowRank ? " (this rank)" : ""));
    }
    const std::string tmpBase = out + ".pass-" + std::to_string(::getpid());
    for (TimingMethod m : methods) {
      const bool inChild = childPerMethod || timingInfo(m).childProcess;
      progress(cfg, "pass", 0, std::string(timingName(m)) + (inChild ? " pass (child process)" : " pass"));
      if (!inChild) {
        results.push_back(runMeasurement(m, cfg, device, &cap, ""));
        continue;
      }
      const std::string passOut = tmpBase + "." + std::string(timingName(m)) + ".json";
      const int rc = runChild(selfExe, cfg, m, passOut);
      if (rc != 0) {
        ::unlink(passOut.c_str());
        ::unlink((passOut + ".trace.json").c_str());
        if (rc == kExitOom) {
          std::cerr << "attnscope-cli: run: the " << timingName(m) << " pass ran out of memory\n";
          return kExitOom;
        }
        std::cerr << "attnscope-cli: run: the " << timingName(m) << " pass "
                  << (rc < 0 ? "was killed by signal " + std::to_string(-rc)
                             : "failed with exit code " + std::to_string(rc))
                  << "\n";
        return rc == kExitBad ? kExitBad : kExitInternal;
      }
      MeasurementResult r;
      std::string err;
      const bool ok = parseMeasurementResult(readFile(passOut), &r, &err);
      ::unlink(passOut.c_str());
      if (!ok) {
        std::cerr << "attnscope-cli: run: " << err << "\n";
        return kExitInternal;
      }
      if (m == TimingMethod::Cupti) {
        LoadResult lr = loadTrace(r.tracePath);
        ::unlink(r.tracePath.c_str());
        if (!lr.ok()) {
          std::cerr << "attnscope-cli: run: cannot read the trace pass: " << lr.error->what() << "\n";
          return kExitInternal;
        }
        childStore.emplace(std::move(*lr.store));
        r.tracePath.clear();
      }
      if (m == TimingMethod::Torch && !r.tracePath.empty()) {
        const std::string torchOut = out.size() > 5 && out.ends_with(".json")
                                         ? out.substr(0, out.size() - 5) + ".torch.json"
                                         : out + ".torch.json";
        if (std::rename(r.tracePath.c_str(), torchOut.c_str()) == 0) r.tracePath = torchOut;
        notes.push_back(
            "torch's own profiler ran in a separate child process (one CUPTI subscriber per process); "
            "its trace is " +
            torchOut);
      }
      results.push_back(std::move(r));
    }

    // The results in the methods' usual order, the trace pass's first.
    std::stable_sort(results.begin(), results.end(), [](const MeasurementResult& a, const MeasurementResult& b) {
      return static_cast<int>(a.method) < static_cast<int>(b.method);
    });
    // The trace pass becomes the store.
    cap.pid = ::getpid();
    fillDeviceInfo(&cap, device);
    const int runtimeVersion = cap.cudaRuntimeVersion, driverVersion = cap.cudaDriverVersion;
    // A child's trace pass counted its correlations when it assembled them.
    EventStore store =
        childStore ? std::move(*childStore) : assembleRunStore(cap, &results.front().collection.assembled);
    RunVersions versions{TORCH_VERSION, runtimeVersion, driverVersion, store.meta().cuptiVersion};
    const EngineRun record =
        recordRun(cfg, results, store, versions,
                  device.is_cuda() ? deviceInfo(gpuIndex) : RunDeviceInfo{"cpu", "", 0, 0}, std::move(notes));
    const std::string meta = "\"attnscope\": " + engineRunJson(record);

    std::string err;
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigprocmask(SIG_BLOCK, &block, &old);  // a complete file or none
    const bool wrote = writeFileAtomic(out, chromeTraceJson(store, meta), &err);
    sigprocmask(SIG_SETMASK, &old, nullptr);
    if (!wrote) {
      std::cerr << "attnscope-cli: run: " << err << "\n";
      return kExitBad;
    }
    progress(cfg, "done", 0, "wrote " + out);
    if (!cfg.progressJson)
      std::cout << "wrote " << out << " (" << store.events().size() << " events; cupti: " << record.collection.cupti
                << ")\n";
    return kExitOk;
  } catch (const std::bad_alloc&) {
    std::cerr << "attnscope-cli: run: out of memory (a host allocation failed: std::bad_alloc)\n";
    return kExitOom;
  } catch (const c10::OutOfMemoryError& e) {
    std::cerr << "attnscope-cli: run: out of memory: " << e.what_without_backtrace() << "\n";
    return kExitOom;
  } catch (const c10::Error& e) {
    // The CPU allocator's failure is a plain c10::Error ("DefaultCPUAllocator:
    // can't allocate memory: you tried to allocate N bytes ..."), not the
    // OutOfMemoryError CUDA's caching allocator throws: the same exit 3.
    const std::string_view what = e.what_without_backtrace();
    if (what.find("can't allocate memory") != std::string_view::npos ||
        what.find("not enough memory") != std::string_view::npos) {
      std::cerr << "attnscope-cli: run: out of memory: " << what << "\n";
      return kExitOom;
    }
    std::cerr << "attnscope-cli: run: LibTorch error: " << what << "\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "attnscope-cli: run: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

}  // namespace attnscope::engine
