// P6: GUI start to the first painted frame with the bundled capture. Starts
// `attnscope --startup-probe [TRACE]` N times (Qt's offscreen platform unless
// --platform says otherwise, e.g. xcb under Xvfb) and measures, on
// CLOCK_MONOTONIC from just before fork(), when main() began, when the window
// first painted and when the timeline first painted with the trace loaded.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "bench_util.h"

namespace {

long long nowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

// Runs the GUI once; returns its stdout ("" on failure) and t0.
std::string startOnce(const std::vector<std::string>& argv, const std::string& platform, bool verbose, long long* t0) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  *t0 = nowNs();
  const pid_t pid = fork();
  if (pid < 0) return {};
  if (pid == 0) {
    dup2(fds[1], 1);
    if (!verbose) {
      const int null = open("/dev/null", O_WRONLY);
      if (null >= 0) dup2(null, 2);  // Qt's platform chatter
    }
    close(fds[0]);
    close(fds[1]);
    setenv("QT_QPA_PLATFORM", platform.c_str(), 1);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[512];
  ssize_t n;
  alarm(60);  // a GUI that never paints must not hang the benchmark
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  alarm(0);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out : std::string();
}

}  // namespace

int benchStart(const std::vector<std::string>& args) {
  int runs = 5;
  bool verbose = false;
  std::string platform = "offscreen", gui = bench::selfDir() + "/attnscope", trace;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool more = i + 1 < args.size();
    if (args[i] == "--runs" && more)
      runs = std::max(1, std::atoi(args[++i].c_str()));
    else if (args[i] == "--platform" && more)
      platform = args[++i];
    else if (args[i] == "--gui" && more)
      gui = args[++i];
    else if (args[i] == "--verbose")
      verbose = true;
    else if (!args[i].empty() && args[i][0] != '-')
      trace = args[i];
    else {
      std::cerr
          << "usage: attnscope-bench start [--runs N] [--platform offscreen|xcb] [--gui PATH] [--verbose] [TRACE]\n";
      return 2;
    }
  }
  std::vector<std::string> argv{gui, "--startup-probe"};
  if (!trace.empty()) argv.push_back(trace);
  signal(SIGALRM, [](int) {});  // interrupts read(); the child is then reaped as it ends
  std::vector<double> mainMs, firstMs, traceMs;
  for (int r = 0; r < runs; ++r) {
    long long t0 = 0;
    const std::string out = startOnce(argv, platform, verbose, &t0);
    const double m = bench::keyValue(out, "main_ns"), f = bench::keyValue(out, "first_frame_ns"),
                 t = bench::keyValue(out, "trace_frame_ns");
    if (out.empty() || m <= 0 || f <= 0 || t <= 0) {
      std::cerr << "attnscope-bench start: " << gui << " --startup-probe did not report a frame (platform " << platform
                << "; --verbose shows its stderr)\n";
      return 1;
    }
    const double t0d = static_cast<double>(t0);
    mainMs.push_back((m - t0d) / 1e6);
    firstMs.push_back((f - t0d) / 1e6);
    traceMs.push_back((t - t0d) / 1e6);
    std::printf("run %d: main() at %.1f ms, first frame %.1f ms, trace drawn %.1f ms\n", r + 1, mainMs.back(),
                firstMs.back(), traceMs.back());
  }
  const double worst = *std::max_element(traceMs.begin(), traceMs.end());
  std::printf(
      "platform=%s runs=%d main_ms_p50=%.1f first_frame_ms_p50=%.1f trace_frame_ms_p50=%.1f "
      "trace_frame_ms_max=%.1f\n",
      platform.c_str(), runs, bench::median(mainMs), bench::median(firstMs), bench::median(traceMs), worst);
  return 0;
}
