// `attnscope-cli capture PID...`: a running torch job profiled at any moment, without a restart, all
// its ranks on the same optimizer step (core/capture). This file is the command's face: options,
// the targets refused or expanded, Ctrl-C, the progress, the result placed and explained.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <filesystem>
#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "core/capture/capture_align.h"
#include "core/capture/capture_output.h"
#include "core/capture/capture_session.h"
#include "core/explain/explanation.h"
#include "core/ranks/job.h"
#include "core/snapshot/trace_snapshot.h"

namespace attnscope::cli {

namespace {

using namespace attnscope::capture;
namespace fs = std::filesystem;

constexpr int kExitNothingCaptured = 3;
constexpr int kExitCancelled = 130;
constexpr int kDefaultIterations = 3;
constexpr int kDefaultRoundupSeveral = 20;

const char* kCaptureHelp =
    "usage: attnscope-cli capture PID... [--iterations N | --duration-ms T] [--start-roundup K]\n"
    "                             [--out FILE|DIR] [--record-shapes] [--with-stack] [--with-modules]\n"
    "                             [--timeout S]\n"
    "       attnscope-cli capture --list\n"
    "\n"
    "Profiles a torch job that is already running, at any moment, without restarting it: a training\n"
    "script, each rank of a torchrun job, or a server. The job must have been started with\n"
    "KINETO_USE_DAEMON=1 in its environment (or with attnscope-cli record --on-demand): torch then\n"
    "polls the host's `dynolog` endpoint every 5 s and runs unprofiled until asked. When no dynolog\n"
    "daemon runs, attnscope serves that endpoint itself for the length of the capture; when one runs,\n"
    "it asks the daemon on its RPC port. PID is a Python process with torch, or a launcher (torchrun):\n"
    "its torch processes below it are the ranks.\n"
    "\n"
    "With several processes, every one starts on the same optimizer step (the next multiple of\n"
    "--start-roundup) and the traces go to a folder of rank-R.json that attnscope-cli ranks and the\n"
    "Ranks window open. The result is written atomically and explain's headline is printed.\n"
    "\n"
    "  --iterations N       capture N optimizer steps (default 3)\n"
    "  --duration-ms T      capture T milliseconds instead (a server, or a job without torch.optim)\n"
    "  --start-roundup K    start on an optimizer step that is a multiple of K (default 1 for one\n"
    "                       process, 20 for several: their requests arrive up to a poll apart)\n"
    "  --out FILE|DIR       where the trace goes (default attnscope-capture-SCRIPT-TIME[-PID].json);\n"
    "                       a folder for several processes\n"
    "  --record-shapes      record input shapes (torch's record_shapes; always with several processes:\n"
    "                       the ranks analysis matches gloo's collectives by their sizes)\n"
    "  --with-stack         record Python stacks (torch's with_stack)\n"
    "  --with-modules       record nn.Module scopes (torch's with_modules)\n"
    "  --timeout S          wait at most S seconds for the job's first poll and for its start step\n"
    "                       (default 60); the capture itself is waited for while the job runs\n"
    "  --list               list this host's Python processes with torch loaded, ready or not\n"
    "\n"
    "Ctrl-C stops at once: the job is told nothing more and keeps running (a request it already took\n"
    "stays with it: Kineto cannot withdraw one; the message says where its trace will land).\n"
    "Exit codes: 0 captured, 2 a process refused (not ready, not torch, not ours) or bad usage,\n"
    "3 nothing captured or only part of a job (the reason per process), 130 cancelled.\n";

std::atomic<int> gCancel{0};

extern "C" void onSignal(int) { gCancel.fetch_add(1); }

int parsePid(const std::string& s) {
  int pid = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), pid);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || pid <= 0)
    throw UsageError("capture: '" + s + "' is not a process id");
  return pid;
}

int intOption(Args& a, const std::string& name, int dflt) {
  const auto v = a.number(name);
  if (!v) return dflt;
  if (*v > 100000000) throw UsageError("capture: " + name + " is too large");
  return static_cast<int>(*v);
}

std::string currentDir() {
  std::error_code ec;
  const fs::path p = fs::current_path(ec);
  return ec ? std::string(".") : p.string();
}

int listProcesses() {
  const std::vector<ProcessInfo> ps = listTorchProcesses();
  if (ps.empty()) {
    std::cout << "no Python process with torch loaded that this user may read runs on this host\n";
    return kExitOk;
  }
  for (const ProcessInfo& p : ps) {
    std::cout << p.pid << "  " << (p.ready ? "ready    " : "not ready") << "  "
              << (p.rank >= 0 ? "rank " + std::to_string(p.rank) + "  " : std::string()) << p.commandLine << "\n";
  }
  if (std::any_of(ps.begin(), ps.end(), [](const ProcessInfo& p) { return !p.ready; }))
    std::cout << "\nnot ready: started without KINETO_USE_DAEMON=1. " << readinessFix(ps.front()) << "\n";
  return kExitOk;
}

// The processes to capture: each PID as given when it is a torch process, a launcher's torch ranks
// otherwise. Throws UsageError (exit 2) naming the first one refused.
std::vector<ProcessInfo> targetsOf(const std::vector<std::string>& pids) {
  std::vector<ProcessInfo> out;
  for (const std::string& s : pids) {
    const ProcessInfo p = probeProcess(parsePid(s));
    if (p.exists && p.readable && !(p.python && p.torch)) {
      std::vector<ProcessInfo> ranks = torchDescendants(p.pid);
      if (!ranks.empty()) {
        std::cerr << "[attnscope] " << p.pid << " (" << p.exe << ") launches " << ranks.size()
                  << " torch process(es): capturing them:";
        for (const ProcessInfo& r : ranks) std::cerr << " " << r.pid;
        std::cerr << "\n";
        for (ProcessInfo& r : ranks) out.push_back(std::move(r));
        continue;
      }
    }
    if (p.exists && p.python && p.torch && p.ready) {
      // A launcher that imports torch itself (torchrun's agent): its ranks, when it has some.
      std::vector<ProcessInfo> ranks = torchDescendants(p.pid);
      if (!ranks.empty()) {
        std::cerr << "[attnscope] " << p.pid << " launches " << ranks.size() << " torch process(es): capturing them:";
        for (const ProcessInfo& r : ranks) std::cerr << " " << r.pid;
        std::cerr << "\n";
        for (ProcessInfo& r : ranks) out.push_back(std::move(r));
        continue;
      }
    }
    if (!p.problem.empty()) throw UsageError("capture: " + p.problem);
    out.push_back(p);
  }
  for (const ProcessInfo& p : out)
    if (!p.problem.empty()) throw UsageError("capture: " + p.problem);
  std::sort(out.begin(), out.end(), [](const ProcessInfo& a, const ProcessInfo& b) { return a.pid < b.pid; });
  out.erase(
      std::unique(out.begin(), out.end(), [](const ProcessInfo& a, const ProcessInfo& b) { return a.pid == b.pid; }),
      out.end());
  return out;
}

std::string headlineOf(const std::string& path) {
  try {
    const EventStore store = loadOrThrow(path, ReaderLimits{});
    const auto snap = snapshotOf(store);
    std::string h = snap->explanation->diagnosis.headline;
    if (h.empty() && !snap->explanation->diagnosis.steps.empty())
      h = "no cause stands out in the captured steps (attnscope-cli explain shows each step)";
    return h;
  } catch (const std::exception& e) {
    return std::string("(could not read it back: ") + e.what() + ")";
  }
}

void sayTargets(const CaptureOutcome& o) {
  for (const TargetStatus& t : o.targets) {
    if (t.phase == TargetPhase::Written) continue;
    std::cerr << "  process " << t.process.pid
              << (t.process.rank >= 0 ? " (rank " + std::to_string(t.process.rank) + ")" : "") << ": "
              << phaseText(t.phase) << (t.detail.empty() ? "" : ": " + t.detail) << "\n";
    if (!t.partialFile.empty()) std::cerr << "    what Kineto had begun to write is kept: " << t.partialFile << "\n";
  }
}

}  // namespace

int cmdCapture(Args& a) {
  if (a.wantsHelp()) {
    std::cout << kCaptureHelp;
    return kExitOk;
  }
  if (a.flag("--list")) {
    a.positionals(0, 0);
    return listProcesses();
  }
  CaptureSpec spec;
  spec.iterations = intOption(a, "--iterations", 0);
  spec.durationMs = intOption(a, "--duration-ms", 0);
  if (spec.iterations == 0 && spec.durationMs == 0) spec.iterations = kDefaultIterations;
  const auto roundup = a.number("--start-roundup");
  const bool shapes = a.flag("--record-shapes");
  spec.withStack = a.flag("--with-stack");
  spec.withModules = a.flag("--with-modules");
  CaptureOptions opt;
  opt.timeoutSec = intOption(a, "--timeout", 60);
  if (opt.timeoutSec < 1) throw UsageError("capture: --timeout must be at least 1 second");
  const auto outArg = a.value("--out", "-o");
  const std::vector<std::string> pidArgs = a.positionals(1, 4096);
  const std::vector<ProcessInfo> targets = targetsOf(pidArgs);
  spec.roundup = roundup ? static_cast<int>(std::min<uint64_t>(*roundup, kMaxRoundup + 1))
                         : (targets.size() > 1 ? kDefaultRoundupSeveral : 1);
  // Several ranks: the ranks analysis tells a gloo group's worker threads by the collectives' sizes.
  spec.recordShapes = shapes || targets.size() > 1;
  if (const std::string bad = validateSpec(spec); !bad.empty()) throw UsageError("capture: " + bad);

  const std::string here = currentDir();
  std::string out = outArg ? *outArg : defaultCaptureOut(targets, here, unixMs());
  if (!out.empty() && out.front() != '/') out = (fs::path(here) / out).lexically_normal().string();
  std::error_code ec;
  if (targets.size() == 1 && !fs::is_directory(out, ec) && !fs::is_directory(fs::path(out).parent_path(), ec))
    throw UsageError("capture: --out " + out + ": no folder " + fs::path(out).parent_path().string());
  if (targets.size() > 1 && fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw UsageError("capture: --out " + out + " is a file: several processes write a folder of rank-R.json");

  std::string why;
  opt.workDir = prepareWorkDir(targets, &why);
  if (opt.workDir.empty()) throw UsageError("capture: " + why);
  opt.spec = spec;
  if (const char* port = std::getenv("ATTNSCOPE_DYNOLOG_PORT")) opt.daemonPort = std::atoi(port);
  opt.cancel = &gCancel;
  std::string lastLine;
  opt.onProgress = [&](const CaptureProgress& p) {
    if (p.message == lastLine) return;
    lastLine = p.message;
    std::cerr << "[attnscope] " << (p.elapsedMs + 500) / 1000 << " s: " << p.message << "\n";
  };
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);

  for (const std::string& w : pendingRequestsFor(targets)) std::cerr << "[attnscope] note: " << w << "\n";
  std::cerr << "[attnscope] capturing " << specSummary(spec) << " of " << targets.size()
            << (targets.size() == 1 ? " process" : " processes") << ":";
  for (const ProcessInfo& p : targets) std::cerr << " " << p.pid;
  std::cerr << "\n";
  std::vector<std::string> jobNotes;
  const CaptureOutcome o = captureJob(targets, opt, !roundup, &jobNotes);
  std::string command = "attnscope-cli capture";
  for (const std::string& s : pidArgs) command += " " + s;

  if (!o.failure.empty()) {
    removeWorkDir(o, opt.workDir);
    std::cerr << "attnscope-cli: capture: " << o.failure << "\n";
    return kExitNothingCaptured;
  }
  markPendingRequests(o, opt.workDir);
  if (o.cancelled) {
    if (o.anyAsked()) {
      std::cerr << "attnscope-cli: capture: cancelled. The job keeps running and was told nothing more; it had "
                   "already taken the request (Kineto cannot withdraw one), so its trace will still be written "
                   "to "
                << opt.workDir << "/ when its capture ends; attnscope leaves it there\n";
    } else {
      removeWorkDir(o, opt.workDir);
      std::cerr << "attnscope-cli: capture: cancelled before the job was asked anything; it keeps running, "
                   "untouched\n";
    }
    return kExitCancelled;
  }
  const Placement placed = placeTraces(o, out, command);
  if (!placed.error.empty()) throw UsageError("capture: " + placed.error);
  if (o.written() == 0) {
    std::cerr << "attnscope-cli: capture: nothing was captured (" << o.routeText() << ")\n";
    sayTargets(o);
    removeWorkDir(o, opt.workDir);
    return kExitNothingCaptured;
  }
  removeWorkDir(o, opt.workDir);
  std::cout << (placed.partial ? "captured (partial): " : "captured: ") << placed.out << "\n";
  std::cout << "  " << specSummary(o.spec) << ", " << o.routeText() << "\n";
  for (const PlacedTrace& t : placed.traces) {
    std::cout << "  "
              << (placed.folder ? "rank " + std::to_string(t.rank) + " (process " + std::to_string(t.pid) + "): "
                                : "process " + std::to_string(t.pid) + ": ")
              << t.steps() << (t.steps() == 1 ? " optimizer step" : " optimizer steps") << " in the trace";
    if (!placed.folder) std::cout << "\n  " << headlineOf(t.path);
    std::cout << "\n";
  }
  for (const std::string& n : jobNotes) std::cout << "note: " << n << "\n";
  for (const std::string& n : o.notes) std::cout << "note: " << n << "\n";
  for (const std::string& n : placed.notes) std::cout << "note: " << n << "\n";
  sayTargets(o);
  if (placed.folder) {
    const Alignment align = placedAlignment(placed);
    if (align.known)
      std::cout << "  " << align.text
                << (align.aligned ? ""
                                  : ": capture again with a larger --start-roundup (K x a step well above the 5 s "
                                    "the requests may take to reach every rank)")
                << "\n";
    std::vector<std::string> files;
    for (const PlacedTrace& t : placed.traces) files.push_back(t.path);
    std::string err;
    const ranks::JobReport job = ranks::openJob(files, ReaderLimits{}, &err);
    if (err.empty() && !job.headline.empty()) std::cout << "  " << job.headline << "\n";
    std::cout << "open the job: attnscope-cli ranks " << placed.out << "   (or attnscope --job " << placed.out << ")\n";
  } else {
    std::cout << "open it: attnscope " << placed.out << "   (or attnscope-cli explain " << placed.out << ")\n";
  }
  return placed.partial ? kExitNothingCaptured : kExitOk;
}

}  // namespace attnscope::cli
