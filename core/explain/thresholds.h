// The thresholds of the explanation's rules, in one place. A finding below
// its threshold is not reported; the numbers are in the steps either way.
#pragma once

#include <cstdint>

namespace attnscope::thresholds {

// GPU idle gaps inside a step: a gap between two stretches of GPU work counts from this
// length; the step gets a finding when its gaps add up to this share of its host time.
inline constexpr int64_t kIdleGapMinNs = 50'000;  // 50 us
inline constexpr double kIdleFindingMinShare = 0.10;

// Launch-bound: the GPU busy less than this share of a step while the CPU issued at least
// this many launches, each running on average shorter than the CPU took to issue the next.
inline constexpr double kLaunchBoundMaxBusyShare = 0.50;
inline constexpr uint64_t kLaunchBoundMinLaunches = 20;

// Spill across steps: reported from this much GPU time.
inline constexpr int64_t kSpillMinNs = 10'000;  // 10 us

// Sync waits: a group is "in the step loop" when its waits fall in at least this many steps.
inline constexpr size_t kSyncLoopMinSteps = 2;

// A finding that repeats in at least this many steps becomes one finding for all of them.
inline constexpr size_t kAggregateMinSteps = 5;

// Lists inside one finding: the largest items named, the rest counted.
inline constexpr size_t kListItems = 5;
// Evidence ids kept per finding (the JSON's events object describes each).
inline constexpr size_t kMaxEvidence = 20;

}  // namespace attnscope::thresholds
