// The rules' intervals over the whole trace: for each rule (diagnosis_internal.h), the moments it
// holds and the events that make them. diagnosis.cpp then gives each step's moments to the first rule
// that holds them.
#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>

#include "core/explain/diagnosis_internal.h"
#include "core/explain/explanation.h"
#include "core/store/device_activity.h"
#include "core/store/parallel_sort.h"
#include "core/store/span_log.h"
#include "core/store/spill.h"
#include "core/store/threads.h"
#include "core/views/views.h"

namespace attnscope::diag {

const Cause kRuleCause[kRuleCount] = {
    Cause::LaunchBound,  Cause::GpuCompute,   Cause::Communication, Cause::BlockingCopy,  Cause::GpuCompute,
    Cause::OneTimeSetup, Cause::Allocator,    Cause::BlockingCopy,  Cause::Communication, Cause::LittleWork,
    Cause::ExplicitSync, Cause::ExplicitSync, Cause::GraphCapture,  Cause::DataLoader,    Cause::LaunchBound,
    Cause::HostCompute,  Cause::HostCompute};

Cause causeOfRule(int rule, bool anyDevice) {
  return anyDevice || rule <= kLastDeviceRule ? kRuleCause[rule] : Cause::CpuOnly;
}

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

bool isStepMark(std::string_view n) { return startsWith(n, "ProfilerStep#"); }

bool isDataLoader(std::string_view n) {
  return startsWith(n, "enumerate(DataLoader)") || contains(n, "DataLoaderIter");
}

namespace {

constexpr int64_t kLongCallNs = 1'000'000;
// By correlation id: its calls' earliest start and earliest end, and whether GPU work carries it. Dense
// ids (CUPTI counts them from 1) live in flat arrays; others (a generated or a hostile trace's) in one
// open-addressed table, sized from the events that carry an id (node maps took 71 ms to build and 47 ms
// to free for the 1 GB generated trace's 182,000 ids, on the rules' path; one array is freed at once).
class CorrTable {
 public:
  explicit CorrTable(const EventStore& s) {
    int64_t maxId = 0;
    size_t carried = 0, notPositive = 0;  // events that carry an id; of them, ids 0 and below
    for (const Event& e : s.events()) {
      maxId = std::max(maxId, e.correlation);
      if (e.correlation == kNoId || !counted(e)) continue;
      ++carried;
      notPositive += e.correlation <= 0;
    }
    dense_ = maxId > 0 && maxId <= 4 * static_cast<int64_t>(s.events().size()) + 1024;
    if (dense_) {
      start_.assign(static_cast<size_t>(maxId) + 1, INT64_MAX);
      end_.assign(static_cast<size_t>(maxId) + 1, INT64_MAX);
      work_.assign(static_cast<size_t>(maxId) + 1, false);
    }
    // The ids the arrays do not hold: at most 4 of 5 slots taken, even if each event had an id of its own.
    const size_t outside = dense_ ? notPositive : carried;
    size_t slots = 16;
    shift_ = 60;
    while (slots < outside + outside / 4 + 16) {
      slots *= 2;
      --shift_;
    }
    slots_.assign(slots, Slot{});
    mask_ = slots - 1;
    for (const Event& e : s.events()) {
      if (e.correlation == kNoId) continue;
      if (e.family == Family::CudaRuntime || e.family == Family::CudaDriver) {
        if (inDense(e.correlation)) {
          int64_t& a = start_[static_cast<size_t>(e.correlation)];
          int64_t& b = end_[static_cast<size_t>(e.correlation)];
          a = std::min(a, e.start);
          b = std::min(b, e.end());
        } else {
          Slot& t = slot(e.correlation);
          t.start = std::min(t.start, e.start);
          t.end = std::min(t.end, e.end());
        }
      } else if (isGpuWork(e.family)) {
        if (inDense(e.correlation))
          work_[static_cast<size_t>(e.correlation)] = true;
        else
          slot(e.correlation).work = true;
      }
    }
  }
  // The correlation's calls' earliest start and end; false when no call carries it.
  bool call(int64_t c, int64_t* start, int64_t* end) const {
    if (c == kNoId) return false;
    int64_t a = INT64_MAX, b = INT64_MAX;
    if (inDense(c)) {
      a = start_[static_cast<size_t>(c)];
      b = end_[static_cast<size_t>(c)];
    } else if (const Slot* t = find(c)) {
      a = t->start;
      b = t->end;
    }
    if (a == INT64_MAX) return false;
    *start = a;
    *end = b;
    return true;
  }
  bool hasWork(int64_t c) const {
    if (c == kNoId) return false;
    if (inDense(c)) return work_[static_cast<size_t>(c)];
    const Slot* t = find(c);
    return t != nullptr && t->work;
  }

 private:
  struct Slot {
    int64_t key = kEmpty;
    int64_t start = INT64_MAX, end = INT64_MAX;  // INT64_MAX: no call carries it
    bool work = false;
  };
  static constexpr int64_t kEmpty = INT64_MIN;
  static bool counted(const Event& e) {
    return e.family == Family::CudaRuntime || e.family == Family::CudaDriver || isGpuWork(e.family);
  }
  bool inDense(int64_t c) const { return dense_ && c > 0 && static_cast<size_t>(c) < start_.size(); }
  // The product's top bits (Fibonacci hashing): ids that are multiples of a large power of two spread too.
  size_t home(int64_t c) const {
    return static_cast<size_t>((static_cast<uint64_t>(c) * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  Slot& slot(int64_t c) {
    if (c == kEmpty) return lowest_;  // the one id the table cannot hold
    size_t i = home(c);
    while (slots_[i].key != kEmpty && slots_[i].key != c) i = (i + 1) & mask_;
    slots_[i].key = c;
    return slots_[i];
  }
  const Slot* find(int64_t c) const {
    if (c == kEmpty) return &lowest_;
    for (size_t i = home(c);; i = (i + 1) & mask_) {
      if (slots_[i].key == c) return &slots_[i];
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }
  bool dense_ = false;
  std::vector<int64_t> start_, end_;
  std::vector<bool> work_;
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  unsigned shift_ = 60;  // 64 less the slots' bits
  Slot lowest_;
};

// A launch that capture_begin makes before BeginCapture: the RNG state's seed and offset filled
// (aten::fill_ or aten::zero_ around it).
bool capturePrologueLaunch(const EventStore& s, EventId launch) {
  const EventId op = innermostCpuOp(s, launch);
  if (op == kNoEvent) return false;
  const std::string_view n = s.name(s.event(op));
  return n == "aten::fill_" || n == "aten::zero_";
}

// The rule a blocking call of each kind feeds (CallKind order; Other is dispatch or host work, by length).

constexpr Rule kCallRule[] = {kAlloc, kCopy, kSync, kCapture};

struct Builder {
  const EventStore& s;
  RuleSet& r;
  void add(Rule rule, int64_t a, int64_t b, EventId id) {
    if (b <= a) return;
    r.rules[rule].cover.emplace_back(a, b);
    r.rules[rule].events.push_back(id);
    r.rules[rule].spans.emplace_back(a, b);
  }
};

// The step's own thread between two of its recorded events (its direct children: ops, regions, Python
// frames, runtime calls), with nothing recorded there: the host runs code the profiler does not see.
// A ProfilerStep's own span bounds it too, where its thread records ops of its own in it: from its
// start to its first child and from its last child to its end the host is in the loop's body (the
// script's code before prof.step()). So does an optimizer iteration's start, the end of the previous
// Optimizer.step. (A step whose thread records no op, a region at most, shows no loop running there:
// its edges stay unexplained.) Steps with no thread of their own (whole trace, optimizer iterations)
// use the thread with the most top-level op time.
void hostGaps(const EventStore& s, const Windows& w, Builder& b) {
  uint32_t mainLane = UINT32_MAX;
  bool needMain = false;
  for (const Window& win : w.list) needMain |= win.lane == UINT32_MAX;
  if (needMain) {
    std::unordered_map<uint32_t, int64_t> opNs;
    for (const Event& e : s.events())
      if (e.family == Family::CpuOp && e.parent == kNoEvent && e.dur > 0) opNs[e.lane] += e.dur;
    int64_t best = 0;
    for (const auto& [lane, ns] : opNs)
      if (ns > best || (ns == best && lane < mainLane)) best = ns, mainLane = lane;
  }
  for (const Window& win : w.list) {
    const uint32_t laneId = win.lane != UINT32_MAX ? win.lane : mainLane;
    if (laneId == UINT32_MAX) continue;
    const EventId owner = win.lane != UINT32_MAX ? win.event : kNoEvent;
    const auto [first, last] = s.visibleRange(laneId, win.hostStartNs, win.hostEndNs);
    // Where the window's start is a recorded event's edge (its step's start; the previous iteration's
    // Optimizer.step end), the host is known to be in the loop from there.
    const bool ownSpan = owner != kNoEvent;
    const bool afterOptimizer = w.source == "optimizer_steps" && &win != &w.list.front();
    int64_t reached = afterOptimizer ? win.hostStartNs : INT64_MIN;
    bool ownOps = false;
    for (EventId id = first; id < last && ownSpan && !ownOps; ++id)
      ownOps = s.event(id).family == Family::CpuOp && s.event(id).start >= win.hostStartNs;
    if (ownOps) reached = win.hostStartNs;
    // Each stretch is cited by the event it follows (the step's own annotation at its start), so the
    // evidence can say where the untraced code ran.
    EventId before = ownOps ? owner : kNoEvent;
    for (EventId id = first; id < last; ++id) {
      const Event& e = s.event(id);
      if (e.parent != owner || e.dur <= 0 || id == owner) continue;
      if (e.start < win.hostStartNs || e.start >= win.hostEndNs) continue;
      if (e.family == Family::Memory || e.family == Family::CpuInstant || e.family == Family::Overhead) continue;
      if (reached != INT64_MIN && e.start > reached)
        b.add(kHostGap, reached, e.start, before != kNoEvent ? before : id);
      if (std::min(e.end(), win.hostEndNs) >= reached) before = id;
      reached = std::max(reached, std::min(e.end(), win.hostEndNs));
    }
    if (ownOps && reached < win.hostEndNs) b.add(kHostGap, reached, win.hostEndNs, before);
  }
}

}  // namespace

namespace {

// Their events in this many groups of whole lanes (more groups than threads: the helpers share them as
// they come free).
constexpr unsigned kRuleGroups = 16;

// What one group of whole lanes adds: its rules' events (those of the first pass, then from
// secondPass[rule] those of the second), device work, backlog, counters and autotuned ops.
struct LanePart {
  RuleSet out;
  size_t secondPass[kRuleCount] = {};
  std::vector<int64_t> kernelDurs;
  Intervals linkedCompute;
};

}  // namespace

RuleSet buildRules(const EventStore& s, const Explanation& x, const Windows& w, Helpers* helpers) {
  (void)x;
  RuleSet out;
  auto& rules = out.rules;
  const auto& events = s.events();
  // A large trace's rules are built on the threads free to help: the set-up kinds
  // beside the correlation table, then the events in groups of whole lanes, merged in event order.
  const bool parallel = helpers && events.size() >= parallelMinEvents(kParallelRuleEvents) && s.lanes().size() >= 2;
  std::optional<CorrTable> corrTable;
  auto setupAndCorr = [&](size_t i) {
    if (i == 0)
      out.setup = setupKinds(s);
    else
      corrTable.emplace(s);
  };
  std::optional<spans::Span> sp0(std::in_place, "rules: set-up kinds, correlations");
  if (parallel)
    helpers->forEach(2, setupAndCorr);
  else
    for (size_t i = 0; i < 2; ++i) setupAndCorr(i);
  const CorrTable& corr = *corrTable;
  // A counter-profiling trace ran on a device, though none of its activity is timed.
  out.anyDevice = s.profilerRangeEvents() > 0;
  std::vector<bool> deviceLane(s.lanes().size(), false);
  for (size_t l = 0; l < s.lanes().size(); ++l) deviceLane[l] = isAcceleratorLane(s.lanes()[l]);
  const int64_t firstStart = w.list.empty() ? INT64_MIN : w.list.front().startNs;

  // Events [from, to), whole lanes: the first pass (device work and runtime calls), then the second
  // (host ops and frames, which read the first pass's launches on their own lane). Every lane's state
  // (its launches, capture, last synchronize) stays in its own group.
  auto scan = [&](EventId from, EventId to, LanePart& part) {
    RuleSet& o = part.out;
    Builder b{s, o};
    // Launch calls per lane (sorted), to tell ops that launch device work from those that do not.
    std::unordered_map<uint32_t, std::vector<int64_t>> launchesByLane, eventSyncsByLane;
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
    // What a host event is depends on its name only: looked at once per name.
    struct HostName {
      CallKind kind = CallKind::Other;
      bool beginCapture = false, endCapture = false, eventSync = false, loader = false, convolution = false,
           stepMark = false;
    };
    std::unordered_map<uint32_t, HostName> hostNames;
    auto hostName = [&](const Event& e) -> const HostName& {
      auto [it, fresh] = hostNames.try_emplace(e.name);
      if (fresh) {
        const std::string_view n = s.name(e);
        it->second = {callKind(n),
                      contains(n, "BeginCapture"),
                      contains(n, "EndCapture"),
                      contains(n, "EventSynchronize"),
                      isDataLoader(n),
                      contains(n, "convolution"),
                      isStepMark(n)};
      }
      return it->second;
    };
    // What is open of each thread's graph capture (BeginCapture to EndCapture).
    std::unordered_map<uint32_t, int64_t> openCapture;
    std::unordered_map<uint32_t, int64_t>
        lastSync;  // per thread: the start of a synchronize with only allocator calls since
    for (EventId id = from; id < to; ++id) {
      const Event& e = events[id];
      if (isDeviceWork(s, e)) {
        o.anyDevice = true;
        if (e.dur > 0) o.deviceWork[s.lanes()[e.lane].pid].emplace_back(e.start, e.end());
        // Work launched before the first step (a warm-up's, whose launch the profiler left out)
        // that runs inside the steps: the first step's backlog.
        if (!w.list.empty() && e.dur > 0 && isGpuWork(e.family)) {
          int64_t launched = 0, unused = 0;
          if (!corr.call(e.correlation, &launched, &unused) || launched < firstStart)
            o.backlog.emplace_back(e.start, e.end());
        }
        if (!isGpuWork(e.family)) {  // an accelerator's work (MTIA): compute, its DMA transfers copies
          b.add(isAcceleratorCopy(s.name(e)) ? kDeviceOther : kCompute, e.start, e.end(), id);
          continue;
        }
        // What a kernel is depends on its name only: looked at once per name.
        const NameFacts& f = factsOf(id);
        if (e.family == Family::Kernel) {
          b.add(f.kind == WorkKind::Communication ? kComm : kCompute, e.start, e.end(), id);
          if (f.kind == WorkKind::Kernel) {
            ++o.kernels;
            part.kernelDurs.push_back(e.dur);
            o.kernelNs += e.dur;
            if (e.dur < 10'000) o.shortKernelNs += e.dur;
            if (f.matrix) {
              o.gemmNs += e.dur;
              if (f.tensorCores) o.gemmTcNs += e.dur;
            }
          }
        } else {
          b.add(kDeviceOther, e.start, e.end(), id);
          if (e.family == Family::GpuMemcpy) b.add(kCopyWaited, e.start, e.end(), id);  // intersected below
        }
        if (e.correlation != kNoId) {
          int64_t callStart = 0, callEnd = 0;
          const bool called = corr.call(e.correlation, &callStart, &callEnd);
          if (called && callEnd < e.start)
            b.add(f.kind == WorkKind::Communication ? kQueuedComm : kQueued, callEnd, e.start, id);
          // Only work whose launch is in the trace can tell a starved device (nothing queued) from a busy one.
          if (called && e.family == Family::Kernel && f.kind == WorkKind::Kernel) {
            part.linkedCompute.emplace_back(e.start, e.end());
            ++o.launchedKernels;
            o.kernelsInLaunch += callStart <= e.start && e.end() <= callEnd;
          }
        }
        continue;
      }
      if (e.dur <= 0) continue;
      if (e.family == Family::Other && e.lane < deviceLane.size() && deviceLane[e.lane]) continue;
      // Runtime calls: CUDA's and HIP's, and other accelerators' (MTIA's runtime: an event of its own
      // category on a host thread that carries a correlation id).
      const bool otherRuntime = e.family == Family::Other && e.correlation != kNoId;
      if (e.family == Family::CudaRuntime || e.family == Family::CudaDriver || otherRuntime) {
        const HostName& hn = hostName(e);
        // A capture, BeginCapture to EndCapture on one thread, is graph_capture whole: the kernels the
        // host "launches" meanwhile are recorded into the graph, not run. (Events are in time order
        // within a lane.) torch.cuda.graph() begins a capture with a prologue: synchronize, gc.collect(),
        // empty_cache() (cudaFree of the cached blocks), then capture_begin, which registers the RNG
        // generator with the graph (allocates its seed and offset tensors, cudaMalloc after the
        // empty_cache, and fills them: two fill_ kernels). A capture starts at the synchronize before
        // it when the thread launched no other device work between them.
        if (hn.kind == CallKind::Sync) {
          lastSync[e.lane] = e.start;
        } else if (hn.beginCapture) {
          const auto prologue = lastSync.find(e.lane);
          openCapture.try_emplace(e.lane, prologue != lastSync.end() ? prologue->second : e.start);
        } else if (corr.hasWork(e.correlation) && lastSync.count(e.lane) > 0 && !capturePrologueLaunch(s, id)) {
          lastSync.erase(e.lane);
        }
        if (hn.endCapture) {
          if (const auto it = openCapture.find(e.lane); it != openCapture.end()) {
            // The capture's span holds the call itself (its evidence: one capture, not a call and a capture).
            b.add(kCapture, it->second, e.end(), id);
            openCapture.erase(it);
            continue;
          }
        }
        // (A first-use launch still launches: the op around it dispatches device work.)
        if (corr.hasWork(e.correlation)) launchesByLane[e.lane].push_back(e.start);
        if (out.setup[id] != SetupKind::None) {
          b.add(kSetup, e.start, e.end(), id);
          continue;
        }
        // A launch is microseconds of dispatch; a runtime call that works a millisecond or more on the
        // host (and is no first use) is host work of the runtime's, not launch overhead.
        const CallKind kind = hn.kind;
        const Rule rule = kind == CallKind::Other ? (e.dur >= kLongCallNs ? kHostOther : kDispatch)
                                                  : kCallRule[static_cast<int>(kind)];
        b.add(rule, e.start, e.end(), id);
        if (hn.eventSync) eventSyncsByLane[e.lane].push_back(e.start);
      }
    }
    for (int r = 0; r < kRuleCount; ++r) part.secondPass[r] = o.rules[r].events.size();
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
    // (An event's parent is on its lane: in this group.)
    std::vector<uint8_t> hasChild(to - from, 0);
    for (EventId id = from; id < to; ++id) {
      const EventId p = events[id].parent;
      if (p != kNoEvent && p >= from && p < to) hasChild[p - from] = 1;
    }
    for (EventId id = from; id < to; ++id) {
      const Event& e = events[id];
      if (e.dur <= 0) continue;
      const bool cpu =
          e.family == Family::CpuOp || e.family == Family::UserAnnotation || e.family == Family::PythonFunction;
      if (!cpu) continue;
      const HostName& hn = hostName(e);
      if (cpu && out.setup[id] == SetupKind::Compile) {
        b.add(kSetup, e.start, e.end(), id);
      } else if ((e.family == Family::CpuOp || e.family == Family::UserAnnotation) && hn.loader) {
        b.add(kLoader, e.start, e.end(), id);
      } else if (e.family == Family::CpuOp && hn.convolution && countIn(eventSyncsByLane, e) >= 2) {
        b.add(kSetup, e.start, e.end(), id);
        out.setup[id] = SetupKind::Autotune;
        o.autotuneOps.push_back(id);
      } else if (e.family == Family::CpuOp) {
        const auto it = launchesByLane.find(e.lane);
        bool launches = false;
        if (it != launchesByLane.end()) {
          const auto first = std::lower_bound(it->second.begin(), it->second.end(), e.start);
          launches = first != it->second.end() && *first < e.end();
        }
        b.add(launches ? kDispatch : kHostOther, e.start, e.end(), id);
      } else if (e.family == Family::PythonFunction) {
        b.add(kHostOther, e.start, e.end(), id);
      } else if (e.family == Family::UserAnnotation && hasChild[id - from] && !hn.stepMark) {
        // A record_function region with recorded work inside ("## forward ##", a module's scope): the
        // host is in the user's own code there, between its ops, even where no op is recorded.
        b.add(kHostOther, e.start, e.end(), id);
      }
    }
  };
  // The groups: whole lanes, about as many events each; one when not parallel.
  std::vector<size_t> counts(s.lanes().size());
  for (size_t l = 0; l < counts.size(); ++l) counts[l] = s.lanes()[l].end - s.lanes()[l].begin;
  const std::vector<uint32_t> bounds = splitByCounts(counts, parallel ? kRuleGroups : 1);
  // Each group's events: from its first lane's start to the next group's (lanes hold consecutive events).
  std::vector<EventId> laneStart(counts.size() + 1, static_cast<EventId>(events.size()));
  for (size_t l = counts.size(); l-- > 0;) laneStart[l] = counts[l] > 0 ? s.lanes()[l].begin : laneStart[l + 1];
  std::vector<LanePart> parts(bounds.size() - 1);
  auto scanGroup = [&](size_t g) {
    const EventId from = g == 0 ? 0 : laneStart[bounds[g]];
    const EventId to = g + 1 == parts.size() ? static_cast<EventId>(events.size()) : laneStart[bounds[g + 1]];
    scan(from, to, parts[g]);
  };
  sp0.emplace("rules: lane groups");
  if (parallel)
    helpers->forEach(parts.size(), scanGroup);
  else
    for (size_t g = 0; g < parts.size(); ++g) scanGroup(g);
  sp0.emplace("rules: groups joined, gaps");
  // Merged in event order: every group's first pass, then every group's second (one group's lists are in
  // that order already: moved).
  std::vector<int64_t> kernelDurs;
  Intervals linkedCompute;
  for (int r = 0; r < kRuleCount && parts.size() == 1; ++r) rules[r] = std::move(parts[0].out.rules[r]);
  // Each rule's three lists joined as a job of its own (the largest rule's lists beside each other), each
  // list's room taken once.
  auto join = [&](size_t job) {
    const int r = static_cast<int>(job / 3);
    RuleEvents& into = rules[r];
    auto joinList = [&](auto& list, auto member) {
      size_t n = 0;
      for (const LanePart& part : parts) n += (part.out.rules[r].*member).size();
      list.reserve(n);
      for (int pass = 0; pass < 2; ++pass)
        for (const LanePart& part : parts) {
          const auto& from = part.out.rules[r].*member;
          const size_t a = pass == 0 ? 0 : part.secondPass[r], z = pass == 0 ? part.secondPass[r] : from.size();
          list.insert(list.end(), from.begin() + static_cast<std::ptrdiff_t>(a),
                      from.begin() + static_cast<std::ptrdiff_t>(z));
        }
    };
    if (job % 3 == 0) joinList(into.cover, &RuleEvents::cover);
    if (job % 3 == 1) joinList(into.events, &RuleEvents::events);
    if (job % 3 == 2) joinList(into.spans, &RuleEvents::spans);
  };
  if (parts.size() > 1) helpers->forEach(size_t{3} * kRuleCount, join);  // (more than one group: parallel)
  for (LanePart& part : parts) {
    const RuleSet& o = part.out;
    out.anyDevice = out.anyDevice || o.anyDevice;
    for (const auto& [dev, iv] : o.deviceWork) {
      Intervals& d = out.deviceWork[dev];
      d.insert(d.end(), iv.begin(), iv.end());
    }
    out.backlog.insert(out.backlog.end(), o.backlog.begin(), o.backlog.end());
    out.autotuneOps.insert(out.autotuneOps.end(), o.autotuneOps.begin(), o.autotuneOps.end());
    out.kernels += o.kernels;
    out.launchedKernels += o.launchedKernels;
    out.kernelsInLaunch += o.kernelsInLaunch;
    out.kernelNs += o.kernelNs;
    out.shortKernelNs += o.shortKernelNs;
    out.gemmNs += o.gemmNs;
    out.gemmTcNs += o.gemmTcNs;
    kernelDurs.insert(kernelDurs.end(), part.kernelDurs.begin(), part.kernelDurs.end());
    linkedCompute.insert(linkedCompute.end(), part.linkedCompute.begin(), part.linkedCompute.end());
  }
  parts.clear();
  if (!kernelDurs.empty()) {  // the median: the value a sort puts in the middle place
    std::nth_element(kernelDurs.begin(), kernelDurs.begin() + static_cast<std::ptrdiff_t>(kernelDurs.size() / 2),
                     kernelDurs.end());
    out.kernelMedianNs = kernelDurs[kernelDurs.size() / 2];
  }
  Builder b{s, out};
  hostGaps(s, w, b);
  sp0.reset();
  // Each rule's cover, the backlog and each device's work merged (on the threads free, when parallel).
  std::vector<Intervals*> toMerge{&out.backlog};
  for (auto& rule : rules) toMerge.push_back(&rule.cover);
  for (auto& [dev, iv] : out.deviceWork) toMerge.push_back(&iv);
  // (A large list is sorted over threads of its own: one rule holds most of a large trace's events. Equal
  // intervals are alike, so the result is std::sort's. Not while spilling: the sort's merge takes a buffer
  // of half the list on the heap, one per list merged at once.)
  const bool sortOverThreads = !spill::spilling();
  auto mergeOne = [&](size_t i) {
    Intervals& v = *toMerge[i];
    if (sortOverThreads) parallelSort(v.begin(), v.end(), std::less<std::pair<int64_t, int64_t>>());
    v = merged(std::move(v));  // sorted already: merged only checks the order
  };
  std::optional<spans::Span> sp(std::in_place, "rules: covers merged");
  if (parallel)
    helpers->forEach(toMerge.size(), mergeOne);
  else
    for (size_t i = 0; i < toMerge.size(); ++i) mergeOne(i);
  sp.emplace("rules: drained, waited copies, starved");
  // A capture holds its whole span, the synchronize and empty_cache of its prologue included.
  for (Rule r : {kSetup, kAlloc, kSync}) takeCovered(rules[r].cover, rules[kCapture].cover);
  // Drained: a synchronize makes the host wait for the work queued before it; without it the host
  // would have gone on that much earlier, beside that work. So after the sync's return the device's
  // idle is the sync's for as long as the sync waited on work (from its start to the end of the last
  // device work that ended inside it), and no longer: past that, the device idles on whatever the
  // host does next (its untraced code, its ops), as it would with no sync. A sync that waited on
  // nothing drains nothing. The host's own compute and the DataLoader keep theirs.
  {
    Intervals busy;
    for (const auto& [dev, iv] : out.deviceWork) busy.insert(busy.end(), iv.begin(), iv.end());
    busy = merged(std::move(busy));
    Intervals drained;
    for (size_t k = 0; k < rules[kSync].spans.size(); ++k) {
      const auto [from, t] = rules[kSync].spans[k];
      auto next = std::lower_bound(busy.begin(), busy.end(), std::make_pair(t, INT64_MIN));
      if (next != busy.begin() && std::prev(next)->second > t) continue;  // work still running at the return
      // The last device work that ended inside the sync (busy is merged: the one before `next`).
      const int64_t waitedUntil =
          next != busy.begin() && std::prev(next)->second > from ? std::prev(next)->second : from;
      const int64_t until = std::min(next == busy.end() ? INT64_MAX : next->first, t + (waitedUntil - from));
      if (until <= t) continue;
      drained.emplace_back(t, until);
      rules[kSyncDrained].events.push_back(rules[kSync].events[k]);
      rules[kSyncDrained].spans.emplace_back(t, until);
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
  return out;
}

}  // namespace attnscope::diag
