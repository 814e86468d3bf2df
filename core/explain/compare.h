// Two traces of the same workload side by side: table rows joined by name
// (and input shapes when grouped so), steps joined by name, sync waits
// joined by API and op chain (annotations left out, so wrapping a step does
// not break the join), and a perturbation summary that says, with numbers,
// what wrapping changed: host time added by scopes, how sync waits moved
// and why, CUDA-event markers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/explain/explanation.h"
#include "core/tables/key_averages.h"

namespace attnscope {

struct CompareOptions {
  GroupBy groupBy = GroupBy::Name;
  Attribution attribution = Attribution::Torch;
};

// One joined pair; a side is absent when the other trace has no match.
template <class T>
struct Pair {
  std::string key;
  std::optional<T> a;
  std::optional<T> b;
};

struct Comparison {
  CompareOptions options;
  std::string pathA, pathB;
  std::vector<Pair<KeyAverageRow>> rows;
  std::vector<Pair<StepReport>> steps;
  std::vector<Pair<SyncWait>> syncWaits;
  std::vector<std::string> perturbation;  // plain sentences with numbers
};

struct TraceSnapshot;

// Both snapshots need their explanation (buildSnapshot's default).
Comparison compareTraces(const TraceSnapshot& a, const TraceSnapshot& b, const CompareOptions& opt = {});
std::string compareText(const Comparison& c);
std::string compareJson(const Comparison& c);
std::string compareCsv(const Comparison& c);  // section,key,metric,a,b,delta

}  // namespace attnscope
