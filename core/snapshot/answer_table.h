// The answer to the question the product exists for, on a trace of the attention block: the four
// steps' CUDA time (their host time on a CPU run) by every way this trace can measure it, one
// column per method, each figure a median with its spread where there were several iterations.
// The Explanation dock shows it (ui/panels/explain_panel.cpp renders it as HTML) and
// `attnscope-cli explain` prints it (text and JSON): both read this one table.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/explain/spread.h"
#include "core/run/run_config.h"

namespace attnscope {

struct TraceSnapshot;

struct AnswerColumn {
  std::string key;    // cupti_by_correlation, torch_step_row, a timing method's key, collector, host
  std::string title;  // in the user's words
  std::array<int64_t, kStepCount> ns{-1, -1, -1, -1};  // the median (one value: itself); -1: no figure
  std::array<StepSpread, kStepCount> spread{};         // n > 1 when it has a p10-p90
  int iterations = 0;                                  // 0: not a series (one figure per step)
};

struct AnswerTable {
  bool cpuRun = false;  // an engine run on the CPU: host time, no CUDA time
  std::array<std::string, kStepCount> steps;
  std::array<bool, kStepCount> wrapped{};
  std::vector<AnswerColumn> columns;
  bool hasInflation = false;  // the collector column sits next to the no-profiler host pass
  std::string headline;       // the founding answer's (core/snapshot/founding_answer.h)
};

// nullopt when the trace's first four steps are not the attention block's.
std::optional<AnswerTable> answerTable(const TraceSnapshot& snap);

// One cell, as both the app and the CLI print it: the figure ("60.812 us", "no row") and its
// spread ("p10-p90 57.080 us-67.003 us", "" with one iteration).
std::string answerCellText(const AnswerColumn& c, size_t step);
std::string answerCellSpread(const AnswerColumn& c, size_t step);

// Text: a title line, one line per column ("  [1] GPU time of the kernels it launched ..."), then
// one per step ("  SOFTMAX PASS (not wrapped): [1] 60.812 us (p10-p90 57.080 us-67.003 us) | [2] ...").
std::vector<std::string> answerTableLines(const AnswerTable& t);
// {"cpu_run": false, "headline": "...", "steps": [...], "wrapped": [...], "columns": [{"key", "title",
// "ns": [4], "spread": [4 spreads or null], "iterations"}]}. The first two columns are the founding
// answer's: what each step really cost ("cupti_by_correlation" on a GPU, "own_ops_host" on the CPU)
// and "torch_step_row", its own row's time per call in torch's table (null: no row, an unwrapped step).
std::string answerTableJson(const AnswerTable& t);

}  // namespace attnscope
