// libFuzzer target for the trace reader (JSON and .gz paths); what it
// checks is in reader_check.h. Findings go to tests/data/fuzz, which
// test_reader replays.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "reader_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!attnscope::fuzz::checkReader(text)) __builtin_trap();
  return 0;
}
