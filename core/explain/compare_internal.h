// Pieces of compareTraces kept in their own file (compare_changes.cpp).
#pragma once

#include <string>
#include <vector>

#include "core/explain/compare.h"

namespace attnscope::compare_detail {

// Pairs the steps (in order for ProfilerStep#N schedules) and fills the per-step medians.
void stepView(const TraceSnapshot& a, const TraceSnapshot& b, Comparison& c);
// Fills c.changes, ranked.
void findChanges(const TraceSnapshot& a, const TraceSnapshot& b, Comparison& c);
// The text lines of the step view (bounded unless `all`).
std::vector<std::string> stepViewLines(const Comparison& c, bool all);
// Fills c.causes and c.causesLine from the two diagnoses.
void compareCauses(const Diagnosis& a, const Diagnosis& b, Comparison& c);

}  // namespace attnscope::compare_detail
