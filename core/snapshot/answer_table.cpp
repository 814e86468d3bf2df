#include "core/snapshot/answer_table.h"

#include <cmath>

#include "core/run/engine_run.h"
#include "core/run/timing_methods.h"
#include "core/snapshot/founding_answer.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/text/duration.h"
#include "core/text/json_out.h"

namespace attnscope {

std::optional<AnswerTable> answerTable(const TraceSnapshot& snap) {
  if (!snap.explanation) return std::nullopt;
  const Explanation& an = *snap.explanation;
  if (an.steps.size() < kStepCount) return std::nullopt;
  AnswerTable t;
  for (size_t k = 0; k < kStepCount; ++k) {
    if (an.steps[k].name != kStepNames[k]) return std::nullopt;
    t.steps[k] = an.steps[k].name;
    t.wrapped[k] = an.steps[k].wrapped;
  }
  const EngineRun* engine = snap.engine ? &*snap.engine : nullptr;
  t.cpuRun = engine && engine->device.isCpu();
  // The founding answer's two columns lead: what each step really cost, and what torch's table shows
  // for it (its own row, per call; none for an unwrapped step, which reads as zero).
  const FoundingAnswer* fa = snap.answer.get();
  const bool gpuRecords = an.ledger.timing == "cupti" || an.ledger.timing == "roctracer";
  if (fa) t.headline = fa->headline;
  if (fa && (gpuRecords || t.cpuRun)) {
    AnswerColumn cost;
    cost.key = t.cpuRun ? "own_ops_host" : "cupti_by_correlation";
    cost.title = t.cpuRun ? "host time of the step's own ops (what it really cost on the CPU)"
                          : "GPU time of the kernels it launched (CUPTI, by correlation)";
    AnswerColumn row;
    row.key = "torch_step_row";
    row.title = t.cpuRun ? "torch's CPU total for the step's own row, per call (wrapped steps only)"
                         : "torch's CUDA total for the step's own row, per call (wrapped steps only)";
    for (const AnswerStep& st : fa->steps)
      for (size_t k = 0; k < kStepCount; ++k) {
        if (st.name != kStepNames[k]) continue;
        cost.ns[k] = st.cost.n ? st.costNs() : -1;
        if (st.cost.n > 1) cost.spread[k] = st.cost;
        cost.iterations = std::max(cost.iterations, st.cost.n > 1 ? st.cost.n : 0);
        row.ns[k] = st.torchRowNs;
      }
    t.columns.push_back(std::move(cost));
    t.columns.push_back(std::move(row));
  }
  if (engine) {
    for (const TimingSeries& ts : engine->timing) {
      // A CPU run has no GPU: neither CUDA events nor CUPTI's kernels measure anything there.
      if (!timingMeaningful(ts.method, t.cpuRun)) continue;
      // The median over iterations, with its spread: one iteration is noise.
      const std::vector<StepSpread> sp = ts.spread();
      AnswerColumn c;
      c.key = ts.method;
      c.iterations = static_cast<int>(ts.steps.size());
      for (size_t k = 0; k < kStepCount; ++k) {
        if (k >= sp.size() || sp[k].n == 0) continue;
        c.ns[k] = std::llround(sp[k].medianNs);
        c.spread[k] = sp[k];
      }
      c.title = timingMethodLabel(ts.method) +
                (c.iterations > 1 ? ", median of " + std::to_string(c.iterations) + " iterations"
                                  : std::string(", one iteration (no spread: run with more iterations)"));
      t.columns.push_back(std::move(c));
    }
    if (an.inflation.size() == kStepCount) {
      // The trace's own windows: the steps' host time with our collector running, next to the host
      // pass (no profiler): the difference is the collector's work, not the step's cost.
      t.hasInflation = true;
      AnswerColumn c;
      c.key = "collector";
      c.title = "host clock under attnscope's collector (this trace)";
      for (size_t k = 0; k < kStepCount; ++k) {
        c.ns[k] = std::llround(an.inflation[k].collector.medianNs);
        c.spread[k] = an.inflation[k].collector;
        c.iterations = std::max(c.iterations, an.inflation[k].collector.n);
      }
      t.columns.push_back(std::move(c));
    }
  } else {
    AnswerColumn c;
    c.key = "host";
    c.title = "host time (CPU clock, no sync)";
    for (size_t k = 0; k < kStepCount; ++k) c.ns[k] = an.steps[k].hostNs();
    t.columns.push_back(c);
  }
  return t;
}

std::string answerCellText(const AnswerColumn& c, size_t step) {
  return c.ns[step] < 0 ? std::string("no row") : spanDurationText(c.ns[step]);
}

std::string answerCellSpread(const AnswerColumn& c, size_t step) {
  const StepSpread& sp = c.spread[step];
  if (c.ns[step] < 0 || sp.n < 2) return {};
  return "p10-p90 " + spanDurationText(std::llround(sp.p10Ns)) + "-" + spanDurationText(std::llround(sp.p90Ns));
}

std::vector<std::string> answerTableLines(const AnswerTable& t) {
  std::vector<std::string> out;
  std::string head = t.cpuRun ? "the answer (a CPU run: no CUDA time, the steps' host time):"
                              : "the answer, the four steps' CUDA time by every way this trace measures it:";
  out.push_back(head);
  if (!t.headline.empty()) out.push_back("  " + t.headline);
  for (size_t i = 0; i < t.columns.size(); ++i)
    out.push_back("  [" + std::to_string(i + 1) + "] " + t.columns[i].title);
  for (size_t k = 0; k < kStepCount; ++k) {
    std::string l = "  " + t.steps[k] + (t.wrapped[k] ? "" : " (not wrapped)") + ":";
    for (size_t i = 0; i < t.columns.size(); ++i) {
      const AnswerColumn& c = t.columns[i];
      l += (i ? " | [" : " [") + std::to_string(i + 1) + "] " + answerCellText(c, k);
      const std::string spread = answerCellSpread(c, k);
      if (!spread.empty()) l += " (" + spread + ")";
    }
    out.push_back(std::move(l));
  }
  return out;
}

std::string answerTableJson(const AnswerTable& t) {
  std::string s = std::string("{\"cpu_run\": ") + (t.cpuRun ? "true" : "false") +
                  ", \"headline\": " + jsonString(t.headline) + ", \"steps\": [";
  for (size_t k = 0; k < kStepCount; ++k) s += (k ? ", " : "") + jsonString(t.steps[k]);
  s += "], \"wrapped\": [";
  for (size_t k = 0; k < kStepCount; ++k) s += std::string(k ? ", " : "") + (t.wrapped[k] ? "true" : "false");
  s += "], \"columns\": [";
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const AnswerColumn& c = t.columns[i];
    s += (i ? ", " : "") + std::string("{\"key\": ") + jsonString(c.key) + ", \"title\": " + jsonString(c.title) +
         ", \"ns\": [";
    for (size_t k = 0; k < kStepCount; ++k)
      s += (k ? ", " : "") + (c.ns[k] < 0 ? std::string("null") : std::to_string(c.ns[k]));
    s += "], \"spread\": [";
    for (size_t k = 0; k < kStepCount; ++k)
      s += (k ? ", " : "") + (c.spread[k].n > 1 ? spreadJson(c.spread[k]) : std::string("null"));
    s += "], \"iterations\": " + std::to_string(c.iterations) + "}";
  }
  return s + "], \"has_inflation\": " + (t.hasInflation ? "true" : "false") + "}";
}

}  // namespace attnscope
