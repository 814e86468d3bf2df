#include "core/explain/diagnosis.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/explain/explanation.h"
#include "core/store/activity_index.h"
#include "core/store/intervals.h"
#include "core/text/duration.h"
#include "core/text/json_out.h"
#include "core/views/views.h"

namespace attnscope {

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

bool isDataLoader(std::string_view n) {
  return startsWith(n, "enumerate(DataLoader)") || contains(n, "DataLoaderIter");
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
  kCapture,      // the host capturing or instantiating a graph                -> graph_capture
  kLoader,       // the host in the DataLoader                                 -> data_loader
  kDispatch,     // the host in an op that launches device work, or a launch   -> launch_bound
  kHostOther,    // the host in an op that launches nothing, or Python         -> host_compute
  kRuleCount
};

constexpr Cause kRuleCause[kRuleCount] = {
    Cause::LaunchBound,  Cause::GpuCompute,   Cause::Communication, Cause::BlockingCopy,  Cause::GpuCompute,
    Cause::OneTimeSetup, Cause::Allocator,    Cause::BlockingCopy,  Cause::Communication, Cause::LittleWork,
    Cause::ExplicitSync, Cause::GraphCapture, Cause::DataLoader,    Cause::LaunchBound,   Cause::HostCompute};
// Rules up to this one are the device's (busy time); the rest blame an idle device on the host.
constexpr int kLastDeviceRule = 4;  // kDeviceOther

struct RuleEvents {
  Intervals cover;              // merged
  std::vector<EventId> events;  // what made it (for evidence)
};

// One-time set-up calls: a runtime/driver call of 1 ms or more that its own later calls show to be a
// first use: among the first three calls of its name, and either the name has at most three calls
// or the call took 20x the median of the name's other calls. Synchronizes are waits, never set-up.
std::vector<bool> setupCalls(const EventStore& s) {
  std::unordered_map<uint32_t, std::vector<EventId>> byName;
  for (EventId id = 0; id < s.events().size(); ++id) {
    const Event& e = s.event(id);
    if (e.family == Family::CudaRuntime || e.family == Family::CudaDriver) byName[e.name].push_back(id);
  }
  std::vector<bool> out(s.events().size(), false);
  constexpr int64_t kMinNs = 1'000'000;
  for (auto& [name, ids] : byName) {
    if (callKind(s.strings().view(name)) == CallKind::Sync) continue;
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
      // An outlier anywhere (a lazy module load on a later first use): 100x the name's median.
      const bool outlier = ids.size() >= 10 && d >= 100 * std::max<int64_t>(median, 1);
      if ((early && (ids.size() <= 3 || d >= 20 * std::max<int64_t>(median, 1))) || outlier) out[ids[i]] = true;
    }
  }
  return out;
}

CauseSpread spreadOf(std::vector<int64_t> v) {
  CauseSpread c;
  if (v.empty()) return c;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return static_cast<double>(v[lo]) + (pos - static_cast<double>(lo)) * static_cast<double>(v[hi] - v[lo]);
  };
  c.medianNs = at(0.5);
  c.p10Ns = at(0.1);
  c.p90Ns = at(0.9);
  return c;
}

std::string pct(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * share);
  return buf;
}

std::string sentence(const DiagnosedCause& c, const std::string& what, size_t steps) {
  std::string per = steps > 1 ? ", " + spanDurationText(std::llround(c.perStep.medianNs)) + " a step [p10 " +
                                    spanDurationText(std::llround(c.perStep.p10Ns)) + " - p90 " +
                                    spanDurationText(std::llround(c.perStep.p90Ns)) + "] over " +
                                    std::to_string(steps) + " steps"
                              : std::string();
  return what + ": " + spanDurationText(c.totalNs) + " (" + pct(c.share) + " of the wall time" + per + ")";
}

}  // namespace

Diagnosis diagnose(const EventStore& s, const ActivityIndex& index, const Explanation& x) {
  (void)index;
  Diagnosis d;
  const auto& events = s.events();
  // Steps: ProfilerStep#N or the engine's; else the whole trace.
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> windows;
  if ((x.stepSource == "profiler_steps" || x.stepSource == "engine") && !x.steps.empty()) {
    d.stepSource = x.stepSource;
    for (const StepReport& st : x.steps) windows.push_back({st.name, {st.hostStartNs, st.hostEndNs}});
  } else {
    d.stepSource = "whole_trace";
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const Event& e : events) {
      if (e.family == Family::Memory || e.family == Family::CpuInstant || e.family == Family::Overhead) continue;
      if (e.dur <= 0 && !isGpuWork(e.family)) continue;
      lo = std::min(lo, e.start);
      hi = std::max(hi, e.end());
    }
    if (lo < hi) windows.push_back({"whole trace", {lo, hi}});
  }

  // The rules' intervals over the whole trace.
  RuleEvents rules[kRuleCount];
  const std::vector<bool> setup = setupCalls(s);
  bool anyDevice = false;
  uint64_t kernels = 0;
  std::vector<int64_t> kernelDurs;
  int64_t gemmNs = 0, gemmTcNs = 0;
  // Launch calls per lane (sorted), to tell ops that launch device work from those that do not;
  // and the end of each correlation's first call, for queued work.
  std::unordered_map<uint32_t, std::vector<int64_t>> launchesByLane;
  Intervals linkedCompute;
  std::unordered_map<int64_t, int64_t> callEnd;
  for (EventId id = 0; id < events.size(); ++id) {
    const Event& e = events[id];
    if ((e.family == Family::CudaRuntime || e.family == Family::CudaDriver) && e.correlation != kNoId) {
      auto [it, fresh] = callEnd.emplace(e.correlation, e.end());
      if (!fresh) it->second = std::min(it->second, e.end());
    }
  }
  std::unordered_map<int64_t, bool> correlationHasWork;
  for (EventId id = 0; id < events.size(); ++id) {
    const Event& e = events[id];
    if (isGpuWork(e.family) && e.correlation != kNoId) correlationHasWork[e.correlation] = true;
  }
  auto add = [&](Rule r, int64_t a, int64_t b, EventId id) {
    if (b <= a) return;
    rules[r].cover.emplace_back(a, b);
    rules[r].events.push_back(id);
  };
  // MTIA (and other accelerators Kineto writes under their own category) run on lanes of a device
  // process ("MTIA 17"): its command-processor events are device work, but for the stream waits and
  // records and the runtime's synchronize mirrored there (the reader keeps no category for them: by name).
  std::vector<bool> deviceLane(s.lanes().size(), false);
  for (size_t l = 0; l < s.lanes().size(); ++l) deviceLane[l] = startsWith(s.lanes()[l].label, "MTIA ");
  for (EventId id = 0; id < events.size(); ++id) {
    const Event& e = events[id];
    if (e.family == Family::Other && e.lane < deviceLane.size() && deviceLane[e.lane]) {
      const std::string_view n = s.name(e);
      if (n != "event_wait" && n != "event_record" && n != "synchronize" && e.dur > 0) {
        anyDevice = true;
        add(kCompute, e.start, e.end(), id);
      }
      continue;
    }
    if (isGpuWork(e.family)) {
      anyDevice = true;
      if (e.family == Family::Kernel) {
        const WorkKind k = workKind(s, id);
        add(k == WorkKind::Communication ? kComm : kCompute, e.start, e.end(), id);
        if (k == WorkKind::Kernel) {
          ++kernels;
          kernelDurs.push_back(e.dur);
          const std::string_view n = s.name(e);
          if (contains(n, "gemm") || contains(n, "Cijk") || contains(n, "conv") || contains(n, "xmma")) {
            gemmNs += e.dur;
            if (usesTensorCores(n)) gemmTcNs += e.dur;
          }
        }
      } else {
        add(kDeviceOther, e.start, e.end(), id);
        if (e.family == Family::GpuMemcpy) add(kCopyWaited, e.start, e.end(), id);  // intersected below
      }
      if (e.correlation != kNoId) {
        const auto it = callEnd.find(e.correlation);
        if (it != callEnd.end() && it->second < e.start)
          add(workKind(s, id) == WorkKind::Communication ? kQueuedComm : kQueued, it->second, e.start, id);
        // Only work whose launch is in the trace can tell a starved device (nothing queued) from a busy one.
        if (it != callEnd.end() && e.family == Family::Kernel && workKind(s, id) == WorkKind::Kernel)
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
      if (setup[id]) {
        add(kSetup, e.start, e.end(), id);
        continue;
      }
      switch (callKind(n)) {
        case CallKind::Allocator:
          add(kAlloc, e.start, e.end(), id);
          break;
        case CallKind::Copy:
          add(kCopy, e.start, e.end(), id);
          break;
        case CallKind::Sync:
          add(kSync, e.start, e.end(), id);
          break;
        case CallKind::Capture:
          add(kCapture, e.start, e.end(), id);
          break;
        case CallKind::Other:
          // A launch is microseconds of dispatch; a runtime call that works a millisecond or more on
          // the host (and is no first use) is host work of the runtime's, not launch overhead.
          add(e.dur >= kLongCallNs ? kHostOther : kDispatch, e.start, e.end(), id);
          break;
      }
      if (e.correlation != kNoId && correlationHasWork.count(e.correlation)) launchesByLane[e.lane].push_back(e.start);
    }
  }
  for (auto& [lane, v] : launchesByLane) std::sort(v.begin(), v.end());
  for (EventId id = 0; id < events.size(); ++id) {
    const Event& e = events[id];
    if (e.dur <= 0) continue;
    const std::string_view n = s.name(e);
    if ((e.family == Family::CpuOp || e.family == Family::UserAnnotation) && isDataLoader(n)) {
      add(kLoader, e.start, e.end(), id);
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
    }
  }
  for (auto& r : rules) r.cover = merged(std::move(r.cover));
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
  }

  // Each step, moment by moment, in the rules' order.
  int64_t ruleNs[kRuleCount] = {};
  for (const auto& [name, w] : windows) {
    StepWaits st;
    st.name = name;
    st.startNs = w.first;
    st.endNs = w.second;
    Intervals remaining{{w.first, w.second}};
    for (int r = 0; r < kRuleCount; ++r) {
      const int64_t ns = takeCovered(remaining, rules[r].cover);
      const Cause c = anyDevice || r <= kLastDeviceRule ? kRuleCause[r] : Cause::CpuOnly;
      st.parts[static_cast<int>(c)] += ns;
      ruleNs[r] += ns;
      if (r <= kLastDeviceRule) st.deviceBusyNs += ns;
    }
    int64_t rest = 0;
    for (const auto& [a, b] : remaining) rest += b - a;
    st.parts[static_cast<int>(anyDevice ? Cause::LittleWork : Cause::CpuOnly)] += rest;
    d.wallNs += st.spanNs();
    d.steps.push_back(std::move(st));
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

  // Evidence: the longest events behind each cause's rules, inside the steps.
  auto inSteps = [&](const Event& e) {
    for (const auto& [n, w] : windows)
      if (e.start < w.second && e.end() > w.first) return true;
    return false;
  };
  std::sort(kernelDurs.begin(), kernelDurs.end());
  const int64_t kernelMedian = kernelDurs.empty() ? 0 : kernelDurs[kernelDurs.size() / 2];
  auto describe = [&](DiagnosedCause& c) {
    std::vector<EventId> ev;
    for (int r = 0; r < kRuleCount; ++r) {
      const Cause rc = anyDevice || r <= kLastDeviceRule ? kRuleCause[r] : Cause::CpuOnly;
      if (rc != c.code || ruleNs[r] == 0) continue;
      for (EventId id : rules[r].events)
        if (inSteps(events[id])) ev.push_back(id);
    }
    std::sort(ev.begin(), ev.end(), [&](EventId a, EventId b) { return events[a].dur > events[b].dur; });
    ev.erase(std::unique(ev.begin(), ev.end()), ev.end());
    if (ev.size() > 5) ev.resize(5);
    c.evidence = std::move(ev);
    const size_t n = d.steps.size();
    switch (c.code) {
      case Cause::GpuCompute:
        c.text = sentence(c, "the device was busy computing", n);
        if (gemmNs > 0 && gemmTcNs == 0 && gemmNs * 5 >= c.totalNs) c.hints.push_back("fp32_no_tensor_cores");
        if (kernels >= 200 && kernelMedian > 0 && kernelMedian < 10'000) c.hints.push_back("many_small_kernels");
        c.fix = std::find(c.hints.begin(), c.hints.end(), "fp32_no_tensor_cores") != c.hints.end()
                    ? "its matrix kernels run without Tensor Cores: bf16 autocast or TF32 "
                      "(torch.backends.cuda.matmul.allow_tf32 = True) speeds them up"
                    : "the device is the bottleneck: faster kernels (fused, lower precision) or less work";
        break;
      case Cause::Communication:
        c.text = sentence(c, "collectives ran with no compute beside them (exposed communication)", n);
        c.fix = "overlap communication with compute (DDP bucket_cap_mb, FSDP prefetch) or send less";
        break;
      case Cause::BlockingCopy:
        c.text = sentence(c, "the host was blocked in memory copies (pageable or device-to-host)", n);
        c.fix =
            "pin the host memory (pin_memory=True) and copy with non_blocking=True; avoid .item()/.cpu() in "
            "the loop";
        break;
      case Cause::ExplicitSync:
        c.text = sentence(c, "the host was blocked in synchronize calls while the device idled", n);
        c.fix = "remove the synchronizes from the step (torch.cuda.synchronize, .item(), printing tensors)";
        break;
      case Cause::Allocator:
        c.text = sentence(c, "the host was in the allocator (cudaFree/cudaMalloc) while the device idled", n);
        c.fix =
            "stop calling torch.cuda.empty_cache() in the loop; let the caching allocator keep its blocks "
            "(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)";
        break;
      case Cause::DataLoader:
        c.text = sentence(c, "the device waited while the host was in the DataLoader", n);
        c.fix = "load data in worker processes (DataLoader num_workers > 0, pin_memory=True, prefetch)";
        break;
      case Cause::LaunchBound:
        c.text = sentence(c,
                          "the host dispatching ops and launches set the pace (the device idled, or ran with nothing "
                          "queued behind it): launch-bound",
                          n);
        c.fix = "fewer, larger kernels: torch.compile, CUDA graphs, larger batches";
        break;
      case Cause::HostCompute:
        c.text = sentence(c, "the device waited while the host ran CPU work that launches nothing", n);
        c.fix = "move that CPU work off the step's critical path (or onto the device)";
        break;
      case Cause::GraphCapture:
        c.text = sentence(c, "the host was capturing or instantiating graphs while the device idled", n);
        c.fix = "capture once and replay; keep capture out of the measured steps";
        break;
      case Cause::OneTimeSetup:
        c.text = sentence(c, "first-use set-up (context creation, library loading, a first huge cudaFree)", n);
        c.fix = "warm up before profiling (torch.profiler schedule with wait/warmup steps)";
        break;
      case Cause::CpuOnly:
        c.text = sentence(c, "no device activity in the trace: a CPU-only profile", n);
        c.fix = "";
        break;
      case Cause::LittleWork:
        c.text = sentence(c,
                          "the device idled and the host recorded nothing (little work in the trace, or work queued "
                          "behind a dependency the trace does not show)",
                          n);
        c.fix = "";
        break;
      case Cause::Count:
        break;
    }
  };
  for (DiagnosedCause& c : d.causes) describe(c);
  for (DiagnosedCause& c : d.minor) describe(c);
  if (!d.causes.empty()) {
    const DiagnosedCause& c = d.causes.front();
    d.headline = "Most of the time: " + c.text + (c.fix.empty() ? "." : ". Fix: " + c.fix + ".");
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

std::string diagnosisJson(const EventStore& s, const Diagnosis& d) {
  (void)s;
  std::string out = "{\"step_source\": " + jsonString(d.stepSource) + ", \"wall_ns\": " + std::to_string(d.wallNs) +
                    ", \"headline\": " + jsonString(d.headline) + ", \"causes\": " + causesJson(d.causes) +
                    ", \"minor_causes\": " + causesJson(d.minor);
  out += ", \"steps\": [";
  for (size_t i = 0; i < d.steps.size(); ++i) {
    const StepWaits& st = d.steps[i];
    out += (i ? ", " : "") + std::string("{\"name\": ") + jsonString(st.name) +
           ", \"start_ns\": " + std::to_string(st.startNs) + ", \"end_ns\": " + std::to_string(st.endNs) +
           ", \"device_busy_ns\": " + std::to_string(st.deviceBusyNs) + ", \"parts\": {";
    for (int c = 0; c < kCauseCount; ++c)
      out += (c ? ", " : "") + jsonString(causeCode(static_cast<Cause>(c))) + ": " + std::to_string(st.parts[c]);
    out += "}}";
  }
  return out + "]}";
}

}  // namespace attnscope
