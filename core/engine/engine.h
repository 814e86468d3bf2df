// Entry point of the engine (LibTorch + CUPTI). Only attnscope-cli links it.
#pragma once

#include <string>

#include "core/run/run_config.h"

namespace attnscope::engine {

// Runs `cfg` and writes its trace. Returns the process exit code (0 ok,
// 2 bad input / no GPU / unwritable output, 3 out of memory, 1 internal);
// messages go to stderr, progress (with --progress json) to stdout.
// `selfExe` is this program, re-run for child passes.
int run(const RunConfig& cfg, const std::string& selfExe);

// What the engine can do here, for `attnscope-cli run --check` and the GUI:
// "cuda: NVIDIA H200 (cupti 130001)" or "cpu only: <reason>".
std::string capabilities(bool* cudaAvailable);

}  // namespace attnscope::engine
