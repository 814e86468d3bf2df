#include <unistd.h>

#include <climits>
#include <iostream>

#include "attnscope/run_config.h"
#include "cli_args.h"
#include "commands.h"

#ifdef ATTNSCOPE_HAVE_ENGINE
#include "engine.h"
#endif

namespace attnscope::cli {

namespace {
std::string selfExe() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("attnscope-cli");
}
}  // namespace

int cmdRun(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      std::cout << kRunHelp;
      return kExitOk;
    }
  }
  RunConfig cfg;
  if (auto err = parseRunArgs(args, &cfg)) throw UsageError(*err);
#ifdef ATTNSCOPE_HAVE_ENGINE
  return engine::run(cfg, selfExe());
#else
  (void)selfExe;
  throw UsageError(
      "run: this attnscope-cli was built without the engine (LibTorch and CUPTI were not found); "
      "rebuild with ATTNSCOPE_ENGINE=ON scripts/build");
#endif
}

}  // namespace attnscope::cli
