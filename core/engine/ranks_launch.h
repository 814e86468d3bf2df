// A multi-rank run's launcher (--ranks N): hosts the TCPStore the ranks meet at, on 127.0.0.1 and a
// port the kernel picks, starts one attnscope-engine process per rank (each its own CUPTI subscriber
// at most), waits for them all and stops the others when one fails. Each rank writes DIR/rank-R.json.
#pragma once

#include <string>

#include "core/run/run_config.h"

namespace attnscope::engine {

// Returns the run's exit code (0 ok, 2 bad input, 3 out of memory, 1 internal); messages on stderr.
int runRanks(const RunConfig& cfg, const std::string& selfExe);

}  // namespace attnscope::engine
