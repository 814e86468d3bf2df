// The wait-for split put together: the steps' windows and the rules (diagnosis_setup.cpp,
// diagnosis_rules.cpp), each step's moments given to the first rule that holds them, the causes ranked,
// each with its evidence (diagnosis_evidence.cpp), its words (diagnosis_words.cpp) and the fixes whose
// conditions the trace shows (fixes.cpp, from diagnosis_facts.cpp); then the headline.
#include "core/explain/diagnosis.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "core/explain/diagnosis_internal.h"
#include "core/explain/diagnosis_words.h"
#include "core/explain/explanation.h"
#include "core/explain/fixes.h"
#include "core/run/engine_run.h"
#include "core/store/span_log.h"
#include "core/store/threads.h"
#include "core/text/duration.h"

namespace attnscope {

using namespace diagnosis_words;

std::string_view causeCode(Cause c) {
  static constexpr std::string_view k[] = {"gpu_compute",   "communication",  "blocking_copy", "explicit_sync",
                                           "allocator",     "data_loader",    "launch_bound",  "host_compute",
                                           "graph_capture", "one_time_setup", "cpu_only",      "little_work"};
  return k[static_cast<int>(c)];
}

namespace {

// Rules holding this many events between them have their causes' evidence found on two threads.
constexpr size_t kParallelEvidenceEvents = 100'000;

std::string capitalised(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

}  // namespace

Diagnosis diagnose(const EventStore& s, const Explanation& x, Helpers* helpers) {
  using namespace diag;
  Diagnosis d;
  const Windows w = findWindows(s, x);
  d.stepSource = w.source;
  d.recordStartNs = w.recordStartNs;
  d.recordEndNs = w.recordEndNs;
  d.notes = w.notes;
  if (s.profilerRangeEvents() > 0) d.traceKind = "counter_profiling";
  std::optional<spans::Span> sp(std::in_place, "diagnosis: rules");
  RuleSet r = buildRules(s, x, w, helpers);
  sp.emplace("diagnosis: steps split");
  const bool anyDevice = r.anyDevice;
  // The collectives that ran while compute ran beside them.
  const Intervals overlappedComm = intersected(r.rules[kComm].cover, r.rules[kCompute].cover);

  // Each step, moment by moment, in the rules' order; what each rule took, for the evidence. A large
  // trace's steps in runs of consecutive windows, each run a job; the runs' lists joined in window order
  // are one pass's.
  Intervals taken[kRuleCount];
  Intervals nothing;  // what no rule took
  const Cause restCause = anyDevice ? Cause::LittleWork : Cause::CpuOnly;
  struct Run {
    std::vector<StepWaits> steps;
    Intervals taken[kRuleCount];
    Intervals nothing;
  };
  const size_t windows = w.list.size();
  const size_t runs = helpers && windows >= 2 && s.events().size() >= parallelMinEvents(kParallelRuleEvents)
                          ? std::min<size_t>(16, windows)
                          : 1;
  std::vector<Run> split(runs);
  auto splitRun = [&](size_t j) {
    Run& run = split[j];
    for (size_t i = windows * j / runs; i < windows * (j + 1) / runs; ++i) {
      const Window& win = w.list[i];
      StepWaits st;
      st.name = win.name;
      st.startNs = win.startNs;
      st.endNs = win.endNs;
      st.hostStartNs = win.hostStartNs;
      st.hostEndNs = win.hostEndNs;
      Intervals remaining{{win.startNs, win.endNs}};
      for (int rule = 0; rule < kRuleCount; ++rule) {
        const int64_t ns = takeCovered(remaining, r.rules[rule].cover, &run.taken[rule]);
        st.parts[static_cast<int>(causeOfRule(rule, anyDevice))] += ns;
        if (rule <= kLastDeviceRule) st.deviceBusyNs += ns;
      }
      for (const auto& [a, b] : remaining) st.parts[static_cast<int>(restCause)] += b - a;
      run.nothing.insert(run.nothing.end(), remaining.begin(), remaining.end());
      // Per device: its busy time in the step; and the collectives' time that compute overlapped.
      const Intervals window{{win.startNs, win.endNs}};
      for (const auto& [dev, busy] : r.deviceWork) {
        int64_t ns = 0;
        for (const auto& [a, b] : intersected(busy, window)) ns += b - a;
        if (ns > 0) st.busyByDevice.emplace_back(dev, ns);
      }
      for (const auto& [a, b] : intersected(overlappedComm, window)) st.communicationOverlappedNs += b - a;
      run.steps.push_back(std::move(st));
    }
  };
  if (runs > 1)
    helpers->forEach(runs, splitRun);
  else
    splitRun(0);
  d.steps.reserve(windows);
  for (Run& run : split) {
    for (StepWaits& st : run.steps) {
      d.wallNs += st.spanNs();
      d.steps.push_back(std::move(st));
    }
    for (int rule = 0; rule < kRuleCount; ++rule)
      taken[rule].insert(taken[rule].end(), run.taken[rule].begin(), run.taken[rule].end());
    nothing.insert(nothing.end(), run.nothing.begin(), run.nothing.end());
  }
  split.clear();
  for (auto& t : taken) t = merged(std::move(t));
  nothing = merged(std::move(nothing));
  for (int rule = 0; rule < kRuleCount; ++rule) {
    Intervals& m = d.moments[static_cast<int>(causeOfRule(rule, anyDevice))];
    m.insert(m.end(), taken[rule].begin(), taken[rule].end());
  }
  {
    Intervals& m = d.moments[static_cast<int>(restCause)];
    m.insert(m.end(), nothing.begin(), nothing.end());
  }
  for (auto& m : d.moments) m = merged(std::move(m));

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

  // The evidence of every cause with time, then what the fixes need, then the words.
  sp.emplace("diagnosis: evidence");
  const CpuSplit cpu = anyDevice ? CpuSplit{} : cpuSplit(s, x, w);
  std::vector<EvidenceItem> items[kCauseCount];
  auto evidenceOf = [&](const DiagnosedCause& c) {
    std::vector<EvidenceItem>& mine = items[static_cast<int>(c.code)];
    // A CPU-only profile's evidence is its steps' own thread, split (the rules see only its events).
    if (c.code == Cause::CpuOnly && !cpu.items.empty()) {
      mine = cpu.items;
      for (EvidenceItem& it : mine) it.share = static_cast<double>(it.ns) / static_cast<double>(c.totalNs);
    } else {
      const spans::Span one("diagnosis: one cause's evidence");
      mine = evidenceItems(s, c.code, r, taken, c.code == restCause ? nothing : Intervals{}, c.totalNs);
    }
  };
  // Each cause's evidence reads the store and the rules only: a large trace's causes are jobs, the most
  // rules' events first, for the threads free.
  std::vector<std::pair<size_t, const DiagnosedCause*>> jobs;
  size_t eventsInRules = 0;
  for (const auto* list : {&d.causes, &d.minor})
    for (const DiagnosedCause& c : *list) {
      size_t n = 0;
      for (int rule = 0; rule < kRuleCount; ++rule)
        if (causeOfRule(rule, anyDevice) == c.code) n += r.rules[rule].events.size();
      eventsInRules += n;
      jobs.emplace_back(n, &c);
    }
  std::stable_sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const bool parallel = eventsInRules >= parallelMinEvents(kParallelEvidenceEvents) && jobs.size() > 1;
  // Every thread free to help takes the next cause, the largest first, then the trace's names; with no
  // helpers given (a lone explanation), a large trace's on threads of its own.
  TraceNameFacts names;
  auto job = [&](size_t i) {
    if (i < jobs.size())
      evidenceOf(*jobs[i].second);
    else
      names = traceNameFacts(s);
  };
  const size_t n = jobs.size() + 1;
  if (parallel && helpers) {
    helpers->forEach(n, job);
  } else if (parallel && workerThreads() >= 2) {
    Helpers own;
    runWithHelpers(
        own, [&] { own.forEach(n, job); }, std::vector<std::function<void()>>(workerThreads() - 1));
  } else {
    for (size_t i = 0; i < n; ++i) job(i);
  }
  sp.emplace("diagnosis: fixes and words");
  const FixFacts facts = fixFacts(s, d, r, taken, w, items, cpu, names);
  auto describe = [&](DiagnosedCause& c, bool first) {
    std::vector<EvidenceItem>& mine = items[static_cast<int>(c.code)];
    if (c.code == Cause::GpuCompute) {
      if (facts.fp32NoTensorCores) c.hints.push_back("fp32_no_tensor_cores");
      if (facts.manySmallKernels) c.hints.push_back("many_small_kernels");
    }
    const CauseWords words = wordsFor(c.code, facts, mine);
    c.label = words.label;
    c.text = sentence(c, words, d.wallNs, d.steps.size());
    // A counter-profiling trace's one fix goes with its first cause.
    if (!facts.counterProfiling || first) c.fixes = fixesFor(c.code, facts);
    if (!c.fixes.empty()) c.fix = c.fixes.front().text;
    for (const EvidenceItem& it : mine)
      if (!it.events.empty() && c.evidence.size() < 5) c.evidence.push_back(it.events.front());
    c.items.assign(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(mine.size(), 8)));
  };
  for (size_t i = 0; i < d.causes.size(); ++i) describe(d.causes[i], i == 0);
  for (DiagnosedCause& c : d.minor) describe(c, false);
  d.periodic = findPeriodic(s, d, w);

  if (d.stepSource == "whole_trace" && !d.causes.empty() && d.causes.front().code == Cause::LittleWork &&
      d.causes.front().share >= 0.9) {
    int64_t busy = 0;
    for (const StepWaits& st : d.steps) busy += st.deviceBusyNs;
    d.notes.push_back("almost nothing ran in the recording: the device was busy " + spanDurationText(busy) + " of " +
                      spanDurationText(d.wallNs) + (d.recordStartNs >= 0 ? " (the profiler's span)" : ""));
  }
  if (!d.causes.empty()) {
    const DiagnosedCause& c = d.causes.front();
    if (facts.counterProfiling)
      d.headline = "A counter-profiling trace (CUPTI's range profiler, " + std::to_string(s.profilerRangeEvents()) +
                   " kernel ranges): each kernel was replayed to read its counters, so its times are replay, not "
                   "the program's. ";
    d.headline += "What costs the most: " + c.text;
    // Set-up's sentence names each piece already.
    if (!c.items.empty() && c.code != Cause::OneTimeSetup)
      d.headline += " Largest: " + itemPhrase(c.items.front()) + ".";
    for (const PeriodicWork& p : d.periodic)
      if (p.extraNs * static_cast<int64_t>(p.steps.size()) * 10 >= d.wallNs)
        d.headline += " " + capitalised(p.text) + ".";
    if (!c.fix.empty()) d.headline += " Fix: " + c.fix + ".";
  }
  return d;
}

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

std::string causeLabel(Cause c) { return wordsFor(c, FixFacts{}).label; }

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

}  // namespace attnscope
