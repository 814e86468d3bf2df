// `attnscope-cli record --on-demand -- COMMAND...`: the script runs unprofiled, ready for a capture at
// any moment (`attnscope-cli capture PID`, File > Capture Running Job…): the command is executed in
// place of attnscope-cli with KINETO_USE_DAEMON=1 in its environment, so its pid is the one printed
// and its exit status is the command's. Kineto's own log is quieted (KINETO_LOG_LEVEL=5) unless the
// user set it: while no capture serves the `dynolog` endpoint, Kineto logs a failed poll every 10 s.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "cli_args.h"
#include "commands.h"

namespace attnscope::cli {

const char* kRecordOnDemandHelp =
    "\n"
    "  --on-demand             run the command unprofiled, ready for a capture at any moment\n"
    "                          (attnscope-cli capture PID, or File > Capture Running Job…):\n"
    "                          KINETO_USE_DAEMON=1 in its environment (and KINETO_LOG_LEVEL=5\n"
    "                          unless set: Kineto logs a failed poll every 10 s while nothing\n"
    "                          serves it). The command replaces attnscope-cli: same pid, same exit\n"
    "                          status. Takes no other option: record --on-demand -- python\n"
    "                          train.py, or -- torchrun --nproc-per-node N train.py\n";

bool wantsOnDemand(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--") return false;
    if (a == "--on-demand") return true;
  }
  return false;
}

int cmdRecordOnDemand(const std::vector<std::string>& args) {
  std::vector<std::string> command;
  bool after = false;
  for (const std::string& a : args) {
    if (after) {
      command.push_back(a);
    } else if (a == "--") {
      after = true;
    } else if (a != "--on-demand") {
      throw UsageError("record --on-demand runs the script unprofiled: " + a +
                       " does not apply (capture's own options choose what a capture takes)");
    }
  }
  if (command.empty())
    throw UsageError("record --on-demand: say what to run after '--': record --on-demand -- python train.py");
  // A script alone runs with python3, as `record -- train.py` would not: say it plainly.
  if (command.front().size() > 3 && command.front().ends_with(".py")) command.insert(command.begin(), "python3");
  ::setenv("KINETO_USE_DAEMON", "1", 1);
  if (!std::getenv("KINETO_LOG_LEVEL")) ::setenv("KINETO_LOG_LEVEL", "5", 1);
  std::cerr << "[attnscope] process " << ::getpid()
            << " runs unprofiled, ready for a capture at any moment: attnscope-cli capture " << ::getpid()
            << " --iterations 3 (or File > Capture Running Job… in attnscope)\n"
            << std::flush;
  std::vector<char*> argv;
  for (std::string& c : command) argv.push_back(c.data());
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  const int e = errno;
  throw UsageError("record --on-demand: cannot run " + command.front() + ": " + std::strerror(e) +
                   (e == ENOENT ? " (not on PATH)" : ""));
}

}  // namespace attnscope::cli
