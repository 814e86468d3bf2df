// Several ranks on the same optimizer step. Kineto fixes a rank's start at its first step after the
// request, rounded up to a multiple of the roundup K; the requests reach the ranks a poll phase apart
// (the ask window W, ms to seconds), so two ranks start K steps apart whenever a multiple of K falls
// inside W: a chance of about W / (K x step time). attnscope checks every job capture on the host's
// clock (each rank's first captured optimizer step ends within half a step of the others') and, when
// the roundup was its own choice and the ranks did not line up, captures once more with the K that the
// measured step time and ask window call for (a chance under 1%).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/capture/capture_session.h"
#include "core/store/event_store.h"

namespace attnscope::capture {

// A trace's optimizer steps (Optimizer.step# spans), on the thread that runs them.
struct StepTiming {
  std::vector<int64_t> ends;  // each span's end, ns on the trace's clock, ascending
  int64_t firstStartNs = 0;   // the first event on that thread (the capture's first step starts there)
  int64_t baseNs = 0;         // baseTimeNanoseconds: + a time above = Unix ns
  int64_t lanePid = 0, laneTid = 0;
  int64_t medianStepNs() const;  // between consecutive ends (0 with fewer than two)
};
StepTiming stepTiming(const EventStore& store);
StepTiming stepTimingOfFile(const std::string& path);  // empty when it cannot be read

struct Alignment {
  bool known = false;  // two or more ranks with steps
  bool aligned = true;
  int64_t spreadNs = 0;  // between the ranks' first step ends
  int64_t stepNs = 0;    // the median step
  int firstRank = -1, lastRank = -1;
  std::string text;  // in words, for the user
};
// `ranks[i]` is the rank of `timings[i]`.
Alignment alignmentOf(const std::vector<StepTiming>& timings, const std::vector<int>& ranks);

// The roundup that puts the chance of a split start under 1%: K x step >= 100 x W, rounded up to 1,
// 2 or 5 times a power of ten.
int roundupFor(int64_t askWindowMs, int64_t stepNs);

// runCapture; with several targets, a capture by steps and `automaticRoundup`, once more when the ranks
// did not start on the same step (the first attempt's files removed). `notes` says what happened.
CaptureOutcome captureJob(const std::vector<ProcessInfo>& targets, CaptureOptions options, bool automaticRoundup,
                          std::vector<std::string>* notes);

}  // namespace attnscope::capture
