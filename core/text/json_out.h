// Minimal JSON output helpers (escaping, numbers). Reading uses simdjson.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

void appendJsonString(std::string& out, std::string_view s);  // with quotes
std::string jsonString(std::string_view s);
std::string jsonStringArray(const std::vector<std::string>& v);  // ["a", "b"]
std::string jsonNumber(double v);                                // shortest round-trip, "null" for NaN/Inf
// Length of the JSON number at the start of `t`, 0 if there is none.
size_t jsonNumberLength(std::string_view t);

}  // namespace attnscope
