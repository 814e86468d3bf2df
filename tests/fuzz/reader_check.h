// What the reader fuzzer checks for one input, shared with the test that
// replays its findings (tests/data/fuzz, test_reader): parseTrace (the .gz
// path when the input starts with gzip's magic bytes, the JSON path
// otherwise, the windowed path from 4 KB up); when it loads, torch's
// key_averages (by shape) and the trace writer, whose output must load again.
// Limits are small so every input is judged quickly.
#pragma once

#include <string>
#include <string_view>

#include "core/read/trace_reader.h"
#include "core/tables/key_averages.h"
#include "core/write/trace_writer.h"

namespace attnscope::fuzz {

inline ReaderLimits fuzzLimits() {
  ReaderLimits limits;
  limits.maxDecompressedBytes = 256u << 10;  // a bomb is refused after 16 cuts
  limits.maxDecompressedRatio = 0;
  limits.maxDepth = 64;
  limits.maxStringBytes = 1u << 16;
  limits.maxEvents = 200000;
  limits.parallelMinBytes = 4096;    // reach the windowed path with small inputs too
  limits.chunkBytes = 1u << 14;      // and cut them often (a gzip's trailer may claim 4 GiB)
  limits.parallelCutMinThreads = 1;  // in parts on several threads, from 256 KiB up (128 KiB parts)
  return limits;
}

// False when the trace written back from what loaded does not load again.
// What loaded is handed to `loaded` (when given) so the pipeline check does
// not read the input twice.
inline bool checkReader(std::string_view input, LoadResult* loaded = nullptr) {
  const ReaderLimits limits = fuzzLimits();
  LoadResult r = parseTrace(input, "fuzz.json", limits);
  if (!r.ok()) return true;
  (void)computeKeyAverages(*r.store, GroupBy::InputShape);
  const std::string out = chromeTraceJson(*r.store);
  LoadResult again = parseTrace(out, "roundtrip.json", limits);
  const bool good = again.ok() || r.store->events().size() >= 1000;
  if (loaded) *loaded = std::move(r);
  return good;
}

}  // namespace attnscope::fuzz
