#include "core/engine/op_recorder.h"

#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <torch/csrc/profiler/orchestration/observer.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string_view>

#include "core/engine/clock.h"

namespace attnscope::engine {

namespace {
// gettid is a system call (expensive under gVisor): once per thread.
int64_t threadId() {
  thread_local const int64_t tid = static_cast<int64_t>(::syscall(SYS_gettid));
  return tid;
}

struct OpContext : at::ObserverContext {
  int64_t start = 0;
  int64_t extId = 0;
  int64_t tid = 0;  // the thread that began it (a scope may end on another)
  bool nvtxPushed = false;
  bool user = false;
  cudaEvent_t evStart = nullptr;
};

struct EventPair {
  std::string name;
  bool user = false;
  int64_t hostStart = 0, hostEnd = 0;
  cudaEvent_t a = nullptr, b = nullptr;
};

// The hot path appends fixed-size records and integer-encoded input shapes
// to a per-thread buffer (no lock, no strings); text is made after the run.
struct RawOp {
  const char* name = nullptr;  // operator names live as long as the process
  int64_t start = 0, end = 0, extId = 0, seq = -1;
  uint32_t ownedName = UINT32_MAX;  // user scopes: index into ThreadBuf::names
  int64_t tid = 0;                  // user scopes: the thread that began it (0: the buffer's)
  uint32_t encBegin = 0, encEnd = 0;
  bool user = false;
};

enum : int64_t {
  kEncTensor = 1,
  kEncUndefined,
  kEncScalar,
  kEncNone,
  kEncTensorList,
  kEncScalarList,
  kEncString,
  kEncOther
};

struct ThreadBuf {
  int64_t tid = 0;
  std::vector<RawOp> ops;
  std::vector<MemoryRecord> memory;
  std::vector<int64_t> enc;
  std::vector<std::string> names;
};

// Which External ids go to CUPTI (ATTNSCOPE_EXTID=call|outermost|every|none).
enum class ExtIds { None, PerCall, Outermost, EveryOp };

// RecordFunction takes plain function pointers: the active recorder's state
// lives here. One recorder at a time.
struct State {
  RecordMode mode = RecordMode::Trace;
  bool cuda = false;
  ExtIds extIds = ExtIds::None;  // which External ids go to CUPTI
  bool memory = false;           // c10 memory reports wanted
  bool nvtx = true;
  bool inputs = false;  // ops carry their input shapes (--record-shapes)
  uint64_t generation = 0;
  std::atomic<int64_t> nextExt{1};
  std::mutex mu;
  std::vector<std::unique_ptr<ThreadBuf>> bufs;
  std::vector<EventPair> pairs;
  std::atomic<uint64_t> nvtxPushed{0};
  std::atomic<uint64_t> nvtxLeftOpen{0};  // scopes that ended on another thread than they began
  std::vector<cudaEvent_t> eventPool;     // events mode: created up front
  std::atomic<size_t> eventNext{0};
  std::atomic<uint64_t> eventsLate{0};
  std::vector<cudaEvent_t> lateEvents;  // created while measuring (the pool ran out)
  int64_t windowStart = 0;              // ops and memory reports before it are the warm-up's
};
State* g = nullptr;
std::atomic<uint64_t> gGeneration{0};
thread_local ThreadBuf* tlBuf = nullptr;
thread_local uint64_t tlGeneration = 0;

// Operator calls nest strictly on their thread (the dispatcher's guard), so
// their entry state lives on a per-thread stack instead of a heap-allocated
// ObserverContext per op. User scopes (record_function can end on another
// thread) keep a context of their own.
struct OpFrame {
  const char* name = nullptr;  // to check the pairing
  int64_t start = 0, extId = 0;
  uint32_t encBegin = 0, encEnd = 0;
  bool pushed = false;  // its External id is on CUPTI's stack
};
thread_local std::vector<OpFrame> tlFrames;
thread_local uint64_t tlFramesGeneration = 0;

// An event from the pool made up front; a new one only when it ran out.
cudaEvent_t takeEvent() {
  const size_t i = g->eventNext.fetch_add(1, std::memory_order_relaxed);
  if (i < g->eventPool.size()) return g->eventPool[i];
  g->eventsLate.fetch_add(1, std::memory_order_relaxed);
  cudaEvent_t e = nullptr;
  cudaEventCreate(&e);
  std::lock_guard<std::mutex> lock(g->mu);
  g->lateEvents.push_back(e);
  return e;
}

ThreadBuf& threadBuf() {
  if (tlBuf && tlGeneration == g->generation) return *tlBuf;
  auto b = std::make_unique<ThreadBuf>();
  b->tid = threadId();
  b->ops.reserve(1 << 14);
  b->enc.reserve(1 << 16);
  std::lock_guard<std::mutex> lock(g->mu);
  tlBuf = b.get();
  tlGeneration = g->generation;
  g->bufs.push_back(std::move(b));
  return *tlBuf;
}

void encodeTensor(const at::Tensor& t, std::vector<int64_t>& enc) {
  if (!t.defined()) {
    enc.push_back(kEncUndefined);
    return;
  }
  enc.push_back(kEncTensor);
  enc.push_back(static_cast<int64_t>(t.scalar_type()));
  const auto sizes = t.sizes();
  enc.push_back(static_cast<int64_t>(sizes.size()));
  enc.insert(enc.end(), sizes.begin(), sizes.end());
}

void encode(const c10::IValue& v, std::vector<int64_t>& enc) {
  if (v.isTensor()) {
    encodeTensor(v.toTensor(), enc);
  } else if (v.isInt() || v.isDouble() || v.isBool() || v.isComplexDouble()) {
    enc.push_back(kEncScalar);
  } else if (v.isNone()) {
    enc.push_back(kEncNone);
  } else if (v.isTensorList()) {
    const auto list = v.toTensorList();
    enc.push_back(kEncTensorList);
    enc.push_back(static_cast<int64_t>(list.size()));
    for (size_t k = 0; k < list.size(); ++k) encodeTensor(list.get(k), enc);
  } else if (v.isIntList() || v.isDoubleList() || v.isBoolList()) {
    enc.push_back(kEncScalarList);
  } else if (v.isString()) {
    enc.push_back(kEncString);
  } else {
    enc.push_back(kEncOther);
  }
}

// Decodes one op's inputs into torch's str(input_shapes) and its type list.
void decodeInputs(const std::vector<int64_t>& enc, uint32_t b, uint32_t e, std::string* dims, std::string* types) {
  *dims = "[";
  *types = "[";
  size_t i = b;
  bool first = true;
  auto tensorDims = [&](std::string& out) {
    const int64_t nd = enc[i++];
    out += "[";
    for (int64_t k = 0; k < nd; ++k) out += (k ? ", " : "") + std::to_string(enc[i++]);
    out += "]";
  };
  while (i < e) {
    const int64_t kind = enc[i++];
    *dims += first ? "" : ", ";
    *types += first ? "'" : ", '";
    first = false;
    switch (kind) {
      case kEncTensor: {
        const auto st = static_cast<c10::ScalarType>(enc[i++]);
        *types += std::string(c10::scalarTypeToTypeMeta(st).name());
        tensorDims(*dims);
        break;
      }
      case kEncTensorList: {
        const int64_t n = enc[i++];
        *dims += "[";
        for (int64_t k = 0; k < n; ++k) {
          *dims += k ? ", " : "";
          if (enc[i++] == kEncTensor) {
            ++i;  // dtype
            tensorDims(*dims);
          } else {
            *dims += "[]";
          }
        }
        *dims += "]";
        *types += "TensorList";
        break;
      }
      default:
        *dims += "[]";
        *types += kind == kEncScalar       ? "Scalar"
                  : kind == kEncScalarList ? "ScalarList"
                  : kind == kEncString     ? "String"
                                           : "";
    }
    *types += "'";
  }
  *dims += "]";
  *types += "]";
}

std::unique_ptr<at::ObserverContext> onEnter(const at::RecordFunction& fn) {
  if (!g) return nullptr;
  const bool user = fn.scope() == at::RecordScope::USER_SCOPE;
  if (g->mode == RecordMode::Trace && !user) {
    if (tlFramesGeneration != g->generation) {  // frames left by an earlier recorder
      tlFrames.clear();
      tlFramesGeneration = g->generation;
    }
    // CUPTI's push + pop costs ~190-350 ns per op on the H200 box: by
    // default no operator's id goes to CUPTI, and the assembler gives each
    // API call the innermost op running on its thread when it began (the
    // same clock and thread ids), which is the op whose id a per-op push
    // would have named.
    const bool outermost = tlFrames.empty();
    OpFrame& f = tlFrames.emplace_back();
    f.name = fn.name();
    f.extId = g->nextExt.fetch_add(1, std::memory_order_relaxed);
    f.pushed = g->extIds == ExtIds::EveryOp || (outermost && g->extIds == ExtIds::Outermost);
    if (f.pushed)
      cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, static_cast<uint64_t>(f.extId));
    if (fn.needsInputs()) {  // inputs are read at entry: they may be gone at exit
      ThreadBuf& tb = threadBuf();
      f.encBegin = static_cast<uint32_t>(tb.enc.size());
      for (const auto& in : fn.inputs()) encode(in, tb.enc);
      f.encEnd = static_cast<uint32_t>(tb.enc.size());
    }
    f.start = static_cast<int64_t>(nowNs());
    return nullptr;
  }
  auto ctx = std::make_unique<OpContext>();
  ctx->user = user;
  ctx->tid = threadId();
  if (g->mode == RecordMode::Trace) {
    // A scope's id is not pushed to CUPTI: the assembler finds the calls made
    // directly inside it by containment, like those of nested ops.
    ctx->extId = g->nextExt.fetch_add(1, std::memory_order_relaxed);
    if (g->extIds == ExtIds::EveryOp)
      cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                             static_cast<uint64_t>(ctx->extId));
    if (g->nvtx) {
      nvtxRangePushA(fn.name());
      ctx->nvtxPushed = true;
      g->nvtxPushed.fetch_add(1, std::memory_order_relaxed);
    }
  } else if (g->cuda) {
    ctx->evStart = takeEvent();
    cudaEventRecord(ctx->evStart, c10::cuda::getCurrentCUDAStream());
  }
  ctx->start = static_cast<int64_t>(nowNs());
  return ctx;
}

void onExit(const at::RecordFunction& fn, at::ObserverContext* raw) {
  const auto end = static_cast<int64_t>(nowNs());
  auto* ctx = static_cast<OpContext*>(raw);
  if (!g) return;
  if (!ctx) {  // an operator: its frame is on this thread's stack
    if (g->mode != RecordMode::Trace || tlFramesGeneration != g->generation) return;
    const char* name = fn.name();
    size_t k = tlFrames.size();
    while (k > 0 && tlFrames[k - 1].name != name) --k;  // the top, unless an exit was missed
    if (k == 0) return;
    const OpFrame f = tlFrames[k - 1];
    tlFrames.resize(k - 1);
    if (f.pushed) {
      uint64_t last = 0;
      cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    }
    RawOp r;
    r.start = f.start;
    r.end = end;
    r.extId = f.extId;
    r.seq = fn.seqNr();
    r.encBegin = f.encBegin;
    r.encEnd = f.encEnd;
    ThreadBuf& tb = threadBuf();
    if (fn.scope() != at::RecordScope::FUNCTION) {
      r.ownedName = static_cast<uint32_t>(tb.names.size());
      tb.names.emplace_back(name);
    } else {
      r.name = name;
    }
    tb.ops.push_back(r);
    return;
  }
  if (g->mode == RecordMode::Trace) {
    if (g->extIds == ExtIds::EveryOp) {
      uint64_t last = 0;
      cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    }
    ThreadBuf& tb = threadBuf();  // the thread that ends the scope
    RawOp r;
    r.start = ctx->start;
    r.end = end;
    r.extId = ctx->extId;
    r.seq = fn.seqNr();
    r.user = true;
    r.ownedName = static_cast<uint32_t>(tb.names.size());
    r.tid = ctx->tid;  // filed under the thread that began it
    tb.names.emplace_back(fn.name());
    // NVTX ranges are per-thread stacks: a scope that ends on another thread
    // must not pop that thread's range (its own stays open, and is counted).
    if (ctx->nvtxPushed && threadId() == ctx->tid)
      nvtxRangePop();
    else if (ctx->nvtxPushed)
      g->nvtxLeftOpen.fetch_add(1, std::memory_order_relaxed);
    tb.ops.push_back(r);
  } else {
    EventPair p;
    p.name = fn.name();
    p.user = ctx->user;
    p.hostStart = ctx->start;
    p.hostEnd = end;
    p.a = ctx->evStart;
    if (g->cuda) {
      p.b = takeEvent();
      cudaEventRecord(p.b, c10::cuda::getCurrentCUDAStream());
    }
    std::lock_guard<std::mutex> lock(g->mu);
    g->pairs.push_back(std::move(p));
  }
}

// c10's allocators report every allocation and free to the profiler state
// found in the thread's debug info; this one records them. LibTorch reads the
// same slot as a ProfilerStateBase (a static_cast): so it is one, of a
// profiler in the Disabled state that wants memory reports, and anything
// asking whether torch's profiler is on gets "no".
struct MemoryReporter final : torch::profiler::impl::ProfilerStateBase {
  MemoryReporter()
      : ProfilerStateBase(torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::Disabled,
                                                                /*report_input_shapes=*/false,
                                                                /*profile_memory=*/true)) {}
  torch::profiler::impl::ActiveProfilerType profilerType() override {
    return torch::profiler::impl::ActiveProfilerType::NONE;
  }
  void reportMemoryUsage(void* ptr, int64_t size, size_t totalAllocated, size_t totalReserved,
                         c10::Device device) override {
    if (!g) return;
    MemoryRecord m;
    m.addr = reinterpret_cast<uintptr_t>(ptr);
    m.ts = static_cast<int64_t>(nowNs());
    m.bytes = size;
    m.deviceType = static_cast<int32_t>(device.type());
    m.device = device.index();
    m.totalAllocated = static_cast<int64_t>(totalAllocated);
    m.totalReserved = static_cast<int64_t>(totalReserved);
    m.tid = threadId();
    threadBuf().memory.push_back(m);
  }
};

}  // namespace

OpRecorder::OpRecorder(RecordMode mode, bool cuda, bool pushExternalIds, size_t eventsUpFront, bool inputShapes) {
  g = new State();
  if (mode == RecordMode::Events && cuda) {
    g->eventPool.resize(eventsUpFront);
    for (auto& e : g->eventPool) cudaEventCreate(&e);
  }
  g->generation = gGeneration.fetch_add(1) + 1;
  g->mode = mode;
  g->cuda = cuda;
  const char* env = std::getenv("ATTNSCOPE_EXTID");
  const std::string_view where = env ? env : "call";
  if (pushExternalIds && !std::getenv("ATTNSCOPE_NO_EXTID") && where != "none")
    g->extIds = where == "every" ? ExtIds::EveryOp : where == "outermost" ? ExtIds::Outermost : ExtIds::PerCall;
  g->nvtx = !std::getenv("ATTNSCOPE_NO_NVTX");
  g->inputs = mode == RecordMode::Trace && inputShapes;
  auto cb = at::RecordFunctionCallback(onEnter, onExit)
                .needsInputs(g->inputs)
                .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE, at::RecordScope::BACKWARD_FUNCTION});
  handle_ = at::addGlobalCallback(cb);
  g->memory = mode == RecordMode::Trace && !std::getenv("ATTNSCOPE_NO_MEMORY");
  if (g->memory)
    c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE, std::make_shared<MemoryReporter>());
}

OpRecorder::~OpRecorder() {
  at::removeCallback(handle_);
  if (g && g->memory) c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE);
  if (g) {
    // Every event the pairs took came from the pool or was created late.
    for (auto& e : g->eventPool) cudaEventDestroy(e);
    for (auto& e : g->lateEvents) cudaEventDestroy(e);
  }
  delete g;
  g = nullptr;
}

void OpRecorder::startWindow(int64_t startNs) {
  g->windowStart = startNs;
  g->nvtxPushed = 0;  // the warm-up's ranges are left out with its markers
}

void OpRecorder::takeInto(RunCapture* cap) {
  std::lock_guard<std::mutex> lock(g->mu);
  cap->inputShapes = g->inputs;
  for (auto& tb : g->bufs) {
    for (const RawOp& r : tb->ops) {
      if (r.start < g->windowStart) continue;  // the warm-up's
      CpuOpRecord o;
      o.name = r.ownedName != UINT32_MAX ? tb->names[r.ownedName] : std::string(r.name ? r.name : "?");
      o.startNs = r.start;
      o.endNs = r.end;
      o.tid = r.tid ? r.tid : tb->tid;
      o.externalId = r.extId;
      o.userScope = r.user;
      o.sequenceNumber = r.seq;
      if (!r.user && g->inputs) decodeInputs(tb->enc, r.encBegin, r.encEnd, &o.inputDims, &o.inputTypes);
      cap->ops.push_back(std::move(o));
    }
    for (const auto& m : tb->memory)
      if (m.ts >= g->windowStart) cap->memory.push_back(m);
    tb->ops.clear();
    tb->enc.clear();
    tb->names.clear();
    tb->memory.clear();
  }
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

bool OpRecorder::pushesCallIds() const { return g && g->extIds == ExtIds::PerCall; }

namespace {
std::atomic<uint64_t> gCallIdFailures{0};
}

CallExternalId::CallExternalId(bool on, uint64_t id) : on_(on), id_(id) {
  if (on_ && cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, id) != CUPTI_SUCCESS) {
    gCallIdFailures.fetch_add(1);
    on_ = false;
  }
}

CallExternalId::~CallExternalId() {
  if (!on_) return;
  uint64_t last = 0;
  // The pop must give back what this scope pushed: anything else means the
  // API calls of this call of the block carry another call's id.
  if (cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &last) != CUPTI_SUCCESS ||
      last != id_)
    gCallIdFailures.fetch_add(1);
}

uint64_t CallExternalId::failures() { return gCallIdFailures.load(); }

uint64_t OpRecorder::nvtxRangesPushed() const { return g ? g->nvtxPushed.load() : 0; }
uint64_t OpRecorder::nvtxRangesLeftOpen() const { return g ? g->nvtxLeftOpen.load() : 0; }
uint64_t OpRecorder::eventsCreatedLate() const { return g ? g->eventsLate.load() : 0; }

}  // namespace attnscope::engine
