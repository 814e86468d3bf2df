// What the engine collects, before it becomes an EventStore: CPU ops from
// RecordFunction, CUDA activity records from CUPTI (already decoded from
// CUPTI's structs), external correlations, memory reports. Torch- and
// CUPTI-free, so the correlation logic is tested on CI with synthetic records.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/store/event_store.h"

namespace attnscope {

// A collective's args as torch's record_param_comms carries them (Kineto writes them on the op).
struct CollectiveRecord {
  std::string name;  // "Collective name": "all_gather"
  std::string pgName, pgDesc, groupRanks, dtype;
  int64_t inNelems = -1, outNelems = -1, seq = -1, groupSize = -1;
};

struct CpuOpRecord {
  std::string name;
  int64_t startNs = 0;
  int64_t endNs = 0;
  int64_t tid = 0;
  int64_t externalId = -1;  // names the op to CUPTI (pushed for outermost ops)
  bool userScope = false;   // record_function (user_annotation) vs op (cpu_op)
  std::string inputDims;    // torch's str(input_shapes): "[[8, 16], []]"
  std::string inputTypes;   // "['float', 'Scalar']"
  int64_t sequenceNumber = -1;
};

// A record_param_comms op (a rank's collective) with the args Kineto writes on it.
struct CollectiveOpRecord {
  CpuOpRecord op;
  CollectiveRecord comm;
};

// DriverWork: the driver's own work that CUPTI reports as overhead (lazy
// module and function loading, the PTX compiler), on the thread that waited.
enum class ActivityKind : uint8_t { Kernel, Memcpy, Memset, Runtime, Driver, Sync, Overhead, Marker, DriverWork };

struct ActivityRecord {
  ActivityKind kind = ActivityKind::Kernel;
  std::string name;
  int64_t startNs = 0;
  int64_t endNs = 0;
  uint32_t correlation = 0;  // CUPTI correlation id (0 = none)
  int32_t device = -1;
  int32_t stream = -1;
  int64_t bytes = 0;
  int64_t tid = 0;  // runtime/driver/marker: the calling thread
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
};

struct ExternalCorrelationRecord {
  uint32_t correlation = 0;
  uint64_t externalId = 0;
  // What the id names: an op's External id (CUPTI kind CUSTOM0), or the
  // call of the block (iteration + 1) the API call was made in (CUSTOM1).
  enum class Kind : uint8_t { Op, Call } kind = Kind::Op;
};

struct MemoryRecord {
  int64_t ts = 0;
  int64_t bytes = 0;       // + allocation, - free
  int32_t deviceType = 0;  // c10::DeviceType: 0 CPU, 1 CUDA
  int32_t device = -1;
  int64_t totalAllocated = 0;
  int64_t totalReserved = 0;
  int64_t tid = 0;
  uint64_t addr = 0;  // the block's address (an allocation and its free share it); 0: unknown
};

struct RunCapture {
  int64_t pid = 0;
  std::string processName = "attnscope-cli";
  std::vector<CpuOpRecord> ops;
  std::vector<CollectiveOpRecord> collectives;  // a rank's collectives (record_param_comms ops)
  std::vector<ActivityRecord> activities;
  std::vector<ExternalCorrelationRecord> externalCorrelations;
  std::vector<MemoryRecord> memory;
  std::vector<DeviceProperties> devices;
  int cudaRuntimeVersion = 0;
  int cudaDriverVersion = 0;
  int cuptiVersion = 0;
  bool inputShapes = false;     // the ops carry their input shapes (--record-shapes)
  DistributedInfo distributed;  // a rank of a multi-rank run: the trace's distributedInfo
};

struct AssembleStats {
  uint64_t gpuActivities = 0;      // kernels, copies, memsets
  uint64_t gpuLinkedToLaunch = 0;  // a runtime/driver call with the same correlation
  uint64_t gpuLinkedToOp = 0;      // ... and an External id (the op that launched it)
  uint64_t gpuUnlinked = 0;        // neither
  uint64_t runtimeCalls = 0;
  uint64_t runtimeWithoutOp = 0;  // no op was running (e.g. the engine's own syncs)
  uint64_t syncRecords = 0;
  uint64_t overheadRecords = 0;
  uint64_t driverWorkRecords = 0;   // lazy loading and the PTX compiler (CUPTI overhead kinds that are the driver's)
  uint64_t markers = 0;             // NVTX ranges seen back through CUPTI
  uint64_t apiCallsWithCallId = 0;  // runtime/driver calls CUPTI tagged with their call of the block
  bool operator==(const AssembleStats&) const = default;
};

// Builds the store: ops on their threads, runtime/driver calls on theirs
// with the External id of the innermost op running on that thread when the
// call began (CUPTI's op-kind external correlation record where no op
// contains it: by default the engine pushes no op ids, only one id per call of
// the block, which is counted, not used as an op), GPU work on (device, stream) lanes with the same
// ids, ac2g links from each launch to its GPU work, memory as [memory]
// instants, NVTX ranges on a lane of their own.
EventStore assembleRunStore(const RunCapture& cap, AssembleStats* stats);

}  // namespace attnscope
