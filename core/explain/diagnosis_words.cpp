#include "core/explain/diagnosis_words.h"

#include <cmath>
#include <cstdio>

#include "core/text/duration.h"

namespace attnscope::diagnosis_words {

namespace {

std::string count(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

std::string shortName(const std::string& n) { return n.size() <= 90 ? n : n.substr(0, 87) + "..."; }

std::string share(int64_t part, int64_t whole) {
  return pct(whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0);
}

}  // namespace

std::string pct(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * share);
  return buf;
}

std::string itemPhrase(const EvidenceItem& it) {
  const std::string time = spanDurationText(it.ns) + " (" + pct(it.share) + " of it)";
  std::string out;
  if (it.count == 0) {
    out = it.name + ", " + time;
  } else if (it.kind == "untraced" || it.kind == "nothing" || it.kind == "collective_wait") {
    out = it.name + ", in " + count(it.count) + " stretch" + (it.count == 1 ? "" : "es") + ", " + time;
    if (!it.detail.empty()) out += " [" + it.detail + "]";
  } else {
    static const std::pair<const char*, const char*> kNouns[] = {{"call", "call"},
                                                                 {"copy", "call"},
                                                                 {"allocator", "call"},
                                                                 {"sync", "call"},
                                                                 {"setup", "call"},
                                                                 {"op", "op"},
                                                                 {"region", "region"},
                                                                 {"frame", "Python frame"},
                                                                 {"kernel", "kernel"},
                                                                 {"collective", "kernel"},
                                                                 {"device_copy", "device cop"},
                                                                 {"queued", "launch waiting to start"}};
    std::string noun = "event";
    for (const auto& [k, v] : kNouns)
      if (it.kind == k) noun = v;
    out = count(it.count) + " " + shortName(it.name) + " " + noun +
          (noun == "device cop" ? (it.count == 1 ? "y" : "ies")
           : it.count == 1      ? ""
                                : "s");
    if (it.kind == "capture") out = count(it.count) + (it.count == 1 ? " graph capture" : " graph captures");
    if (it.kind == "queued")
      out =
          count(it.count) + " " + shortName(it.name) + (it.count == 1 ? " launch" : " launches") + " waiting to start";
    if (!it.inside.empty()) {
      out += " inside ";
      for (size_t k = 0; k < it.inside.size(); ++k)
        out += (k == 0                      ? ""
                : k + 1 == it.inside.size() ? " and "
                                            : ", ") +
               it.inside[k].first + " (" + count(it.inside[k].second) + ")";
    }
    out += ", " + time;
    if (!it.detail.empty()) out += " [" + it.detail + "]";
  }
  if (!it.where.empty()) out += " (in " + it.where + ")";
  return out;
}

CauseWords wordsFor(Cause c, const FixFacts& f, const std::vector<EvidenceItem>& items) {
  const std::string device = f.mtia ? "the accelerator" : "the device";
  switch (c) {
    case Cause::GpuCompute:
      return {f.mtia ? "device compute" : "GPU compute", device + " was busy running its work"};
    case Cause::Communication: {
      std::string what = "collectives ran with no compute beside them";
      if (f.queuedCommNs > 0)
        what += " (" + spanDurationText(f.queuedCommNs) +
                " of it they sat launched but not started: waiting on a dependency or on other ranks)";
      if (f.overlappedCommNs > 0) what += "; another " + spanDurationText(f.overlappedCommNs) + " ran beside compute";
      return {"exposed communication", what};
    }
    case Cause::BlockingCopy:
      return {"blocking copies", "the host sat in memory copy calls while the copies ran or " + device + " idled"};
    case Cause::ExplicitSync:
      return {"synchronizes", "the host sat in synchronize calls, and after each one " + device +
                                  " idled for as long as the sync had waited on work (without it the host "
                                  "would have run on beside that work)"};
    case Cause::Allocator:
      return {"the allocator", "the host sat in the device allocator (free/malloc) while " + device + " idled"};
    case Cause::DataLoader:
      return {"the DataLoader", device + " waited while the host was in the DataLoader"};
    case Cause::LaunchBound:
      return {"launch-bound", "the host dispatching ops and launches set the pace (" + device +
                                  " idled, or ran with nothing queued behind it)"};
    case Cause::HostCompute: {
      std::string what = device + " waited while the host ran code that launches nothing";
      if (f.hostGapNs > 0)
        what += " (" + spanDurationText(f.hostGapNs) + " of it the step's thread between its ops with nothing " +
                "recorded: Python the profiler does not see)";
      return {"host work", what};
    }
    case Cause::GraphCapture:
      return {"graph capture",
              "the host captured or instantiated graphs (with torch.cuda.graph's synchronize and "
              "empty_cache before each capture) while " +
                  device + " idled"};
    case Cause::OneTimeSetup: {
      std::string what = "first-use work the trace records";
      std::string list;
      for (const EvidenceItem& it : items) {
        if (it.kind != "setup") continue;
        if (!list.empty()) list += ", ";
        list += (it.count > 1 ? count(it.count) + " " : std::string()) + shortName(it.name) + " " +
                spanDurationText(it.ns) + (it.detail.empty() ? "" : " (" + it.detail + ")");
      }
      if (!list.empty()) what += ": " + list;
      return {"one-time set-up", what};
    }
    case Cause::CpuOnly: {
      // A CPU-only profile still says where the host's time went: its steps by kind, the hot ops.
      std::string what = "the trace has no device activity: a CPU-only profile";
      int64_t total = 0;
      for (const auto& [name, ns] : f.cpuParts) total += ns;
      if (total > 0) {
        what += "; the steps' own thread: ";
        for (size_t k = 0; k < f.cpuParts.size(); ++k) {
          const int p = static_cast<int>(
              std::llround(100.0 * static_cast<double>(f.cpuParts[k].second) / static_cast<double>(total)));
          if (k > 0 && p == 0) break;
          what += (k ? ", " : "") + f.cpuParts[k].first + " " + std::to_string(p) + "%";
          if (f.cpuParts[k].first == "communication" && f.cpuCollectiveWaitNs > 0 && !f.cpuCollective.empty())
            what += " (waiting " + spanDurationText(f.cpuCollectiveWaitNs) + " for " + f.cpuCollective +
                    " on another thread)";
        }
      }
      if (!f.hotOps.empty() && f.opsSelfNs > 0) {
        what += "; the ops that cost most (self time): ";
        for (size_t k = 0; k < f.hotOps.size(); ++k)
          what += (k ? ", " : "") + f.hotOps[k].first + " " + spanDurationText(f.hotOps[k].second) + " (" +
                  share(f.hotOps[k].second, f.opsSelfNs) + ")";
      }
      return {"CPU only", what};
    }
    case Cause::LittleWork: {
      std::string what = f.counterProfiling
                             ? "no device work is timed in a counter-profiling trace, and the host recorded nothing"
                             : device +
                                   " idled and the host recorded nothing there (little work, or code the "
                                   "profiler does not see)";
      if (f.queuedIdleNs > 0)
        what += "; " + spanDurationText(f.queuedIdleNs) +
                " of it work sat launched but not started (a dependency the trace does not show, work launched "
                "before the recording began, or clocks that disagree)";
      return {"idle", what};
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
