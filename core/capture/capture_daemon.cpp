// The route through a running dynolog daemon: its RPC port takes a 4-byte native-endian length and
// JSON {"fn": "setKinetOnDemandRequest", "config", "job_id", "pids", "process_limit"}, and answers
// {"processesMatched": [...], "activityProfilersTriggered": [...], "activityProfilersBusy": N, ...}
// (dynolog's SimpleJsonServer and `dyno gputrace`). The daemon hands the config to each process at its
// next poll (within 5 s); attnscope then watches for the files.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <simdjson.h>
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "core/capture/capture_session.h"
#include "core/text/json_out.h"

namespace attnscope::capture {

namespace {

constexpr int64_t kDaemonPollMs = 5000;  // the daemon answers the process's next poll

bool sendAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool recvAll(int fd, void* data, size_t n, int timeoutMs) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    pollfd f{fd, POLLIN, 0};
    if (::poll(&f, 1, timeoutMs) <= 0) return false;
    const ssize_t r = ::recv(fd, p, n, 0);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// One RPC to the daemon on localhost; the response's text, or empty and `error`.
std::string dynologRpc(int port, const std::string& request, std::string* error) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = "cannot make a TCP socket";
    return {};
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string resp;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    *error = "no dynolog daemon answers on port " + std::to_string(port) + " (" + std::strerror(errno) + ")";
  } else {
    const auto len = static_cast<int32_t>(request.size());
    int32_t rlen = 0;
    if (!sendAll(fd, &len, sizeof len) || !sendAll(fd, request.data(), request.size()))
      *error = "the dynolog daemon on port " + std::to_string(port) + " closed the connection";
    else if (!recvAll(fd, &rlen, sizeof rlen, 10000) || rlen <= 0 || rlen > (1 << 24))
      *error = "the dynolog daemon on port " + std::to_string(port) + " did not answer the request";
    else {
      resp.resize(static_cast<size_t>(rlen));
      if (!recvAll(fd, resp.data(), resp.size(), 10000)) {
        resp.clear();
        *error = "the dynolog daemon's answer was cut short";
      }
    }
  }
  ::close(fd);
  return resp;
}

}  // namespace

CaptureOutcome runDaemonCapture(std::vector<TargetStatus> ts, const CaptureOptions& o) {
  CaptureOutcome out;
  out.route = Route::Daemon;
  out.spec = o.spec;
  const int64_t t0 = steadyMs();
  // Kineto's job id is SLURM_JOB_ID (else 0): the daemon keys its processes by it, one request per id.
  std::map<int64_t, std::vector<size_t>> byJob;
  for (size_t i = 0; i < ts.size(); ++i) byJob[ts[i].process.slurmJobId].push_back(i);
  const int64_t sendUnix = unixMs();
  const int64_t start = o.spec.durationMs > 0 ? earliestStartMs(o.spec, sendUnix + kDaemonPollMs) : 0;
  const std::string logFile = o.workDir + "/" + o.logName + ".json";
  const std::string config = kinetoConfig(o.spec, logFile, start);
  for (const auto& [job, idx] : byJob) {
    std::string pids;
    for (size_t i : idx) pids += (pids.empty() ? "" : ", ") + std::to_string(ts[i].process.pid);
    const std::string req = "{\"fn\": \"setKinetOnDemandRequest\", \"config\": " + jsonString(config) +
                            ", \"job_id\": " + std::to_string(job) + ", \"pids\": [" + pids +
                            "], \"process_limit\": " + std::to_string(idx.size()) + "}";
    std::string why;
    const std::string resp = dynologRpc(o.daemonPort, req, &why);
    if (resp.empty()) {
      out.failure = why;
      out.targets = std::move(ts);
      return out;
    }
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (parser.parse(resp).get(doc) != simdjson::SUCCESS || !doc.is_object()) {
      out.failure = "the dynolog daemon answered something else than JSON: " + resp.substr(0, 200);
      out.targets = std::move(ts);
      return out;
    }
    auto pidSet = [&](const char* key) {
      std::set<int64_t> s;
      simdjson::dom::array a;
      if (doc[key].get(a) == simdjson::SUCCESS)
        for (simdjson::dom::element e : a) {
          int64_t v = 0;
          if (e.get(v) == simdjson::SUCCESS) s.insert(v);
        }
      return s;
    };
    const std::set<int64_t> matched = pidSet("processesMatched");
    const std::set<int64_t> triggered = pidSet("activityProfilersTriggered");
    for (size_t i : idx) {
      TargetStatus& t = ts[i];
      t.phaseSinceMs = t0;
      t.kinetoFile = kinetoTraceFile(logFile, t.process.pid);
      if (triggered.count(t.process.pid)) {
        t.phase = TargetPhase::Asked;
        t.askedMs = t0;
        t.askedUnixMs = sendUnix;
        t.startUnixMs = start;
      } else if (matched.count(t.process.pid)) {
        t.phase = TargetPhase::TimedOut;
        t.busySeen = true;
        t.detail =
            "the daemon says its activity profiler is busy: another profiler is active in it "
            "(torch.profiler in the script, or another capture)";
      } else {
        t.phase = TargetPhase::Unmatched;
        t.detail =
            "the dynolog daemon does not know it (it matched no process): the daemon must run with "
            "--enable_ipc_monitor, and the job must have been started with KINETO_USE_DAEMON=1 (job id " +
            std::to_string(job) + ")";
      }
    }
  }
  int64_t last = -1;
  for (;;) {
    if (o.cancel && o.cancel->load()) {
      out.cancelled = true;
      break;
    }
    const int64_t now = steadyMs();
    if (settleTargets(ts, o, now)) break;
    if (o.onProgress && now - last >= 1000) {
      last = now;
      CaptureProgress p;
      p.message = "the daemon has the request; waiting for the traces";
      p.targets = &ts;
      p.elapsedMs = now - t0;
      o.onProgress(p);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  out.targets = std::move(ts);
  return out;
}

}  // namespace attnscope::capture
