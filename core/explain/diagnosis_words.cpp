#include "core/explain/diagnosis_words.h"

#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "core/text/duration.h"

namespace attnscope::diagnosis_words {

namespace {

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

}  // namespace

std::string pct(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * share);
  return buf;
}

FixContext fixContext(const EventStore& s) {
  FixContext f;
  int major = 0, minor = 0;
  std::string device;
  for (const DeviceProperties& d : s.meta().devices) {
    major = d.computeMajor;
    minor = d.computeMinor;
    device = d.name;
  }
  std::unordered_map<uint32_t, bool> seen;
  for (const Event& e : s.events()) {
    if (!seen.try_emplace(e.name, true).second) continue;
    const std::string_view n = s.name(e);
    if (startsWith(n, "CompiledFunction") || startsWith(n, "Torch-Compiled Region")) f.compiled = true;
    if (contains(n, "DistributedDataParallel")) f.ddp = true;
    if (contains(n, "FullyShardedDataParallel") || contains(n, "FSDP")) f.fsdp = true;
    if ((e.family == Family::CudaRuntime || e.family == Family::CudaDriver) && startsWith(n, "hip")) f.rocm = true;
  }
  for (const Lane& l : s.lanes()) f.mtia = f.mtia || startsWith(l.label, "MTIA ");
  if (f.rocm || contains(device, "MI2") || contains(device, "MI3") || contains(device, "Instinct"))
    f.precision = "torch.autocast(dtype=torch.bfloat16) (MI200/MI300 matrix cores)";
  else if (major == 7 && minor == 0)
    f.precision = "torch.autocast(dtype=torch.float16) (this V100 has fp16 Tensor Cores, no bf16 or TF32)";
  else if (major == 7)
    f.precision = "torch.autocast(dtype=torch.float16) (this Turing GPU has fp16 Tensor Cores, no bf16 or TF32)";
  else if (major >= 8)
    f.precision =
        "torch.autocast(dtype=torch.bfloat16), or TF32 (torch.backends.cuda.matmul.allow_tf32, "
        "torch.backends.cudnn.allow_tf32)";
  else
    f.precision = "torch.autocast: bf16 on A100 and newer, fp16 on V100 and Turing; or TF32 on A100 and newer";
  return f;
}

// The DataLoader's fix: workers when it has none; with workers, the main process waited for them.
static std::string loaderFix(const FixContext& f, bool device) {
  if (f.loaderWorkers)
    return "the main process waited for its DataLoader workers: more of them (num_workers), "
           "persistent_workers=True and prefetch_factor, or batches cheaper to build (the dataset's "
           "__getitem__ and collate_fn)";
  return device ? "load in worker processes: DataLoader(num_workers > 0, pin_memory=True, persistent_workers=True)"
                : "load in worker processes: DataLoader(num_workers > 0, persistent_workers=True)";
}

CauseWords wordsFor(Cause c, const FixContext& f) {
  const std::string device = f.mtia ? "the accelerator" : "the device";
  switch (c) {
    case Cause::GpuCompute:
      return {f.mtia ? "device compute" : "GPU compute",
              device + " was busy running its work, with more queued behind it",
              f.fp32 ? "put its fp32 matmuls and convolutions on Tensor Cores: " + f.precision
                     : device + " sets the pace: fuse or replace the longest kernels (see Kernels), or do less work"};
    case Cause::Communication: {
      std::string what = "collectives ran with no compute beside them";
      if (f.queuedCommNs > 0)
        what += " (" + spanDurationText(f.queuedCommNs) +
                " of it they sat launched but not started: waiting on a dependency or on other ranks)";
      if (f.overlappedCommNs > 0) what += "; another " + spanDurationText(f.overlappedCommNs) + " ran beside compute";
      std::string fix = f.ddp    ? "overlap them with compute (DDP bucket_cap_mb, gradient_as_bucket_view) or send less"
                        : f.fsdp ? "overlap them with compute (FSDP forward/backward prefetch) or send less"
                                 : "coalesce small collectives and overlap them with compute, or send less";
      if (f.queuedCommNs > 0) fix += "; check the other ranks' traces for a late one";
      return {"exposed communication", what, fix};
    }
    case Cause::BlockingCopy:
      return {"blocking copies", "the host sat in memory copies (pageable or device-to-host) while they ran",
              "pin the host memory (DataLoader pin_memory=True) and copy with non_blocking=True; keep "
              ".item()/.cpu()/.tolist() out of the loop"};
    case Cause::ExplicitSync:
      return {"synchronizes",
              "the host sat in synchronize calls, and after each one " + device +
                  " idled until the host launched again: the sync had emptied its queue",
              "remove the synchronizes from the step (torch.cuda.synchronize, .item(), printing tensors)"};
    case Cause::Allocator:
      return {"the allocator", "the host sat in the device allocator (free/malloc) while " + device + " idled",
              "stop calling torch.cuda.empty_cache() in the loop and let the caching allocator keep its blocks "
              "(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)"};
    case Cause::DataLoader:
      return {"the DataLoader", device + " waited while the host was in the DataLoader", loaderFix(f, true)};
    case Cause::LaunchBound:
      return {"launch-bound",
              "the host dispatching ops and launches set the pace (" + device +
                  " idled, or ran with nothing queued behind it)",
              f.compiled ? "the model is compiled but still launches op by op: CUDA graphs "
                           "(torch.compile(mode=\"reduce-overhead\")), larger batches, fewer graph breaks"
                         : "fewer, larger kernels: torch.compile, CUDA graphs, larger batches"};
    case Cause::HostCompute:
      return {"host work",
              device +
                  " waited while the host ran code that launches nothing (Python, framework overhead, CPU "
                  "ops, long runtime calls)",
              "find the CPU work in these stretches (the evidence): framework Python goes away with "
              "torch.compile or CUDA graphs; other CPU work moves off the step"};
    case Cause::GraphCapture:
      return {"graph capture",
              "the host captured or instantiated graphs (with torch.cuda.graph's synchronize and empty_cache "
              "before each capture) while " +
                  device + " idled",
              "capture once and replay; keep capture out of the measured steps"};
    case Cause::OneTimeSetup:
      if (f.autotuneNs > 0)
        return {"one-time set-up",
                "convolutions benchmarked their algorithms (" + spanDurationText(f.autotuneNs) +
                    " inside convolution ops that timed candidates with event synchronizes: "
                    "torch.backends.cudnn.benchmark autotunes every new input shape)",
                "keep input shapes fixed (pad or bucket them) so autotuning runs once, or set "
                "torch.backends.cudnn.benchmark=False"};
      return {"one-time set-up",
              f.rocm ? "first-use work (HIP context, code-object and library loading, a first huge hipFree)"
                     : "first-use work (CUDA context, library and kernel loading, a first huge cudaFree)",
              "profile after a warm-up (torch.profiler.schedule(wait=1, warmup=1, active=3))"};
    case Cause::CpuOnly: {
      // A CPU-only profile still says where the host's time went: its steps by kind, largest first.
      std::string what = "the trace has no device activity: a CPU-only profile";
      std::string fix;
      int64_t total = 0;
      for (const auto& [name, ns] : f.cpuParts) total += ns;
      if (total > 0) {
        what += "; the steps' own thread: ";
        for (size_t k = 0; k < f.cpuParts.size(); ++k) {
          const int pct = static_cast<int>(
              std::llround(100.0 * static_cast<double>(f.cpuParts[k].second) / static_cast<double>(total)));
          if (k > 0 && pct == 0) break;
          what += (k ? ", " : "") + f.cpuParts[k].first + " " + std::to_string(pct) + "%";
        }
        const std::string& top = f.cpuParts.front().first;
        if (top == "the DataLoader")
          fix = loaderFix(f, false);
        else if (top == "Python between ops")
          fix =
              "the time between ops is Python's own (the loop, per-element work such as .item() or .tolist(), "
              "logging; with tiny ops, the interpreter's dispatch): vectorise it, give each op more work (larger "
              "batches), or move it out of the step";
      } else if (f.cpuOnlyNs > 0 && f.cpuLoaderNs * 10 >= f.cpuOnlyNs) {
        what += "; the DataLoader holds " + spanDurationText(f.cpuLoaderNs) + " of it (" +
                std::to_string(
                    std::llround(100.0 * static_cast<double>(f.cpuLoaderNs) / static_cast<double>(f.cpuOnlyNs))) +
                "%)";
        fix = loaderFix(f, false);
      }
      return {"CPU only", what, fix};
    }
    case Cause::LittleWork: {
      std::string what = device + " idled and the host recorded nothing there (little work or untraced code)";
      if (f.queuedIdleNs > 0)
        what += "; " + spanDurationText(f.queuedIdleNs) +
                " of it work sat launched but not started (a dependency the trace does not show, or clocks that "
                "disagree)";
      return {"idle", what, ""};
    }
    case Cause::Count:
      break;
  }
  return {};
}

// "Launch-bound: 55.326 ms of 87.413 ms (63%), 18.4 ms a step [p10 .. - p90 ..] over 3 steps: what."
std::string sentence(const DiagnosedCause& c, const CauseWords& w, int64_t wallNs, size_t steps) {
  std::string label = w.label;
  if (!label.empty()) label[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(label[0])));
  // A cause in most steps: its median a step with the spread; one in few steps (set-up in the first):
  // in how many.
  std::string per;
  if (steps > 1 && static_cast<size_t>(c.steps) * 2 > steps)
    per = ", " + spanDurationText(std::llround(c.perStep.medianNs)) + " a step [p10 " +
          spanDurationText(std::llround(c.perStep.p10Ns)) + " - p90 " +
          spanDurationText(std::llround(c.perStep.p90Ns)) + "] over " + std::to_string(steps) + " steps";
  else if (steps > 1)
    per = ", in " + std::to_string(c.steps) + " of the " + std::to_string(steps) + " steps";
  return label + ": " + spanDurationText(c.totalNs) + " of " + spanDurationText(wallNs) + " (" + pct(c.share) + ")" +
         per + ": " + w.what + ".";
}

}  // namespace attnscope::diagnosis_words
