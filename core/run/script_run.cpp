#include "core/run/script_run.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>

#include "core/run/engine_run.h"
#include "core/text/duration.h"
#include "core/text/shell_quote.h"

namespace attnscope {

namespace {

using Value = simdjson::simdjson_result<simdjson::dom::element>;

std::string str(Value v) {
  std::string_view sv;
  return v.get_string().get(sv) ? std::string() : std::string(sv);
}

int64_t intOf(Value v, int64_t fallback) {
  int64_t i = 0;
  if (!v.get_int64().get(i)) return i;
  double d = 0;
  if (!v.get_double().get(d) && std::isfinite(d)) return static_cast<int64_t>(d);
  return fallback;
}

bool boolOf(Value v) {
  bool b = false;
  return !v.get_bool().get(b) && b;
}

std::vector<int64_t> ints(Value v) {
  std::vector<int64_t> out;
  simdjson::dom::array a;
  if (v.get_array().get(a)) return out;
  for (simdjson::dom::element e : a) {
    const int64_t x = intOf(Value(std::move(e)), -1);
    if (x >= 0) out.push_back(x);
  }
  return out;
}

std::vector<std::string> strings(Value v) {
  std::vector<std::string> out;
  simdjson::dom::array a;
  if (v.get_array().get(a)) return out;
  for (simdjson::dom::element e : a) out.push_back(str(Value(std::move(e))));
  return out;
}

std::string signedDuration(double ns) {
  const int64_t d = std::llround(ns);
  return (d >= 0 ? "+" : "-") + spanDurationText(d >= 0 ? d : -d);
}

// "212.7 ms (median; min-max 205.7 ms-238.4 ms over 3 steps)": few steps, so their range, not percentiles.
std::string spreadMs(const StepSpread& s) {
  std::string t = spanDurationText(std::llround(s.medianNs));
  if (s.n > 1)
    return t + " (median; min-max " + spanDurationText(std::llround(s.minNs)) + "-" +
           spanDurationText(std::llround(s.maxNs)) + " over " + std::to_string(s.n) + " steps)";
  return t + " (1 step)";
}

}  // namespace

std::optional<ScriptRun> parseScriptRun(std::string_view json) {
  if (json.empty()) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc) || !doc.is_object()) return std::nullopt;
  ScriptRun r;
  r.version = static_cast<int>(intOf(doc["version"], 1));
  r.status = str(doc["status"]);
  r.exitCode = static_cast<int>(intOf(doc["exit_code"], 0));
  r.detail = str(doc["detail"]);
  r.python = str(doc["python"]);
  r.pythonVersion = str(doc["python_version"]);
  r.torchVersion = str(doc["torch_version"]);
  r.device = str(doc["device"]);
  r.stepsSeen = static_cast<int>(intOf(doc["steps_seen"], 0));
  r.stepSource = str(doc["step_source"]);
  r.wrappedModules = strings(doc["wrapped_modules"]);
  r.partial = boolOf(doc["partial"]);
  r.openStep = str(doc["open_step"]);
  r.traceWritten = boolOf(doc["trace_written"]);
  r.deviceSync = boolOf(doc["device_sync"]);
  r.profiledNs = ints(doc["profiled_ns"]);
  r.baselineHostNs = ints(doc["baseline_host_ns"]);
  r.baselineSyncNs = ints(doc["baseline_sync_ns"]);
  r.notes = strings(doc["notes"]);
  r.rank = static_cast<int>(intOf(doc["rank"], 0));
  r.worldSize = static_cast<int>(intOf(doc["world_size"], 1));
  r.writeError = str(doc["write_error"]);
  r.setupNs = intOf(doc["setup_ns"], -1);
  r.cpuWaitTraceNs = intOf(doc["cpu_wait_trace_ns"], -1);
  r.cpuWaitBaselineNs = intOf(doc["cpu_wait_baseline_ns"], -1);
  r.cancelled = str(doc["cancelled"]);
  r.beforeFirstStep = boolOf(doc["before_first_step"]);
  simdjson::dom::element c;
  if (!doc["config"].get(c) && c.is_object()) {
    r.script = str(c["script"]);
    r.module = str(c["module"]);
    r.args = strings(c["args"]);
    r.wrapModules = str(c["wrap_modules"]);
    r.sync = str(c["sync"]);
    r.stepFn = str(c["step_fn"]);
    r.command = str(c["command"]);
    r.wait = static_cast<int>(intOf(c["wait"], 0));
    r.warmup = static_cast<int>(intOf(c["warmup"], 0));
    r.active = static_cast<int>(intOf(c["active"], 0));
    r.baseline = static_cast<int>(intOf(c["baseline"], 0));
  }
  return r;
}

std::optional<ScriptRun> readScriptRun(const EventStore& store) { return parseScriptRun(store.meta().recordJson); }

std::optional<ProfilerInflation> scriptInflation(const ScriptRun& r) {
  if (r.profiledNs.empty() || r.baselineHostNs.empty()) return std::nullopt;
  ProfilerInflation p;
  p.step = "step";
  p.collector = spreadOf(r.profiledNs);
  p.noProfiler = spreadOf(r.baselineHostNs);
  p.torch = spreadOf(r.baselineSyncNs);  // here: no profiler, host+sync
  return p;
}

InflationJudgement judgeInflation(const std::vector<int64_t>& profiledNs, const std::vector<int64_t>& baselineNs,
                                  int64_t cpuWaitTraceNs, int64_t cpuWaitBaselineNs) {
  InflationJudgement j;
  if (profiledNs.size() < 3 || baselineNs.size() < 3) return j;
  const StepSpread p = spreadOf(profiledNs), b = spreadOf(baselineNs);
  j.differenceNs = p.medianNs - b.medianNs;
  // A few steps' min-max range is a narrow guess of their spread: twice the larger one.
  j.spreadNs = 2 * std::max(p.maxNs - p.minNs, b.maxNs - b.minNs);
  if (cpuWaitTraceNs >= 0 && cpuWaitBaselineNs >= 0)
    j.extraWaitNs = static_cast<double>(cpuWaitTraceNs - cpuWaitBaselineNs);
  if (std::abs(j.extraWaitNs) > std::max(j.spreadNs, 0.1 * std::abs(j.differenceNs)))
    j.kind = InflationJudgement::Noisy;
  else if (j.differenceNs > j.spreadNs && p.minNs > b.maxNs)  // beyond it, and every step apart
    j.kind = InflationJudgement::Claimed;
  else if (j.differenceNs < -j.spreadNs && p.maxNs < b.minNs)
    j.kind = InflationJudgement::Faster;
  else
    j.kind = InflationJudgement::Inside;
  return j;
}

std::vector<std::string> scriptRunNotes(const ScriptRun& r) {
  std::vector<std::string> n;
  std::vector<std::string> words;
  if (r.module.empty()) {
    words.push_back(r.script);
  } else {
    words = {"-m", r.module};
  }
  words.insert(words.end(), r.args.begin(), r.args.end());
  const std::string what = shellJoin(words);
  n.push_back("your script: " + what +
              (r.worldSize > 1 ? " (rank " + std::to_string(r.rank) + " of " + std::to_string(r.worldSize) + ")"
                               : std::string()) +
              ", torch " + r.torchVersion + " on " + r.device + ", Python " + r.pythonVersion);
  std::string steps = "steps: " + r.stepSource;
  if (r.stepsSeen > 0)
    steps += ", " + std::to_string(r.stepsSeen) + " seen; torch.profiler.schedule(wait=" + std::to_string(r.wait) +
             ", warmup=" + std::to_string(r.warmup) + ", active=" + std::to_string(r.active) + ")" +
             (r.partial ? " asked for ProfilerStep#" : " traced ProfilerStep#") + std::to_string(r.wait + r.warmup) +
             "..#" + std::to_string(r.wait + r.warmup + r.active - 1);
  n.push_back(steps);
  if (r.wrapModules == "none")
    n.push_back("modules wrapped: none (--wrap-modules none)");
  else if (r.wrappedModules.empty())
    n.push_back("modules wrapped: none matched --wrap-modules " + r.wrapModules);
  else {
    std::string list;
    for (size_t i = 0; i < r.wrappedModules.size() && i < 12; ++i) list += (i ? ", " : "") + r.wrappedModules[i];
    if (r.wrappedModules.size() > 12) list += ", ... (" + std::to_string(r.wrappedModules.size()) + " in all)";
    n.push_back("modules wrapped in record_function (--wrap-modules " + r.wrapModules + "): " + list);
  }
  if (r.sync == "step")
    n.push_back(r.deviceSync
                    ? "sync: a device synchronize at each step's end ('attnscope::step_sync')"
                    : "sync: step, marked 'attnscope::step_sync' at each step's end (no GPU: nothing to wait for)");
  else if (r.sync == "blocking")
    n.push_back(r.deviceSync ? "sync: CUDA_LAUNCH_BLOCKING=1 (every launch waits for its kernel)"
                             : "sync: blocking asked (CUDA_LAUNCH_BLOCKING=1), but the script ran without a GPU: "
                               "there are no kernel launches to wait for, so it changes nothing");
  if (r.status == "failed")
    n.push_back("the script failed (exit code " + std::to_string(r.exitCode) +
                (r.detail.empty() ? "" : ": " + r.detail) + ")" +
                (r.partial ? "; this trace holds the steps before it, the last one cut short" : ""));
  else if (r.status == "own_profiler")
    n.push_back("the script started its own profiler at " + r.detail + "; recording stopped there");
  if (!r.openStep.empty() && r.status == "failed")
    n.push_back(r.openStep + " was cut short by the failure: it is left out of the steps here");
  if (const auto p = scriptInflation(r)) {
    // What the profiler added, said only as far as the steps' own spread allows (a step's time without
    // the profiler varies from step to step, and a difference inside that says nothing), and only when
    // the machine was as busy in both windows.
    const InflationJudgement j = judgeInflation(r.profiledNs, r.baselineHostNs, r.cpuWaitTraceNs, r.cpuWaitBaselineNs);
    const double d = j.differenceNs, noise = j.spreadNs;
    std::string t = "the profiler's inflation: a step took " + spreadMs(p->collector) + " under torch.profiler and " +
                    spreadMs(p->noProfiler) + " without it (host clock, the next steps after the trace): ";
    if (j.kind == InflationJudgement::TooFew) {
      t += "too few steps to tell (--baseline 5 or more)";
    } else if (j.kind == InflationJudgement::Noisy) {
      t += "the machine was too noisy to tell: your process waited " +
           spanDurationText(std::max<int64_t>(0, r.cpuWaitTraceNs)) + " a step for a CPU under the profiler and " +
           spanDurationText(std::max<int64_t>(0, r.cpuWaitBaselineNs)) +
           " without it (other programs' load, measured at the same time), more than the steps' own spread (" +
           spanDurationText(std::llround(noise)) + "); rerun on a quieter machine";
    } else if (j.kind == InflationJudgement::Inside) {
      t += d > 0 ? signedDuration(d) + ", inside the steps' own spread (" + spanDurationText(std::llround(noise)) +
                       "): no measurable cost; more steps (--baseline 10) would narrow it"
                 : "no measurable cost (the median was " + spanDurationText(std::llround(-d)) +
                       " lower under the profiler, inside the steps' own spread of " +
                       spanDurationText(std::llround(noise)) + ")";
    } else if (j.kind == InflationJudgement::Faster) {
      t += "inconclusive: steps were faster under the profiler by more than their spread (something else changed "
           "between the two: warm-up, the machine's load); rerun with --baseline 10";
    } else {
      t += signedDuration(d);
      if (p->noProfiler.medianNs > 0)
        t += " (" + std::to_string(std::llround(100.0 * d / p->noProfiler.medianNs)) + "%)";
      t += ", beyond the steps' spread: the profiler's own work (recording ops, their inputs with --record-shapes, "
           "stacks)";
    }
    n.push_back(t);
    if (p->torch.n > 0)
      n.push_back("without the profiler, with a device sync at each step's end (host+sync): " + spreadMs(p->torch));
  } else if (r.baseline == 0) {
    n.push_back("the profiler's inflation was not measured (--baseline 0)");
  }
  for (const auto& x : r.notes) n.push_back(x);
  return n;
}

}  // namespace attnscope
