// CUPTI activity collection: kernels, copies, memsets, runtime and driver
// API calls, synchronization, external correlation, overhead and NVTX
// markers, decoded into ActivityRecords.
//
// Nothing the collector does lands inside a measured step: it is created
// before the warm-up (CUPTI's first-use costs fall there), its buffers come
// from a pool allocated and zeroed up front (CUPTI is told so and does not
// zero them in the thread that asked), recycled when CUPTI hands them back;
// there is no flush until finish(), which syncs the device, disables every
// kind and flushes once. Records that start before setWindowStart() (the
// warm-up) are left out, and counted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/engine/cupti_api.h"
#include "core/run/run_capture.h"

namespace attnscope::engine {

struct CuptiStats {
  uint64_t droppedRecords = 0;            // CUPTI's count: per completed buffer, then the global queue
  uint64_t buffersCapped = 0;             // requests refused at the cap (CUPTI drops those records)
  uint64_t buffersPooled = 0;             // allocated and zeroed before the run
  uint64_t buffersAdded = 0;              // requests the pool could not serve (allocated while running)
  uint64_t recordsWithoutTimestamps = 0;  // CUPTI could not time them: left out, never put at t = 0
  uint64_t recordsBeforeWindow = 0;       // the warm-up's records, left out
  std::vector<std::string> errors;        // a failed sync, disable, flush or External-id pop, by name
};

class CuptiCollector {
 public:
  static constexpr size_t kBufferBytes = 4u << 20;
  static constexpr size_t kPoolBuffers = 8;     // 32 MiB allocated and zeroed up front
  static constexpr uint64_t kMaxBuffers = 256;  // 1 GiB of records at most

  // Never throws: when CUPTI cannot start, available() is false and
  // unavailableReason() says why; the run goes on without GPU activity.
  // One collector at a time (CUPTI's buffer callbacks are plain functions).
  explicit CuptiCollector(CuptiApi& api = realCuptiApi(), size_t poolBuffers = kPoolBuffers,
                          size_t bufferBytes = kBufferBytes);
  ~CuptiCollector();
  CuptiCollector(const CuptiCollector&) = delete;
  CuptiCollector& operator=(const CuptiCollector&) = delete;

  bool available() const { return ok_; }
  const std::string& unavailableReason() const { return reason_; }
  // Records that start before `ns` are the warm-up's: left out by finish().
  void setWindowStart(int64_t ns);
  // Device sync, every kind disabled, one forced flush; moves the window's
  // decoded records into `cap` (may be null). Failures go to stats().errors.
  void finish(RunCapture* cap);
  const CuptiStats& stats() const { return stats_; }
  // Which API calls are deliberately not recorded (empty when all are).
  const std::string& apiFilterNote() const { return filterNote_; }
  // "ok", or "error: <what failed>" when a CUPTI or CUDA call failed.
  std::string status() const;

 private:
  void release();  // frees the pool; the shared state too once CUPTI holds no buffer

  CuptiApi& api_;
  bool ok_ = false;
  bool owns_ = false;  // this collector made the shared state CUPTI's callbacks reach
  bool finished_ = false;
  int64_t windowStart_ = 0;
  std::string reason_;
  std::string filterNote_;
  CuptiStats stats_;
};

// Must run before anything calls NVTX (and before CUDA is initialised) so
// NVTX ranges reach CUPTI as MARKER records.
void prepareNvtxInjection();

}  // namespace attnscope::engine
