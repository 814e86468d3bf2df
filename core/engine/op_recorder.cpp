#include "op_recorder.h"

#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <cupti.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "clock.h"

namespace attnscope::engine {

namespace {

int64_t threadId() { return static_cast<int64_t>(::syscall(SYS_gettid)); }

struct OpContext : at::ObserverContext {
  std::string inputDims, inputTypes;  // taken at entry: inputs may be gone at exit
  int64_t start = 0;
  int64_t extId = 0;
  bool user = false;
  cudaEvent_t evStart = nullptr;
};

struct EventPair {
  std::string name;
  bool user = false;
  int64_t hostStart = 0, hostEnd = 0;
  cudaEvent_t a = nullptr, b = nullptr;
};

// RecordFunction takes plain function pointers: the active recorder's state
// lives here. One recorder at a time.
struct State {
  RecordMode mode = RecordMode::Trace;
  bool cuda = false;
  bool pushExt = false;
  std::atomic<int64_t> nextExt{1};
  std::mutex mu;
  std::vector<CpuOpRecord> ops;
  std::vector<MemoryRecord> memory;
  std::vector<EventPair> pairs;
  std::atomic<uint64_t> nvtxPushed{0};
};
State* g = nullptr;

std::string shapeOf(const c10::IValue& v) {
  if (v.isTensor()) {
    const auto& t = v.toTensor();
    if (!t.defined()) return "[]";
    std::string s = "[";
    for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
    return s + "]";
  }
  if (v.isTensorList()) {
    std::string s = "[";
    bool first = true;
    for (const auto& t : v.toTensorList()) {
      s += first ? "" : ", ";
      first = false;
      s += shapeOf(c10::IValue(static_cast<at::Tensor>(t)));
    }
    return s + "]";
  }
  return "[]";
}

std::string typeOf(const c10::IValue& v) {
  if (v.isTensor()) {
    const auto& t = v.toTensor();
    return t.defined() ? std::string(c10::scalarTypeToTypeMeta(t.scalar_type()).name()) : "";
  }
  if (v.isInt() || v.isDouble() || v.isBool() || v.isComplexDouble()) return "Scalar";
  if (v.isNone()) return "";
  if (v.isTensorList()) return "TensorList";
  if (v.isIntList() || v.isDoubleList() || v.isBoolList()) return "ScalarList";
  if (v.isString()) return "String";
  return v.tagKind();
}

std::unique_ptr<at::ObserverContext> onEnter(const at::RecordFunction& fn) {
  if (!g) return nullptr;
  auto ctx = std::make_unique<OpContext>();
  ctx->user = fn.scope() == at::RecordScope::USER_SCOPE;
  if (g->mode == RecordMode::Trace) {
    ctx->extId = g->nextExt.fetch_add(1, std::memory_order_relaxed);
    if (g->pushExt)
      cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                             static_cast<uint64_t>(ctx->extId));
    if (ctx->user) {
      nvtxRangePushA(fn.name());
      g->nvtxPushed.fetch_add(1, std::memory_order_relaxed);
    } else if (fn.needsInputs()) {
      const auto inputs = fn.inputs();
      std::string dims = "[", types = "[";
      for (size_t i = 0; i < inputs.size(); ++i) {
        dims += (i ? ", " : "") + shapeOf(inputs[i]);
        types += (i ? ", '" : "'") + typeOf(inputs[i]) + "'";
      }
      ctx->inputDims = dims + "]";
      ctx->inputTypes = types + "]";
    }
  } else if (g->cuda) {
    cudaEventCreate(&ctx->evStart);
    cudaEventRecord(ctx->evStart, c10::cuda::getCurrentCUDAStream());
  }
  ctx->start = static_cast<int64_t>(nowNs());
  return ctx;
}

void onExit(const at::RecordFunction& fn, at::ObserverContext* raw) {
  const auto end = static_cast<int64_t>(nowNs());
  auto* ctx = static_cast<OpContext*>(raw);
  if (!g || !ctx) return;
  if (g->mode == RecordMode::Trace) {
    if (g->pushExt) {
      uint64_t last = 0;
      cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    }
    if (ctx->user) nvtxRangePop();
    CpuOpRecord r;
    r.name = fn.name();
    r.startNs = ctx->start;
    r.endNs = end;
    r.tid = threadId();
    r.externalId = ctx->extId;
    r.userScope = ctx->user;
    r.sequenceNumber = fn.seqNr();
    r.inputDims = std::move(ctx->inputDims);
    r.inputTypes = std::move(ctx->inputTypes);
    std::lock_guard<std::mutex> lock(g->mu);
    g->ops.push_back(std::move(r));
  } else {
    EventPair p;
    p.name = fn.name();
    p.user = ctx->user;
    p.hostStart = ctx->start;
    p.hostEnd = end;
    p.a = ctx->evStart;
    if (g->cuda) {
      cudaEventCreate(&p.b);
      cudaEventRecord(p.b, c10::cuda::getCurrentCUDAStream());
    }
    std::lock_guard<std::mutex> lock(g->mu);
    g->pairs.push_back(std::move(p));
  }
}

// c10's allocators report every allocation and free to the profiler state
// found in the thread's debug info; this one records them.
struct MemoryReporter : c10::MemoryReportingInfoBase {
  void reportMemoryUsage(void*, int64_t size, size_t totalAllocated, size_t totalReserved,
                         c10::Device device) override {
    if (!g) return;
    MemoryRecord m;
    m.ts = static_cast<int64_t>(nowNs());
    m.bytes = size;
    m.deviceType = static_cast<int32_t>(device.type());
    m.device = device.index();
    m.totalAllocated = static_cast<int64_t>(totalAllocated);
    m.totalReserved = static_cast<int64_t>(totalReserved);
    m.tid = threadId();
    std::lock_guard<std::mutex> lock(g->mu);
    g->memory.push_back(m);
  }
  bool memoryProfilingEnabled() const override { return true; }
};

}  // namespace

OpRecorder::OpRecorder(RecordMode mode, bool cuda, bool pushExternalIds) {
  g = new State();
  g->mode = mode;
  g->cuda = cuda;
  g->pushExt = pushExternalIds;
  g->ops.reserve(4096);
  auto cb = at::RecordFunctionCallback(onEnter, onExit)
                .needsInputs(mode == RecordMode::Trace)
                .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE,
                         at::RecordScope::BACKWARD_FUNCTION});
  handle_ = at::addGlobalCallback(cb);
  if (mode == RecordMode::Trace)
    c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE, std::make_shared<MemoryReporter>());
}

OpRecorder::~OpRecorder() {
  at::removeCallback(handle_);
  if (g && g->mode == RecordMode::Trace) c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE);
  if (g) {
    for (auto& p : g->pairs) {
      if (p.a) cudaEventDestroy(p.a);
      if (p.b) cudaEventDestroy(p.b);
    }
  }
  delete g;
  g = nullptr;
}

void OpRecorder::takeInto(RunCapture* cap) {
  std::lock_guard<std::mutex> lock(g->mu);
  for (auto& o : g->ops) cap->ops.push_back(std::move(o));
  for (auto& m : g->memory) cap->memory.push_back(m);
  g->ops.clear();
  g->memory.clear();
}

std::vector<EventTiming> OpRecorder::eventTimings() {
  std::vector<EventTiming> out;
  if (g->cuda) cudaDeviceSynchronize();
  std::lock_guard<std::mutex> lock(g->mu);
  for (const auto& p : g->pairs) {
    EventTiming t;
    t.name = p.name;
    t.userScope = p.user;
    t.hostStartNs = p.hostStart;
    t.hostEndNs = p.hostEnd;
    float ms = 0;
    if (p.a && p.b && cudaEventElapsedTime(&ms, p.a, p.b) == cudaSuccess)
      t.elapsedNs = static_cast<int64_t>(static_cast<double>(ms) * 1e6);
    out.push_back(std::move(t));
  }
  return out;
}

uint64_t OpRecorder::nvtxRangesPushed() const { return g ? g->nvtxPushed.load() : 0; }

}  // namespace attnscope::engine
