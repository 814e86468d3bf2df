#include "core/engine/ranks_launch.h"

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <torch/cuda.h>
#include <unistd.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <iostream>
#include <vector>

#include "core/engine/measurement.h"

extern char** environ;

namespace attnscope::engine {

namespace {

constexpr int kExitOk = 0, kExitInternal = 1, kExitBad = 2, kExitOom = 3;
constexpr int kMaxRanks = 64;

std::array<std::atomic<pid_t>, kMaxRanks> gRanks{};

void stopRanks(int sig) {
  for (auto& p : gRanks)
    if (const pid_t c = p.load(); c > 0) ::kill(c, SIGTERM);
  if (sig) ::_exit(128 + sig);
}

void onTerminate(int sig) { stopRanks(sig); }

std::string defaultDir() {
  const auto t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "attnscope-run-%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

bool isDir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

int runRanks(const RunConfig& cfgIn, const std::string& selfExe) {
  RunConfig cfg = cfgIn;
  if (cfg.ranks > kMaxRanks) {
    std::cerr << "attnscope-cli: run: --ranks takes at most " << kMaxRanks << "\n";
    return kExitBad;
  }
  if (cfg.backend == RankBackend::Nccl) {
    const auto gpus = static_cast<int>(torch::cuda::device_count());
    if (gpus < cfg.ranks) {
      std::cerr << "attnscope-cli: run: --backend nccl --ranks " << cfg.ranks
                << " needs one GPU per rank, but this machine has " << gpus
                << " CUDA device(s); use fewer ranks, or --backend gloo --device cpu\n";
      return kExitBad;
    }
    cfg.device = RunDevice::Cuda;
  } else if (cfg.device == RunDevice::Auto) {
    cfg.device = RunDevice::Cpu;
    std::cerr << "attnscope-cli: notice: --backend gloo runs the ranks on the CPU\n";
  }
  if (auto e = fitTimingToDevice(&cfg, cfg.device == RunDevice::Cuda)) {
    std::cerr << "attnscope-cli: " << *e << "\n";
    return kExitBad;
  }
  std::string dir = cfg.out.empty() ? defaultDir() : cfg.out;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.ends_with(".json")) {
    std::cerr << "attnscope-cli: run: with --ranks, --out names a folder (each rank writes rank-R.json in it), got "
              << dir << "\n";
    return kExitBad;
  }
  if (!isDir(dir) && ::mkdir(dir.c_str(), 0755) != 0) {
    std::cerr << "attnscope-cli: run: cannot make the folder " << dir << ": " << std::strerror(errno) << "\n";
    return kExitBad;
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    std::cerr << "attnscope-cli: run: cannot write in " << dir << ": " << std::strerror(errno) << "\n";
    return kExitBad;
  }
  // A folder holding more ranks' traces would read as one job with these: refused, never deleted.
  for (int r = cfg.ranks; r < kMaxRanks; ++r) {
    const std::string stale = dir + "/rank-" + std::to_string(r) + ".json";
    if (::access(stale.c_str(), F_OK) == 0) {
      std::cerr << "attnscope-cli: run: " << stale << " is from another run with more ranks; the folder would "
                << "not read as one job: choose another --out or remove it\n";
      return kExitBad;
    }
  }

  // The store the ranks meet at: this process serves it, on a port the kernel picks (no race for one).
  c10d::TCPStoreOptions so;
  so.port = 0;
  so.isServer = true;
  so.waitWorkers = false;
  c10::intrusive_ptr<c10d::TCPStore> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", so);
  } catch (const std::exception& e) {
    std::cerr << "attnscope-cli: run: cannot serve the ranks' TCPStore on 127.0.0.1: " << e.what() << "\n";
    return kExitInternal;
  }
  const int port = store->getPort();
  progress(cfg, "start", 0,
           "running " + std::to_string(cfg.ranks) + " ranks (" + std::string(backendName(cfg.backend)) + ", store " +
               "127.0.0.1:" + std::to_string(port) + ") into " + dir);

  struct sigaction sa {};
  sa.sa_handler = onTerminate;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  std::vector<pid_t> pids(static_cast<size_t>(cfg.ranks), 0);
  std::vector<std::string> outs;
  for (int r = 0; r < cfg.ranks; ++r) {
    RunConfig c = cfg;
    c.rank = r;
    c.storePort = port;
    c.out = dir + "/rank-" + std::to_string(r) + ".json";
    if (c.device == RunDevice::Cuda) c.deviceIndex = r;
    c.progressJson = cfg.progressJson && r == 0;  // rank 0 speaks for the job's progress
    outs.push_back(c.out);
    std::vector<std::string> args = {selfExe, "run"};
    for (auto& a : toRunArgs(c)) args.push_back(a);
    pid_t pid = 0;
    const int spawned = spawnWithSignalsHeld(std::move(args), [&](pid_t p) {
      pid = p;
      gRanks[static_cast<size_t>(r)] = p;
    });
    if (spawned != 0) {
      std::cerr << "attnscope-cli: run: cannot start rank " << r << " (" << selfExe << "): " << std::strerror(spawned)
                << "\n";
      stopRanks(0);
      for (int k = 0; k < r; ++k) ::waitpid(pids[static_cast<size_t>(k)], nullptr, 0);
      return kExitInternal;
    }
    pids[static_cast<size_t>(r)] = pid;
  }

  // Every rank waited for; the first failure stops the others (they would wait in a collective).
  int rc = kExitOk, left = cfg.ranks;
  while (left > 0) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    int r = -1;
    for (int k = 0; k < cfg.ranks; ++k)
      if (pids[static_cast<size_t>(k)] == pid) r = k;
    if (r < 0) continue;
    gRanks[static_cast<size_t>(r)] = 0;
    --left;
    const int code = WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
    if (code == 0 || rc != kExitOk) continue;
    std::cerr << "attnscope-cli: run: rank " << r << " "
              << (code < 0 ? "was killed by signal " + std::to_string(-code)
                           : "failed with exit code " + std::to_string(code))
              << "; stopping the other ranks\n";
    rc = code == kExitBad ? kExitBad : code == kExitOom ? kExitOom : kExitInternal;
    stopRanks(0);
  }
  if (rc != kExitOk) {
    for (const auto& o : outs) ::unlink(o.c_str());  // no partial job
    return rc;
  }
  progress(cfg, "done", 0, "wrote " + outs.front());
  if (!cfg.progressJson)
    std::cout << "wrote " << dir << "/ (" << cfg.ranks << " ranks, rank-0.json to rank-" << cfg.ranks - 1
              << ".json; attnscope-cli ranks " << dir << " reads them as one job)\n";
  return kExitOk;
}

int spawnWithSignalsHeld(std::vector<std::string> args, const std::function<void(pid_t)>& started) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  sigprocmask(SIG_BLOCK, &block, &old);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigmask(&attr, &old);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (spawned == 0) started(pid);
  sigprocmask(SIG_SETMASK, &old, nullptr);  // a signal that came meanwhile is handled now
  return spawned;
}

}  // namespace attnscope::engine
