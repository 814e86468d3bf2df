// CUPTI activity collection: kernels, copies, memsets, runtime and driver
// API calls, synchronization, external correlation, overhead and NVTX
// markers, decoded into ActivityRecords. 4 MB buffers with a cap; dropped
// records are counted and reported in the output.
#pragma once

#include <cstdint>
#include <string>

#include "core/run/run_capture.h"

namespace attnscope::engine {

class CuptiCollector {
 public:
  // Never throws: when CUPTI cannot start, available() is false and
  // unavailableReason() says why; the run goes on without GPU activity.
  CuptiCollector();
  ~CuptiCollector();
  CuptiCollector(const CuptiCollector&) = delete;
  CuptiCollector& operator=(const CuptiCollector&) = delete;

  bool available() const { return ok_; }
  const std::string& unavailableReason() const { return reason_; }
  // Device sync, forced flush, then moves the decoded records out.
  void flushInto(RunCapture* cap);
  void stop();  // disables the activity kinds
  uint64_t droppedRecords() const;
  uint64_t buffersCapped() const;
  // Which API calls are deliberately not recorded (empty when all are).
  const std::string& apiFilterNote() const { return filterNote_; }

 private:
  bool ok_ = false;
  bool stopped_ = false;
  std::string reason_;
  std::string filterNote_;
};

// Must run before anything calls NVTX (and before CUDA is initialised) so
// NVTX ranges reach CUPTI as MARKER records.
void prepareNvtxInjection();

}  // namespace attnscope::engine
