// attnscope-engine: what `attnscope-cli run` starts (and what re-runs itself
// for child passes). It links LibTorch and CUPTI; nothing else does.
#include <unistd.h>

#include <climits>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "core/engine/engine.h"
#include "core/run/run_config.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args.front() == "run") args.erase(args.begin());  // as the CLI would say it
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      std::cout << attnscope::runHelp();
      return 0;
    }
  }
  attnscope::RunConfig cfg;
  if (auto err = attnscope::parseRunArgs(args, &cfg)) {
    std::cerr << "attnscope-cli: " << *err << "\n";
    return 2;
  }
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  const std::string self = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string(argv[0]);
  try {
    return attnscope::engine::run(cfg, self);
  } catch (const std::bad_alloc&) {
    std::cerr << "attnscope-cli: run: out of host memory\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "attnscope-cli: run: internal error: " << e.what() << "\n";
    return 1;
  }
}
