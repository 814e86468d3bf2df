// The facts the fixes' conditions read (fixes.h), from the trace: the device and program (precision,
// compiled, DDP or FSDP), each copy call's direction, memory, size and how it waited, each synchronize's
// issuer, each allocator call's surroundings, the DataLoader's kind, which steps hold set-up, capture,
// autotuning and compilation, and a CPU-only profile's split.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "core/explain/diagnosis_internal.h"
#include "core/explain/explanation.h"
#include "core/explain/fixes.h"
#include "core/store/device_activity.h"

namespace attnscope::diag {

namespace {

int64_t heldBy(const Intervals& pieces, int64_t a, int64_t b) {
  int64_t held = 0;
  auto it = std::lower_bound(pieces.begin(), pieces.end(), std::make_pair(a, INT64_MIN));
  if (it != pieces.begin()) --it;
  for (; it != pieces.end() && it->first < b; ++it)
    held += std::max<int64_t>(0, std::min(it->second, b) - std::max(it->first, a));
  return held;
}

bool isAllReduce(std::string_view n) {
  return contains(n, "AllReduce") || contains(n, "allreduce") || contains(n, "all_reduce") || contains(n, "Allreduce");
}
bool isAllToAll(std::string_view n) {
  return contains(n, "SendRecv") || contains(n, "AllToAll") || contains(n, "all_to_all") || contains(n, "alltoall") ||
         contains(n, "Sendrecv");
}
bool isD2H(std::string_view copyName) {
  return contains(copyName, "DtoH") || contains(copyName, "Device -> Pageable") ||
         contains(copyName, "Device -> Pinned");
}

// An op that reads a device value back to the host: one that always does (.item(), nonzero, ...), or a
// copy op whose copy inside it runs device-to-host (a copy op also moves inputs to the device).
bool isReadBack(const EventStore& s, EventId op) {
  const std::string_view n = s.name(s.event(op));
  for (std::string_view always :
       {"aten::item", "aten::_local_scalar_dense", "aten::nonzero", "aten::tolist", "aten::is_nonzero", "aten::equal"})
    if (n == always) return true;
  if (n != "aten::copy_" && n != "aten::to" && n != "aten::_to_copy" && n != "aten::cpu") return false;
  const Event& o = s.event(op);
  const EventId laneEnd = s.lanes()[o.lane].end;
  for (EventId id = op + 1; id < laneEnd && s.event(id).start < o.end(); ++id) {
    const Event& e = s.event(id);
    if ((e.family != Family::CudaRuntime && e.family != Family::CudaDriver) || callKind(s.name(e)) != CallKind::Copy)
      continue;
    const EventId cp = copyOfCall(s, id);
    if (cp != kNoEvent && isD2H(s.name(s.event(cp)))) return true;
  }
  return false;
}

std::string precisionFor(const EventStore& s, bool rocm) {
  int major = 0, minor = 0;
  std::string device;
  for (const DeviceProperties& d : s.meta().devices) {
    major = d.computeMajor;
    minor = d.computeMinor;
    device = d.name;
  }
  if (rocm || contains(device, "MI2") || contains(device, "MI3") || contains(device, "Instinct"))
    return "torch.autocast(dtype=torch.bfloat16) (MI200/MI300 matrix cores)";
  if (major == 7 && minor == 0)
    return "torch.autocast(dtype=torch.float16) (this V100 has fp16 Tensor Cores, no bf16 or TF32)";
  if (major == 7) return "torch.autocast(dtype=torch.float16) (this Turing GPU has fp16 Tensor Cores, no bf16 or TF32)";
  if (major >= 8)
    return "torch.autocast(dtype=torch.bfloat16), or TF32 (torch.backends.cuda.matmul.allow_tf32, "
           "torch.backends.cudnn.allow_tf32)";
  return "torch.autocast: bf16 on A100 and newer, fp16 on V100 and Turing; or TF32 on A100 and newer";
}

}  // namespace

TraceNameFacts traceNameFacts(const EventStore& s) {
  TraceNameFacts out;
  FixFacts& f = out.facts;
  // Each name is looked at once, with the first event that has it; empty_cache's calls counted per event.
  std::vector<uint8_t> seen(s.strings().size(), 0);  // 1 seen, 2 seen and names empty_cache
  for (const Event& e : s.events()) {
    uint8_t& mark = seen[e.name];
    const bool call =
        e.family == Family::PythonFunction || e.family == Family::CpuOp || e.family == Family::UserAnnotation;
    if (mark != 0) {
      f.emptyCacheCalls += call && mark == 2;
      continue;
    }
    const std::string_view n = s.name(e);
    mark = contains(n, "empty_cache") ? 2 : 1;
    f.emptyCacheCalls += call && mark == 2;
    if (startsWith(n, "CompiledFunction") || startsWith(n, "Torch-Compiled Region")) out.compiled.insert(e.name);
    if (contains(n, "DistributedDataParallel") || contains(n, "nn/parallel/distributed.py") || contains(n, "Reducer"))
      f.ddpReducer = true;
    if (contains(n, "FullyShardedDataParallel") || contains(n, "FSDP")) f.fsdp = true;
    if ((e.family == Family::CudaRuntime || e.family == Family::CudaDriver) && startsWith(n, "hip")) f.rocm = true;
    if (e.family == Family::PythonFunction) f.withStack = true;
    if (isDataLoader(n)) {
      if (contains(n, "SingleProcess")) f.loaderSingleProcess = true;
      if (contains(n, "MultiProcessing")) f.loaderWorkers = true;
    }
    if (e.family == Family::GpuMemcpy && contains(n, "Pageable -> Device")) f.pageableH2DCopies = 1;
  }
  return out;
}

FixFacts fixFacts(const EventStore& s, const Diagnosis& d, const RuleSet& r, const Intervals* taken, const Windows& w,
                  const std::vector<EvidenceItem>* items, const CpuSplit& cpu, const TraceNameFacts& names) {
  FixFacts f = names.facts;
  f.counterProfiling = s.profilerRangeEvents() > 0;
  f.steps = d.steps.size();
  auto causeNs = [&](Cause c) {
    int64_t ns = 0;
    for (const StepWaits& st : d.steps) ns += st.parts[static_cast<int>(c)];
    return ns;
  };
  // The step (index into the windows) a moment falls in, or -1.
  auto stepOf = [&](int64_t t) {
    const auto it =
        std::upper_bound(w.list.begin(), w.list.end(), t, [](int64_t x, const Window& win) { return x < win.startNs; });
    if (it == w.list.begin()) return -1;
    const auto k = static_cast<int>(it - w.list.begin()) - 1;
    return t < w.list[static_cast<size_t>(k)].endNs ? k : -1;
  };
  const std::set<uint32_t>& compiledNames = names.compiled;
  for (const Lane& l : s.lanes()) f.mtia = f.mtia || isAcceleratorLane(l);
  // Compiled: compiled regions run through a fifth of the steps' time or more (one small compiled
  // function in an eager model is not a compiled model).
  if (!compiledNames.empty()) {
    Intervals compiled, windows;
    for (const Event& e : s.events())
      if (e.dur > 0 && compiledNames.count(e.name)) compiled.emplace_back(e.start, e.end());
    for (const Window& win : w.list) windows.emplace_back(win.startNs, win.endNs);
    int64_t ns = 0;
    for (const auto& [a, b] : intersected(merged(std::move(compiled)), merged(std::move(windows)))) ns += b - a;
    f.compiled = ns * 5 >= d.wallNs && d.wallNs > 0;
  }
  f.precision = precisionFor(s, f.rocm);
  // gpu_compute
  const int64_t computeNs = causeNs(Cause::GpuCompute);
  f.fp32NoTensorCores = r.gemmNs > 0 && r.gemmTcNs == 0 && r.gemmNs * 5 >= computeNs && computeNs > 0;
  f.kernelMedianNs = r.kernelMedianNs;
  f.launchedKernels = r.launchedKernels;
  f.kernelsInLaunch = r.kernelsInLaunch;
  f.manySmallKernels =
      r.kernels >= 200 && r.kernelMedianNs > 0 && r.kernelMedianNs < 10'000 && r.shortKernelNs * 4 >= r.kernelNs;
  // communication: the exposed collectives' evidence by kind
  f.commNs = causeNs(Cause::Communication);
  for (const EvidenceItem& it : items[static_cast<int>(Cause::Communication)]) {
    if (it.kind != "collective" && it.kind != "queued") continue;
    if (isAllReduce(it.name)) f.allReduceNs += it.ns;
    if (isAllToAll(it.name)) f.allToAllNs += it.ns;
    if (it.kind == "queued") f.queuedCommNs += it.ns;
  }
  {
    std::vector<int64_t> durs;
    for (EventId id : r.rules[kComm].events)
      if (stepOf(s.event(id).start) >= 0) durs.push_back(s.event(id).dur);
    f.collectives = durs.size();
    if (!durs.empty()) {
      std::sort(durs.begin(), durs.end());
      f.collectiveMedianNs = durs[durs.size() / 2];
    }
  }
  // blocking_copy: each copy call, by its copy's direction, memory and size, and how it waited
  f.copyNs = causeNs(Cause::BlockingCopy);
  Intervals copyMoments = taken[kCopy];
  copyMoments.insert(copyMoments.end(), taken[kCopyWaited].begin(), taken[kCopyWaited].end());
  copyMoments = merged(std::move(copyMoments));
  std::map<std::string, uint64_t> readBackOps;
  for (EventId id : r.rules[kCopy].events) {
    const Event& call = s.event(id);
    const EventId cp = copyOfCall(s, id);
    if (cp == kNoEvent || call.dur <= 0) continue;
    const Event& g = s.event(cp);
    const std::string_view gn = s.name(g);
    const int64_t held = heldBy(copyMoments, call.start, call.end());
    const int64_t overlap = std::max<int64_t>(0, std::min(g.end(), call.end()) - std::max(g.start, call.start));
    const int64_t waited = std::clamp<int64_t>(g.start - call.start, 0, call.dur);
    const int64_t bytes = g.args != kNoArgs ? s.argsColumns().bytes[g.args] : -1;
    if (contains(gn, "Pageable -> Device") && overlap * 2 >= call.dur) f.pageableH2DWaitIsCopyNs += held;
    const bool d2h = isD2H(gn);

    if (d2h && bytes >= 0 && bytes <= 65536 && waited * 2 >= call.dur) {
      f.smallD2HBehindQueueNs += held;
      ++f.smallD2HCopies;
      if (const EventId op = innermostCpuOp(s, id); op != kNoEvent) readBackOps[std::string(s.name(s.event(op)))]++;
    }
  }
  // explicit_sync: who issued each synchronize
  f.syncNs = causeNs(Cause::ExplicitSync);
  std::map<std::string, int64_t> userCalls;
  std::set<int> userSteps;
  for (int rule : {kSync, kSyncDrained}) {
    const RuleEvents& re = r.rules[rule];
    for (size_t k = 0; k < re.events.size(); ++k) {
      const int64_t held = heldBy(taken[rule], re.spans[k].first, re.spans[k].second);
      if (held <= 0) continue;
      const EventId op = innermostCpuOp(s, re.events[k]);
      if (op == kNoEvent) {
        f.userSyncNs += held;
        userCalls[std::string(s.name(s.event(re.events[k])))] += held;
        if (const int st = stepOf(s.event(re.events[k]).start); st >= 0) userSteps.insert(st);
      } else if (isReadBack(s, op)) {
        f.readBackSyncNs += held;
        readBackOps[std::string(s.name(s.event(op)))]++;
      }
    }
  }
  f.userSyncSteps = static_cast<int>(userSteps.size());
  for (const auto& [name, ns] : userCalls)
    if (f.userSyncCall.empty() || ns > userCalls[f.userSyncCall]) f.userSyncCall = name;
  uint64_t most = 0;
  for (const auto& [name, n] : readBackOps)
    if (n > most) most = n, f.smallD2HOp = name;
  // allocator: inside torch.cuda.empty_cache, or inside ops again and again
  f.allocNs = causeNs(Cause::Allocator);
  {
    std::map<std::string, uint64_t> perOp;
    std::map<std::string, uint64_t> recurringOps;
    std::set<int> bareSteps;
    std::vector<EventId> calls = r.rules[kAlloc].events;
    std::sort(calls.begin(), calls.end(), [&](EventId a, EventId b) { return s.event(a).start < s.event(b).start; });
    for (EventId id : calls) {
      const Event& e = s.event(id);
      const int64_t held = heldBy(taken[kAlloc], e.start, e.end());
      bool inEmptyCache = false;
      for (EventId p = e.parent; p != kNoEvent && !inEmptyCache; p = s.event(p).parent)
        inEmptyCache = contains(s.name(s.event(p)), "empty_cache");
      if (inEmptyCache) {
        f.allocInEmptyCacheNs += held;
        continue;
      }
      // A free with nothing of the script's around it (a step's annotation at most): no op frees memory
      // there; the caching allocator gives its cached blocks back (empty_cache, not recorded as a call).
      bool bare = contains(s.name(e), "Free") && !contains(s.name(e), "Host");
      for (EventId p = e.parent; p != kNoEvent && bare; p = s.event(p).parent)
        bare = s.event(p).family == Family::UserAnnotation && isStepMark(s.name(s.event(p)));
      if (bare && held > 0) {
        f.bareFreeNs += held;
        ++f.bareFrees;
        if (const int st = stepOf(e.start); st >= 0) bareSteps.insert(st);
      }
      // Frees inside ops: the cache gives memory back there (off, bypassed, or full and retrying); a
      // malloc inside an op is the cache growing, which a first pass does.
      const EventId op = innermostCpuOp(s, id);
      if (op == kNoEvent || !contains(s.name(e), "Free")) continue;

      const std::string name(s.name(s.event(op)));
      if (++perOp[name] <= 3) continue;
      f.allocInOpsRecurringNs += held;
      ++f.allocInOpsCalls;
      recurringOps[name]++;
    }
    f.bareFreeSteps = static_cast<int>(bareSteps.size());
    uint64_t top = 0;
    for (const auto& [name, n] : recurringOps)
      if (n > top) top = n, f.allocOp = name;
  }
  // launch_bound, host_compute
  f.launchNs = causeNs(Cause::LaunchBound);
  // Host work: the step's thread between its ops with nothing recorded, and the own time of regions and
  // Python frames (the script's code between the ops inside them), against ops and calls that launch
  // nothing (by the evidence: each moment once).
  f.hostNs = causeNs(Cause::HostCompute);
  for (const EvidenceItem& it : items[static_cast<int>(Cause::HostCompute)])
    if (it.kind == "untraced" || it.kind == "region" || it.kind == "frame") f.hostGapNs += it.ns;

  // graph_capture, one_time_setup: which steps hold them
  std::set<int> captureSteps, autotuneSteps, compileSteps;
  for (const auto& [a, b] : taken[kCapture])
    if (const int st = stepOf(a); st >= 0) captureSteps.insert(st);
  f.captureSteps = static_cast<int>(captureSteps.size());
  f.setupNs = causeNs(Cause::OneTimeSetup);
  for (EventId id : r.autotuneOps)
    if (const int st = stepOf(s.event(id).start); st >= 0) autotuneSteps.insert(st);
  for (EventId id = 0; id < r.setup.size(); ++id)
    if (r.setup[id] == SetupKind::Compile)
      if (const int st = stepOf(s.event(id).start); st >= 0) compileSteps.insert(st);
  f.autotuneSteps = static_cast<int>(autotuneSteps.size());
  f.compileSteps = static_cast<int>(compileSteps.size());
  if (!w.list.empty()) f.firstUseNs = heldBy(taken[kSetup], w.list.front().startNs, w.list.front().endNs);
  f.queuedIdleNs = heldBy(taken[kQueued], INT64_MIN / 2, INT64_MAX / 2);
  for (const StepWaits& st : d.steps) f.overlappedCommNs += st.communicationOverlappedNs;
  // cpu_only
  f.cpuParts = cpu.parts;
  f.hotOps = cpu.hotOps;
  f.opsSelfNs = cpu.opsNs;
  for (const auto& [name, ns] : cpu.parts) f.cpuNs += ns;
  if (!cpu.parts.empty()) f.cpuTop = cpu.parts.front().first, f.cpuTopNs = cpu.parts.front().second;
  f.cpuCollectiveWaitNs = cpu.collectiveWaitNs;
  f.cpuCollective = cpu.collective;
  if (s.meta().distributed.present) {
    f.rank = static_cast<int>(s.meta().distributed.rank);
    f.worldSize = static_cast<int>(s.meta().distributed.worldSize);
  }
  // Recorded by `record --nproc`: one trace per rank in the job's folder.
  if (!s.meta().recordJson.empty() && f.worldSize > 1) {
    const std::string& path = s.meta().sourcePath;
    const size_t slash = path.find_last_of('/');
    f.jobFolder = slash == std::string::npos ? std::string(".") : path.substr(0, slash);
  }
  return f;
}

}  // namespace attnscope::diag
