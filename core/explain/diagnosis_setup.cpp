// What the trace records of set-up and of the recording itself: the steps' windows (the profiler's
// recorded span for a whole trace), first-use work (context creation, a first huge cudaFree, module
// loading, compilation, communicator creation), and work that recurs every Nth step.
#include <algorithm>
#include <unordered_map>

#include "core/explain/diagnosis_internal.h"
#include "core/explain/explanation.h"
#include "core/text/duration.h"

namespace attnscope::diag {

namespace {

// torch.compile's own work, by the names Dynamo, Inductor and Triton record (dynamo_timed regions,
// their Python frames).
bool isCompileMark(std::string_view n) {
  for (std::string_view m : {"compile_inner", "call_user_compiler", "compile_fx", "inductor_compile",
                             "fx_codegen_and_compile", "async_compile", "benchmark_all_configs", "triton.compile",
                             "_compile.compile", "torch/_dynamo/convert_frame.py", "torch/_inductor/compile_fx.py"})
    if (contains(n, m)) return true;
  return false;
}

bool isCommInit(std::string_view n) {
  return contains(n, "CommInit") || contains(n, "commInit") || contains(n, "getNCCLComm");
}

SetupKind runtimeSetupKind(std::string_view n, CallKind kind) {
  if (kind == CallKind::Allocator) return SetupKind::FirstAlloc;
  if (isCommInit(n)) return SetupKind::CommInit;
  if (contains(n, "Module") || contains(n, "Library") || contains(n, "Launch") || contains(n, "GetFunc"))
    return SetupKind::ModuleLoad;
  if (contains(n, "Device") || contains(n, "Stream") || contains(n, "Ctx") || contains(n, "Init") ||
      contains(n, "Attribute"))
    return SetupKind::Context;
  return SetupKind::FirstUse;
}

std::string ordinal(int n) {
  const int mod100 = n % 100;
  const char* suffix = (mod100 >= 11 && mod100 <= 13) ? "th"
                       : n % 10 == 1                  ? "st"
                       : n % 10 == 2                  ? "nd"
                       : n % 10 == 3                  ? "rd"
                                                      : "th";
  return std::to_string(n) + suffix;
}

}  // namespace

std::string_view setupWords(SetupKind k) {
  switch (k) {
    case SetupKind::Context:
      return "the runtime's context creation";
    case SetupKind::FirstAlloc:
      return "a first huge allocator call: the context's lazy creation or the allocator's first segment";
    case SetupKind::ModuleLoad:
      return "lazy module and kernel loading: a first launch far longer than the others";
    case SetupKind::Autotune:
      return "cuDNN/MIOpen algorithm search: a convolution timing candidates (torch.backends.cudnn.benchmark)";
    case SetupKind::Compile:
      return "torch.compile's compilation";
    case SetupKind::CommInit:
      return "a communicator's creation";
    case SetupKind::FirstUse:
      return "a runtime call's first use";
    case SetupKind::None:
      break;
  }
  return "";
}

// First-use runtime calls: a call of 1 ms or more that its own later calls show to be a first use: among
// the first three calls of its name, and either the name has at most three calls or the call took 20x
// the median of the name's other calls; or, for a launch-like call, 100x the median anywhere (a lazy
// module load on a later first use). Synchronizes and copies are waits on the device or on memory, never
// set-up; a graph's capture and instantiation are graph_capture. Plus compilation (Dynamo, Inductor) and
// communicator creation, by name, wherever the trace records them.
std::vector<SetupKind> setupKinds(const EventStore& s) {
  std::vector<SetupKind> out(s.events().size(), SetupKind::None);
  std::unordered_map<uint32_t, std::vector<EventId>> byName;
  // Whether a name marks compilation / a communicator's creation: looked at once per name.
  std::unordered_map<uint32_t, std::pair<bool, bool>> marks;
  auto marksOf = [&](uint32_t name) {
    auto [it, fresh] = marks.try_emplace(name);
    if (fresh) it->second = {isCompileMark(s.strings().view(name)), isCommInit(s.strings().view(name))};
    return it->second;
  };
  for (EventId id = 0; id < s.events().size(); ++id) {
    const Event& e = s.event(id);
    if (e.family == Family::CudaRuntime || e.family == Family::CudaDriver) {
      byName[e.name].push_back(id);
    } else if ((e.family == Family::CpuOp || e.family == Family::UserAnnotation ||
                e.family == Family::PythonFunction) &&
               e.dur > 0) {
      const auto [compile, commInit] = marksOf(e.name);
      if (commInit && e.dur >= 1'000'000) out[id] = SetupKind::CommInit;
      if (!compile) continue;
      // The outermost compilation only: its inner frames are part of it.
      bool inner = false;
      for (EventId p = e.parent; p != kNoEvent && !inner; p = s.event(p).parent) inner = marksOf(s.event(p).name).first;

      if (!inner) out[id] = SetupKind::Compile;
    }
  }
  constexpr int64_t kMinNs = 1'000'000;
  for (auto& [name, ids] : byName) {
    const std::string_view n = s.strings().view(name);
    const CallKind kind = callKind(n);
    if (kind == CallKind::Sync || kind == CallKind::Copy || kind == CallKind::Capture) continue;
    std::sort(ids.begin(), ids.end(), [&](EventId a, EventId b) { return s.event(a).start < s.event(b).start; });
    std::vector<int64_t> sorted;
    for (EventId id : ids) sorted.push_back(s.event(id).dur);
    std::sort(sorted.begin(), sorted.end());
    const int64_t median = std::max<int64_t>(sorted[sorted.size() / 2], 1);
    for (size_t i = 0; i < ids.size(); ++i) {
      const int64_t d = s.event(ids[i]).dur;
      if (d < kMinNs) continue;
      const bool early = i < 3 && (ids.size() <= 3 || d >= 20 * median);
      const bool outlier = kind == CallKind::Other && ids.size() >= 10 && d >= 100 * median;
      if (early || outlier) out[ids[i]] = runtimeSetupKind(n, kind);
    }
  }
  return out;
}

Windows findWindows(const EventStore& s, const Explanation& x) {
  Windows w;
  for (const Event& e : s.events()) {
    if (e.family != Family::Other || e.dur <= 0 || !startsWith(s.name(e), "PyTorch Profiler")) continue;
    w.recordStartNs = w.recordStartNs < 0 ? e.start : std::min(w.recordStartNs, e.start);
    w.recordEndNs = std::max(w.recordEndNs, e.end());
  }
  if ((x.stepSource == "profiler_steps" || x.stepSource == "engine") && !x.steps.empty()) {
    w.source = x.stepSource;
    // A ProfilerStep completes when its host window has closed and the GPU work it launched has
    // ended; its window runs from the previous step's completion (or its own start, if later) to
    // its own. With the host ahead of the device, the host windows are a sliver of the time and
    // the work they launched runs after them: the steps' time is the device's. (The engine's steps
    // are parts of one call, whose work spills into the next by design: their host windows stay.)
    int64_t completed = INT64_MIN;
    for (const StepReport& st : x.steps) {
      Window win;
      win.name = st.name;
      win.startNs = win.hostStartNs = st.hostStartNs;
      win.endNs = win.hostEndNs = st.hostEndNs;
      if (x.stepSource == "profiler_steps") {
        win.startNs = std::max(win.startNs, completed);
        win.endNs = std::max({win.endNs, st.gpuEndNs, completed});
        completed = win.endNs;
        win.lane = st.lane;
        win.event = st.event;
      }
      if (w.recordEndNs >= 0 && win.endNs > w.recordEndNs)
        w.notes.push_back(st.name + " outlives the recording: it ends " + spanDurationText(win.endNs - w.recordEndNs) +
                          " after the profiler's span, so what ran after that is not in the trace");
      w.list.push_back(std::move(win));
    }
    return w;
  }
  w.source = "whole_trace";
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const Event& e : s.events()) {
    if (e.family == Family::Memory || e.family == Family::CpuInstant || e.family == Family::Overhead) continue;
    if (e.dur <= 0 && !isGpuWork(e.family)) continue;
    if (e.family == Family::Other && startsWith(s.name(e), "PyTorch Profiler")) continue;
    lo = std::min(lo, e.start);
    hi = std::max(hi, e.end());
  }
  // Iterations from the optimizer: each ends where an Optimizer.step#... ends (two or more), the
  // first from the trace's first event, the rest after the last one its own step, so that every piece
  // of work (the autograd thread's too) falls in a step.
  std::vector<int64_t> ends;
  for (const Event& e : s.events())
    if ((e.family == Family::UserAnnotation || e.family == Family::CpuOp) && e.dur > 0 &&
        startsWith(s.name(e), "Optimizer.step#"))
      ends.push_back(e.end());
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  auto add = [&](std::string name, int64_t a, int64_t b) {
    Window win;
    win.name = std::move(name);
    win.startNs = win.hostStartNs = a;
    win.endNs = win.hostEndNs = b;
    w.list.push_back(std::move(win));
  };
  if (lo < hi && ends.size() >= 2) {
    w.source = "optimizer_steps";
    int64_t from = lo;
    for (size_t i = 0; i < ends.size(); ++i) {
      add("iteration " + std::to_string(i + 1), from, ends[i]);
      from = ends[i];
    }
    if (from < hi) add("after the last Optimizer.step", from, hi);
  } else if (lo < hi) {
    // The whole trace is the profiler's recording: its span, not only the first to the last event
    // (what ran outside it, with a device clock that disagrees, stays in).
    if (w.recordStartNs >= 0) lo = std::min(lo, w.recordStartNs), hi = std::max(hi, w.recordEndNs);
    add("whole trace", lo, hi);
  }
  return w;
}

// Work that comes back every Nth step: the steps at every Nth index from a phase (N >= 2; the first
// step aside, it may hold set-up), at least three of them (or two doing the same thing), each longer
// than every other step and than 1.5x their median (and 50 us more). What ran in them beyond the others: the script's
// own Python functions (and the library functions they call) when the trace records stacks, else the top-level ops and
// regions, by their median time in the long steps over that in the others (2.5% of the excess or more).
std::vector<PeriodicWork> findPeriodic(const EventStore& s, const Diagnosis& d, const Windows& w) {
  if ((d.stepSource != "profiler_steps" && d.stepSource != "optimizer_steps") || d.steps.size() < 5) return {};
  size_t n = d.steps.size();
  if (d.stepSource == "optimizer_steps" && d.steps.back().name.rfind("after", 0) == 0) --n;
  std::vector<int64_t> spans;
  for (size_t i = 0; i < n; ++i) spans.push_back(d.steps[i].spanNs());
  auto median = [](std::vector<int64_t> v) {
    if (v.empty()) return int64_t{0};
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  // Every every-th step from a phase (the first step aside: it may hold set-up) is longer than every
  // other step, and 1.5x their median or more: the largest such set, then the shortest period.
  int every = 0;
  std::vector<int> longSteps;
  // A set longer than every other step is the longest steps: for each period only the phase of the
  // longest step can qualify, and only if the steps of that phase are the longest ones (checked over as
  // many of the longest as the phase has steps), so each period costs its own set's size, not a pass
  // over every phase with a sort (which took hours on a trace with thousands of steps).
  std::vector<int> byLength;
  for (int i = 1; i < static_cast<int>(n); ++i) byLength.push_back(i);
  std::stable_sort(byLength.begin(), byLength.end(),
                   [&](int x, int y) { return spans[static_cast<size_t>(x)] > spans[static_cast<size_t>(y)]; });
  for (int k = 2; k < static_cast<int>(n); ++k) {
    if (byLength.empty()) break;
    const int r = byLength[0] % k;
    const int first = r >= 1 ? r : r + k;
    const size_t m = first < static_cast<int>(n) ? static_cast<size_t>((static_cast<int>(n) - 1 - first) / k + 1) : 0;
    if (m < 2 || m >= byLength.size() || m <= longSteps.size()) continue;
    bool phase = true;
    for (size_t j = 0; j < m && phase; ++j) phase = byLength[j] % k == r;
    if (!phase || spans[static_cast<size_t>(byLength[m - 1])] <= spans[static_cast<size_t>(byLength[m])]) continue;
    std::vector<int> in;
    std::vector<int64_t> rest;
    for (int i = 1; i < static_cast<int>(n); ++i) {
      if (i % k == r)
        in.push_back(i);
      else
        rest.push_back(spans[static_cast<size_t>(i)]);
    }
    int64_t shortest = INT64_MAX;
    for (int i : in) shortest = std::min(shortest, spans[static_cast<size_t>(i)]);
    const int64_t med = median(rest), longestRest = *std::max_element(rest.begin(), rest.end());
    if (shortest > longestRest && shortest * 2 > med * 3 && shortest - med >= std::max<int64_t>(med / 2, 50'000)) {
      every = k;
      longSteps = std::move(in);
    }
  }
  if (every == 0) return {};
  PeriodicWork p;
  p.every = every;
  p.steps = longSteps;
  std::vector<int64_t> excess, normal;
  std::vector<bool> isLong(n, false);
  for (int i : longSteps) isLong[static_cast<size_t>(i)] = true;
  for (size_t i = 1; i < n; ++i)
    if (!isLong[i]) normal.push_back(spans[i]);
  const int64_t typical = median(normal);
  for (int i : longSteps) excess.push_back(spans[static_cast<size_t>(i)] - typical);
  p.extraNs = median(excess);
  // What ran in them: by name, time per step. The script's own Python functions and the library
  // functions it calls (a trace with stacks), else the top-level ops and regions; what a name adds
  // inside one already named is left out below.
  // (attnscope_record.py is `record`'s own runner around the script: neither the script nor its work.)
  auto ours = [](std::string_view nm) { return contains(nm, "attnscope_record.py"); };
  auto userFrame = [&](std::string_view nm) {
    return contains(nm, ".py(") && !startsWith(nm, "torch/") && !contains(nm, "site-packages") &&
           !contains(nm, "dist-packages") && !startsWith(nm, "<") && !ours(nm);
  };
  // A trace with the script's own frames names them (its ops' nesting under Python frames is not always
  // exact: a clock apart, an op may not nest); else the top-level ops and regions.
  bool stacks = false;
  for (const Event& e : s.events())
    if (e.family == Family::PythonFunction && userFrame(s.name(e))) {
      stacks = true;
      break;
    }
  auto display = [&](EventId id) -> std::string {
    const Event& e = s.event(id);
    const std::string_view nm = s.name(e);
    if (stacks != (e.family == Family::PythonFunction)) return {};
    if (e.family == Family::PythonFunction) {
      const size_t colon = nm.find("): ");
      const std::string fn =
          colon == std::string_view::npos ? std::string(nm) : std::string(nm.substr(colon + 3)) + "()";
      if (userFrame(nm)) return fn;
      // A library function the script calls: its nearest Python frame (past the step's annotation) is the
      // script's.
      EventId up = e.parent;
      while (up != kNoEvent && s.event(up).family != Family::PythonFunction) up = s.event(up).parent;
      if (!contains(nm, ".py(") || ours(nm) || up == kNoEvent || !userFrame(s.name(s.event(up)))) return {};
      const size_t paren = nm.find('(');
      return fn + " (" + std::string(nm.substr(0, paren)) + ")";
    }
    if (e.family != Family::CpuOp && e.family != Family::UserAnnotation) return {};
    if (isStepMark(nm) || startsWith(nm, "Optimizer.")) return {};
    const EventId up = e.parent;
    if (up != kNoEvent && !isStepMark(s.name(s.event(up))) && s.event(up).family != Family::PythonFunction) return {};
    return std::string(nm);
  };
  std::vector<std::unordered_map<std::string, int64_t>> perStep(n);
  std::unordered_map<std::string, std::vector<std::pair<size_t, EventId>>> idsByName;  // in the long steps
  std::vector<bool> isLongStep(n, false);
  for (int i : longSteps) isLongStep[static_cast<size_t>(i)] = true;
  for (size_t l = 0; l < s.lanes().size(); ++l) {
    if (s.lanes()[l].kind != LaneKind::CpuThread) continue;
    for (EventId id = s.lanes()[l].begin; id < s.lanes()[l].end; ++id) {
      const Event& e = s.event(id);
      if (e.dur <= 0) continue;
      const auto it = std::upper_bound(w.list.begin(), w.list.begin() + static_cast<std::ptrdiff_t>(n), e.start,
                                       [](int64_t t, const Window& win) { return t < win.startNs; });
      if (it == w.list.begin()) continue;
      const size_t k = static_cast<size_t>(it - w.list.begin()) - 1;
      if (e.start >= w.list[k].endNs) continue;
      const std::string name = display(id);
      if (name.empty()) continue;
      perStep[k][name] += e.dur;
      if (isLongStep[k]) idsByName[name].emplace_back(k, id);
    }
  }
  std::unordered_map<std::string, int64_t> typicalOf;
  std::vector<std::pair<int64_t, std::string>> ranked;
  for (const auto& [nm, ids] : idsByName) {
    std::vector<int64_t> inLong, inNormal;
    for (size_t i = 1; i < n; ++i) {
      const auto it = perStep[i].find(nm);
      (isLong[i] ? inLong : inNormal).push_back(it == perStep[i].end() ? 0 : it->second);
    }
    typicalOf[nm] = median(inNormal);
    const int64_t extra = median(inLong) - typicalOf[nm];
    if (extra > 0 && extra * (typicalOf[nm] == 0 ? 100 : 10) >= p.extraNs) ranked.emplace_back(extra, nm);
  }
  // What the other steps do not run at all comes first (1% of the excess or more), then what runs
  // longer there (10% or more).
  std::sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
    const bool onlyA = typicalOf[a.second] == 0, onlyB = typicalOf[b.second] == 0;
    if (onlyA != onlyB) return onlyA;
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  // The outermost first: what a name adds outside the ones already named (its events that run inside
  // them are part of them) must still be 2.5% of the excess or more.
  std::vector<bool> chosen(s.events().size(), false);
  for (const auto& [extra, nm] : ranked) {
    if (p.what.size() >= 3) break;
    std::vector<int64_t> outside(n, 0);
    for (const auto& [k, id] : idsByName[nm]) {
      bool inside = false;
      for (EventId up = s.event(id).parent; up != kNoEvent && !inside; up = s.event(up).parent) inside = chosen[up];
      if (!inside) outside[k] += s.event(id).dur;
    }
    std::vector<int64_t> perLong;
    for (int i : longSteps) perLong.push_back(outside[static_cast<size_t>(i)]);
    const int64_t own = median(perLong) - typicalOf[nm];
    if (own <= 0 || own * (typicalOf[nm] == 0 ? 100 : 10) < p.extraNs) continue;
    p.what.emplace_back(nm, own);
    for (const auto& [k, id] : idsByName[nm]) chosen[id] = true;
  }
  // Two long steps are periodic only when they did the same thing.
  if (longSteps.size() == 2 && p.what.empty()) return {};
  p.text = "every " + ordinal(every) + " step (";
  for (size_t k = 0; k < p.steps.size(); ++k) {
    if (k == 4) {
      p.text += ", ...";
      break;
    }
    p.text += (k ? ", " : "") + d.steps[static_cast<size_t>(p.steps[k])].name;
  }
  p.text += ")";
  if (!p.what.empty()) {
    p.text += ": ";
    for (size_t k = 0; k < p.what.size(); ++k)
      p.text += (k == 0 ? "" : k + 1 == p.what.size() ? " and " : ", ") + p.what[k].first;
  }
  p.text += ", " + spanDurationText(p.extraNs) + " more than the other steps";
  return {p};
}

}  // namespace attnscope::diag
