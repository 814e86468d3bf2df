// The answer attnscope exists for. A user wraps one step in record_function; torch's table then
// shows time under that name only, and the other steps look as if they cost nothing. Per step:
// whether it is wrapped, what torch's table shows for it (its own row's time, or no row, which reads
// as zero), and what it really cost: on a GPU, the GPU time of the work it launched (joined to its
// launches by correlation); on the CPU, the host time of its own ops. For an unwrapped step, where
// torch's table put that time instead (its ops' rows). An engine run's iterations fall together: one
// row per workload step, each figure a median with its spread over the iterations.
//
// The Steps view (ui/panels/steps_view.h) shows it first, `attnscope-cli explain` prints it (the
// `answer` object's first columns), and an engine run on the CPU opens with its headline.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/explain/spread.h"

namespace attnscope {

class EventStore;
struct EngineRun;
struct Explanation;
struct KeyAverages;

struct AnswerStep {
  std::string name;
  bool wrapped = false;    // a record_function of its own (the trace's annotation or the engine's --wrap)
  std::vector<int> steps;  // the explanation's steps it covers, one per iteration, in time order
  // torch's table: the step's own row, per call; -1: no row, so it reads as zero. On a GPU trace its
  // CUDA total over its calls; on a host-only one, the median of its calls' CPU totals (their spread
  // in torchRowSpread), as the cost is a median: a few slow iterations move torch's average alone.
  int64_t torchRowNs = -1;
  uint64_t torchRowCalls = 0;
  int64_t torchRowTotalNs = 0;  // the row's total (CUDA or CPU) as torch's table prints it
  StepSpread torchRowSpread;
  StepSpread cost;  // what it really cost, per iteration (n: iterations)
  // On a GPU: of that cost, the work launched from threads other than the step's own (the backward
  // pass's autograd thread): torch's row, which counts its nested ops' work, misses it. Median.
  int64_t otherThreadsNs = 0;
  // Where torch's table shows that time, by the rows of its ops (per iteration, the median over the
  // iterations, largest first):
  // the launching op of each kernel on a GPU, its outermost ops on the CPU.
  std::vector<std::pair<std::string, int64_t>> shownUnder;
  int64_t costNs() const;  // the cost's median (one iteration: its value)
};

struct FoundingAnswer {
  bool gpu = false;        // cost = GPU time of the work it launched; else host time of its own ops
  bool engineRun = false;  // our engine's attention block (its four steps, iterations together)
  bool cpuRun = false;     // an engine run on the CPU
  int iterations = 1;      // the most iterations a row covers
  std::vector<AnswerStep> steps;
  // One paragraph: the wrapped and unwrapped steps, what torch's table did with them, and what each
  // really cost ("" with no step).
  std::string headline;

  std::string costTitle() const;   // "GPU time of the kernels it launched (by correlation)", ...
  std::string torchTitle() const;  // "torch's table: its own row (CUDA total per call)", ...
  size_t unwrapped() const;
};

// From the snapshot's pieces (nothing recomputed but the CPU ops' sums, two binary searches a step).
FoundingAnswer foundingAnswer(const EventStore& store, const Explanation& x, const KeyAverages& torchByName,
                              const EngineRun* engine);

// "no row" for a step without one, else the row's time; the cost with its p10-p90 when it moves.
std::string torchRowText(const AnswerStep& s);
std::string costText(const AnswerStep& s);
std::string costSpreadText(const AnswerStep& s);  // "p10-p90 57.1 us-67.0 us" ("" with one iteration)
std::string torchRowSpreadText(const AnswerStep& s);

// {"gpu", "engine_run", "cpu_run", "iterations", "headline", "cost_title", "torch_title",
//  "steps": [{"name", "wrapped", "torch_row_ns" (null: no row), "torch_row_calls", "torch_row_total_ns",
//  "torch_row_spread" (null unless a host-only row of several calls), "cost_ns",
//  "cost_spread" (null with one iteration), "other_threads_ns", "shown_under": [{"name", "ns"}]}]}
std::string foundingAnswerJson(const FoundingAnswer& a);

}  // namespace attnscope
