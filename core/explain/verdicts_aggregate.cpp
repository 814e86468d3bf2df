// Findings that repeat step after step, folded into one.
#include <algorithm>
#include <map>
#include <set>

#include "core/explain/thresholds.h"
#include "core/explain/verdicts_detail.h"
#include "core/text/duration.h"

namespace attnscope::verdicts_detail {

namespace th = thresholds;

std::string count(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

void aggregateAcrossSteps(const Explanation& a, std::vector<Verdict>& out) {
  if (a.steps.size() < th::kAggregateMinSteps) return;
  std::map<std::string, std::vector<size_t>> byKind;  // kind -> indexes into out
  for (size_t i = 0; i < out.size(); ++i)
    if (!out[i].step.empty()) byKind[out[i].kind].push_back(i);
  std::vector<bool> drop(out.size(), false);
  std::vector<Verdict> added;
  for (const auto& [kind, idx] : byKind) {
    if (idx.size() < th::kAggregateMinSteps || kind == "sync_wait") continue;
    int64_t total = 0, lo = INT64_MAX, hi = 0;
    size_t largest = idx[0];
    for (size_t i : idx) {
      total += out[i].ns;
      lo = std::min(lo, out[i].ns);
      hi = std::max(hi, out[i].ns);
      if (out[i].ns > out[largest].ns) largest = i;
      drop[i] = true;
    }
    static const std::map<std::string, std::string> kTitle = {
        {"under_op_rows", "Where the steps' GPU time is"},
        {"gpu_idle", "GPU idle inside the steps"},
        {"launch_bound", "Launch-bound steps"},
        {"communication", "Communication"},
        {"spill", "Work spilling across steps"},
        {"ran_after_window", "GPU work running after its step closed"},
        {"no_kernel", "Steps that launched no GPU work"},
        {"swallowed_by_overhead", "GPU work the profiler's own events own in torch's table"}};
    const auto title = kTitle.find(kind);
    Verdict v{"", total, kind, "", out[largest].evidence, out[largest].glossary};
    std::set<std::string> stepsWithIt;
    for (size_t i : idx) stepsWithIt.insert(out[i].step);
    v.text = (title == kTitle.end() ? kind : title->second) + ": in " + count(stepsWithIt.size()) + " of the " +
             count(a.steps.size()) + " steps, " + spanDurationText(lo) + " to " + spanDurationText(hi) + " per step (" +
             spanDurationText(total) + " in all). The largest: " + out[largest].text;
    added.push_back(std::move(v));
  }
  std::vector<Verdict> kept;
  for (size_t i = 0; i < out.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(out[i]));
  for (Verdict& v : added) kept.push_back(std::move(v));
  out = std::move(kept);
}

}  // namespace attnscope::verdicts_detail
