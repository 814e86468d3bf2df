// A recorded script's run (`attnscope-cli record`): the trace's "attnscope_record" object, written
// by the recorder (resources/record/attnscope_record.py), and the recorder's result file (the same
// fields). What the run was asked to do, where the steps came from, which modules it wrapped, how
// it ended (complete, partial: the script failed or ended inside the schedule), and its steps'
// host times with and without the profiler (the profiler's inflation).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/explain/explanation.h"
#include "core/store/event_store.h"

namespace attnscope {

struct ScriptRun {
  int version = 1;
  std::string status;  // complete | failed | own_profiler | cancelled | no_torch | running
  int exitCode = 0;
  std::string detail;  // the failure in one line ("RuntimeError: ...", "train.py:41")
  std::string python, pythonVersion, torchVersion, device;
  int stepsSeen = 0;
  std::string stepSource;  // "optimizer.step (SGD)", "step function __main__:train_step", "whole run (...)"
  std::vector<std::string> wrappedModules;
  bool partial = false;
  std::string openStep;  // the ProfilerStep in flight when the script stopped: it ends where the script did
  bool traceWritten = false;
  bool deviceSync = false;  // a GPU was there to synchronize
  std::vector<int64_t> profiledNs, baselineHostNs, baselineSyncNs;
  std::vector<std::string> notes;
  int rank = 0, worldSize = 1;
  // The config it ran with (the recorder's): the fields the explanation names.
  std::string script, module, wrapModules = "none", sync = "none", stepFn, command;
  std::vector<std::string> args;
  int wait = 0, warmup = 0, active = 0, baseline = 0;
  std::string writeError;
  int64_t setupNs = -1;  // the script's start to its first step's end (-1: no step)
  // The process's wait for a CPU (Linux run-queue time, all its threads), per step: during the
  // traced steps and during the baseline's host steps (-1: not measured).
  int64_t cpuWaitTraceNs = -1, cpuWaitBaselineNs = -1;
  std::string cancelled;         // "" | before_trace | baseline | after_trace: when Ctrl-C/SIGTERM came
  bool beforeFirstStep = false;  // it failed before any step ended: nothing was kept
  bool operator==(const ScriptRun&) const = default;
};

// The object, or a result file's whole text; nullopt when it is not a JSON object.
std::optional<ScriptRun> parseScriptRun(std::string_view json);
// The store's "attnscope_record" object, parsed.
std::optional<ScriptRun> readScriptRun(const EventStore& store);

// What the explanation says about a recorded script: its notes (steps from, wrapping, sync,
// how it ended) and the profiler's inflation of its steps.
std::vector<std::string> scriptRunNotes(const ScriptRun& r);
// The step's host time without the profiler (host clock; host+sync when the run synced at each
// step or times GPU work) and under it; nullopt without a baseline.
std::optional<ProfilerInflation> scriptInflation(const ScriptRun& r);

// What can be said of the profiler's cost from the steps timed under it and without it, and from
// the time the process waited for a CPU in each window (-1: not measured). A difference is claimed
// only beyond the steps' spread (twice the larger window's min-max range) with every step under the
// profiler slower than every step without, and only when the machine's load was the same in both:
// a change in the wait for a CPU beyond that spread (and beyond a tenth of the difference) means
// something else slowed one window, and the answer is "too noisy to tell".
struct InflationJudgement {
  enum Kind { TooFew, Noisy, Inside, Faster, Claimed } kind = TooFew;
  double differenceNs = 0;  // median under the profiler - median without
  double spreadNs = 0;      // twice the larger of the two windows' min-max ranges
  double extraWaitNs = 0;   // the wait for a CPU per step, under the profiler - without
};
InflationJudgement judgeInflation(const std::vector<int64_t>& profiledNs, const std::vector<int64_t>& baselineNs,
                                  int64_t cpuWaitTraceNs, int64_t cpuWaitBaselineNs);

}  // namespace attnscope
