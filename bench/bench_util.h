// Small helpers shared by the benchmarks: medians, running a peer in python3,
// reading key=value figures, and peak RSS of a child process from the OS.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

double median(std::vector<double> v);

// "FILE [--repeat N] [NO_PEER_FLAG]": the common arguments of load/aggregate.
struct FileArgs {
  std::string path;
  int repeat = 5;
  bool peer = true;    // false when NO_PEER_FLAG was given
  uint64_t chunk = 0;  // --chunk BYTES: the reader's chunk size (0: its default)
};
// Returns false (after a message on stderr) when FILE is missing.
bool parseFileArgs(const std::vector<std::string>& args, const char* bench, const char* noPeerFlag, FileArgs* out);

// Runs `python3 SCRIPT ARGS...` (ATTNSCOPE_PYTHON overrides python3) and
// returns its stdout ("" when it could not run or exited non-zero).
std::string runPython(const std::string& script, const std::vector<std::string>& args);

// The number after "KEY=" in text (the last occurrence), or -1.
double keyValue(const std::string& text, const std::string& key);

// The directory of the running executable (the other binaries sit there).
std::string selfDir();

// Runs argv[0] with argv, stdout to `stdoutPath` (or /dev/null when empty),
// and reports its wall time and peak resident set (wait4's ru_maxrss, from
// the kernel). Returns the exit status, or -1 when it could not start.
struct ChildRun {
  int status = -1;
  double wallS = 0;
  double userS = 0;
  double sysS = 0;
  long maxRssKb = 0;
};
// `cpus` ("0", "0,1"): the CPUs the child may run on (sched_setaffinity), all when empty; `stderrPath`:
// where its stderr goes (inherited when empty).
ChildRun runChild(const std::vector<std::string>& argv, const std::string& stdoutPath = {},
                  const std::string& cpus = {}, const std::string& stderrPath = {});

}  // namespace bench
