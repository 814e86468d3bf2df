#include "ui/timeline/overlay.h"

#include <algorithm>
#include <cctype>

#include "core/tables/attribution.h"
#include "ui/timeline/axis.h"

namespace attnscope::ui {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "its kernel", "its 3 kernels and 1 copy".
std::string workNoun(const EventStore& s, const std::vector<Launch>& launches) {
  int kernels = 0, copies = 0, sets = 0;
  for (const Launch& l : launches) {
    const Family f = s.event(l.gpu).family;
    kernels += f == Family::Kernel;
    copies += f == Family::GpuMemcpy;
    sets += f == Family::GpuMemset;
  }
  auto part = [](int n, const char* one, const char* many) {
    return n == 1 ? std::string("1 ") + one : std::to_string(n) + " " + many;
  };
  std::vector<std::string> parts;
  if (kernels) parts.push_back(part(kernels, "kernel", "kernels"));
  if (copies) parts.push_back(part(copies, "copy", "copies"));
  if (sets) parts.push_back(part(sets, "memset", "memsets"));
  if (launches.size() == 1) {
    return kernels ? "its kernel" : copies ? "its copy" : "its memset";
  }
  std::string out = "its ";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += i + 1 == parts.size() ? " and " : ", ";
    out += parts[i];
  }
  return out;
}

// The step whose launches include GPU activity `gpu`, or "".
std::string launchingStep(const Explanation& a, EventId gpu) {
  for (const StepReport& st : a.steps) {
    for (const Launch& l : st.launches)
      if (l.gpu == gpu) return st.name;
  }
  return {};
}

std::string syncSentence(const EventStore& s, const Explanation& a, const SyncWait& w, int64_t hostNs) {
  std::string chain;
  for (size_t i = 0; i + 1 < w.opChain.size(); ++i) chain += (i ? " > " : "") + w.opChain[i];
  std::string out =
      w.api + (chain.empty() ? "" : " (under " + chain + ")") + " blocked the CPU for " + durationText(w.durNs);
  if (w.awaited.empty()) return out + ", waiting for no GPU work queued before it.";
  out += " waiting for ";
  const size_t listed = 2;
  for (size_t i = 0; i < w.awaited.size() && i < listed; ++i) {
    const Awaited& aw = w.awaited[i];
    if (i) out += ", ";
    std::string name(s.name(s.event(aw.gpu)));
    if (name.size() > 60) name = name.substr(0, 57) + "...";  // templated kernel names run to hundreds
    out += name + " (" + durationText(aw.gpuEndNs - aw.gpuStartNs) + ", queued " +
           durationText(w.startNs - aw.queuedNs) + " before the wait";
    const std::string from = launchingStep(a, aw.gpu);
    if (!from.empty()) out += " by " + from;
    out += ")";
  }
  if (w.awaited.size() > listed) out += " and " + std::to_string(w.awaited.size() - listed) + " more";
  out += "; that wait is " + std::to_string(static_cast<int>(100.0 * w.durNs / std::max<int64_t>(hostNs, 1) + 0.5)) +
         "% of this window's CPU time, spent on earlier GPU work.";
  return out;
}

void finish(const EventStore& s, const Explanation& a, ExplainOverlay& o) {
  for (const SyncWait& w : a.syncWaits) {
    if (w.startNs >= o.hostStartNs && w.startNs < o.hostEndNs) o.syncWaits.push_back(w);
  }
  for (const Launch& l : o.launches) o.lastLaunchNs = std::max(o.lastLaunchNs, l.launchNs);
  o.extentStartNs = o.hostStartNs;
  o.extentEndNs = o.hostEndNs;
  if (o.gpuStartNs >= 0) {
    o.extentStartNs = std::min(o.extentStartNs, o.gpuStartNs);
    o.extentEndNs = std::max(o.extentEndNs, o.gpuEndNs);
  }
  for (const SyncWait& w : o.syncWaits) {
    for (const Awaited& aw : w.awaited) {
      o.extentStartNs = std::min({o.extentStartNs, aw.gpuStartNs, aw.queuedNs});
      o.extentEndNs = std::max(o.extentEndNs, aw.gpuEndNs);
    }
  }

  const int64_t host = o.hostEndNs - o.hostStartNs;
  std::string t = o.name + " held the CPU for " + durationText(host);
  if (o.launches.empty()) {
    t += " and launched no GPU work";
    t += o.syncWaits.empty() ? "; a CPU-clock measurement of it sees host time only." : ".";
  } else {
    const std::string work = workNoun(s, o.launches);
    t += "; it closed on the CPU " + durationText(o.hostEndNs - o.lastLaunchNs) + " after its last launch";
    if (o.gpuStartNs >= o.hostEndNs) {
      t += "; " + work + " ran " + durationText(o.gpuStartNs - o.hostEndNs) + " later, for " +
           durationText(o.gpuAttributedNs) + " (GPU window " + durationText(o.gpuEndNs - o.gpuStartNs) +
           "). A CPU-clock measurement of this step sees only the launch.";
    } else if (o.gpuEndNs > o.hostEndNs) {
      t += "; " + work + " (" + durationText(o.gpuAttributedNs) + " of GPU time) started " +
           durationText(o.hostEndNs - o.gpuStartNs) + " before it closed and ran " +
           durationText(o.gpuEndNs - o.hostEndNs) + " past it. A CPU-clock measurement of this step misses that tail.";
    } else {
      t += "; " + work + " (" + durationText(o.gpuAttributedNs) + ") finished " +
           durationText(o.hostEndNs - o.gpuEndNs) + " before it closed, so its CPU window covers its GPU time.";
    }
  }
  // The legend stays a few lines whatever the window holds: two waits in full, else their sum and the longest.
  if (o.syncWaits.size() <= 2) {
    for (const SyncWait& w : o.syncWaits) t += " " + syncSentence(s, a, w, host);
  } else {
    int64_t total = 0;
    const SyncWait* longest = &o.syncWaits.front();
    for (const SyncWait& w : o.syncWaits) {
      total += w.durNs;
      if (w.durNs > longest->durNs) longest = &w;
    }
    t += " " + std::to_string(o.syncWaits.size()) + " sync waits (hatched) blocked the CPU for " + durationText(total) +
         " in all (" + std::to_string(static_cast<int>(100.0 * total / std::max<int64_t>(host, 1) + 0.5)) +
         "% of this window); the longest: " + syncSentence(s, a, *longest, host);
  }
  o.legend = std::move(t);
}

// The overlay of a step report (a step of the analysis or a window filled
// by fillStepFigures).
ExplainOverlay fromReport(const EventStore& s, const Explanation& a, StepReport&& r) {
  ExplainOverlay o;
  o.name = std::move(r.name);
  o.event = r.event;
  o.hostLane = r.lane;
  o.hostStartNs = r.hostStartNs;
  o.hostEndNs = r.hostEndNs;
  o.launches = std::move(r.launches);
  o.gpuStartNs = r.gpuStartNs;
  o.gpuEndNs = r.gpuEndNs;
  o.gpuAttributedNs = r.gpuAttributedNs;
  finish(s, a, o);
  return o;
}

}  // namespace

ExplainOverlay overlayForStep(const EventStore& s, const Explanation& a, int step) {
  if (step < 0 || step >= static_cast<int>(a.steps.size())) return {};
  StepReport r = a.steps[static_cast<size_t>(step)];
  const StepWaits* waits = diagnosedStep(a.diagnosis, r.hostStartNs, r.hostEndNs);
  const bool wrapped = r.wrapped;
  ExplainOverlay o = fromReport(s, a, std::move(r));
  // The banner opens with what cost the step most (the diagnosis's split of its wall time); on the
  // CPU, where that is always "CPU only", with what torch's table does with the step instead.
  if (waits && topCause(*waits) == Cause::CpuOnly) {
    o.legend = (wrapped ? o.name + " is wrapped in record_function: torch's table shows it as a row of its own."
                        : o.name + " is not wrapped: torch's table has no row for it, so it reads as zero there.") +
               " " + o.legend;
  } else if (waits) {
    const std::string head = stepHeadline(*waits);
    if (!head.empty()) o.legend = head + " " + o.legend;
  }
  return o;
}

ExplainOverlay overlayForEvent(const EventStore& s, const Explanation& a, const ActivityIndex& index, EventId ev) {
  for (size_t i = 0; i < a.steps.size(); ++i) {
    if (a.steps[i].event == ev) return overlayForStep(s, a, static_cast<int>(i));
  }
  const Event& e = s.event(ev);
  StepReport r;
  r.name = std::string(s.name(e));
  r.event = ev;
  r.lane = e.lane;
  r.hostStartNs = e.start;
  r.hostEndNs = e.end();
  fillStepFigures(s, index, r);
  return fromReport(s, a, std::move(r));
}

ExplainOverlay overlayForSteps(const EventStore& s, const Explanation& a, const ActivityIndex& index, int first,
                               int last, const std::string& name, const std::string& note) {
  if (first == last) {
    ExplainOverlay o = overlayForStep(s, a, first);
    if (!note.empty()) o.legend = note + " " + o.legend;
    return o;
  }
  const StepReport& a0 = a.steps[static_cast<size_t>(first)];
  const StepReport& a1 = a.steps[static_cast<size_t>(last)];
  StepReport r;
  r.name = name;
  r.lane = a0.lane;
  r.hostStartNs = a0.hostStartNs;
  r.hostEndNs = a1.hostEndNs;
  fillStepFigures(s, index, r);
  ExplainOverlay o = fromReport(s, a, std::move(r));
  if (!note.empty()) o.legend = note + " " + o.legend;
  return o;
}

bool findRegion(const Explanation& a, std::string_view name, int* first, int* last, std::string* note) {
  const auto n = static_cast<int>(a.steps.size());
  auto stepNamed = [&](std::string_view want, int from) {
    for (int i = std::max(from, 0); i < n; ++i)
      if (lower(a.steps[static_cast<size_t>(i)].name) == lower(want)) return i;
    return -1;
  };
  if (const size_t dots = name.find(".."); dots != std::string_view::npos) {
    *first = findStepByName(a, name.substr(0, dots));
    *last = stepNamed(name.substr(dots + 2), *first);
    if (*last < 0) *last = findStepByName(a, name.substr(dots + 2));
    *note = "";
    return *first >= 0 && *last >= *first;
  }
  // The attention workload's unwrapped steps, from the ops their code runs.
  const std::string want = lower(name);
  const int qk = stepNamed("aten::matmul", 0);
  int softmax = stepNamed("SOFTMAX PASS", 0);
  if (softmax < 0) softmax = stepNamed("aten::softmax", 0);
  if (qk < 0 || softmax < 0 || softmax <= qk + 1) return false;
  if (want == "scale") {
    *first = qk + 1;
    *last = softmax - 1;
  } else if (want == "qk matmul") {
    *first = 0;
    *last = qk;
  } else if (want == "softmax pass") {
    *first = *last = softmax;
  } else if (want == "av matmul") {
    *first = *last = stepNamed("aten::matmul", softmax + 1);
    if (*first < 0) return false;
  } else {
    return false;
  }
  *note = "(" + std::string(name) + " is not annotated in this trace: its ops " +
          a.steps[static_cast<size_t>(*first)].name +
          (*first == *last ? "" : " … " + a.steps[static_cast<size_t>(*last)].name) + " stand for it.)";
  return true;
}

int findStepByName(const Explanation& a, std::string_view name) {
  for (size_t i = 0; i < a.steps.size(); ++i)
    if (a.steps[i].name == name) return static_cast<int>(i);
  const std::string want = lower(name);
  for (size_t i = 0; i < a.steps.size(); ++i)
    if (lower(a.steps[i].name) == want) return static_cast<int>(i);
  return -1;
}

EventId findAnnotationOrOp(const EventStore& s, std::string_view name) {
  uint32_t id = 0;
  if (!s.strings().find(name, &id)) return kNoEvent;
  EventId op = kNoEvent;
  for (EventId i = 0; i < s.events().size(); ++i) {
    const Event& e = s.event(i);
    if (e.name != id) continue;
    if (e.family == Family::UserAnnotation) return i;
    if (e.family == Family::CpuOp && op == kNoEvent) op = i;
  }
  return op;
}

}  // namespace attnscope::ui
