// libFuzzer target for the trace reader: the JSON path and, when the input
// starts with gzip's magic bytes, the .gz path. Whatever loads also goes
// through torch's key_averages and the trace writer, so the store the reader
// builds is exercised, not only parsed. Limits are small so every input is
// judged quickly.
#include <cstddef>
#include <cstdint>
#include <string>

#include "attnscope/key_averages.h"
#include "attnscope/trace_reader.h"
#include "attnscope/trace_writer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attnscope::ReaderLimits limits;
  limits.maxDecompressedBytes = 8u << 20;
  limits.maxDepth = 64;
  limits.maxStringBytes = 1u << 16;
  limits.maxEvents = 200000;
  limits.parallelMinBytes = 4096;  // reach the chunked path with small inputs too
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  attnscope::LoadResult r = attnscope::parseTrace(text, "fuzz.json", limits);
  if (!r.ok()) return 0;
  (void)attnscope::computeKeyAverages(*r.store, attnscope::GroupBy::InputShape);
  const std::string out = attnscope::chromeTraceJson(*r.store);
  // What we write must load again.
  attnscope::LoadResult again = attnscope::parseTrace(out, "roundtrip.json", limits);
  if (!again.ok() && r.store->events().size() < 1000) __builtin_trap();
  return 0;
}
