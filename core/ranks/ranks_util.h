// Small helpers the rank summary and the job analysis share.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace attnscope::ranks {

// A name reduced for comparing across ranks and spellings: lower case, letters and digits only
// ("all_reduce", "AllReduce", "allreduce_" -> "allreduce").
inline std::string collectiveKey(std::string_view n) {
  std::string k;
  for (char c : n)
    if (std::isalnum(static_cast<unsigned char>(c)))
      k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return k;
}

// A step cause's words: the diagnosis's own codes and the CPU-only split's.
std::string causeWords(std::string_view code);

}  // namespace attnscope::ranks
