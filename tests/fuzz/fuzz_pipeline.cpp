// libFuzzer target for the whole pipeline: a fuzzed trace through the
// reader, the store, torch's tables, the analysis, the views, compare and
// the writers; what it checks is in pipeline_check.h. Findings go to
// tests/data/fuzz, which test_reader replays.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pipeline_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!attnscope::fuzz::checkPipeline(text)) __builtin_trap();
  return 0;
}
