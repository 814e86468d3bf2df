#include "core/engine/cupti_collector.h"

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cxxabi.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/engine/clock.h"

namespace attnscope::engine {

namespace {

constexpr size_t kBufferBytes = 4u << 20;
constexpr uint64_t kMaxBuffers = 256;  // 1 GiB of records at most

struct Shared {
  std::mutex mu;
  std::vector<ActivityRecord> records;
  std::vector<ExternalCorrelationRecord> ext;
  std::unordered_map<uint32_t, ActivityRecord> openMarkers;
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint64_t> buffers{0};
  std::atomic<uint64_t> capped{0};
};
Shared* g = nullptr;

uint64_t timestampCallback() { return nowNs(); }

std::string demangle(const char* name) {
  if (!name) return "?";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && d ? std::string(d.get()) : std::string(name);
}

std::string apiName(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const char* n = nullptr;
  if (cuptiGetCallbackName(domain, cbid, &n) != CUPTI_SUCCESS || !n) return "cuda?";
  std::string s(n);
  if (auto v = s.find("_v");
      v != std::string::npos && v + 2 < s.size() && std::isdigit(static_cast<unsigned char>(s[v + 2])))
    s.resize(v);  // cudaLaunchKernel_v7000 -> cudaLaunchKernel
  return s;
}

const char* copyKindName(uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "PtoP";
    default:
      return "?";
  }
}

const char* memoryKindName(uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return "Pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return "Pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
      return "Device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return "Array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
      return "Managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return "Device Static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return "Managed Static";
    default:
      return "Unknown";
  }
}

const char* syncName(CUpti_ActivitySynchronizationType t) {
  switch (t) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
      return "Event Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
      return "Stream Wait Event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
      return "Stream Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return "Context Sync";
    default:
      return "Sync";
  }
}

const char* overheadName(CUpti_ActivityOverheadKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
      return "Driver Compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
      return "Buffer Flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
      return "Instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
      return "Resource";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
      return "Activity Buffer Request";
    default:
      return "CUPTI Overhead";
  }
}

int32_t streamOf(uint32_t s) { return s == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : static_cast<int32_t>(s); }

void decode(const CUpti_Activity* rec, Shared& s) {
  ActivityRecord a;
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      a.kind = ActivityKind::Kernel;
      a.name = demangle(k->name);
      a.startNs = static_cast<int64_t>(k->start);
      a.endNs = static_cast<int64_t>(k->end);
      a.correlation = k->correlationId;
      a.device = static_cast<int32_t>(k->deviceId);
      a.stream = static_cast<int32_t>(k->streamId);
      a.grid[0] = k->gridX, a.grid[1] = k->gridY, a.grid[2] = k->gridZ;
      a.block[0] = k->blockX, a.block[1] = k->blockY, a.block[2] = k->blockZ;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
      a.kind = ActivityKind::Memcpy;
      a.name = std::string("Memcpy ") + copyKindName(m->copyKind) + " (" + memoryKindName(m->srcKind) + " -> " +
               memoryKindName(m->dstKind) + ")";
      a.startNs = static_cast<int64_t>(m->start);
      a.endNs = static_cast<int64_t>(m->end);
      a.correlation = m->correlationId;
      a.device = static_cast<int32_t>(m->deviceId);
      a.stream = static_cast<int32_t>(m->streamId);
      a.bytes = static_cast<int64_t>(m->bytes);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
      a.kind = ActivityKind::Memset;
      a.name = std::string("Memset (") + memoryKindName(static_cast<uint8_t>(m->memoryKind)) + ")";
      a.startNs = static_cast<int64_t>(m->start);
      a.endNs = static_cast<int64_t>(m->end);
      a.correlation = m->correlationId;
      a.device = static_cast<int32_t>(m->deviceId);
      a.stream = static_cast<int32_t>(m->streamId);
      a.bytes = static_cast<int64_t>(m->bytes);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(rec);
      const bool rt = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      a.kind = rt ? ActivityKind::Runtime : ActivityKind::Driver;
      a.name = apiName(rt ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, api->cbid);
      a.startNs = static_cast<int64_t>(api->start);
      a.endNs = static_cast<int64_t>(api->end);
      a.correlation = api->correlationId;
      a.tid = api->threadId;
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* y = reinterpret_cast<const CUpti_ActivitySynchronization2*>(rec);
      a.kind = ActivityKind::Sync;
      a.name = syncName(y->type);
      a.startNs = static_cast<int64_t>(y->start);
      a.endNs = static_cast<int64_t>(y->end);
      a.correlation = y->correlationId;
      a.stream = streamOf(y->streamId);
      a.device = 0;
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto* o = reinterpret_cast<const CUpti_ActivityOverhead3*>(rec);
      a.kind = ActivityKind::Overhead;
      a.name = overheadName(o->overheadKind);
      a.startNs = static_cast<int64_t>(o->start);
      a.endNs = static_cast<int64_t>(o->end);
      a.correlation = o->correlationId;
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
      ExternalCorrelationRecord r;
      r.correlation = x->correlationId;
      r.externalId = x->externalId;
      r.kind = x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1 ? ExternalCorrelationRecord::Kind::Call
                                                                          : ExternalCorrelationRecord::Kind::Op;
      s.ext.push_back(r);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(rec);
      if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        ActivityRecord open;
        open.kind = ActivityKind::Marker;
        open.name = m->name ? m->name : "";
        open.startNs = static_cast<int64_t>(m->timestamp);
        open.tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0;
        s.openMarkers[m->id] = open;
      } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        auto it = s.openMarkers.find(m->id);
        if (it == s.openMarkers.end()) return;
        a = it->second;
        a.endNs = static_cast<int64_t>(m->timestamp);
        s.openMarkers.erase(it);
        break;
      }
      return;
    }
    default:
      return;
  }
  s.records.push_back(std::move(a));
}

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords) {
  *maxNumRecords = 0;
  if (!g || g->buffers.load() >= kMaxBuffers) {
    if (g) g->capped.fetch_add(1);
    *buffer = nullptr;
    *size = 0;  // CUPTI drops records and counts them
    return;
  }
  g->buffers.fetch_add(1);
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
}

void CUPTIAPI bufferCompleted(CUcontext ctx, uint32_t streamId, uint8_t* buffer, size_t, size_t validSize) {
  if (g && buffer) {
    std::lock_guard<std::mutex> lock(g->mu);
    CUpti_Activity* rec = nullptr;
    while (cuptiActivityGetNextRecord(buffer, validSize, &rec) == CUPTI_SUCCESS) decode(rec, *g);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, streamId, &dropped) == CUPTI_SUCCESS) g->dropped += dropped;
  }
  std::free(buffer);
  if (g && g->buffers.load() > 0) g->buffers.fetch_sub(1);
}

constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_RUNTIME,
                                         CUPTI_ACTIVITY_KIND_DRIVER,
                                         CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_MEMSET,
                                         CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                         CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                         CUPTI_ACTIVITY_KIND_OVERHEAD,
                                         CUPTI_ACTIVITY_KIND_MARKER};

// Query-only API calls with no effect on the device. PyTorch makes dozens of
// them per op (52 cudaGetDevice and 16 cuDevicePrimaryCtxGetState in one
// attention block): recording each costs CUPTI two timestamps, a record and
// an external-correlation record. Kineto drops them when it writes its trace;
// we do not record them at all (ATTNSCOPE_CUPTI_ALL_API=1 records them).
constexpr CUpti_CallbackId kQuietRuntime[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
    CUPTI_RUNTIME_TRACE_CBID_cudaPointerGetAttributes_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaFuncGetAttributes_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_v11030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_ptsz_v11030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v12030,
    CUPTI_RUNTIME_TRACE_CBID_cudaThreadExchangeStreamCaptureMode_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaDriverGetVersion_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaRuntimeGetVersion_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetStreamPriorityRange_v5050,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetPriority_v5050,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetFlags_v5050,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetId_v12000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetDevice_v12080,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_ptsz_v10000,
};
constexpr CUpti_CallbackId kQuietDriver[] = {
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice_v2,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetFlags,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetId,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetStreamPriorityRange,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGet,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGetCount,
    CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
    CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion,
    CUPTI_DRIVER_TRACE_CBID_cuFuncGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuFuncGetName,
    CUPTI_DRIVER_TRACE_CBID_cuGetErrorName,
    CUPTI_DRIVER_TRACE_CBID_cuGetErrorString,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetName,
    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v3,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v3_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCtx,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCtx_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCtx_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetDevice,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetId,
    CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing,
    CUPTI_DRIVER_TRACE_CBID_cuThreadExchangeStreamCaptureMode,
};

std::string cuptiError(const char* what, CUptiResult r) {
  const char* msg = nullptr;
  cuptiGetResultString(r, &msg);
  return std::string(what) + " failed: " + (msg ? msg : "unknown CUPTI error");
}

}  // namespace

void prepareNvtxInjection() {
  if (std::getenv("NVTX_INJECTION64_PATH")) return;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) && info.dli_fname)
    ::setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
}

CuptiCollector::CuptiCollector() {
  if (std::getenv("ATTNSCOPE_DISABLE_CUPTI")) {
    reason_ = "disabled by ATTNSCOPE_DISABLE_CUPTI";
    return;
  }
  g = new Shared();
  // Diagnostics for the overhead benchmark's ablations (documented in
  // docs/timing-methods.md): ATTNSCOPE_CUPTI_MINIMAL=1 enables only what
  // Kineto enables by default; ATTNSCOPE_CUPTI_NO_TSCB=1 keeps CUPTI's clock.
  CUptiResult r = CUPTI_SUCCESS;
  if (!std::getenv("ATTNSCOPE_CUPTI_NO_TSCB")) {
    r = cuptiActivityRegisterTimestampCallback(timestampCallback);
    if (r != CUPTI_SUCCESS) {
      reason_ = cuptiError("cuptiActivityRegisterTimestampCallback", r);
      return;
    }
  }
  // Runtime calls must land on the same lane as the ops that made them: ask
  // for system thread ids (what our RecordFunction observer records).
  r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  if (r != CUPTI_SUCCESS) {
    reason_ = cuptiError("cuptiSetThreadIdType", r);
    return;
  }
  r = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted);
  if (r != CUPTI_SUCCESS) {
    reason_ = cuptiError("cuptiActivityRegisterCallbacks", r);
    return;
  }
  const bool minimal = std::getenv("ATTNSCOPE_CUPTI_MINIMAL") != nullptr;
  for (auto k : kKinds) {
    if (minimal && (k == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION || k == CUPTI_ACTIVITY_KIND_MARKER)) continue;
    r = cuptiActivityEnable(k);
    if (r != CUPTI_SUCCESS) {
      reason_ = cuptiError("cuptiActivityEnable", r) + " (kind " + std::to_string(static_cast<int>(k)) + ")";
      for (auto j : kKinds) cuptiActivityDisable(j);
      return;
    }
  }
  if (!std::getenv("ATTNSCOPE_CUPTI_ALL_API")) {
    // After the kinds: enabling a kind resets its per-API settings.
    int quiet = 0;
    for (auto cbid : kQuietRuntime) quiet += cuptiActivityEnableRuntimeApi(cbid, 0) == CUPTI_SUCCESS;
    for (auto cbid : kQuietDriver) quiet += cuptiActivityEnableDriverApi(cbid, 0) == CUPTI_SUCCESS;
    filterNote_ = "CUPTI: " + std::to_string(quiet) +
                  " query-only runtime/driver APIs (cudaGetDevice, cudaGetLastError, cudaStreamIsCapturing, "
                  "cuDevicePrimaryCtxGetState, cuKernelGetName, ...) are not recorded; ATTNSCOPE_CUPTI_ALL_API=1 "
                  "records every API call";
  }
  ok_ = true;
}

CuptiCollector::~CuptiCollector() {
  stop();
  // The shared state stays: CUPTI may still call bufferCompleted at exit.
}

void CuptiCollector::stop() {
  if (!ok_ || stopped_) return;
  cudaDeviceSynchronize();
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (auto k : kKinds) cuptiActivityDisable(k);
  stopped_ = true;
}

void CuptiCollector::flushInto(RunCapture* cap) {
  if (!ok_ || !g) return;
  cudaDeviceSynchronize();
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(g->mu);
  for (auto& r : g->records) cap->activities.push_back(std::move(r));
  for (auto& x : g->ext) cap->externalCorrelations.push_back(x);
  g->records.clear();
  g->ext.clear();
  uint32_t v = 0;
  if (cuptiGetVersion(&v) == CUPTI_SUCCESS) cap->cuptiVersion = static_cast<int>(v);
}

uint64_t CuptiCollector::droppedRecords() const { return g ? g->dropped.load() : 0; }
uint64_t CuptiCollector::buffersCapped() const { return g ? g->capped.load() : 0; }

}  // namespace attnscope::engine
