#include "core/capture/capture_align.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/read/trace_reader.h"

namespace attnscope::capture {

namespace {

std::string msText(int64_t ns) {
  std::ostringstream s;
  s.precision(ns < 10000000 ? 2 : 0);
  s << std::fixed << static_cast<double>(ns) / 1e6 << " ms";
  return s.str();
}

}  // namespace

int64_t StepTiming::medianStepNs() const {
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < ends.size(); ++i) gaps.push_back(ends[i] - ends[i - 1]);
  if (gaps.empty()) return 0;
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
  return gaps[gaps.size() / 2];
}

StepTiming stepTiming(const EventStore& s) {
  StepTiming t;
  t.baseNs = s.meta().baseTimeNanoseconds;
  // The thread with the most Optimizer.step# spans (the training loop's).
  std::map<uint32_t, std::vector<int64_t>> byLane;
  for (const Event& e : s.events())
    if (e.dur > 0 && s.name(e).starts_with("Optimizer.step#")) byLane[e.lane].push_back(e.end());
  uint32_t lane = 0;
  size_t most = 0;
  for (const auto& [l, v] : byLane)
    if (v.size() > most) {
      most = v.size();
      lane = l;
    }
  if (most == 0) return t;
  t.ends = byLane[lane];
  std::sort(t.ends.begin(), t.ends.end());
  t.ends.erase(std::unique(t.ends.begin(), t.ends.end()), t.ends.end());
  const Lane& L = s.lanes()[lane];
  t.lanePid = L.pid;
  t.laneTid = L.tid;
  // The capture starts at a step() call (the previous step's end): Kineto's own span over the
  // capture ("PyTorch Profiler (0)") begins there; without it, the thread's first op.
  t.firstStartNs = t.ends.front();
  for (EventId i = L.begin; i < L.end; ++i) {
    const Event& e = s.events()[i];
    if (e.dur > 0 && e.start < t.firstStartNs) t.firstStartNs = e.start;
  }
  for (const Event& e : s.events())
    if (e.dur > 0 && e.start < t.firstStartNs && s.name(e).starts_with("PyTorch Profiler")) t.firstStartNs = e.start;
  return t;
}

StepTiming stepTimingOfFile(const std::string& path) {
  const LoadResult r = loadTrace(path);
  return r.ok() ? stepTiming(*r.store) : StepTiming{};
}

Alignment alignmentOf(const std::vector<StepTiming>& timings, const std::vector<int>& ranks) {
  Alignment a;
  std::vector<std::pair<int64_t, int>> firsts;  // Unix ns, rank
  std::vector<int64_t> steps;
  for (size_t i = 0; i < timings.size(); ++i) {
    if (timings[i].ends.empty()) continue;
    firsts.emplace_back(timings[i].baseNs + timings[i].ends.front(), ranks[i]);
    if (const int64_t m = timings[i].medianStepNs(); m > 0) steps.push_back(m);
  }
  if (firsts.size() < 2) return a;
  a.known = true;
  std::sort(firsts.begin(), firsts.end());
  std::sort(steps.begin(), steps.end());
  a.stepNs = steps.empty() ? 0 : steps[steps.size() / 2];
  a.spreadNs = firsts.back().first - firsts.front().first;
  a.firstRank = firsts.front().second;
  a.lastRank = firsts.back().second;
  const std::string n = std::to_string(firsts.size());
  if (a.stepNs <= 0) {
    a.text = "the " + n + " ranks' first captured steps end within " + msText(a.spreadNs) +
             " of each other (one step each: no step time to compare with)";
    return a;
  }
  a.aligned = a.spreadNs * 2 < a.stepNs;
  if (a.aligned) {
    a.text = "all " + n + " ranks started on the same optimizer step (their first steps end within " +
             msText(a.spreadNs) + "; a step takes " + msText(a.stepNs) + ")";
  } else {
    const int64_t off = (a.spreadNs + a.stepNs / 2) / a.stepNs;
    a.text = "the ranks did not start on the same step: rank " + std::to_string(a.lastRank) + " started about " +
             std::to_string(off) + " step(s) after rank " + std::to_string(a.firstRank) +
             " (the request reached them on either side of a multiple of the roundup)";
  }
  return a;
}

int roundupFor(int64_t askWindowMs, int64_t stepNs) {
  if (stepNs <= 0) return 100;
  const double need =
      100.0 * static_cast<double>(std::max<int64_t>(askWindowMs, 20)) * 1e6 / static_cast<double>(stepNs);
  for (int64_t p = 1; p <= 1000000; p *= 10)
    for (int m : {1, 2, 5})
      if (static_cast<double>(m * p) >= need) return static_cast<int>(m * p);
  return kMaxRoundup;
}

CaptureOutcome captureJob(const std::vector<ProcessInfo>& targets, CaptureOptions o, bool automaticRoundup,
                          std::vector<std::string>* notes) {
  CaptureOutcome out = runCapture(targets, o);
  const bool eligible = targets.size() > 1 && o.spec.iterations > 0 && automaticRoundup;
  if (!eligible || out.cancelled || !out.failure.empty() || out.written() < 2) return out;
  std::vector<StepTiming> timings;
  std::vector<int> ranks;
  for (size_t i = 0; i < out.targets.size(); ++i) {
    const TargetStatus& t = out.targets[i];
    if (t.phase != TargetPhase::Written) continue;
    timings.push_back(stepTimingOfFile(t.kinetoFile));
    ranks.push_back(t.process.rank >= 0 ? t.process.rank : static_cast<int>(i));
  }
  const Alignment a = alignmentOf(timings, ranks);
  if (!a.known || a.aligned) return out;
  const int64_t window = out.askWindowMs > 0 ? out.askWindowMs : 5000;
  const int k = std::max(roundupFor(window, a.stepNs), o.spec.roundup * 10);
  notes->push_back(a.text + ": the requests reached them " + std::to_string(window) + " ms apart and a step takes " +
                   msText(a.stepNs) + ", so attnscope captured again starting on a multiple of " + std::to_string(k) +
                   " (that attempt's traces are discarded)");
  std::error_code ec;
  for (const TargetStatus& t : out.targets) std::filesystem::remove(t.kinetoFile, ec);
  o.spec.roundup = std::min(k, kMaxRoundup);
  o.logName = "trace-again";
  CaptureOutcome again = runCapture(targets, o);
  again.notes.insert(again.notes.begin(), out.notes.begin(), out.notes.end());
  return again;
}

}  // namespace attnscope::capture
