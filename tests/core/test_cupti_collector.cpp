// The CUPTI collector driven by a fake CUPTI (no GPU): its buffer pool,
// records CUPTI could not time, the warm-up window, dropped counts, failing
// calls at the end of a run, the buffer cap, and the driver's lazy loading
// told apart from the profiler's overhead.
#include <QtTest>

#include <cstring>
#include <map>
#include <vector>

#include "core/engine/cupti_collector.h"
#include "core/run/run_capture.h"
#include "core/store/event_store.h"

using namespace attnscope;
using namespace attnscope::engine;

namespace {

class FakeCupti final : public CuptiApi {
 public:
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  uint8_t zeroedAttribute = 0;
  bool zeroedAttributeSet = false;
  CUptiResult enableResult = CUPTI_SUCCESS;
  CUptiResult flushResult = CUPTI_SUCCESS;
  CUptiResult disableResult = CUPTI_SUCCESS;
  cudaError_t syncResult = cudaSuccess;
  size_t droppedPerBuffer = 0;
  size_t droppedGlobal = 0;
  int flushes = 0;
  int disables = 0;
  bool syncedBeforeDisable = false;
  bool disabledBeforeFlush = false;
  // Buffers CUPTI "holds", with what was written into them: record offsets.
  struct Held {
    size_t size = 0, valid = 0;
    std::vector<size_t> offsets;
  };
  std::map<uint8_t*, Held> held;

  CUptiResult registerTimestampCallback(CUpti_TimestampCallbackFunc) override { return CUPTI_SUCCESS; }
  CUptiResult setThreadIdType(CUpti_ActivityThreadIdType) override { return CUPTI_SUCCESS; }
  CUptiResult registerCallbacks(CUpti_BuffersCallbackRequestFunc r, CUpti_BuffersCallbackCompleteFunc c) override {
    request = r;
    complete = c;
    return CUPTI_SUCCESS;
  }
  CUptiResult setAttribute(CUpti_ActivityAttribute attr, size_t* size, void* value) override {
    if (attr == CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER && *size == sizeof(uint8_t)) {
      zeroedAttribute = *static_cast<uint8_t*>(value);
      zeroedAttributeSet = true;
    }
    return CUPTI_SUCCESS;
  }
  CUptiResult enable(CUpti_ActivityKind) override { return enableResult; }
  CUptiResult disable(CUpti_ActivityKind) override {
    ++disables;
    return disableResult;
  }
  CUptiResult enableRuntimeApi(CUpti_CallbackId, uint8_t) override { return CUPTI_SUCCESS; }
  CUptiResult enableDriverApi(CUpti_CallbackId, uint8_t) override { return CUPTI_SUCCESS; }
  CUptiResult flushAll(uint32_t) override {
    ++flushes;
    disabledBeforeFlush = disables > 0;
    if (flushResult != CUPTI_SUCCESS) return flushResult;
    while (!held.empty()) giveBack(held.begin()->first);
    return CUPTI_SUCCESS;
  }
  CUptiResult nextRecord(uint8_t* buffer, size_t validSize, CUpti_Activity** rec) override {
    auto it = held.find(buffer);
    if (it == held.end()) it = completing_;
    const auto& offs = it->second.offsets;
    size_t next = 0;
    if (*rec) {
      const auto cur = static_cast<size_t>(reinterpret_cast<uint8_t*>(*rec) - buffer);
      next = static_cast<size_t>(std::upper_bound(offs.begin(), offs.end(), cur) - offs.begin());
    }
    if (next >= offs.size() || offs[next] >= validSize) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = reinterpret_cast<CUpti_Activity*>(buffer + offs[next]);
    return CUPTI_SUCCESS;
  }
  CUptiResult droppedRecords(CUcontext ctx, uint32_t, size_t* dropped) override {
    *dropped = ctx ? droppedPerBuffer : (completing_ != held.end() ? droppedPerBuffer : droppedGlobal);
    return CUPTI_SUCCESS;
  }
  CUptiResult version(uint32_t* v) override {
    *v = 130000;
    return CUPTI_SUCCESS;
  }
  std::string resultString(CUptiResult r) override { return "fake CUPTI error " + std::to_string(int(r)); }
  std::string callbackName(CUpti_CallbackDomain, CUpti_CallbackId) override { return "cudaLaunchKernel_v7000"; }
  cudaError_t deviceSynchronize() override {
    syncedBeforeDisable = disables == 0;
    return syncResult;
  }
  std::string cudaErrorString(cudaError_t e) override { return "fake CUDA error " + std::to_string(int(e)); }

  // CUPTI asks the collector for a buffer.
  uint8_t* take() {
    uint8_t* b = nullptr;
    size_t size = 0, maxRecords = 0;
    request(&b, &size, &maxRecords);
    if (b) held[b] = Held{size, 0, {}};
    return b;
  }
  template <class T>
  void put(uint8_t* b, const T& rec) {
    Held& h = held.at(b);
    const size_t off = (h.valid + 7) & ~size_t(7);
    QVERIFY(off + sizeof(T) <= h.size);
    std::memcpy(b + off, &rec, sizeof(T));
    h.offsets.push_back(off);
    h.valid = off + sizeof(T);
  }
  // CUPTI hands a buffer back (as a flush or a full buffer does).
  void giveBack(uint8_t* b) {
    completing_ = held.find(b);
    const Held h = completing_->second;
    complete(nullptr, 0, b, h.size, h.valid);
    held.erase(completing_);
    completing_ = held.end();
  }

 private:
  std::map<uint8_t*, Held>::iterator completing_ = held.end();
};

CUpti_ActivityKernel10 kernel(uint64_t start, uint64_t end, uint32_t corr) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.correlationId = corr;
  k.name = "_Z6kernelv";
  k.deviceId = 0;
  k.streamId = 7;
  return k;
}

CUpti_ActivityAPI runtime(uint64_t start, uint64_t end, uint32_t corr, uint32_t tid) {
  CUpti_ActivityAPI a{};
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  a.start = start;
  a.end = end;
  a.correlationId = corr;
  a.threadId = tid;
  return a;
}

CUpti_ActivityOverhead3 overhead(CUpti_ActivityOverheadKind kind, uint64_t start, uint64_t end, uint32_t tid) {
  CUpti_ActivityOverhead3 o{};
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = kind;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.threadId = tid;
  o.start = start;
  o.end = end;
  return o;
}

bool allZero(const uint8_t* b, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (b[i]) return false;
  return true;
}

constexpr size_t kSmall = 64 << 10;

}  // namespace

class TestCuptiCollector : public QObject {
  Q_OBJECT
 private slots:
  void buffersComeZeroedFromAPoolAndAreRecycled() {
    FakeCupti api;
    CuptiCollector c(api, /*poolBuffers=*/2, kSmall);
    QVERIFY2(c.available(), c.unavailableReason().c_str());
    QVERIFY(api.zeroedAttributeSet);
    QCOMPARE(int(api.zeroedAttribute), 1);  // CUPTI is told not to zero them itself
    QCOMPARE(c.stats().buffersPooled, uint64_t(2));
    uint8_t* a = api.take();
    uint8_t* b = api.take();
    QVERIFY(a && b && a != b);
    QVERIFY(allZero(a, kSmall) && allZero(b, kSmall));
    api.put(a, kernel(1000, 2000, 1));
    api.giveBack(a);  // written, then returned: zeroed again and reused
    uint8_t* again = api.take();
    QCOMPARE(again, a);
    QVERIFY(allZero(again, kSmall));
    uint8_t* third = api.take();  // the pool is empty now: a buffer is added
    QVERIFY(third && third != a && third != b);
    QVERIFY(allZero(third, kSmall));
    RunCapture cap;
    c.finish(&cap);
    QCOMPARE(c.stats().buffersAdded, uint64_t(1));
    QVERIFY(api.held.empty());  // the forced flush handed every buffer back
    QCOMPARE(cap.activities.size(), size_t(1));
    QCOMPARE(c.status(), std::string("ok"));
  }

  void untimedRecordsAreLeftOutNotPutAtZero() {
    FakeCupti api;
    CuptiCollector c(api, 1, kSmall);
    uint8_t* b = api.take();
    api.put(b, kernel(0, 0, 1));            // CUPTI_TIMESTAMP_UNKNOWN
    api.put(b, kernel(5000, 0, 2));         // its end was dropped
    api.put(b, runtime(9000, 8000, 3, 1));  // ends before it starts
    api.put(b, kernel(10000, 12000, 4));
    api.put(b, runtime(9500, 9900, 4, 1));
    RunCapture cap;
    c.finish(&cap);
    QCOMPARE(c.stats().recordsWithoutTimestamps, uint64_t(3));
    QCOMPARE(cap.activities.size(), size_t(2));
    for (const auto& a : cap.activities) QVERIFY(a.startNs > 0 && a.endNs >= a.startNs);
    const EventStore s = assembleRunStore(cap, nullptr);
    for (const Event& e : s.events()) QVERIFY2(e.start > 0, "no event at t = 0");
  }

  void theWarmUpIsLeftOutAndCounted() {
    FakeCupti api;
    CuptiCollector c(api, 1, kSmall);
    uint8_t* b = api.take();
    api.put(b, runtime(100, 200, 1, 1));  // warm-up
    api.put(b, kernel(250, 400, 1));      // warm-up
    c.setWindowStart(1000);
    api.put(b, runtime(1100, 1200, 2, 1));
    api.put(b, kernel(1250, 1400, 2));
    RunCapture cap;
    c.finish(&cap);
    QCOMPARE(c.stats().recordsBeforeWindow, uint64_t(2));
    QCOMPARE(cap.activities.size(), size_t(2));
    for (const auto& a : cap.activities) QVERIFY(a.startNs >= 1000);
    QCOMPARE(api.flushes, 1);  // one forced flush, at the end only
  }

  void droppedRecordsCountEveryBufferAndTheGlobalQueue() {
    FakeCupti api;
    api.droppedPerBuffer = 3;
    api.droppedGlobal = 5;
    CuptiCollector c(api, 2, kSmall);
    uint8_t* a = api.take();
    uint8_t* b = api.take();
    api.put(a, kernel(1000, 2000, 1));
    api.put(b, kernel(3000, 4000, 2));
    api.giveBack(a);    // a full buffer, mid-run: 3
    c.finish(nullptr);  // b at the flush: 3, then the global queue: 5
    QCOMPARE(c.stats().droppedRecords, uint64_t(3 + 3 + 5));
  }

  void theEndOfARunSyncsDisablesThenFlushesAndReportsFailures() {
    {
      FakeCupti api;
      CuptiCollector c(api, 1, kSmall);
      c.finish(nullptr);
      QVERIFY(api.syncedBeforeDisable);
      QVERIFY(api.disabledBeforeFlush);
      QCOMPARE(c.status(), std::string("ok"));
    }
    FakeCupti api;
    api.syncResult = cudaErrorIllegalAddress;  // a sticky error from the workload
    api.flushResult = CUPTI_ERROR_UNKNOWN;
    CuptiCollector c(api, 1, kSmall);
    uint8_t* b = api.take();
    api.put(b, kernel(1000, 2000, 1));
    RunCapture cap;
    c.finish(&cap);
    QCOMPARE(c.stats().errors.size(), size_t(2));
    const std::string status = c.status();
    QVERIFY2(status.rfind("error: cudaDeviceSynchronize failed", 0) == 0, status.c_str());
    QVERIFY2(status.find("1 more") != std::string::npos, status.c_str());
    QVERIFY(c.stats().errors[1].find("cuptiActivityFlushAll") != std::string::npos);
    api.flushResult = CUPTI_SUCCESS;
    api.flushAll(0);  // what CUPTI still held comes back later: not lost to a crash
  }

  void requestsPastTheCapAreRefusedAndCounted() {
    FakeCupti api;
    CuptiCollector c(api, 0, 4096);
    for (uint64_t i = 0; i < CuptiCollector::kMaxBuffers; ++i) QVERIFY(api.take());
    QVERIFY(api.take() == nullptr);  // CUPTI drops those records and counts them
    c.finish(nullptr);
    QCOMPARE(c.stats().buffersCapped, uint64_t(1));
    QCOMPARE(c.stats().buffersAdded, CuptiCollector::kMaxBuffers);
  }

  void lazyLoadingIsTheDriversWorkOnItsThread() {
    FakeCupti api;
    CuptiCollector c(api, 1, kSmall);
    uint8_t* b = api.take();
    api.put(b, runtime(1000, 30000, 9, 4242));
    api.put(b, overhead(CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING, 2000, 25000, 4242));
    api.put(b, overhead(CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST, 40000, 41000, 4242));
    RunCapture cap;
    cap.pid = 77;
    c.finish(&cap);
    QCOMPARE(cap.activities.size(), size_t(3));
    const ActivityRecord& lazy = cap.activities[1];
    QCOMPARE(int(lazy.kind), int(ActivityKind::DriverWork));
    QCOMPARE(lazy.name, std::string("Lazy Function Loading (CUDA driver)"));
    QCOMPARE(lazy.tid, int64_t(4242));
    QCOMPARE(int(cap.activities[2].kind), int(ActivityKind::Overhead));
    AssembleStats st;
    const EventStore s = assembleRunStore(cap, &st);
    QCOMPARE(st.driverWorkRecords, uint64_t(1));
    QCOMPARE(st.overheadRecords, uint64_t(1));
    int found = 0;
    for (const Event& e : s.events()) {
      const std::string_view name = s.str(e.name);
      if (name.starts_with("Lazy Function Loading")) {
        ++found;
        QCOMPARE(int(e.family), int(Family::CudaDriver));  // not the profiler's overhead
        const Lane& l = s.lanes()[e.lane];
        QCOMPARE(l.pid, int64_t(77));
        QCOMPARE(l.tid, int64_t(4242));
      } else if (name == "Activity Buffer Request") {
        QCOMPARE(int(e.family), int(Family::Overhead));
      }
    }
    QCOMPARE(found, 1);
  }

  void aFailingEnableMakesItUnavailableWithTheReason() {
    FakeCupti api;
    api.enableResult = CUPTI_ERROR_NOT_COMPATIBLE;
    CuptiCollector c(api, 1, kSmall);
    QVERIFY(!c.available());
    QVERIFY(c.unavailableReason().find("cuptiActivityEnable failed") != std::string::npos);
    QVERIFY(c.status().rfind("unavailable: ", 0) == 0);
    // Another collector can start once this one is gone.
    FakeCupti api2;
    {
      CuptiCollector second(api2, 1, kSmall);
      QVERIFY(second.available());
      CuptiCollector third(api2, 1, kSmall);  // one at a time
      QVERIFY(!third.available());
      QVERIFY(third.unavailableReason().find("another collector") != std::string::npos);
    }
  }
};

QTEST_GUILESS_MAIN(TestCuptiCollector)
#include "test_cupti_collector.moc"
