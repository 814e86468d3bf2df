// `attnscope-cli run`: the options are parsed and checked here (no LibTorch
// needed), then the engine executable, which links LibTorch and CUPTI, is
// started in this process's place. The CLI itself never loads LibTorch, so
// table/info/explain start in milliseconds.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "core/run/run_config.h"

namespace attnscope::cli {

namespace {

std::string engineExe() {
  if (const char* env = std::getenv("ATTNSCOPE_ENGINE_EXE")) return env;
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string self = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  const auto slash = self.find_last_of('/');
  return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/attnscope-engine";
}

}  // namespace

int cmdRun(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      std::cout << runHelp();
      return kExitOk;
    }
  }
  RunConfig cfg;
  if (auto err = parseRunArgs(args, &cfg)) throw UsageError(*err);
  const std::string exe = engineExe();
  if (::access(exe.c_str(), X_OK) != 0)
    throw UsageError("run: this attnscope-cli was built without the engine (no " + exe +
                     "). The engine links LibTorch from PyPI's torch wheel, which the Debian package cannot depend "
                     "on: build attnscope from source with ATTNSCOPE_ENGINE=ON scripts/build (it installs "
                     "torch==2.11.0) and cmake --install the build (README, \"Install\"). Every other command "
                     "works without it.");
  std::vector<std::string> argvStore = {exe};
  argvStore.insert(argvStore.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argvStore) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::cout.flush();
  ::execv(exe.c_str(), argv.data());
  std::cerr << "attnscope-cli: run: cannot start " << exe << ": " << std::strerror(errno) << "\n";
  return kExitInternal;
}

}  // namespace attnscope::cli
