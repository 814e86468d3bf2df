// RecordFunction observers: what torch's profiler sees, recorded our way.
// Trace mode: every op and user scope (name, times, thread, input shapes and
// types, sequence number), an External id pushed to CUPTI while it runs (so
// CUPTI ties launches to ops), an NVTX range per user scope, and memory
// reports from c10's allocators. Events mode: a CUDA event recorded at every
// op's and scope's entry and exit, as use_cuda=True does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/run/run_capture.h"

namespace attnscope::engine {

enum class RecordMode { Trace, Events };

struct EventTiming {
  std::string name;
  bool userScope = false;
  int64_t hostStartNs = 0;
  int64_t hostEndNs = 0;
  int64_t elapsedNs = -1;  // GPU time between its two CUDA events
};

class OpRecorder {
 public:
  // `pushExternalIds`: CUPTI is active and wants External ids. Events mode:
  // `eventsUpFront` CUDA events are created now, so the ops take theirs from
  // a pool instead of calling cudaEventCreate (more are created if it runs out).
  // `inputShapes` (trace mode): every op's inputs are read for their shapes,
  // which costs the dispatcher boxing them at each op (--record-shapes).
  OpRecorder(RecordMode mode, bool cuda, bool pushExternalIds, size_t eventsUpFront = 0, bool inputShapes = false);
  ~OpRecorder();
  OpRecorder(const OpRecorder&) = delete;
  OpRecorder& operator=(const OpRecorder&) = delete;

  // Everything recorded before `startNs` (the warm-up, recorded so the
  // recorder's first-use costs fall there) is left out by takeInto.
  void startWindow(int64_t startNs);
  // Trace mode: moves ops and memory records out.
  void takeInto(RunCapture* cap);
  // Events mode: elapsed per op/scope (device synchronized first).
  std::vector<EventTiming> eventTimings();
  uint64_t nvtxRangesPushed() const;
  // Scopes that ended on another thread than they began: their NVTX range is
  // left open rather than popping the other thread's.
  uint64_t nvtxRangesLeftOpen() const;
  // Events mode: events the pool could not give (created while measuring).
  uint64_t eventsCreatedLate() const;
  // Where External ids go to CUPTI (ATTNSCOPE_EXTID=call|outermost|every|none):
  // by default one id per call of the block (kind CUSTOM1, CallExternalId),
  // none per op; the assembler links API calls to ops by containment.
  bool pushesCallIds() const;

 private:
  uint64_t handle_ = 0;
};

// One External id (CUPTI kind CUSTOM1) around one call of the block, so every
// runtime/driver call CUPTI records carries the iteration it belongs to. Off
// when `on` is false.
class CallExternalId {
 public:
  CallExternalId(bool on, uint64_t id);
  ~CallExternalId();
  CallExternalId(const CallExternalId&) = delete;
  CallExternalId& operator=(const CallExternalId&) = delete;
  // Pushes or pops CUPTI refused, or pops that gave back another id.
  static uint64_t failures();

 private:
  bool on_;
  uint64_t id_;
};

}  // namespace attnscope::engine
