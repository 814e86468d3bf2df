#include "core/explain/diagnosis.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <unordered_map>

#include "core/explain/diagnosis_words.h"
#include "core/explain/explanation.h"
#include "core/run/engine_run.h"
#include "core/store/intervals.h"
#include "core/text/duration.h"
#include "core/text/json_out.h"
#include "core/views/views.h"

namespace attnscope {

using namespace diagnosis_words;

std::string_view causeCode(Cause c) {
  static constexpr std::string_view k[] = {"gpu_compute",   "communication",  "blocking_copy", "explicit_sync",
                                           "allocator",     "data_loader",    "launch_bound",  "host_compute",
                                           "graph_capture", "one_time_setup", "cpu_only",      "little_work"};
  return k[static_cast<int>(c)];
}

namespace {

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

// What a host call is, by its name (CUDA runtime and driver, HIP, MTIA's runtime).
enum class CallKind : uint8_t { Allocator, Copy, Sync, Capture, Other };

CallKind callKind(std::string_view n) {
  // cudaStreamSynchronize, hipDeviceSynchronize, MTIA's synchronizeStream.
  if (contains(n, "ynchronize")) return CallKind::Sync;
  if (contains(n, "Capture") || contains(n, "GraphInstantiate") || contains(n, "GraphUpload")) return CallKind::Capture;
  if (contains(n, "Memcpy")) return CallKind::Copy;
  // Stream-ordered allocation (cudaMallocAsync, cudaFreeAsync) does not block the host.
  if ((contains(n, "Free") || contains(n, "Malloc") || contains(n, "HostAlloc") || contains(n, "MemAlloc")) &&
      !contains(n, "Async"))
    return CallKind::Allocator;
  return CallKind::Other;
}

constexpr int64_t kLongCallNs = 1'000'000;

bool isStepMark(std::string_view n) { return startsWith(n, "ProfilerStep#"); }

bool isDataLoader(std::string_view n) {
  return startsWith(n, "enumerate(DataLoader)") || contains(n, "DataLoaderIter");
}

// A CPU-only profile's steps, by what their own thread did: the step's direct children (torch's
// top-level ops and regions) by kind, and the rest of the window, where no op ran (Python).
std::vector<std::pair<std::string, int64_t>> cpuStepParts(const EventStore& s, const Explanation& x) {
  int64_t parts[6] = {};
  static constexpr const char* kNames[6] = {"backward",      "forward and other ops", "the DataLoader",
                                            "the optimizer", "communication",         "Python between ops"};
  for (const StepReport& st : x.steps) {
    if (st.lane == UINT32_MAX || st.event == kNoEvent) continue;
    const Lane& lane = s.lanes()[st.lane];
    Intervals covered;
    for (EventId id = lane.begin; id < lane.end; ++id) {
      const Event& e = s.event(id);
      if (e.start >= st.hostEndNs) break;
      if (e.parent != st.event || e.dur <= 0) continue;
      const std::string_view n = s.name(e);
      int k = 1;
      if (startsWith(n, "autograd::engine::evaluate_function"))
        k = 0;
      else if (isDataLoader(n))
        k = 2;
      else if (startsWith(n, "Optimizer."))
        k = 3;
      else if (startsWith(n, "c10d::") || startsWith(n, "gloo:") || startsWith(n, "record_param_comms") ||
               startsWith(n, "nccl:"))
        k = 4;
      const int64_t a = std::max(e.start, st.hostStartNs), b = std::min(e.end(), st.hostEndNs);
      if (b <= a) continue;
      parts[k] += b - a;
      covered.emplace_back(a, b);
    }
    int64_t busy = 0;
    for (const auto& [a, b] : merged(std::move(covered))) busy += b - a;
    parts[5] += std::max<int64_t>(0, st.hostNs() - busy);
  }
  std::vector<std::pair<std::string, int64_t>> out;
  for (int k = 0; k < 6; ++k)
    if (parts[k] > 0) out.emplace_back(kNames[k], parts[k]);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

// The rules, in the order a moment is blamed (the first that holds takes it).
enum Rule : int {
  kStarved,      // a compute kernel runs, nothing is queued behind it and the host is dispatching, not
                 // blocked: the host, not the device, sets the pace          -> launch_bound
  kCompute,      // a compute kernel runs on a device                         -> gpu_compute
  kComm,         // a collective runs, no compute beside it                   -> communication
  kCopyWaited,   // a device copy runs while the host is blocked in a copy    -> blocking_copy
  kDeviceOther,  // a copy or memset runs                                     -> gpu_compute
  kSetup,        // the host in a one-time set-up call                        -> one_time_setup
  kAlloc,        // the host in cudaFree/cudaMalloc/...                        -> allocator
  kCopy,         // the host in a copy call                                    -> blocking_copy
  kQueuedComm,   // work already queued (a collective next): a device waits   -> communication
  kQueued,       // work already queued, nothing runs: the device waits on a dependency the trace
                 // does not show, or the trace's clocks disagree             -> little_work
  kSync,         // the host in a synchronize                                  -> explicit_sync
  kSyncDrained,  // the device idle from a synchronize's return until its next work starts: the sync
                 // emptied the queue, so nothing ran while the host launched again (but for the
                 // host's own compute and the DataLoader, which hold that time) -> explicit_sync
  kCapture,      // the host capturing or instantiating a graph                -> graph_capture
  kLoader,       // the host in the DataLoader                                 -> data_loader
  kDispatch,     // the host in an op that launches device work, or a launch   -> launch_bound
  kHostOther,    // the host in an op that launches nothing, or Python         -> host_compute
  kRuleCount
};

constexpr Cause kRuleCause[kRuleCount] = {
    Cause::LaunchBound,   Cause::GpuCompute,   Cause::Communication, Cause::BlockingCopy,
    Cause::GpuCompute,    Cause::OneTimeSetup, Cause::Allocator,     Cause::BlockingCopy,
    Cause::Communication, Cause::LittleWork,   Cause::ExplicitSync,  Cause::ExplicitSync,
    Cause::GraphCapture,  Cause::DataLoader,   Cause::LaunchBound,   Cause::HostCompute};
// The rule a blocking call of each kind feeds (CallKind order; Other is dispatch or host work, by length).
constexpr Rule kCallRule[] = {kAlloc, kCopy, kSync, kCapture};
// Rules up to this one are the device's (busy time); the rest blame an idle device on the host.
constexpr int kLastDeviceRule = 4;  // kDeviceOther

struct RuleEvents {
  Intervals cover;              // merged
  std::vector<EventId> events;  // what made it (for evidence)
  Intervals spans;              // the stretch each of them put in (a queued kernel's: launch to start)
};

// One-time set-up calls: a runtime/driver call of 1 ms or more that its own later calls show to be a
// first use: among the first three calls of its name, and either the name has at most three calls
// or the call took 20x the median of the name's other calls; or, for a launch-like call, 100x the
// median anywhere (a lazy module load on a later first use). Synchronizes and copies are waits on
// the device or on memory, never set-up: a long copy is a copy, however rare; a graph's capture and
// instantiation are graph_capture, however early.
std::vector<bool> setupCalls(const EventStore& s) {
  std::unordered_map<uint32_t, std::vector<EventId>> byName;
  for (EventId id = 0; id < s.events().size(); ++id) {
    const Event& e = s.event(id);
    if (e.family == Family::CudaRuntime || e.family == Family::CudaDriver) byName[e.name].push_back(id);
  }
  std::vector<bool> out(s.events().size(), false);
  constexpr int64_t kMinNs = 1'000'000;
  for (auto& [name, ids] : byName) {
    const CallKind kind = callKind(s.strings().view(name));
    if (kind == CallKind::Sync || kind == CallKind::Copy || kind == CallKind::Capture) continue;
    std::sort(ids.begin(), ids.end(), [&](EventId a, EventId b) { return s.event(a).start < s.event(b).start; });
    std::vector<int64_t> durs;
    for (EventId id : ids) durs.push_back(s.event(id).dur);
    std::vector<int64_t> sorted = durs;
    std::sort(sorted.begin(), sorted.end());
    const int64_t median = sorted[sorted.size() / 2];
    for (size_t i = 0; i < ids.size(); ++i) {
      const int64_t d = durs[i];
      if (d < kMinNs) continue;
      const bool early = i < 3;
      const bool outlier = kind == CallKind::Other && ids.size() >= 10 && d >= 100 * std::max<int64_t>(median, 1);
      if ((early && (ids.size() <= 3 || d >= 20 * std::max<int64_t>(median, 1))) || outlier) out[ids[i]] = true;
    }
  }
  return out;
}

}  // namespace

Diagnosis diagnose(const EventStore& s, const Explanation& x) {
  Diagnosis d;
  const auto& events = s.events();
  // Steps: ProfilerStep#N or the engine's; else the whole trace.
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> windows;
  std::vector<std::pair<int64_t, int64_t>> hostWindows;  // each window's own host window
  if ((x.stepSource == "profiler_steps" || x.stepSource == "engine") && !x.steps.empty()) {
    d.stepSource = x.stepSource;
    // A ProfilerStep completes when its host window has closed and the GPU work it launched has
    // ended; its window runs from the previous step's completion (or its own start, if later) to
    // its own. With the host ahead of the device, the host windows are a sliver of the time and
    // the work they launched runs after them: the steps' time is the device's. (The engine's steps
    // are parts of one call, whose work spills into the next by design: their host windows stay.)
    int64_t completed = INT64_MIN;
    for (const StepReport& st : x.steps) {
      int64_t a = st.hostStartNs, b = st.hostEndNs;
      if (x.stepSource == "profiler_steps") {
        a = std::max(a, completed);
        b = std::max({b, st.gpuEndNs, completed});
        completed = b;
      }
      windows.push_back({st.name, {a, b}});
      hostWindows.emplace_back(st.hostStartNs, st.hostEndNs);
    }
  } else {
    d.stepSource = "whole_trace";
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const Event& e : events) {
      if (e.family == Family::Memory || e.family == Family::CpuInstant || e.family == Family::Overhead) continue;
      if (e.dur <= 0 && !isGpuWork(e.family)) continue;
      // The profiler's own span ("PyTorch Profiler (0)") covers its start-up, not the program.
      if (e.family == Family::Other && startsWith(s.name(e), "PyTorch Profiler")) continue;
      lo = std::min(lo, e.start);
      hi = std::max(hi, e.end());
    }
    // Iterations from the optimizer: each ends where an Optimizer.step#... ends (two or more), the
    // first from the trace's start, the rest after the last one its own step, so that every piece of
    // work (the autograd thread's too) falls in a step.
    std::vector<int64_t> ends;
    for (const Event& e : events)
      if ((e.family == Family::UserAnnotation || e.family == Family::CpuOp) && e.dur > 0 &&
          startsWith(s.name(e), "Optimizer.step#"))
        ends.push_back(e.end());
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    if (lo < hi && ends.size() >= 2) {
      d.stepSource = "optimizer_steps";
      int64_t from = lo;
      for (size_t i = 0; i < ends.size(); ++i) {
        windows.push_back({"iteration " + std::to_string(i + 1), {from, ends[i]}});
        from = ends[i];
      }
      if (from < hi) windows.push_back({"after the last Optimizer.step", {from, hi}});
    } else if (lo < hi) {
      windows.push_back({"whole trace", {lo, hi}});
    }
  }

  // The rules' intervals over the whole trace.
  RuleEvents rules[kRuleCount];
  const std::vector<bool> setup = setupCalls(s);
  bool anyDevice = false;
  uint64_t kernels = 0;
  int64_t kernelNs = 0, shortKernelNs = 0;
  std::vector<int64_t> kernelDurs;
  int64_t gemmNs = 0, gemmTcNs = 0;
  // Launch calls per lane (sorted), to tell ops that launch device work from those that do not;
  // and the end of each correlation's first call, for queued work.
  std::unordered_map<uint32_t, std::vector<int64_t>> launchesByLane, eventSyncsByLane;
  Intervals linkedCompute;
  std::unordered_map<int64_t, int64_t> callEnd, callStart;
  std::unordered_map<int64_t, bool> correlationHasWork;
  for (const Event& e : events) {
    if (e.correlation == kNoId) continue;
    if (e.family == Family::CudaRuntime || e.family == Family::CudaDriver) {
      auto [st0, freshStart] = callStart.emplace(e.correlation, e.start);
      if (!freshStart) st0->second = std::min(st0->second, e.start);
      auto [it, fresh] = callEnd.emplace(e.correlation, e.end());
      if (!fresh) it->second = std::min(it->second, e.end());
    } else if (isGpuWork(e.family)) {
      correlationHasWork[e.correlation] = true;
    }
  }
  auto add = [&](Rule r, int64_t a, int64_t b, EventId id) {
    if (b <= a) return;
    rules[r].cover.emplace_back(a, b);
    rules[r].events.push_back(id);
    rules[r].spans.emplace_back(a, b);
  };
  struct NameFacts {
    WorkKind kind = WorkKind::Kernel;
    bool matrix = false;  // a GEMM or convolution kernel, by its name
    bool tensorCores = false;
  };
  std::unordered_map<uint32_t, NameFacts> facts;
  auto factsOf = [&](EventId id) -> const NameFacts& {
    const Event& e = events[id];
    auto [it, fresh] = facts.try_emplace(e.name);
    if (fresh) {
      const std::string_view n = s.name(e);
      it->second.kind = workKind(s, id);
      it->second.matrix = contains(n, "gemm") || contains(n, "Cijk") || contains(n, "conv") || contains(n, "xmma");
      it->second.tensorCores = usesTensorCores(n);
    }
    return it->second;
  };
  // MTIA (and other accelerators Kineto writes under their own category) run on lanes of a device
  // process ("MTIA 17"): its command-processor events are device work, but for the stream waits and
  // records and the runtime's synchronize mirrored there (the reader keeps no category for them: by name).
  std::vector<bool> deviceLane(s.lanes().size(), false);
  for (size_t l = 0; l < s.lanes().size(); ++l) deviceLane[l] = startsWith(s.lanes()[l].label, "MTIA ");
  // Each device's work (GPU lanes by device index, MTIA's lanes by device process), for the per-device
  // busy time; and what is open of each thread's graph capture (BeginCapture to EndCapture).
  std::map<int64_t, Intervals> deviceWork;
  std::unordered_map<uint32_t, int64_t> openCapture;
  Intervals backlog;  // device work launched before the first step
  std::unordered_map<uint32_t, int64_t>
      lastSync;  // per thread: the start of a synchronize with only allocator calls since
  for (EventId id = 0; id < events.size(); ++id) {
    const Event& e = events[id];
    if (e.family == Family::Other && e.lane < deviceLane.size() && deviceLane[e.lane]) {
      const std::string_view n = s.name(e);
      if (n != "event_wait" && n != "event_record" && n != "synchronize" && e.dur > 0) {
        anyDevice = true;
        add(kCompute, e.start, e.end(), id);
        deviceWork[s.lanes()[e.lane].pid].emplace_back(e.start, e.end());
      }
      continue;
    }
    if (isGpuWork(e.family)) {
      anyDevice = true;
      if (e.dur > 0) deviceWork[s.lanes()[e.lane].pid].emplace_back(e.start, e.end());
      // Work launched before the first step (a warm-up's, whose launch the profiler left out)
      // that runs inside the steps: the first step's backlog.
      if (!windows.empty() && e.dur > 0) {
        const auto launched = e.correlation == kNoId ? callStart.end() : callStart.find(e.correlation);
        if (launched == callStart.end() || launched->second < windows.front().second.first)
          backlog.emplace_back(e.start, e.end());
      }
      // What a kernel is depends on its name only: looked at once per name.
      const NameFacts& f = factsOf(id);
      if (e.family == Family::Kernel) {
        add(f.kind == WorkKind::Communication ? kComm : kCompute, e.start, e.end(), id);
        if (f.kind == WorkKind::Kernel) {
          ++kernels;
          kernelDurs.push_back(e.dur);
          kernelNs += e.dur;
          if (e.dur < 10'000) shortKernelNs += e.dur;
          if (f.matrix) {
            gemmNs += e.dur;
            if (f.tensorCores) gemmTcNs += e.dur;
          }
        }
      } else {
        add(kDeviceOther, e.start, e.end(), id);
        if (e.family == Family::GpuMemcpy) add(kCopyWaited, e.start, e.end(), id);  // intersected below
      }
      if (e.correlation != kNoId) {
        const auto it = callEnd.find(e.correlation);
        if (it != callEnd.end() && it->second < e.start)
          add(f.kind == WorkKind::Communication ? kQueuedComm : kQueued, it->second, e.start, id);
        // Only work whose launch is in the trace can tell a starved device (nothing queued) from a busy one.
        if (it != callEnd.end() && e.family == Family::Kernel && f.kind == WorkKind::Kernel)
          linkedCompute.emplace_back(e.start, e.end());
      }
      continue;
    }
    if (e.dur <= 0) continue;
    const std::string_view n = s.name(e);
    // Runtime calls: CUDA's and HIP's, and other accelerators' (MTIA's runtime: an event of its own
    // category on a host thread that carries a correlation id).
    const bool otherRuntime =
        e.family == Family::Other && e.correlation != kNoId && !(e.lane < deviceLane.size() && deviceLane[e.lane]);
    if (e.family == Family::CudaRuntime || e.family == Family::CudaDriver || otherRuntime) {
      // A capture, BeginCapture to EndCapture on one thread, is graph_capture whole: the kernels the
      // host "launches" meanwhile are recorded into the graph, not run. (Events are in time order
      // within a lane.)
      // torch.cuda.graph() begins a capture with a prologue: synchronize, gc.collect(), empty_cache()
      // (cudaFree of the cached blocks): a capture starts at the synchronize before it when the
      // thread launched no device work between them.
      if (callKind(n) == CallKind::Sync) {
        lastSync[e.lane] = e.start;
      } else if (contains(n, "BeginCapture")) {
        const auto prologue = lastSync.find(e.lane);
        openCapture.try_emplace(e.lane, prologue != lastSync.end() ? prologue->second : e.start);
      } else if (e.correlation != kNoId && correlationHasWork.count(e.correlation)) {
        lastSync.erase(e.lane);
      }
      if (contains(n, "EndCapture")) {
        if (const auto it = openCapture.find(e.lane); it != openCapture.end()) {
          add(kCapture, it->second, e.end(), id);
          openCapture.erase(it);
        }
      }
      if (setup[id]) {
        add(kSetup, e.start, e.end(), id);
        continue;
      }
      // A launch is microseconds of dispatch; a runtime call that works a millisecond or more on the
      // host (and is no first use) is host work of the runtime's, not launch overhead.
      const CallKind kind = callKind(n);
      const Rule rule =
          kind == CallKind::Other ? (e.dur >= kLongCallNs ? kHostOther : kDispatch) : kCallRule[static_cast<int>(kind)];
      add(rule, e.start, e.end(), id);
      if (e.correlation != kNoId && correlationHasWork.count(e.correlation)) launchesByLane[e.lane].push_back(e.start);
      if (contains(n, "EventSynchronize")) eventSyncsByLane[e.lane].push_back(e.start);
    }
  }
  for (auto& [lane, v] : launchesByLane) std::sort(v.begin(), v.end());
  for (auto& [lane, v] : eventSyncsByLane) std::sort(v.begin(), v.end());
  // A convolution that times candidates (event synchronizes inside it, two or more) is cuDNN's (or
  // MIOpen's) autotuning for a shape it has not seen: set-up, however often new shapes come.
  auto countIn = [](const std::unordered_map<uint32_t, std::vector<int64_t>>& byLane, const Event& e) {
    const auto it = byLane.find(e.lane);
    if (it == byLane.end()) return std::ptrdiff_t{0};
    return std::lower_bound(it->second.begin(), it->second.end(), e.end()) -
           std::lower_bound(it->second.begin(), it->second.end(), e.start);
  };
  Intervals autotune;
  std::vector<bool> hasChild(events.size(), false);
  for (const Event& e : events)
    if (e.parent != kNoEvent && e.parent < events.size()) hasChild[e.parent] = true;
  for (EventId id = 0; id < events.size(); ++id) {
    const Event& e = events[id];
    if (e.dur <= 0) continue;
    const std::string_view n = s.name(e);
    if ((e.family == Family::CpuOp || e.family == Family::UserAnnotation) && isDataLoader(n)) {
      add(kLoader, e.start, e.end(), id);
    } else if (e.family == Family::CpuOp && contains(n, "convolution") && countIn(eventSyncsByLane, e) >= 2) {
      add(kSetup, e.start, e.end(), id);
      autotune.emplace_back(e.start, e.end());
    } else if (e.family == Family::CpuOp) {
      const auto it = launchesByLane.find(e.lane);
      bool launches = false;
      if (it != launchesByLane.end()) {
        const auto first = std::lower_bound(it->second.begin(), it->second.end(), e.start);
        launches = first != it->second.end() && *first < e.end();
      }
      add(launches ? kDispatch : kHostOther, e.start, e.end(), id);
    } else if (e.family == Family::PythonFunction) {
      add(kHostOther, e.start, e.end(), id);
    } else if (e.family == Family::UserAnnotation && hasChild[id] && !isStepMark(n)) {
      // A record_function region with recorded work inside ("## forward ##", a module's scope): the
      // host is in the user's own code there, between its ops, even where no op is recorded.
      add(kHostOther, e.start, e.end(), id);
    }
  }
  for (auto& r : rules) r.cover = merged(std::move(r.cover));
  backlog = merged(std::move(backlog));
  // A capture holds its whole span, the synchronize and empty_cache of its prologue included.
  for (Rule r : {kSetup, kAlloc, kSync}) takeCovered(rules[r].cover, rules[kCapture].cover);
  // Drained: from each synchronize's return to the next device work's start, the device idles
  // because the sync emptied its queue; the host's own compute and the DataLoader keep theirs.
  {
    Intervals busy;
    for (const auto& [dev, iv] : deviceWork) busy.insert(busy.end(), iv.begin(), iv.end());
    busy = merged(std::move(busy));
    Intervals drained;
    for (size_t k = 0; k < rules[kSync].spans.size(); ++k) {
      const int64_t t = rules[kSync].spans[k].second;
      auto next = std::lower_bound(busy.begin(), busy.end(), std::make_pair(t, INT64_MIN));
      if (next != busy.begin() && std::prev(next)->second > t) continue;  // work still running at the return
      if (next == busy.end()) continue;
      drained.emplace_back(t, next->first);
      rules[kSyncDrained].events.push_back(rules[kSync].events[k]);
      rules[kSyncDrained].spans.emplace_back(t, next->first);
    }
    drained = merged(std::move(drained));
    takeCovered(drained, rules[kHostOther].cover);
    takeCovered(drained, rules[kLoader].cover);
    takeCovered(drained, rules[kCapture].cover);
    rules[kSyncDrained].cover = std::move(drained);
  }
  // A device copy counts as waited on only while a host thread is inside a copy call.
  rules[kCopyWaited].cover = intersected(rules[kCopyWaited].cover, rules[kCopy].cover);
  // Starved: compute runs with nothing queued behind it while the host dispatches and is not blocked.
  {
    Intervals starved = intersected(merged(std::move(linkedCompute)), rules[kDispatch].cover);
    Intervals queued = rules[kQueued].cover;
    queued.insert(queued.end(), rules[kQueuedComm].cover.begin(), rules[kQueuedComm].cover.end());
    takeCovered(starved, merged(std::move(queued)));
    for (Rule r : {kSetup, kAlloc, kCopy, kSync, kCapture, kLoader}) takeCovered(starved, rules[r].cover);
    rules[kStarved].cover = std::move(starved);
    rules[kStarved].events = rules[kDispatch].events;
    rules[kStarved].spans = rules[kDispatch].spans;
  }

  // The collectives that ran while compute ran beside them.
  for (auto& [dev, iv] : deviceWork) iv = merged(std::move(iv));
  const Intervals overlappedComm = intersected(rules[kComm].cover, rules[kCompute].cover);

  // Each step, moment by moment, in the rules' order; what each rule took, for the evidence.
  int64_t ruleNs[kRuleCount] = {};
  Intervals taken[kRuleCount];
  for (const auto& [name, w] : windows) {
    StepWaits st;
    st.name = name;
    st.startNs = w.first;
    st.endNs = w.second;
    const size_t k = d.steps.size();
    st.hostStartNs = k < hostWindows.size() ? hostWindows[k].first : w.first;
    st.hostEndNs = k < hostWindows.size() ? hostWindows[k].second : w.second;
    Intervals remaining{{w.first, w.second}};
    for (int r = 0; r < kRuleCount; ++r) {
      const int64_t ns = takeCovered(remaining, rules[r].cover, &taken[r]);
      const Cause c = anyDevice || r <= kLastDeviceRule ? kRuleCause[r] : Cause::CpuOnly;
      st.parts[static_cast<int>(c)] += ns;
      ruleNs[r] += ns;
      if (r <= kLastDeviceRule) st.deviceBusyNs += ns;
    }
    int64_t rest = 0;
    for (const auto& [a, b] : remaining) rest += b - a;
    st.parts[static_cast<int>(anyDevice ? Cause::LittleWork : Cause::CpuOnly)] += rest;
    // Per device: its busy time in the step; and the collectives' time that compute overlapped.
    const Intervals window{{w.first, w.second}};
    for (const auto& [dev, busy] : deviceWork) {
      int64_t ns = 0;
      for (const auto& [a, b] : intersected(busy, window)) ns += b - a;
      if (ns > 0) st.busyByDevice.emplace_back(dev, ns);
    }
    for (const auto& [a, b] : intersected(overlappedComm, window)) st.communicationOverlappedNs += b - a;
    d.wallNs += st.spanNs();
    d.steps.push_back(std::move(st));
  }

  // The first steps against the steady state: with three ProfilerSteps or more, a leading step longer than
  // 1.5x the median of the rest carries one-time work (module loading, autotuning, allocator growth,
  // DataLoader workers starting). What each of its parts holds above that part's median over the
  // rest moves to one_time_setup, at most the step's excess over the median step: the parts still
  // add up to the step.
  // Only iterations of one loop compare so (ProfilerStep#N, Optimizer.step); the engine's four steps
  // are four ops.
  if ((d.stepSource == "profiler_steps" || d.stepSource == "optimizer_steps") && d.steps.size() >= 3) {
    auto medianOf = [](std::vector<int64_t> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    for (size_t first = 0; first + 2 < d.steps.size(); ++first) {
      std::vector<int64_t> spans;
      for (size_t i = first + 1; i < d.steps.size(); ++i) spans.push_back(d.steps[i].spanNs());
      StepWaits& st = d.steps[first];
      const int64_t typical = medianOf(spans);
      // Device work launched before the profiled steps (a warm-up's backlog, running into the first
      // step) is that work's compute, not the step's one-time set-up: it is left out of the excess.
      int64_t backlogNs = 0;
      for (const auto& [a, b] : intersected(backlog, Intervals{{st.startNs, st.endNs}})) backlogNs += b - a;
      if ((st.spanNs() - backlogNs) * 2 <= typical * 3) break;
      int64_t budget = st.spanNs() - backlogNs - typical;
      for (int c = 0; c < kCauseCount && budget > 0; ++c) {
        if (c == static_cast<int>(Cause::OneTimeSetup)) continue;
        std::vector<int64_t> rest;
        for (size_t i = first + 1; i < d.steps.size(); ++i) rest.push_back(d.steps[i].parts[c]);
        const int64_t own = st.parts[c] - (c == static_cast<int>(Cause::GpuCompute) ? backlogNs : 0);
        const int64_t excess = std::min(budget, own - medianOf(std::move(rest)));
        if (excess <= 0) continue;
        st.parts[c] -= excess;
        st.parts[static_cast<int>(Cause::OneTimeSetup)] += excess;
        budget -= excess;
      }
    }
  }

  // Rank the causes by their time over every step.
  for (int c = 0; c < kCauseCount; ++c) {
    DiagnosedCause dc;
    dc.code = static_cast<Cause>(c);
    std::vector<int64_t> per;
    for (const StepWaits& st : d.steps) {
      per.push_back(st.parts[c]);
      dc.totalNs += st.parts[c];
      dc.steps += st.parts[c] > 0;
    }
    if (dc.totalNs <= 0) continue;
    // Causes under 3% of the wall time are listed apart (minor), never ranked among the causes.
    dc.share = d.wallNs > 0 ? static_cast<double>(dc.totalNs) / static_cast<double>(d.wallNs) : 0;
    dc.perStep = spreadOf(std::move(per));
    d.causes.push_back(std::move(dc));
  }
  std::stable_sort(d.causes.begin(), d.causes.end(),
                   [](const DiagnosedCause& a, const DiagnosedCause& b) { return a.totalNs > b.totalNs; });
  for (size_t i = 1; i < d.causes.size(); ++i) {
    if (d.causes[i].share >= kMinorShare) continue;
    d.minor.assign(d.causes.begin() + static_cast<std::ptrdiff_t>(i), d.causes.end());
    d.causes.resize(i);
    break;
  }

  // Evidence: the events behind each cause, by the time of the cause's they hold (their overlap with
  // what the cause's rules took), leaving out wrappers longer than half their step.
  int64_t longestStep = 0;
  for (const StepWaits& st : d.steps) longestStep = std::max(longestStep, st.spanNs());
  for (auto& t : taken) t = merged(std::move(t));
  for (int r = 0; r < kRuleCount; ++r) {
    const Cause c = anyDevice || r <= kLastDeviceRule ? kRuleCause[r] : Cause::CpuOnly;
    Intervals& m = d.moments[static_cast<int>(c)];
    m.insert(m.end(), taken[r].begin(), taken[r].end());
  }
  for (auto& m : d.moments) m = merged(std::move(m));
  auto heldBy = [&](const Intervals& pieces, std::pair<int64_t, int64_t> span) {
    const auto [a, b] = span;
    int64_t held = 0;
    auto it = std::lower_bound(pieces.begin(), pieces.end(), std::make_pair(a, INT64_MIN));
    if (it != pieces.begin()) --it;
    for (; it != pieces.end() && it->first < b; ++it)
      held += std::max<int64_t>(0, std::min(it->second, b) - std::max(it->first, a));
    return held;
  };
  std::sort(kernelDurs.begin(), kernelDurs.end());
  const int64_t kernelMedian = kernelDurs.empty() ? 0 : kernelDurs[kernelDurs.size() / 2];
  FixContext context = fixContext(s);
  for (EventId id : rules[kLoader].events)
    if (contains(s.name(events[id]), "MultiProcessingDataLoaderIter")) context.loaderWorkers = true;
  if (!anyDevice) {
    context.cpuParts = cpuStepParts(s, x);
    context.cpuLoaderNs = ruleNs[kLoader];
    for (const StepWaits& st : d.steps) context.cpuOnlyNs += st.parts[static_cast<int>(Cause::CpuOnly)];
  }
  if (anyDevice) {
    context.queuedCommNs = ruleNs[kQueuedComm];
    context.queuedIdleNs = ruleNs[kQueued];
    for (const auto& [a, b] : intersected(merged(std::move(autotune)), taken[kSetup])) context.autotuneNs += b - a;
    for (const StepWaits& st : d.steps) context.overlappedCommNs += st.communicationOverlappedNs;
  }
  auto describe = [&](DiagnosedCause& c) {
    std::vector<std::pair<int64_t, EventId>> held;
    for (int r = 0; r < kRuleCount; ++r) {
      const Cause rc = anyDevice || r <= kLastDeviceRule ? kRuleCause[r] : Cause::CpuOnly;
      if (rc != c.code || ruleNs[r] == 0) continue;
      for (size_t k = 0; k < rules[r].events.size(); ++k) {
        const EventId id = rules[r].events[k];
        const Event& e = events[id];
        // Ops and regions that wrap half a step say nothing; a long runtime call is the evidence itself.
        const bool container =
            e.family == Family::CpuOp || e.family == Family::UserAnnotation || e.family == Family::PythonFunction;
        if (container && e.dur * 2 > longestStep) continue;
        if (const int64_t h = heldBy(taken[r], rules[r].spans[k]); h > 0) held.emplace_back(h, id);
      }
    }
    // The top few only: a cause can hold hundreds of thousands of kernels.
    const size_t top = std::min<size_t>(held.size(), 16);
    std::partial_sort(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(top), held.end(),
                      [](const auto& a, const auto& b) { return a.first > b.first; });
    held.resize(top);
    std::vector<EventId> ev;
    for (const auto& [h, id] : held)
      if (std::find(ev.begin(), ev.end(), id) == ev.end() && ev.size() < 5) ev.push_back(id);
    c.evidence = std::move(ev);
    if (c.code == Cause::GpuCompute) {
      if (gemmNs > 0 && gemmTcNs == 0 && gemmNs * 5 >= c.totalNs) c.hints.push_back("fp32_no_tensor_cores");
      // Many small kernels: most kernels under 10 us and those short kernels a real part of the time.
      if (kernels >= 200 && kernelMedian > 0 && kernelMedian < 10'000 && shortKernelNs * 4 >= kernelNs)
        c.hints.push_back("many_small_kernels");
    }
    FixContext f = context;
    f.fp32 = std::find(c.hints.begin(), c.hints.end(), "fp32_no_tensor_cores") != c.hints.end();
    const CauseWords w = wordsFor(c.code, f);
    c.label = w.label;
    c.text = sentence(c, w, d.wallNs, d.steps.size());
    c.fix = w.fix;
  };
  for (DiagnosedCause& c : d.causes) describe(c);
  for (DiagnosedCause& c : d.minor) describe(c);
  if (!d.causes.empty()) {
    const DiagnosedCause& c = d.causes.front();
    d.headline = "What costs the most: " + c.text + (c.fix.empty() ? "" : " Fix: " + c.fix + ".");
  }
  return d;
}

namespace {

std::string causesJson(const std::vector<DiagnosedCause>& causes) {
  std::string out = "[";
  for (size_t i = 0; i < causes.size(); ++i) {
    const DiagnosedCause& c = causes[i];
    char share[32];
    std::snprintf(share, sizeof share, "%.6f", c.share);
    out += (i ? ", " : "") + std::string("{\"code\": ") + jsonString(causeCode(c.code)) +
           ", \"ns\": " + std::to_string(c.totalNs) + ", \"share\": " + share +
           ", \"per_step\": {\"median_ns\": " + std::to_string(std::llround(c.perStep.medianNs)) +
           ", \"p10_ns\": " + std::to_string(std::llround(c.perStep.p10Ns)) +
           ", \"p90_ns\": " + std::to_string(std::llround(c.perStep.p90Ns)) +
           "}, \"steps\": " + std::to_string(c.steps) + ", \"text\": " + jsonString(c.text) +
           ", \"fix\": " + jsonString(c.fix) + ", \"evidence\": [";
    for (size_t k = 0; k < c.evidence.size(); ++k) out += (k ? ", " : "") + std::to_string(c.evidence[k]);
    out += "], \"hints\": [";
    for (size_t k = 0; k < c.hints.size(); ++k) out += (k ? ", " : "") + jsonString(c.hints[k]);
    out += "]}";
  }
  return out + "]";
}

}  // namespace

std::vector<std::pair<Cause, int64_t>> causesDuring(const Diagnosis& d, const Intervals& when) {
  std::vector<std::pair<Cause, int64_t>> out;
  for (int c = 0; c < kCauseCount; ++c) {
    int64_t ns = 0;
    for (const auto& [a, b] : intersected(d.moments[c], when)) ns += b - a;
    if (ns > 0) out.emplace_back(static_cast<Cause>(c), ns);
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  return out;
}

bool blocksHost(Cause c) {
  return c == Cause::BlockingCopy || c == Cause::ExplicitSync || c == Cause::Allocator || c == Cause::DataLoader ||
         c == Cause::OneTimeSetup;
}

std::string causeLabel(Cause c) { return wordsFor(c, FixContext{}).label; }

Cause topCause(const StepWaits& st) {
  int top = 0;
  for (int c = 1; c < kCauseCount; ++c)
    if (st.parts[c] > st.parts[top]) top = c;
  return static_cast<Cause>(top);
}

std::string stepHeadline(const StepWaits& st) {
  if (st.spanNs() <= 0) return {};
  const int top = static_cast<int>(topCause(st));
  const std::string label = causeLabel(static_cast<Cause>(top));
  return "What cost " + st.name + " most: " + label + ", " + spanDurationText(st.parts[top]) + " of " +
         spanDurationText(st.spanNs()) + " (" +
         pct(static_cast<double>(st.parts[top]) / static_cast<double>(st.spanNs())) + ").";
}

const StepWaits* diagnosedStep(const Diagnosis& d, int64_t startNs, int64_t endNs) {
  for (const StepWaits& st : d.steps)
    if (st.hostStartNs == startNs && st.hostEndNs == endNs) return &st;
  return nullptr;
}

std::string diagnosisJson(const Diagnosis& d) {
  std::string out = "{\"step_source\": " + jsonString(d.stepSource) + ", \"wall_ns\": " + std::to_string(d.wallNs) +
                    ", \"headline\": " + jsonString(d.headline) + ", \"causes\": " + causesJson(d.causes) +
                    ", \"minor_causes\": " + causesJson(d.minor);
  out += ", \"steps\": [";
  for (size_t i = 0; i < d.steps.size(); ++i) {
    const StepWaits& st = d.steps[i];
    out += (i ? ", " : "") + std::string("{\"name\": ") + jsonString(st.name) +
           ", \"start_ns\": " + std::to_string(st.startNs) + ", \"end_ns\": " + std::to_string(st.endNs) +
           ", \"host_start_ns\": " + std::to_string(st.hostStartNs) +
           ", \"host_end_ns\": " + std::to_string(st.hostEndNs) +
           ", \"device_busy_ns\": " + std::to_string(st.deviceBusyNs) +
           ", \"communication_overlapped_ns\": " + std::to_string(st.communicationOverlappedNs) + ", \"devices\": [";
    for (size_t k = 0; k < st.busyByDevice.size(); ++k)
      out += (k ? ", " : "") + std::string("{\"device\": ") + std::to_string(st.busyByDevice[k].first) +
             ", \"busy_ns\": " + std::to_string(st.busyByDevice[k].second) + "}";
    out += "], \"parts\": {";
    for (int c = 0; c < kCauseCount; ++c)
      out += (c ? ", " : "") + jsonString(causeCode(static_cast<Cause>(c))) + ": " + std::to_string(st.parts[c]);
    out += "}}";
  }
  return out + "]}";
}

}  // namespace attnscope
