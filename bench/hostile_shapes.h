// Hostile trace shapes written by both the hostile-input test (which checks that they
// load right and never hang) and `attnscope-bench hostile` (which times them). Header-only:
// the test needs no benchmark library.
#pragma once

#include <cstdint>
#include <string>

namespace bench {

// Event i of the "ids everything shares" shape: launches, kernels and flows on one
// correlation, one External id and one flow id, i < 4n; event 4n is the one op they
// all point at.
inline std::string sharedIdsEvent(uint64_t i, uint64_t n) {
  if (i == 4 * n)
    return R"({"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":0.000,"dur":1000000.000,)"
           R"("args":{"External id":7}})";
  const std::string ts = std::to_string(10 + i) + ".0";
  switch (i % 4) {
    case 0:
      return R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":)" + ts +
             R"(,"dur":0.5,"args":{"External id":7,"correlation":1}})";
    case 1:
      return R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":)" + ts +
             R"(,"dur":0.5,"args":{"External id":7,"correlation":1,"device":0,"stream":7}})";
    case 2:
      return R"({"ph":"s","cat":"ac2g","name":"ac2g","id":1,"pid":1,"tid":1,"ts":)" + ts + "}";
    default:
      return R"({"ph":"f","cat":"ac2g","name":"ac2g","id":1,"bp":"e","pid":0,"tid":7,"ts":)" + ts + "}";
  }
}

}  // namespace bench
