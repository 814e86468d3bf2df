// What verdicts.cpp and verdicts_aggregate.cpp share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/explain/explanation.h"

namespace attnscope::verdicts_detail {

// 12345 -> "12,345".
std::string count(uint64_t n);
// In a loop of steps the same finding repeats step after step: it becomes one finding for all of
// them (how many steps, the range, the total), with the largest instance as the example.
void aggregateAcrossSteps(const Explanation& a, std::vector<Verdict>& out);

}  // namespace attnscope::verdicts_detail
