#include "core/capture/capture_output.h"

#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/read/trace_reader.h"
#include "core/text/json_out.h"
#include "core/write/atomic_file.h"

namespace attnscope::capture {

namespace fs = std::filesystem;

namespace {

bool readFile(const std::string& p, std::string* out) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return !f.bad();
}

std::string stampOf(int64_t unixMs) {
  const std::time_t t = static_cast<std::time_t>(unixMs / 1000);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

// The script's name from a command line: "python3 -u train.py --lr 1" -> "train".
std::string scriptStem(const std::string& command) {
  std::istringstream in(command);
  std::string w;
  while (in >> w)
    if (w.size() > 3 && w.ends_with(".py")) {
      const std::string s = fs::path(w).stem().string();
      return s.empty() ? "python" : s;
    }
  return "python";
}

// Kineto's ts text for a time on the trace's clock (ns): microseconds with three decimals.
std::string tsText(int64_t ns) {
  std::string t = std::to_string(ns / 1000) + "." + std::to_string(1000 + ns % 1000).substr(1);
  return t;
}

// One ProfilerStep#N per captured optimizer step on the training thread: the first from the thread's
// first op, each next from the previous Optimizer.step#'s end, to its own Optimizer.step#'s end.
std::string stepEvents(const StepTiming& t) {
  std::string out;
  int64_t from = t.firstStartNs;
  for (size_t i = 0; i < t.ends.size(); ++i) {
    const int64_t to = t.ends[i];
    if (to <= from) continue;
    out += "\n  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#" + std::to_string(i + 1) +
           "\", \"pid\": " + std::to_string(t.lanePid) + ", \"tid\": " + std::to_string(t.laneTid) +
           ", \"ts\": " + tsText(from) + ", \"dur\": " + tsText(to - from) +
           ", \"args\": {\"attnscope\": \"one optimizer step of the capture, marked by attnscope-cli capture\"}},";
    from = to;
  }
  return out;
}

// The step spans go first in traceEvents.
bool withStepEvents(std::string& json, const std::string& events) {
  if (events.empty()) return true;
  const size_t key = json.find("\"traceEvents\"");
  const size_t open = key == std::string::npos ? key : json.find('[', key);
  if (open == std::string::npos) return false;
  // An empty array takes the events without their last comma.
  const size_t next = json.find_first_not_of(" \t\r\n", open + 1);
  const bool empty = next != std::string::npos && json[next] == ']';
  json.insert(open + 1, empty ? events.substr(0, events.size() - 1) : events);
  return true;
}

std::string captureObject(const CaptureOutcome& o, const TargetStatus& t, const CaptureSpec& spec, int rank,
                          bool partial, const std::vector<int>& missing, const std::string& command) {
  std::string j = "{\"route\": " + jsonString(o.route == Route::Daemon ? "dynolog daemon" : "attnscope endpoint");
  j += ", \"pid\": " + std::to_string(t.process.pid);
  j += ", \"process_command\": " + jsonString(t.process.commandLine);
  j += ", \"asked\": " + jsonString(specSummary(spec));
  j += ", \"iterations\": " + std::to_string(spec.iterations);
  j += ", \"duration_ms\": " + std::to_string(spec.durationMs);
  j += ", \"start_roundup\": " + std::to_string(spec.roundup);
  j += ", \"asked_unix_ms\": " + std::to_string(t.askedUnixMs);
  if (rank >= 0) j += ", \"rank\": " + std::to_string(rank);
  j += ", \"partial\": " + std::string(partial ? "true" : "false");
  std::string m;
  for (int r : missing) m += (m.empty() ? "" : ", ") + std::to_string(r);
  j += ", \"missing_ranks\": [" + m + "]";
  j += ", \"command\": " + jsonString(command) + "}";
  return j;
}

// Kineto's JSON with our objects first: after the opening brace, so the file stays one object.
bool withObjects(std::string& json, const std::string& objects) {
  const size_t brace = json.find('{');
  if (brace == std::string::npos) return false;
  json.insert(brace + 1, "\n  " + objects + ",");
  return true;
}

}  // namespace

std::string defaultCaptureOut(const std::vector<ProcessInfo>& targets, const std::string& here, int64_t unixMs) {
  const std::string stem = targets.empty() ? "python" : scriptStem(targets.front().commandLine);
  std::string name = "attnscope-capture-" + stem + "-" + stampOf(unixMs);
  if (targets.size() == 1) name += "-" + std::to_string(targets.front().pid) + ".json";
  return (fs::path(here) / name).string();
}

Placement placeTraces(const CaptureOutcome& o, const std::string& out, const std::string& command) {
  const CaptureSpec& spec = o.spec;
  Placement p;
  const bool several = o.targets.size() > 1;
  std::error_code ec;
  p.folder = several;
  p.out = out;
  if (!several && fs::is_directory(out, ec) && !o.targets.empty())
    p.out = (fs::path(out) / ("capture-" + std::to_string(o.targets.front().process.pid) + ".json")).string();
  // Ranks: torchrun's RANK when every process has one and none twice; else in the order given.
  std::vector<int> ranks;
  std::set<int> seen;
  bool envRanks = true;
  for (const TargetStatus& t : o.targets) {
    if (t.process.rank < 0 || !seen.insert(t.process.rank).second) envRanks = false;
    ranks.push_back(t.process.rank);
  }
  if (!envRanks)
    for (size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<int>(i);
  std::vector<int> missing;
  for (size_t i = 0; i < o.targets.size(); ++i)
    if (o.targets[i].phase != TargetPhase::Written) missing.push_back(ranks[i]);
  p.partial = !missing.empty() && o.written() > 0;
  if (o.written() == 0) return p;
  if (several) {
    fs::create_directories(p.out, ec);
    if (!fs::is_directory(p.out, ec)) {
      p.error = p.out + ": cannot make this folder (" + ec.message() + ")";
      return p;
    }
  }
  for (size_t i = 0; i < o.targets.size(); ++i) {
    const TargetStatus& t = o.targets[i];
    if (t.phase != TargetPhase::Written) continue;
    std::string json;
    if (!readFile(t.kinetoFile, &json)) {
      p.error = t.kinetoFile + ": cannot read the trace Kineto wrote";
      return p;
    }
    const int rank = several ? ranks[i] : t.process.rank;
    std::string objects = "\"attnscope_capture\": " + captureObject(o, t, spec, rank, p.partial, missing, command);
    const int world =
        t.process.worldSize > 0 ? t.process.worldSize : (several ? static_cast<int>(o.targets.size()) : -1);
    if (rank >= 0 && world > 0 && json.find("\"distributedInfo\"") == std::string::npos)
      objects += ",\n  \"distributedInfo\": {\"rank\": " + std::to_string(rank) +
                 ", \"world_size\": " + std::to_string(world) + "}";
    PlacedTrace pt;
    pt.pid = t.process.pid;
    pt.rank = rank;
    pt.path = several ? (fs::path(p.out) / ("rank-" + std::to_string(rank) + ".json")).string() : p.out;
    if (const LoadResult r = parseTrace(json, t.kinetoFile); r.ok()) pt.timing = stepTiming(*r.store);
    const bool marked =
        spec.iterations > 0 && !pt.timing.ends.empty() && json.find("\"ProfilerStep#") == std::string::npos;
    if (!withObjects(json, objects) || (marked && !withStepEvents(json, stepEvents(pt.timing)))) {
      p.error = t.kinetoFile + ": Kineto's trace is not a JSON object with traceEvents";
      return p;
    }
    std::string why;
    if (!writeFileAtomic(pt.path, json, &why)) {
      p.error = why;
      return p;
    }
    fs::remove(t.kinetoFile, ec);
    p.traces.push_back(pt);
  }
  if (p.partial) {
    std::string m;
    for (int r : missing) m += (m.empty() ? "" : ", ") + std::to_string(r);
    p.notes.push_back("partial: " + std::to_string(missing.size()) + " of " + std::to_string(o.targets.size()) +
                      " processes wrote no trace (rank " + m + "); the folder holds the others, each marked partial");
  }
  return p;
}

Alignment placedAlignment(const Placement& p) {
  std::vector<StepTiming> timings;
  std::vector<int> ranks;
  for (const PlacedTrace& t : p.traces) {
    timings.push_back(t.timing);
    ranks.push_back(t.rank);
  }
  return alignmentOf(timings, ranks);
}

bool removeWorkDir(const CaptureOutcome& o, const std::string& workDir) {
  if (workDir.empty()) return false;
  for (const TargetStatus& t : o.targets)
    if (t.askedMs > 0 && t.phase != TargetPhase::Written && t.phase != TargetPhase::Exited) return false;
  std::error_code ec;
  fs::remove_all(workDir, ec);
  return !ec;
}

void markPendingRequests(const CaptureOutcome& o, const std::string& workDir) {
  std::string lines;
  for (const TargetStatus& t : o.targets)
    if (t.askedMs > 0 && t.phase != TargetPhase::Written && t.phase != TargetPhase::Exited)
      lines += std::to_string(t.process.pid) + " " + std::to_string(t.process.startTicks) + "\n";
  std::string why;
  if (!lines.empty()) writeFileAtomic(workDir + "/pending", lines, &why);
}

std::vector<std::string> pendingRequestsFor(const std::vector<ProcessInfo>& targets) {
  std::vector<std::string> out;
  std::set<std::string> roots{"/tmp"};
  for (const ProcessInfo& t : targets)
    if (!t.traceDir.empty()) roots.insert(t.traceDir);
  std::error_code ec;
  for (const std::string& root : roots)
    for (const auto& e : fs::directory_iterator(root, ec)) {
      if (!e.path().filename().string().starts_with("attnscope-capture-")) continue;
      std::string text;
      if (!readFile((e.path() / "pending").string(), &text)) continue;
      std::istringstream in(text);
      int pid = 0;
      uint64_t start = 0;
      while (in >> pid >> start)
        for (const ProcessInfo& t : targets) {
          if (t.pid != pid || t.startTicks != start) continue;
          bool written = false;
          for (const auto& f : fs::directory_iterator(e.path(), ec))
            if (f.path().filename().string().ends_with("_" + std::to_string(pid) + ".json")) written = true;
          if (!written)
            out.push_back("process " + std::to_string(pid) + " still holds the request of an earlier capture (" +
                          e.path().string() +
                          "): Kineto takes one at a time, so this one waits until that one has "
                          "run at its start step (or times out)");
        }
    }
  return out;
}

}  // namespace attnscope::capture
