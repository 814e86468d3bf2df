// The CUPTI (and the one CUDA runtime) calls the collector makes, behind an
// interface: the engine uses realCuptiApi(); tests give the collector a fake
// that hands it synthetic activity records, dropped counts and failures.
#pragma once

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <string>

namespace attnscope::engine {

class CuptiApi {
 public:
  virtual ~CuptiApi() = default;
  virtual CUptiResult registerTimestampCallback(CUpti_TimestampCallbackFunc f) = 0;
  virtual CUptiResult setThreadIdType(CUpti_ActivityThreadIdType t) = 0;
  virtual CUptiResult registerCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                        CUpti_BuffersCallbackCompleteFunc complete) = 0;
  virtual CUptiResult setAttribute(CUpti_ActivityAttribute attr, size_t* size, void* value) = 0;
  virtual CUptiResult enable(CUpti_ActivityKind k) = 0;
  virtual CUptiResult disable(CUpti_ActivityKind k) = 0;
  virtual CUptiResult enableRuntimeApi(CUpti_CallbackId cbid, uint8_t on) = 0;
  virtual CUptiResult enableDriverApi(CUpti_CallbackId cbid, uint8_t on) = 0;
  virtual CUptiResult flushAll(uint32_t flag) = 0;
  virtual CUptiResult nextRecord(uint8_t* buffer, size_t validSize, CUpti_Activity** rec) = 0;
  virtual CUptiResult droppedRecords(CUcontext ctx, uint32_t streamId, size_t* dropped) = 0;
  virtual CUptiResult version(uint32_t* v) = 0;
  virtual std::string resultString(CUptiResult r) = 0;
  virtual std::string callbackName(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) = 0;
  // cudaDeviceSynchronize: an error here is sticky and spoils the whole run.
  virtual cudaError_t deviceSynchronize() = 0;
  virtual std::string cudaErrorString(cudaError_t e) = 0;
};

CuptiApi& realCuptiApi();

}  // namespace attnscope::engine
