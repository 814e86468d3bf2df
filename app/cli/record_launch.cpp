#include "record_launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <iostream>

#include "record_report.h"

extern char** environ;

namespace attnscope::cli {

namespace {

constexpr size_t kTailLines = 30;
int gSignalPipe[2] = {-1, -1};

void onSignal(int sig) {
  const unsigned char b = static_cast<unsigned char>(sig);
  const int saved = errno;
  [[maybe_unused]] const ssize_t n = ::write(gSignalPipe[1], &b, 1);
  errno = saved;
}

struct Stream {
  int fd = -1;
  std::string buf;
  enum Kind { Out, Err, Progress } kind = Out;
};

struct Child {
  int rank = 0;
  pid_t pid = -1;
  bool exited = false;
  int status = 0;
  Stream streams[3];
  std::deque<std::string> tail;
  bool cuptiTaken = false;
};

using Clock = std::chrono::steady_clock;

}  // namespace

int freeLocalPort() {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  int port = 0;
  socklen_t len = sizeof a;
  if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(s);
  return port;
}

LaunchResult launchRanks(const RecordConfig& cfg, const std::string& python, const std::string& runner,
                         const std::string& cwd, const std::vector<RankLaunch>& ranks) {
  LaunchResult res;
  const bool several = ranks.size() > 1;
  const int port = several ? freeLocalPort() : 0;
  if (::pipe2(gSignalPipe, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("record: cannot make a pipe");
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  struct sigaction oldInt {
  }, oldTerm{}, oldHup{};
  ::sigaction(SIGINT, &sa, &oldInt);
  ::sigaction(SIGTERM, &sa, &oldTerm);
  ::sigaction(SIGHUP, &sa, &oldHup);

  std::vector<Child> children(ranks.size());
  const pid_t self = ::getpid();
  for (size_t r = 0; r < ranks.size(); ++r) {
    Child& c = children[r];
    c.rank = ranks[r].rank;
    int fds[3][2];
    for (auto& p : fds)
      if (::pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("record: cannot make a pipe");
    // Everything the child needs, made before fork (only exec-safe calls after it).
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      const std::string_view v(*e);
      if (v.starts_with("ATTNSCOPE_RECORD_") || v.starts_with("PYTHONUNBUFFERED=")) continue;
      if (several &&
          (v.starts_with("RANK=") || v.starts_with("LOCAL_RANK=") || v.starts_with("WORLD_SIZE=") ||
           v.starts_with("MASTER_ADDR=") || v.starts_with("MASTER_PORT=") || v.starts_with("LOCAL_WORLD_SIZE=")))
        continue;
      if (cfg.sync == RecordSync::Blocking && v.starts_with("CUDA_LAUNCH_BLOCKING=")) continue;
      env.emplace_back(v);
    }
    env.push_back("ATTNSCOPE_RECORD_CONFIG=" + ranks[r].config);
    env.push_back("ATTNSCOPE_RECORD_FD=" + std::to_string(fds[2][1]));
    env.push_back("PYTHONUNBUFFERED=1");
    if (cfg.sync == RecordSync::Blocking) env.push_back("CUDA_LAUNCH_BLOCKING=1");
    if (several) {
      const std::string n = std::to_string(ranks.size()), rk = std::to_string(ranks[r].rank);
      for (const std::string& kv :
           std::vector<std::string>{"RANK=" + rk, "LOCAL_RANK=" + rk, "WORLD_SIZE=" + n, "LOCAL_WORLD_SIZE=" + n,
                                    "GROUP_RANK=0", "ROLE_RANK=" + rk, "ROLE_WORLD_SIZE=" + n,
                                    std::string("MASTER_ADDR=127.0.0.1"), "MASTER_PORT=" + std::to_string(port)})
        env.push_back(kv);
    }
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string py = python, run = runner;
    std::vector<char*> argv = {py.data(), run.data(), nullptr};
    const int progressFd = fds[2][1];
    std::cout.flush();
    std::cerr.flush();
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("record: cannot start a process: ") + std::strerror(errno));
    if (pid == 0) {
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != self) ::_exit(127);
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::signal(SIGHUP, SIG_DFL);
      ::dup2(fds[0][1], 1);
      ::dup2(fds[1][1], 2);
      ::fcntl(progressFd, F_SETFD, 0);
      if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
        const char msg[] = "attnscope: cannot enter the working folder\n";
        [[maybe_unused]] const ssize_t n = ::write(2, msg, sizeof msg - 1);
        ::_exit(127);
      }
      ::execve(argv[0], argv.data(), envp.data());
      const char msg[] = "attnscope: cannot start the Python interpreter\n";
      [[maybe_unused]] const ssize_t n = ::write(2, msg, sizeof msg - 1);
      ::_exit(127);
    }
    ::setpgid(pid, pid);  // also here, so a signal sent right away finds the group
    c.pid = pid;
    for (int k = 0; k < 3; ++k) {
      ::close(fds[k][1]);
      c.streams[k].fd = fds[k][0];
      c.streams[k].kind = static_cast<Stream::Kind>(k);
    }
  }

  auto signalAll = [&](int sig) {
    for (const Child& c : children)
      if (!c.exited) ::kill(-c.pid, sig);
  };
  auto emitLine = [&](Child& c, Stream& s, std::string line) {
    const std::string prefix = several ? "[rank " + std::to_string(c.rank) + "] " : "";
    if (s.kind == Stream::Progress) {
      if (cfg.progressJson) {
        if (several && line.size() > 1 && line.front() == '{')
          line = "{\"rank\": " + std::to_string(c.rank) + ", " + line.substr(1);
        std::cout << line << "\n" << std::flush;
      } else {
        const auto at = line.find("\"message\": \"");
        if (at != std::string::npos) {
          const auto end = line.find('"', at + 12);
          std::cerr << "[attnscope] " << prefix << line.substr(at + 12, end - at - 12) << "\n";
        }
      }
      return;
    }
    if (s.kind == Stream::Err) {
      if (line.find("MULTIPLE_SUBSCRIBERS") != std::string::npos) c.cuptiTaken = true;
      if (isProfilerNoise(line)) return;  // our profiler's, on a machine without a GPU: not the script's
      c.tail.push_back(line);
      if (c.tail.size() > kTailLines) c.tail.pop_front();
    }
    // The script's own output: stdout stays stdout, unless stdout carries progress JSON.
    std::ostream& os = (s.kind == Stream::Out && !cfg.progressJson) ? std::cout : std::cerr;
    os << prefix << line << "\n";
    os.flush();
  };

  std::optional<Clock::time_point> killAt;
  std::optional<Clock::time_point> stopOthersAt;
  int cancels = 0;
  for (;;) {
    std::vector<pollfd> pfds;
    std::vector<std::pair<size_t, int>> who;
    pfds.push_back({gSignalPipe[0], POLLIN, 0});
    who.emplace_back(SIZE_MAX, 0);
    bool open = false;
    for (size_t i = 0; i < children.size(); ++i)
      for (int k = 0; k < 3; ++k)
        if (children[i].streams[k].fd >= 0) {
          pfds.push_back({children[i].streams[k].fd, POLLIN, 0});
          who.emplace_back(i, k);
          open = true;
        }
    bool allExited = true;
    for (Child& c : children) {
      if (c.exited) continue;
      int st = 0;
      const pid_t w = ::waitpid(c.pid, &st, WNOHANG);
      if (w == c.pid) {
        c.exited = true;
        c.status = st;
        const bool failed = !WIFEXITED(st) || WEXITSTATUS(st) != 0;
        if (failed && several && !stopOthersAt && !res.cancelled)
          stopOthersAt = Clock::now() + std::chrono::seconds(10);
      } else {
        allExited = false;
      }
    }
    if (allExited && !open) break;
    const auto now = Clock::now();
    if (allExited && open && !killAt) killAt = now + std::chrono::seconds(2);  // output left by a grandchild
    if (allExited && killAt && now >= *killAt) break;
    if (stopOthersAt && now >= *stopOthersAt && !allExited) {
      res.notes.push_back("a rank failed, so the ranks still running were stopped 10 s later (as torchrun does)");
      signalAll(SIGTERM);
      stopOthersAt.reset();
      killAt = now + std::chrono::seconds(5);
    }
    if (killAt && now >= *killAt && !allExited) {
      signalAll(SIGKILL);
      killAt = now + std::chrono::seconds(2);
    }
    const int n = ::poll(pfds.data(), pfds.size(), 200);
    if (n < 0 && errno != EINTR) break;
    for (size_t i = 0; n > 0 && i < pfds.size(); ++i) {
      if (!(pfds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (who[i].first == SIZE_MAX) {
        unsigned char sig = 0;
        while (::read(gSignalPipe[0], &sig, 1) == 1) {
          ++cancels;
          res.cancelled = true;
          if (cancels == 1) {
            signalAll(sig == SIGINT ? SIGINT : SIGTERM);
            killAt = Clock::now() + std::chrono::seconds(5);
          } else {
            signalAll(SIGKILL);
          }
        }
        continue;
      }
      Child& c = children[who[i].first];
      Stream& s = c.streams[who[i].second];
      char buf[8192];
      const ssize_t got = ::read(s.fd, buf, sizeof buf);
      if (got <= 0) {
        if (!s.buf.empty()) emitLine(c, s, std::move(s.buf));
        s.buf.clear();
        ::close(s.fd);
        s.fd = -1;
        continue;
      }
      s.buf.append(buf, static_cast<size_t>(got));
      size_t nl;
      while ((nl = s.buf.find('\n')) != std::string::npos) {
        emitLine(c, s, s.buf.substr(0, nl));
        s.buf.erase(0, nl + 1);
      }
      if (s.buf.size() > (1u << 20)) {  // a line without end: pass it on in pieces
        emitLine(c, s, std::move(s.buf));
        s.buf.clear();
      }
    }
  }
  for (Child& c : children) {
    for (Stream& s : c.streams)
      if (s.fd >= 0) ::close(s.fd);
    if (!c.exited) {
      ::kill(-c.pid, SIGKILL);
      ::waitpid(c.pid, &c.status, 0);
    }
    RankExit e;
    e.rank = c.rank;
    if (WIFEXITED(c.status)) {
      e.exitCode = WEXITSTATUS(c.status);
    } else {
      e.exitCode = -1;
      e.signal = WIFSIGNALED(c.status) ? WTERMSIG(c.status) : 0;
    }
    e.stderrTail.assign(c.tail.begin(), c.tail.end());
    e.cuptiTaken = c.cuptiTaken;
    res.ranks.push_back(std::move(e));
  }
  ::sigaction(SIGINT, &oldInt, nullptr);
  ::sigaction(SIGTERM, &oldTerm, nullptr);
  ::sigaction(SIGHUP, &oldHup, nullptr);
  ::close(gSignalPipe[0]);
  ::close(gSignalPipe[1]);
  return res;
}

}  // namespace attnscope::cli
