// attnscope-cli: the command-line face of attnscope.
// Exit codes: 0 ok, 2 bad input or usage (message on stderr), 1 internal error.
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli_args.h"
#include "commands.h"

namespace {

const char* kUsage =
    "usage: attnscope-cli COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  table TRACE   torch's key_averages table (text, csv, json, md)\n"
    "  info TRACE    events per family, lanes, span, devices, bad-event counts, ledger\n"
    "  explain TRACE steps, GPU work per step, sync waits and what they awaited, verdicts\n"
    "  why TRACE NAME  where a row's GPU time is (its kernels, its children's, or where it went)\n"
    "  compare A B   two runs: per-step medians, ranked changes (B - A), steps, rows\n"
    "  ranks PATH... a distributed job's traces (one per rank): collectives matched, clocks aligned,\n"
    "                stragglers and what they were doing, hangs\n"
    "  overview TRACE  each step split into kernel, memcpy, memset, communication, CPU, idle\n"
    "  kernels TRACE   GPU work by kernel: calls, times, launch shape, occupancy, who launched it\n"
    "  memory TRACE    allocated/reserved per device, the peak and what was live at it\n"
    "  modules TRACE   the nn.Module tree with host time and the GPU time it launched\n"
    "  export TRACE --parquet DIR  Parquet tables shaped like Perfetto's (slice, thread_track,\n"
    "                counter, flow, args) with torch's columns, for DuckDB and pandas\n"
    "  run [OPTIONS] run the attention workload under LibTorch and record it (engine)\n"
    "  record [OPTIONS] -- python SCRIPT ARGS  your own script under torch.profiler, with the\n"
    "                same toggles (steps, wrapping, sync); one trace per rank with --nproc\n"
    "\n"
    "TRACE is a Chrome-trace JSON exported by torch.profiler (.json or .json.gz).\n"
    "Run 'attnscope-cli COMMAND --help' for a command's options.\n"
    "Exit codes: 0 ok, 2 bad input or usage, 1 internal error.\n";

}  // namespace

// With ATTNSCOPE_REPORT_PEAK_MEMORY set, the last line on stderr is
// "peak_rss_kb=N": this process's own high-water mark (VmHWM), which a
// parent's wait4() cannot give (the exec'ing child inherits its parent's).
// The tests and benchmarks that bound memory read it.
struct PeakMemoryReport {
  ~PeakMemoryReport() {
    if (!std::getenv("ATTNSCOPE_REPORT_PEAK_MEMORY")) return;
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("VmHWM:", 0) == 0)
        std::cerr << "peak_rss_kb=" << std::strtoll(line.c_str() + 6, nullptr, 10) << "\n";
  }
};

int main(int argc, char** argv) {
  using namespace attnscope::cli;
  const PeakMemoryReport report;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;
    return kExitBadInput;
  }
  const std::string cmd = args.front();
  args.erase(args.begin());
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << kUsage;
    return kExitOk;
  }
  try {
    if (cmd == "run") return cmdRun(args);
    if (cmd == "record") return cmdRecord(args);
    Args a(cmd, std::move(args));
    if (cmd == "table") return cmdTable(a);
    if (cmd == "info") return cmdInfo(a);
    if (cmd == "explain") return cmdExplain(a);
    if (cmd == "why") return cmdWhy(a);
    if (cmd == "overview" || cmd == "kernels" || cmd == "memory" || cmd == "modules") return cmdView(cmd, a);
    if (cmd == "compare") return cmdCompare(a);
    if (cmd == "export") return cmdExport(a);
    if (cmd == "ranks") return cmdRanks(a);
    if (cmd == "capture") return cmdCapture(a);
    std::cerr << "attnscope-cli: unknown command '" << cmd << "'\n\n" << kUsage;
    return kExitBadInput;
  } catch (const UsageError& e) {
    std::cerr << "attnscope-cli: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::cerr << "attnscope-cli: out of memory\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "attnscope-cli: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}
