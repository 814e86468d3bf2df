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
#include <utility>

#include "core/engine/clock.h"

namespace attnscope::engine {

namespace {

// What CUPTI's buffer callbacks (plain functions) reach: one collector's.
struct Shared {
  CuptiApi* api = nullptr;
  size_t bufferBytes = 0;
  std::mutex mu;  // the decoded records
  std::vector<ActivityRecord> records;
  std::vector<ExternalCorrelationRecord> ext;
  std::unordered_map<uint32_t, ActivityRecord> openMarkers;
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint64_t> capped{0};
  std::atomic<uint64_t> added{0};
  std::atomic<uint64_t> untimed{0};
  std::mutex poolMu;  // the pool
  std::vector<uint8_t*> free;
  uint64_t allocated = 0;  // buffers in existence (pool + handed out)
  uint64_t handedOut = 0;  // buffers CUPTI holds
  bool closed = false;     // the collector is gone: returned buffers are freed
};
Shared* g = nullptr;

uint8_t* allocZeroed(size_t bytes) {
  auto* b = static_cast<uint8_t*>(std::aligned_alloc(8, bytes));
  if (b) std::memset(b, 0, bytes);  // touches every page now, not in CUPTI's caller
  return b;
}

uint64_t timestampCallback() { return nowNs(); }

std::string demangle(const char* name) {
  if (!name) return "?";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && d ? std::string(d.get()) : std::string(name);
}

std::string apiName(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  std::string s = g->api->callbackName(domain, cbid);
  if (s.empty()) return "cuda?";
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

// Overhead records that are not the profiler's: the driver's own work.
const char* driverWorkName(CUpti_ActivityOverheadKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
      return "Driver Compiler (CUDA driver)";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
      return "Module Loading (CUDA driver)";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
      return "Lazy Function Loading (CUDA driver)";
    default:
      return nullptr;
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
      a.startNs = static_cast<int64_t>(o->start);
      a.endNs = static_cast<int64_t>(o->end);
      if (const char* driver = driverWorkName(o->overheadKind)) {
        // The driver loading modules or functions on first use (lazy
        // loading) or compiling PTX: the driver's work, on the thread that
        // waited for it, not the profiler's overhead.
        a.kind = ActivityKind::DriverWork;
        a.name = driver;
        a.tid = o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? o->objectId.pt.threadId : 0;
        break;
      }
      a.kind = ActivityKind::Overhead;
      a.name = overheadName(o->overheadKind);
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
      if (m->timestamp == CUPTI_TIMESTAMP_UNKNOWN) {
        s.untimed.fetch_add(1);
        return;
      }
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
  // CUPTI could not time it (CUPTI_TIMESTAMP_UNKNOWN, or an end before its
  // start): leave it out and count it, rather than put it at t = 0.
  if (a.startNs <= 0 || a.endNs <= 0 || a.endNs < a.startNs) {
    s.untimed.fetch_add(1);
    return;
  }
  s.records.push_back(std::move(a));
}

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords) {
  *maxNumRecords = 0;
  *buffer = nullptr;
  *size = 0;  // a refused request: CUPTI drops those records and counts them
  if (!g) return;
  uint8_t* b = nullptr;
  {
    std::lock_guard<std::mutex> lock(g->poolMu);
    if (!g->free.empty()) {
      b = g->free.back();  // O(1), already zeroed
      g->free.pop_back();
    } else if (g->allocated >= CuptiCollector::kMaxBuffers) {
      g->capped.fetch_add(1);
      return;
    } else {
      ++g->allocated;  // reserved; allocated below, outside the lock
    }
    ++g->handedOut;
  }
  if (!b) {
    b = allocZeroed(g->bufferBytes);
    g->added.fetch_add(1);
    if (!b) {
      std::lock_guard<std::mutex> lock(g->poolMu);
      --g->allocated;
      --g->handedOut;
      g->capped.fetch_add(1);
      return;
    }
  }
  *buffer = b;
  *size = g->bufferBytes;
}

void CUPTIAPI bufferCompleted(CUcontext ctx, uint32_t streamId, uint8_t* buffer, size_t size, size_t validSize) {
  if (!g) {
    std::free(buffer);
    return;
  }
  if (buffer) {
    {
      std::lock_guard<std::mutex> lock(g->mu);
      CUpti_Activity* rec = nullptr;
      while (g->api->nextRecord(buffer, validSize, &rec) == CUPTI_SUCCESS) decode(rec, *g);
    }
    size_t dropped = 0;
    if (g->api->droppedRecords(ctx, streamId, &dropped) == CUPTI_SUCCESS) g->dropped += dropped;
    std::memset(buffer, 0, size ? size : g->bufferBytes);  // zeroed again for its next use
  }
  std::lock_guard<std::mutex> lock(g->poolMu);
  if (g->handedOut > 0) --g->handedOut;
  if (!buffer) return;
  if (g->closed) {
    std::free(buffer);
    --g->allocated;
  } else {
    g->free.push_back(buffer);
  }
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
  return std::string(what) + " failed: " + (g && g->api ? g->api->resultString(r) : "CUPTI error");
}

}  // namespace

void prepareNvtxInjection() {
  if (std::getenv("NVTX_INJECTION64_PATH")) return;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) && info.dli_fname)
    ::setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
}

CuptiCollector::CuptiCollector(CuptiApi& api, size_t poolBuffers, size_t bufferBytes) : api_(api) {
  if (std::getenv("ATTNSCOPE_DISABLE_CUPTI")) {
    reason_ = "disabled by ATTNSCOPE_DISABLE_CUPTI";
    return;
  }
  if (g && !g->closed) {
    reason_ = "another collector is active in this process";
    return;
  }
  if (g) {
    // A closed collector's state: gone if CUPTI gave every buffer back, else
    // kept (reachable) for the buffers CUPTI may still return.
    static std::vector<Shared*> retired;
    if (g->handedOut == 0)
      delete g;
    else
      retired.push_back(g);
  }
  g = new Shared();
  owns_ = true;
  struct ReleaseIfFailed {
    CuptiCollector* c;
    ~ReleaseIfFailed() {
      if (!c->ok_) c->release();
    }
  } releaseIfFailed{this};
  g->api = &api;
  g->bufferBytes = bufferBytes;
  for (size_t i = 0; i < poolBuffers; ++i) {
    uint8_t* b = allocZeroed(bufferBytes);
    if (!b) break;
    g->free.push_back(b);
    ++g->allocated;
  }
  stats_.buffersPooled = g->free.size();
  // Diagnostics for the overhead benchmark's ablations (documented in
  // docs/timing-methods.md): ATTNSCOPE_CUPTI_MINIMAL=1 enables only what
  // Kineto enables by default; ATTNSCOPE_CUPTI_NO_TSCB=1 keeps CUPTI's clock
  // (`run` refuses it: its CPU and GPU events must share one clock).
  CUptiResult r = CUPTI_SUCCESS;
  if (!std::getenv("ATTNSCOPE_CUPTI_NO_TSCB")) {
    r = api_.registerTimestampCallback(timestampCallback);
    if (r != CUPTI_SUCCESS) {
      reason_ = cuptiError("cuptiActivityRegisterTimestampCallback", r);
      return;
    }
  }
  // Runtime calls must land on the same lane as the ops that made them: ask
  // for system thread ids (what our RecordFunction observer records).
  r = api_.setThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  if (r != CUPTI_SUCCESS) {
    reason_ = cuptiError("cuptiSetThreadIdType", r);
    return;
  }
  // Our buffers come zeroed: CUPTI must not zero them in the thread that
  // asked (4 MiB of first-touch page faults inside a measured step).
  uint8_t zeroed = 1;
  size_t zsize = sizeof zeroed;
  r = api_.setAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zsize, &zeroed);
  if (r != CUPTI_SUCCESS) {
    reason_ = cuptiError("cuptiActivitySetAttribute(ZEROED_OUT_ACTIVITY_BUFFER)", r);
    return;
  }
  r = api_.registerCallbacks(bufferRequested, bufferCompleted);
  if (r != CUPTI_SUCCESS) {
    reason_ = cuptiError("cuptiActivityRegisterCallbacks", r);
    return;
  }
  const bool minimal = std::getenv("ATTNSCOPE_CUPTI_MINIMAL") != nullptr;
  // ATTNSCOPE_CUPTI_SKIP=kernel+runtime+...: an ablation knob leaving kinds
  // out (gpu-ablate.sh), to find which kind lengthens the steps.
  const std::string skip = std::getenv("ATTNSCOPE_CUPTI_SKIP") ? std::getenv("ATTNSCOPE_CUPTI_SKIP") : "";
  static constexpr std::pair<CUpti_ActivityKind, const char*> kSkippable[] = {
      {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernel"},
      {CUPTI_ACTIVITY_KIND_RUNTIME, "runtime"},
      {CUPTI_ACTIVITY_KIND_DRIVER, "driver"},
      {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "sync"},
      {CUPTI_ACTIVITY_KIND_MARKER, "marker"},
      {CUPTI_ACTIVITY_KIND_OVERHEAD, "overhead"}};
  auto skipped = [&](CUpti_ActivityKind k) {
    for (const auto& [kind, name] : kSkippable)
      if (kind == k) return skip.find(name) != std::string::npos;
    return false;
  };
  for (auto k : kKinds) {
    if (minimal && (k == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION || k == CUPTI_ACTIVITY_KIND_MARKER)) continue;
    if (skipped(k)) continue;
    r = api_.enable(k);
    if (r != CUPTI_SUCCESS) {
      reason_ = cuptiError("cuptiActivityEnable", r) + " (kind " + std::to_string(static_cast<int>(k)) + ")";
      for (auto j : kKinds) api_.disable(j);
      return;
    }
  }
  if (!std::getenv("ATTNSCOPE_CUPTI_ALL_API")) {
    // After the kinds: enabling a kind resets its per-API settings.
    int quiet = 0;
    for (auto cbid : kQuietRuntime) quiet += api_.enableRuntimeApi(cbid, 0) == CUPTI_SUCCESS;
    for (auto cbid : kQuietDriver) quiet += api_.enableDriverApi(cbid, 0) == CUPTI_SUCCESS;
    filterNote_ = "CUPTI: " + std::to_string(quiet) +
                  " query-only runtime/driver APIs (cudaGetDevice, cudaGetLastError, cudaStreamIsCapturing, "
                  "cuDevicePrimaryCtxGetState, cuKernelGetName, ...) are not recorded; ATTNSCOPE_CUPTI_ALL_API=1 "
                  "records every API call";
  }
  // An ablation's trace says what it lacks.
  const std::string leftOut = minimal ? "sync+marker" + (skip.empty() ? "" : "+" + skip) : skip;
  if (!leftOut.empty())
    filterNote_ += std::string(filterNote_.empty() ? "" : "; ") + "ablation: CUPTI kinds left out (" + leftOut +
                   "): this trace lacks their records";
  ok_ = true;
}

CuptiCollector::~CuptiCollector() {
  finish(nullptr);
  release();
}

void CuptiCollector::release() {
  if (!owns_ || !g) return;
  owns_ = false;
  bool allBack = false;
  {
    std::lock_guard<std::mutex> lock(g->poolMu);
    for (uint8_t* b : g->free) std::free(b);
    g->allocated -= g->free.size();
    g->free.clear();
    g->closed = true;
    allBack = g->handedOut == 0;
  }
  if (allBack) {
    delete g;  // every buffer came back; otherwise CUPTI may still return one
    g = nullptr;
  }
}

void CuptiCollector::setWindowStart(int64_t ns) { windowStart_ = ns; }

void CuptiCollector::finish(RunCapture* cap) {
  if (!ok_ || finished_ || !g) return;
  finished_ = true;
  // The end of the run: sync (the last kernels complete), disable every
  // kind, then one forced flush hands back every buffer, partial ones too.
  if (const cudaError_t e = api_.deviceSynchronize(); e != cudaSuccess)
    stats_.errors.push_back("cudaDeviceSynchronize failed: " + api_.cudaErrorString(e) +
                            " (the run's GPU work may be incomplete)");
  for (auto k : kKinds) {
    if (const CUptiResult r = api_.disable(k); r != CUPTI_SUCCESS && r != CUPTI_ERROR_NOT_INITIALIZED)
      stats_.errors.push_back(cuptiError("cuptiActivityDisable", r) + " (kind " + std::to_string(static_cast<int>(k)) +
                              ")");
  }
  if (const CUptiResult r = api_.flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); r != CUPTI_SUCCESS)
    stats_.errors.push_back(cuptiError("cuptiActivityFlushAll", r) + " (records still in CUPTI's buffers are lost)");
  // Records dropped from the global queue (no context), which no completed
  // buffer reports.
  size_t globalDropped = 0;
  if (api_.droppedRecords(nullptr, 0, &globalDropped) == CUPTI_SUCCESS) g->dropped += globalDropped;
  stats_.droppedRecords = g->dropped.load();
  stats_.buffersCapped = g->capped.load();
  stats_.buffersAdded = g->added.load();
  stats_.recordsWithoutTimestamps = g->untimed.load();
  std::lock_guard<std::mutex> lock(g->mu);
  for (auto& r : g->records) {
    if (r.startNs < windowStart_) {
      ++stats_.recordsBeforeWindow;
      continue;
    }
    if (cap) cap->activities.push_back(std::move(r));
  }
  if (cap)
    for (auto& x : g->ext) cap->externalCorrelations.push_back(x);
  g->records.clear();
  g->ext.clear();
  uint32_t v = 0;
  if (cap && api_.version(&v) == CUPTI_SUCCESS) cap->cuptiVersion = static_cast<int>(v);
}

std::string CuptiCollector::status() const {
  if (!ok_) return "unavailable: " + reason_;
  if (stats_.errors.empty()) return "ok";
  std::string s = "error: " + stats_.errors.front();
  if (stats_.errors.size() > 1) s += " (and " + std::to_string(stats_.errors.size() - 1) + " more)";
  return s;
}

}  // namespace attnscope::engine
