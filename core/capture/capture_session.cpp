#include "core/capture/capture_session.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

#include "core/capture/dynolog_endpoint.h"
#include "core/capture/kineto_wire.h"

namespace attnscope::capture {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kDefaultPollPeriodMs = 5000;  // ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS
constexpr int64_t kAskToleranceMs = 300;        // a poll this early still counts as "the next one"
constexpr int kMinPollWaitSec = 15;             // a ready process polls within ~10 s of the bind

bool finalPhase(TargetPhase p) {
  return p == TargetPhase::Written || p == TargetPhase::Exited || p == TargetPhase::TimedOut ||
         p == TargetPhase::Unmatched;
}

void enter(TargetStatus& t, TargetPhase p, int64_t now) {
  t.phase = p;
  t.phaseSinceMs = now;
}

bool fileExists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

bool fileWithData(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

std::string secondsText(int64_t ms) { return std::to_string((ms + 500) / 1000) + " s"; }

// When the targets are asked: each at its next poll at or after `firstAsk` (steady ms). With one
// target, at its first fresh poll; with several, once all polled freshly, from the target after the
// widest gap between their predicted next polls, so that the asks lie closest together.
struct AskPlan {
  bool released = false;
  int64_t firstAskMs = 0;   // steady
  int64_t windowMs = 0;     // predicted: first ask to last
  int64_t startUnixMs = 0;  // a capture by time: the one start of every target
};

AskPlan planAsks(const std::vector<TargetStatus>& ts, const CaptureSpec& spec, int64_t now) {
  AskPlan plan;
  std::vector<int64_t> next, periods;
  for (const TargetStatus& t : ts) {
    if (finalPhase(t.phase)) continue;
    if (t.polls < 2) return plan;  // someone has not polled freshly yet
    const int64_t period = t.periodMs > 0 ? t.periodMs : kDefaultPollPeriodMs;
    periods.push_back(period);
    int64_t n = t.lastPollMs + period;
    while (n < now) n += period;
    next.push_back(n);
  }
  if (next.empty()) return plan;
  plan.released = true;
  if (next.size() == 1) {
    plan.firstAskMs = now;  // the single target: at this very poll
  } else {
    std::sort(periods.begin(), periods.end());
    const int64_t period = periods[periods.size() / 2];
    // The polls' phases on a circle of one period: start after the widest gap between them, so that
    // the asks fall in the rest of the circle, as close together as they can be.
    std::sort(next.begin(), next.end());
    int64_t widest = -1;
    size_t after = 0;
    for (size_t i = 0; i < next.size(); ++i) {
      const int64_t gap = i + 1 < next.size() ? next[i + 1] - next[i] : next.front() + period - next[i];
      if (gap > widest) {
        widest = gap;
        after = (i + 1) % next.size();
      }
    }
    plan.firstAskMs = next[after];
    plan.windowMs = std::max<int64_t>(0, period - widest);
  }
  const int64_t askUnix = unixMs() + (plan.firstAskMs - now);
  plan.startUnixMs = earliestStartMs(spec, askUnix + plan.windowMs + kAskToleranceMs);
  return plan;
}

std::string logFileOf(const CaptureOptions& o) { return o.workDir + "/" + o.logName + ".json"; }

void say(const CaptureOptions& o, const std::vector<TargetStatus>& ts, int64_t t0, const std::string& msg) {
  if (!o.onProgress) return;
  CaptureProgress p;
  p.message = msg;
  p.targets = &ts;
  p.elapsedMs = steadyMs() - t0;
  o.onProgress(p);
}

// What the targets wait for now, in one line.
std::string stateLine(const std::vector<TargetStatus>& ts, const CaptureSpec& spec) {
  std::map<TargetPhase, int> n;
  for (const TargetStatus& t : ts) ++n[t.phase];
  const size_t all = ts.size();
  auto of = [&](TargetPhase p) {
    return std::to_string(n[p]) + (all > 1 ? " of " + std::to_string(all) : std::string());
  };
  if (n[TargetPhase::Busy])
    return of(TargetPhase::Busy) +
           " busy: another profiler is active in the job (torch.profiler, or another "
           "capture); waiting for it to end";
  if (n[TargetPhase::WaitingForPoll])
    return "waiting for the job to poll (Kineto asks every 5 s): " + of(TargetPhase::WaitingForPoll) + " not yet";
  if (n[TargetPhase::Polled]) return "the job polls; asking it";
  if (n[TargetPhase::Capturing]) return "capturing: " + of(TargetPhase::Capturing);
  if (n[TargetPhase::Asked])
    return spec.iterations > 0 ? "asked; waiting for the start step (" + specSummary(spec) + ")"
                               : "asked; the capture starts at the set time (after Kineto's warm-up)";
  return "done";
}

}  // namespace

int64_t steadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t unixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string phaseText(TargetPhase p) {
  switch (p) {
    case TargetPhase::WaitingForPoll:
      return "waiting for its poll";
    case TargetPhase::Polled:
      return "polling";
    case TargetPhase::Busy:
      return "busy (another profiler)";
    case TargetPhase::Asked:
      return "asked";
    case TargetPhase::Capturing:
      return "capturing";
    case TargetPhase::Written:
      return "written";
    case TargetPhase::Exited:
      return "exited";
    case TargetPhase::TimedOut:
      return "timed out";
    case TargetPhase::Unmatched:
      return "unknown to the daemon";
  }
  return "?";
}

int CaptureOutcome::written() const {
  return static_cast<int>(std::count_if(targets.begin(), targets.end(),
                                        [](const TargetStatus& t) { return t.phase == TargetPhase::Written; }));
}

bool CaptureOutcome::anyAsked() const {
  return std::any_of(targets.begin(), targets.end(), [](const TargetStatus& t) { return t.askedMs > 0; });
}

std::string CaptureOutcome::routeText() const {
  return route == Route::Daemon ? "through the dynolog daemon on this host"
                                : "through attnscope's own dynolog endpoint (no daemon runs here)";
}

std::string prepareWorkDir(const std::vector<ProcessInfo>& targets, std::string* error) {
  // A folder the processes name in KINETO_ONDEMAND_TRACE_DIR (newer Kineto writes only there or
  // under /tmp), else /tmp.
  std::string base = "/tmp";
  if (!targets.empty() && !targets.front().traceDir.empty()) base = targets.front().traceDir;
  std::string tmpl = base + "/attnscope-capture-XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    *error = "cannot make a folder in " + base + " for the traces: " + std::strerror(errno);
    return {};
  }
  // Kineto writes as the process's user: when that is not us (we are root), the folder is theirs.
  if (!targets.empty() && targets.front().uid != ::getuid() && ::getuid() == 0) {
    if (::chown(tmpl.c_str(), targets.front().uid, static_cast<gid_t>(-1)) != 0) {
      *error = "cannot give " + tmpl + " to uid " + std::to_string(targets.front().uid);
      return {};
    }
  }
  return tmpl;
}

bool settleTargets(std::vector<TargetStatus>& ts, const CaptureOptions& o, int64_t now) {
  const int64_t timeoutMs = int64_t{o.timeoutSec} * 1000;
  bool all = true;
  for (TargetStatus& t : ts) {
    if (finalPhase(t.phase)) continue;
    if (!t.kinetoFile.empty() && fileWithData(t.kinetoFile)) {
      enter(t, TargetPhase::Written, now);
      continue;
    }
    if (!stillRunning(t.process)) {
      const bool asked = t.askedMs > 0;
      if (asked && fileWithData(t.kinetoFile + ".tmp")) t.partialFile = t.kinetoFile + ".tmp";
      t.detail = !asked ? "it exited before it was asked"
                 : t.phase == TargetPhase::Capturing
                     ? "it exited during its capture: Kineto keeps a capture in memory until its end, so nothing "
                       "was written" +
                           std::string(t.partialFile.empty() ? "" : " but the start of the file") +
                           " (and torch 2.11's Kineto may crash a process that exits mid-capture, at its exit)"
                     : "it exited before attnscope saw its capture start (a capture that began in the last few "
                       "seconds writes nothing either, and torch 2.11's Kineto may crash a process that exits "
                       "with a capture armed, at its exit)";
      enter(t, TargetPhase::Exited, now);
      continue;
    }
    const int64_t in = now - t.phaseSinceMs;
    switch (t.phase) {
      case TargetPhase::WaitingForPoll:
        if (in > std::max(timeoutMs, int64_t{kMinPollWaitSec} * 1000)) {
          t.detail = "it never polled in " + secondsText(in) +
                     ": Kineto's poller is not running in it (torch imported before KINETO_USE_DAEMON was "
                     "set? KINETO_IPC_SOCKET_DIR pointing elsewhere?)";
          enter(t, TargetPhase::TimedOut, now);
        }
        break;
      case TargetPhase::Polled:
        if (in > timeoutMs) {
          t.detail = "it was not asked: the other processes never polled freshly within " + secondsText(in);
          enter(t, TargetPhase::TimedOut, now);
        }
        break;
      case TargetPhase::Busy:
        if (in > timeoutMs) {
          t.detail = "another profiler was active in it for the whole " + secondsText(in) +
                     " (torch.profiler in the script, or another capture): a process has one profiler at a time";
          enter(t, TargetPhase::TimedOut, now);
        }
        break;
      case TargetPhase::Asked:
        if (o.spec.iterations > 0 && in > timeoutMs) {
          t.detail = "no optimizer step started the capture within " + secondsText(in) +
                     ": the job may not call optimizer.step() (a server, an evaluation), be between epochs or "
                     "stuck, or a request from an earlier capture is still pending in it. Capture by time "
                     "instead (--duration-ms 2000), or wait longer (--timeout 300). Kineto cannot withdraw a "
                     "request: if the job steps later it still captures then, into " +
                     t.kinetoFile;
          enter(t, TargetPhase::TimedOut, now);
        }
        [[fallthrough]];
      case TargetPhase::Capturing:
        if (o.spec.durationMs > 0 && unixMs() > t.startUnixMs + o.spec.durationMs + timeoutMs) {
          t.detail = "its capture by time did not come back within " + secondsText(timeoutMs) +
                     " of its end (Kineto refused the request, or a request from an earlier capture was pending)";
          enter(t, TargetPhase::TimedOut, now);
        }
        break;
      default:
        break;
    }
    if (!finalPhase(t.phase)) all = false;
  }
  return all;
}

CaptureOutcome runCapture(const std::vector<ProcessInfo>& processes, const CaptureOptions& o) {
  CaptureOutcome out;
  out.spec = o.spec;
  const int64_t t0 = steadyMs();
  std::vector<TargetStatus> ts;
  for (const ProcessInfo& p : processes) {
    TargetStatus t;
    t.process = p;
    t.phaseSinceMs = t0;
    t.kinetoFile = kinetoTraceFile(logFileOf(o), p.pid);
    ts.push_back(std::move(t));
  }
  // One endpoint per socket folder the targets use (the abstract name for most).
  std::map<std::string, std::unique_ptr<DynologEndpoint>> eps;
  for (const ProcessInfo& p : processes) {
    if (eps.count(p.socketDir)) continue;
    auto ep = std::make_unique<DynologEndpoint>();
    std::string why;
    const DynologEndpoint::Bind b = ep->bind(p.socketDir, &why, o.socketName);
    if (b == DynologEndpoint::Bind::Held) {
      out = runDaemonCapture(std::move(ts), o);
      if (!out.failure.empty()) out.failure = why + ", and " + out.failure;
      return out;
    }
    if (b == DynologEndpoint::Bind::Failed) {
      out.failure = why;
      out.targets = std::move(ts);
      return out;
    }
    eps[p.socketDir] = std::move(ep);
  }
  std::vector<DynologEndpoint*> list;
  for (auto& [dir, ep] : eps) list.push_back(ep.get());
  std::map<int, size_t> byPid;
  for (size_t i = 0; i < ts.size(); ++i) byPid[ts[i].process.pid] = i;

  AskPlan plan;
  int64_t firstAsk = 0, lastAsk = 0;
  const bool debug = std::getenv("ATTNSCOPE_CAPTURE_DEBUG") != nullptr;  // every poll on stderr
  std::string shown;
  int64_t nextSettle = 0;
  for (;;) {
    if (o.cancel && o.cancel->load()) {
      out.cancelled = true;
      break;
    }
    const int ready = waitReadable(list, 200);
    Datagram d;
    while (ready >= 0 && list[static_cast<size_t>(ready)]->receive(&d)) {
      DynologEndpoint* ep = list[static_cast<size_t>(ready)];
      const auto msg = decodeMessage(d.bytes);
      if (!msg) continue;
      if (msg->type == "ctxt") {  // a GPU process registering: answered as dynolog would
        ep->reply(d, encodeContextReply(1));
        continue;
      }
      const auto poll = msg->type == "req" ? decodePoll(msg->payload) : std::nullopt;
      if (!poll) continue;
      const auto it = byPid.find(poll->pids.front());
      std::string config;
      const int64_t now = steadyMs();
      if (debug)
        std::fprintf(stderr, "[capture] %.3f s: poll from %d (type %d)%s\n", static_cast<double>(now - t0) / 1000,
                     poll->pids.front(), poll->configType, it == byPid.end() ? " (not a target)" : "");
      if (it != byPid.end() && !(o.cancel && o.cancel->load())) {
        TargetStatus& t = ts[it->second];
        if (t.polls >= 1 && now - t.lastPollMs > 250) t.periodMs = now - t.lastPollMs;
        ++t.polls;
        t.lastPollMs = now;
        const bool fresh = t.polls >= 2;  // the first may be a retry of a poll made before our bind
        switch (t.phase) {
          case TargetPhase::WaitingForPoll:
          case TargetPhase::Polled:
          case TargetPhase::Busy: {
            if (!fresh) {
              if (t.phase == TargetPhase::WaitingForPoll) enter(t, TargetPhase::Polled, now);
              break;
            }
            if (!poll->activitiesFree()) {
              if (t.phase != TargetPhase::Busy) enter(t, TargetPhase::Busy, now);
              t.busySeen = true;
              break;
            }
            if (t.phase != TargetPhase::Polled) enter(t, TargetPhase::Polled, now);
            if (!plan.released) plan = planAsks(ts, o.spec, now);
            if (!plan.released || now < plan.firstAskMs - kAskToleranceMs) break;
            const int64_t sendUnix = unixMs();
            const int64_t start =
                o.spec.durationMs > 0 ? std::max(plan.startUnixMs, earliestStartMs(o.spec, sendUnix)) : 0;
            if (!startTimeAcceptable(o.spec, start, sendUnix)) break;  // never a config Kineto refuses
            config = kinetoConfig(o.spec, logFileOf(o), start);
            t.askedMs = now;
            t.askedUnixMs = sendUnix;
            t.startUnixMs = start;
            enter(t, TargetPhase::Asked, now);
            firstAsk = firstAsk ? firstAsk : now;
            lastAsk = now;
            break;
          }
          case TargetPhase::Asked:
            if (!poll->activitiesFree()) {
              enter(t, TargetPhase::Capturing, now);
            } else if (o.spec.iterations > 0 && !fileExists(t.kinetoFile) && !fileExists(t.kinetoFile + ".tmp")) {
              // Asked again at each poll until the request took: Kineto drops a request by steps that
              // reaches a process before its first optimizer step (no count yet), and one that
              // reaches it while an earlier one waits for its start step is ignored ("another profile
              // request is pending"), changing nothing. Once taken, Kineto opens the trace's .tmp.
              config = kinetoConfig(o.spec, logFileOf(o), 0);
              ++t.asks;
            }
            break;
          default:
            break;
        }
      }
      ep->reply(d, encodeConfigReply(config));
    }
    const int64_t now = steadyMs();
    if (now >= nextSettle) {
      nextSettle = now + 200;
      if (settleTargets(ts, o, now)) break;
      const std::string line = stateLine(ts, o.spec);
      if (line != shown) {
        shown = line;
        say(o, ts, t0, line);
      }
    }
  }
  if (firstAsk && ts.size() > 1) out.askWindowMs = lastAsk - firstAsk;
  for (const TargetStatus& t : ts)
    if (t.busySeen && t.phase == TargetPhase::Written)
      out.notes.push_back("process " + std::to_string(t.process.pid) +
                          " had another profiler active when attnscope came; the capture waited for it to end");
  out.targets = std::move(ts);
  return out;
}

}  // namespace attnscope::capture
