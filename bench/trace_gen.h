// Huge-trace generator (P3): writes a valid, realistic Kineto trace of about
// a requested size by repeating the body of a real capture (every event
// outside the profiler's own "Spans"/"Traces" pseudo-processes and the
// metadata records: the training steps, their threads, GPU streams and
// flows) K times, each repetition shifted in time by the body's span plus a
// gap and given fresh ids (External id, correlation, flow id, Python id and
// parent id, Sequence number, Ev Idx). Each event's text is copied from the
// source with only those tokens replaced, so field order, formatting and
// every other arg stay as Kineto wrote them. The profiler's span is
// stretched over all repetitions and its end marker moved to the end.
#pragma once

#include <cstdint>
#include <string>

namespace bench {

struct TraceGenPlan {
  uint64_t bodyEvents = 0;  // events repeated K times
  uint64_t onceEvents = 0;  // metadata and profiler events written once
  uint64_t bodyBytes = 0;   // JSON text of one repetition
  int64_t shiftNs = 0;      // time between repetitions
  int64_t idStride = 0;     // added to every id per repetition
};

struct TraceGenResult {
  bool ok = false;
  std::string error;
  TraceGenPlan plan;
  uint64_t repetitions = 0;
  uint64_t events = 0;  // trace events written
  uint64_t bytes = 0;   // JSON bytes written
};

// Writes `out` (plain JSON) from `source` (.json or .json.gz). `repetitions`
// > 0 fixes K; otherwise K is chosen so the file is closest to `targetBytes`.
TraceGenResult generateTrace(const std::string& source, const std::string& out, uint64_t targetBytes,
                             uint64_t repetitions = 0);

}  // namespace bench
