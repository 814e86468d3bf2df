#include "bench_util.h"

#include "core/text/shell_quote.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace bench {

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

bool parseFileArgs(const std::vector<std::string>& args, const char* bench, const char* noPeerFlag, FileArgs* out) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--repeat" && i + 1 < args.size())
      out->repeat = std::max(1, std::atoi(args[++i].c_str()));
    else if (args[i] == noPeerFlag)
      out->peer = false;
    else if (args[i] == "--chunk" && i + 1 < args.size())
      out->chunk = std::strtoull(args[++i].c_str(), nullptr, 10);
    else
      out->path = args[i];
  }
  if (out->path.empty()) std::cerr << "attnscope-bench " << bench << ": missing FILE\n";
  return !out->path.empty();
}

std::string runPython(const std::string& script, const std::vector<std::string>& args) {
  const char* py = std::getenv("ATTNSCOPE_PYTHON");
  std::string cmd = std::string(py && *py ? py : "python3") + " " + attnscope::shellQuote(script);
  for (const auto& a : args) cmd += " " + attnscope::shellQuote(a);
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return {};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  return pclose(f) == 0 ? out : std::string();
}

double keyValue(const std::string& text, const std::string& key) {
  const std::string k = key + "=";
  size_t at = std::string::npos;
  for (size_t p = text.find(k); p != std::string::npos; p = text.find(k, p + 1))
    if (p == 0 || text[p - 1] == ' ' || text[p - 1] == '\n') at = p;
  if (at == std::string::npos) return -1;
  return std::atof(text.c_str() + at + k.size());
}

std::string selfDir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  const std::string p(buf, static_cast<size_t>(n));
  return p.substr(0, p.rfind('/'));
}

ChildRun runChild(const std::vector<std::string>& argv, const std::string& stdoutPath, const std::string& cpus,
                  const std::string& stderrPath) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (size_t at = 0; at < cpus.size();) {
    const size_t comma = std::min(cpus.find(',', at), cpus.size());
    CPU_SET(std::atoi(cpus.substr(at, comma - at).c_str()), &set);
    at = comma + 1;
  }
  ChildRun r;
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) return r;
  if (pid == 0) {
    const int fd =
        ::open(stdoutPath.empty() ? "/dev/null" : stdoutPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) ::dup2(fd, 1);
    if (!stderrPath.empty()) {
      const int efd = ::open(stderrPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (efd >= 0) ::dup2(efd, 2);
    }
    if (!cpus.empty()) ::sched_setaffinity(0, sizeof set, &set);
    ::execvp(cargv[0], cargv.data());
    _exit(127);
  }
  int status = 0;
  struct rusage ru {};
  if (::wait4(pid, &status, 0, &ru) < 0) return r;
  r.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.userS = static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) * 1e-6;
  r.sysS = static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) * 1e-6;
  r.maxRssKb = ru.ru_maxrss;
  return r;
}

}  // namespace bench
