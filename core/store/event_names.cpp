// The names of the store's enums: families as the trace spells them, GPU work in one word, the
// reader's kinds of bad input.
#include "core/store/event_store.h"

namespace attnscope {

std::string_view gpuWorkWord(Family f) {
  switch (f) {
    case Family::Kernel:
      return "kernel";
    case Family::GpuMemcpy:
      return "memcpy";
    case Family::GpuMemset:
      return "memset";
    default:
      return {};
  }
}

std::string_view familyName(Family f) {
  switch (f) {
    case Family::CpuOp:
      return "cpu_op";
    case Family::UserAnnotation:
      return "user_annotation";
    case Family::GpuUserAnnotation:
      return "gpu_user_annotation";
    case Family::CudaRuntime:
      return "cuda_runtime";
    case Family::CudaDriver:
      return "cuda_driver";
    case Family::Kernel:
      return "kernel";
    case Family::GpuMemcpy:
      return "gpu_memcpy";
    case Family::GpuMemset:
      return "gpu_memset";
    case Family::CudaSync:
      return "cuda_sync";
    case Family::Overhead:
      return "overhead";
    case Family::PythonFunction:
      return "python_function";
    case Family::CpuInstant:
      return "cpu_instant_event";
    case Family::Memory:
      return "memory";
    case Family::Other:
      return "other";
    case Family::Count:
      break;
  }
  return "?";
}

bool isGpuFamily(Family f) {
  return f == Family::GpuUserAnnotation || f == Family::Kernel || f == Family::GpuMemcpy || f == Family::GpuMemset ||
         f == Family::CudaSync;
}

bool isCpuFamily(Family f) {
  return f == Family::CpuOp || f == Family::UserAnnotation || f == Family::CudaRuntime || f == Family::CudaDriver ||
         f == Family::Overhead || f == Family::PythonFunction || f == Family::CpuInstant || f == Family::Memory;
}

std::string_view badKindName(BadKind k) {
  switch (k) {
    case BadKind::NotAnObject:
      return "not an object";
    case BadKind::MissingField:
      return "missing field";
    case BadKind::BadType:
      return "bad type";
    case BadKind::BadNumber:
      return "bad number";
    case BadKind::StringTooLong:
      return "string too long";
    case BadKind::UnknownPhase:
      return "unknown phase";
    case BadKind::DanglingFlow:
      return "dangling flow";
    case BadKind::TooManyEvents:
      return "too many events";
    case BadKind::TooDeep:
      return "nested too deep";
    case BadKind::Count:
      break;
  }
  return "?";
}

}  // namespace attnscope
