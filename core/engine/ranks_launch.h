// A multi-rank run's launcher (--ranks N): hosts the TCPStore the ranks meet at, on 127.0.0.1 and a
// port the kernel picks, starts one attnscope-engine process per rank (each its own CUPTI subscriber
// at most), waits for them all and stops the others when one fails. Each rank writes DIR/rank-R.json.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "core/run/run_config.h"

namespace attnscope::engine {

// Returns the run's exit code (0 ok, 2 bad input, 3 out of memory, 1 internal); messages on stderr.
int runRanks(const RunConfig& cfg, const std::string& selfExe);

// Starts `args[0]` with `args` while SIGTERM and SIGINT are held, and calls `started(pid)` before
// releasing them, so a handler that forwards them always knows its children (a pass's child, the
// ranks); the child starts with the caller's mask. Returns posix_spawn's error (0: started).
int spawnWithSignalsHeld(std::vector<std::string> args, const std::function<void(pid_t)>& started);

}  // namespace attnscope::engine
