// The real CUPTI behind CuptiApi (tests drive the collector with a fake one).
#include <cupti.h>

#include "core/engine/cupti_collector.h"

namespace attnscope::engine {

namespace {
class RealCupti final : public CuptiApi {
 public:
  CUptiResult registerTimestampCallback(CUpti_TimestampCallbackFunc f) override {
    return cuptiActivityRegisterTimestampCallback(f);
  }
  CUptiResult setThreadIdType(CUpti_ActivityThreadIdType t) override { return cuptiSetThreadIdType(t); }
  CUptiResult registerCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                CUpti_BuffersCallbackCompleteFunc complete) override {
    return cuptiActivityRegisterCallbacks(request, complete);
  }
  CUptiResult setAttribute(CUpti_ActivityAttribute attr, size_t* size, void* value) override {
    return cuptiActivitySetAttribute(attr, size, value);
  }
  CUptiResult enable(CUpti_ActivityKind k) override { return cuptiActivityEnable(k); }
  CUptiResult disable(CUpti_ActivityKind k) override { return cuptiActivityDisable(k); }
  CUptiResult enableRuntimeApi(CUpti_CallbackId cbid, uint8_t on) override {
    return cuptiActivityEnableRuntimeApi(cbid, on);
  }
  CUptiResult enableDriverApi(CUpti_CallbackId cbid, uint8_t on) override {
    return cuptiActivityEnableDriverApi(cbid, on);
  }
  CUptiResult flushAll(uint32_t flag) override { return cuptiActivityFlushAll(flag); }
  CUptiResult nextRecord(uint8_t* buffer, size_t validSize, CUpti_Activity** rec) override {
    return cuptiActivityGetNextRecord(buffer, validSize, rec);
  }
  CUptiResult droppedRecords(CUcontext ctx, uint32_t streamId, size_t* dropped) override {
    return cuptiActivityGetNumDroppedRecords(ctx, streamId, dropped);
  }
  CUptiResult version(uint32_t* v) override { return cuptiGetVersion(v); }
  std::string resultString(CUptiResult r) override {
    const char* msg = nullptr;
    cuptiGetResultString(r, &msg);
    return msg ? msg : "unknown CUPTI error " + std::to_string(static_cast<int>(r));
  }
  std::string callbackName(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) override {
    const char* n = nullptr;
    return cuptiGetCallbackName(domain, cbid, &n) == CUPTI_SUCCESS && n ? n : "";
  }
  cudaError_t deviceSynchronize() override { return cudaDeviceSynchronize(); }
  std::string cudaErrorString(cudaError_t e) override {
    return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  }
};
}  // namespace

CuptiApi& realCuptiApi() {
  static RealCupti api;
  return api;
}

}  // namespace attnscope::engine
