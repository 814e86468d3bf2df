#include "core/capture/process_probe.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace attnscope::capture {

namespace {

bool readWhole(const std::string& path, std::string* out, int* err = nullptr) {
  errno = 0;
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    if (err) *err = errno ? errno : EACCES;
    return false;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

std::string baseName(const std::string& p) {
  const size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

// "KEY=VALUE\0..." -> the value of `key`, with whether it is there.
bool envValue(const std::string& environ, const std::string& key, std::string* value) {
  size_t at = 0;
  while (at < environ.size()) {
    size_t end = environ.find('\0', at);
    if (end == std::string::npos) end = environ.size();
    const std::string_view kv(environ.data() + at, end - at);
    if (kv.size() > key.size() && kv.compare(0, key.size(), key) == 0 && kv[key.size()] == '=') {
      *value = std::string(kv.substr(key.size() + 1));
      return true;
    }
    at = end + 1;
  }
  return false;
}

int envInt(const std::string& environ, const std::string& key) {
  std::string v;
  if (!envValue(environ, key, &v) || v.empty()) return -1;
  char* end = nullptr;
  const long x = std::strtol(v.c_str(), &end, 10);
  return (*end == '\0' && x >= 0 && x < (1L << 30)) ? static_cast<int>(x) : -1;
}

// /proc/PID/stat: "pid (comm) state ppid ... starttime(22nd)"; comm may hold spaces and ')'.
bool readStat(const std::string& root, int pid, int* ppid, uint64_t* start) {
  std::string s;
  if (!readWhole(root + "/" + std::to_string(pid) + "/stat", &s)) return false;
  const size_t close = s.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream in(s.substr(close + 1));
  std::string state;
  in >> state >> *ppid;
  std::string field;
  for (int i = 5; i < 22 && in >> field; ++i) {
  }
  in >> *start;
  return !in.fail();
}

// Inodes of the sockets bound to Kineto's client name (@dynoconfigclient<uuid>).
std::set<std::string> kinetoClientInodes(const std::string& root) {
  std::set<std::string> out;
  std::string t;
  if (!readWhole(root + "/net/unix", &t)) return out;
  std::istringstream in(t);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string num, ref, proto, flags, type, st, inode, path;
    f >> num >> ref >> proto >> flags >> type >> st >> inode >> path;
    if (path.find("dynoconfigclient") != std::string::npos) out.insert(inode);
  }
  return out;
}

bool holdsSocket(const std::string& root, int pid, const std::set<std::string>& inodes) {
  if (inodes.empty()) return false;
  const std::string dir = root + "/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return false;
  bool found = false;
  while (dirent* e = ::readdir(d)) {
    char buf[128];
    const std::string link = dir + "/" + e->d_name;
    const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
    if (n <= 0) continue;
    const std::string target(buf, static_cast<size_t>(n));
    if (target.rfind("socket:[", 0) == 0 && inodes.count(target.substr(8, target.size() - 9))) {
      found = true;
      break;
    }
  }
  ::closedir(d);
  return found;
}

std::vector<int> allPids(const std::string& root) {
  std::vector<int> out;
  DIR* d = ::opendir(root.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end == '\0' && pid > 0) out.push_back(static_cast<int>(pid));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

ProcessInfo probeWith(int pid, const std::string& root, const std::set<std::string>& clientInodes) {
  ProcessInfo p;
  p.pid = pid;
  const std::string dir = root + "/" + std::to_string(pid);
  struct stat st {};
  if (pid <= 0 || ::stat(dir.c_str(), &st) != 0 || !readStat(root, pid, &p.ppid, &p.startTicks)) {
    p.problem = "there is no process " + std::to_string(pid) + " on this host";
    return p;
  }
  p.exists = true;
  p.uid = st.st_uid;
  std::string cmd;
  if (readWhole(dir + "/cmdline", &cmd)) {
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    while (!cmd.empty() && cmd.back() == ' ') cmd.pop_back();
    p.commandLine = cmd;
  }
  char buf[4096];
  const ssize_t n = ::readlink((dir + "/exe").c_str(), buf, sizeof buf - 1);
  if (n > 0) p.exe = baseName(std::string(buf, static_cast<size_t>(n)));
  if (p.exe.empty()) {
    std::string comm;
    if (readWhole(dir + "/comm", &comm)) p.exe = comm.substr(0, comm.find('\n'));
  }
  std::string environ, maps;
  int err = 0;
  p.readable = readWhole(dir + "/environ", &environ, &err) && readWhole(dir + "/maps", &maps, &err);
  // A zombie or a kernel thread has an empty map: not Python.
  p.python = p.exe.rfind("python", 0) == 0 || maps.find("/libpython3") != std::string::npos;
  p.torch = maps.find("/libtorch_cpu.so") != std::string::npos || maps.find("/libtorch.so") != std::string::npos;
  std::string v;
  const bool variable = envValue(environ, "KINETO_USE_DAEMON", &v);
  p.kinetoClient = p.readable && holdsSocket(root, pid, clientInodes);
  p.ready = variable || p.kinetoClient;
  if (envValue(environ, "KINETO_IPC_SOCKET_DIR", &v)) p.socketDir = v;
  if (envValue(environ, "KINETO_ONDEMAND_TRACE_DIR", &v)) p.traceDir = v;
  if (envValue(environ, "SLURM_JOB_ID", &v)) p.slurmJobId = std::strtoll(v.c_str(), nullptr, 10);
  p.rank = envInt(environ, "RANK");
  p.localRank = envInt(environ, "LOCAL_RANK");
  p.worldSize = envInt(environ, "WORLD_SIZE");

  const std::string who = "process " + std::to_string(pid) + (p.exe.empty() ? "" : " (" + p.exe + ")");
  if (!p.readable)
    p.problem = p.uid != ::getuid()
                    ? who + " belongs to another user (uid " + std::to_string(p.uid) +
                          "): attnscope may not read its environment or memory map; capture it as that user, or as root"
                    : who + ": attnscope may not read its environment or memory map (permission denied)";
  else if (!p.python)
    p.problem = who + " is not a Python process" + (p.commandLine.empty() ? "" : " (" + p.commandLine + ")");
  else if (!p.torch)
    p.problem = who + " is Python but has not loaded torch (no libtorch in its memory map)";
  else if (!p.ready)
    p.problem =
        who + " was not started ready for capture: KINETO_USE_DAEMON is not set in its environment. " + readinessFix(p);
  return p;
}

}  // namespace

ProcessInfo probeProcess(int pid, const std::string& procRoot) {
  return probeWith(pid, procRoot, kinetoClientInodes(procRoot));
}

bool stillRunning(const ProcessInfo& p, const std::string& procRoot) {
  int ppid = 0;
  uint64_t start = 0;
  if (!readStat(procRoot, p.pid, &ppid, &start) || start != p.startTicks) return false;
  std::string s;
  if (!readWhole(procRoot + "/" + std::to_string(p.pid) + "/stat", &s)) return false;
  const size_t close = s.rfind(')');
  return close != std::string::npos && close + 2 < s.size() && s[close + 2] != 'Z' && s[close + 2] != 'X';
}

std::vector<ProcessInfo> listTorchProcesses(const std::string& procRoot) {
  const std::set<std::string> inodes = kinetoClientInodes(procRoot);
  std::vector<ProcessInfo> out;
  const int self = static_cast<int>(::getpid());
  for (int pid : allPids(procRoot)) {
    if (pid == self) continue;
    ProcessInfo p = probeWith(pid, procRoot, inodes);
    if (p.readable && p.python && p.torch) out.push_back(std::move(p));
  }
  return out;
}

std::vector<ProcessInfo> torchDescendants(int pid, const std::string& procRoot) {
  std::map<int, std::vector<int>> children;
  for (int p : allPids(procRoot)) {
    int ppid = 0;
    uint64_t start = 0;
    if (readStat(procRoot, p, &ppid, &start)) children[ppid].push_back(p);
  }
  const std::set<std::string> inodes = kinetoClientInodes(procRoot);
  std::vector<ProcessInfo> out;
  std::deque<int> queue(children[pid].begin(), children[pid].end());
  while (!queue.empty()) {
    const int p = queue.front();
    queue.pop_front();
    ProcessInfo info = probeWith(p, procRoot, inodes);
    if (info.readable && info.python && info.torch) out.push_back(std::move(info));
    for (int c : children[p]) queue.push_back(c);
  }
  // A launcher under `pid` (torchrun's agent imports torch too) is not a rank: keep the torch processes
  // with no torch process under them.
  std::set<int> launchers;
  for (const ProcessInfo& p : out) {
    for (int up = p.ppid; up > 1 && up != pid;) {
      launchers.insert(up);
      int pp = 0;
      uint64_t start = 0;
      if (!readStat(procRoot, up, &pp, &start)) break;
      up = pp;
    }
  }
  std::erase_if(out, [&](const ProcessInfo& p) { return launchers.count(p.pid) > 0; });
  return out;
}

std::string readinessFix(const ProcessInfo& p) {
  (void)p;
  return "Kineto reads it when torch is imported, so it cannot be set from outside: start the job again "
         "with KINETO_USE_DAEMON=1 in its environment (KINETO_USE_DAEMON=1 python train.py, "
         "KINETO_USE_DAEMON=1 torchrun ..., or attnscope-cli record --on-demand -- python train.py); it "
         "then runs unprofiled, ready for a capture at any moment";
}

}  // namespace attnscope::capture
