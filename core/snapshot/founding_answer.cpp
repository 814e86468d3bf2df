#include "core/snapshot/founding_answer.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/explain/explanation.h"
#include "core/run/engine_run.h"
#include "core/store/event_store.h"
#include "core/tables/key_averages.h"
#include "core/text/duration.h"
#include "core/text/json_out.h"

namespace attnscope {

namespace {

// An op with no op above it (annotations and ProfilerStep#N may enclose it): torch's table shows
// the step's host time in these ops' rows.
bool outermostOp(const EventStore& s, EventId id) {
  const EventId* parent = s.columns().parent.data();
  for (EventId p = parent[id]; p != kNoEvent; p = parent[p])
    if (s.columns().family[p] == Family::CpuOp) return false;
  return true;
}

// The first event of `lane` starting at or after t (its events are sorted by start).
EventId firstAt(const EventStore& s, const Lane& lane, int64_t t) {
  const int64_t* start = s.columns().start.data();
  return static_cast<EventId>(std::lower_bound(start + lane.begin, start + lane.end, t) - start);
}

// The host time of a step's own ops: its outermost ops inside the window, on the thread that ran
// most of them (another thread's ops in the same window are not the step's). By name, in `byName`.
int64_t ownOpsNs(const EventStore& s, int64_t startNs, int64_t endNs, uint32_t onlyLane,
                 std::map<std::string, int64_t>* byName) {
  const int64_t* start = s.columns().start.data();
  const int64_t* dur = s.columns().dur.data();
  const Family* family = s.columns().family.data();
  int64_t best = 0;
  uint32_t bestLane = UINT32_MAX;
  for (uint32_t ln = 0; ln < s.lanes().size(); ++ln) {
    const Lane& lane = s.lanes()[ln];
    if (lane.kind != LaneKind::CpuThread || lane.pid == -1) continue;
    if (onlyLane != UINT32_MAX && ln != onlyLane) continue;
    int64_t sum = 0;
    for (EventId id = firstAt(s, lane, startNs); id < lane.end && start[id] < endNs; ++id) {
      if (family[id] != Family::CpuOp || start[id] + dur[id] > endNs || !outermostOp(s, id)) continue;
      sum += dur[id];
    }
    if (sum > best) best = sum, bestLane = ln;
  }
  if (byName && bestLane != UINT32_MAX) {
    const Lane& lane = s.lanes()[bestLane];
    for (EventId id = firstAt(s, lane, startNs); id < lane.end && start[id] < endNs; ++id) {
      if (family[id] == Family::CpuOp && start[id] + dur[id] <= endNs && outermostOp(s, id))
        (*byName)[std::string(s.name(s.event(id)))] += dur[id];
    }
  }
  return best;
}

// "A", "A and B", "A, B and C".
std::string joinNames(const std::vector<std::string>& names, size_t most = 6, const char* last = " and ") {
  std::string out;
  const size_t n = std::min(names.size(), most);
  for (size_t i = 0; i < n; ++i) {
    if (i) out += i + 1 == n && names.size() <= most ? last : ", ";
    out += names[i];
  }
  if (names.size() > most) out += " and " + std::to_string(names.size() - most) + " more";
  return out;
}

// A step's name without the " #N" the step finder adds to a name that repeats.
std::string baseName(const std::string& name) {
  const size_t hash = name.rfind(" #");
  if (hash == std::string::npos) return name;
  const std::string tail = name.substr(hash + 2);
  return !tail.empty() && std::all_of(tail.begin(), tail.end(), [](char c) { return c >= '0' && c <= '9'; })
             ? name.substr(0, hash)
             : name;
}

// Every step has its row. Few steps: each row against its cost; many (ProfilerStep#N, which torch
// folds into one row, ProfilerStep*): their medians. Then what torch's row misses, where it does.
std::string wrappedHeadline(const FoundingAnswer& a, const std::string& column, const std::string& kind,
                            const std::string& median) {
  const size_t n = a.steps.size();
  std::vector<int64_t> torch, cost, other;
  for (const AnswerStep& st : a.steps) {
    torch.push_back(st.torchRowNs);
    cost.push_back(st.costNs());
    other.push_back(st.otherThreadsNs);
  }
  const bool folded = n > 1 && std::all_of(a.steps.begin(), a.steps.end(),
                                           [](const AnswerStep& st) { return st.name.starts_with("ProfilerStep#"); });
  // One record_function name around every step (the step finder numbers the repeats): one row.
  const std::string base = n > 0 ? baseName(a.steps[0].name) : std::string();
  const bool oneName = n > 1 && !folded && std::all_of(a.steps.begin(), a.steps.end(), [&](const AnswerStep& st) {
                         return baseName(st.name) == base && st.torchRowCalls == a.steps[0].torchRowCalls;
                       });
  std::string h;
  int64_t torchNs = 0, costNs = 0, otherNs = 0;
  if (n <= 4 && !folded && !oneName) {
    std::vector<std::string> rows;
    for (const AnswerStep& st : a.steps)
      rows.push_back(st.name + " " + torchRowText(st) + " (really " + costText(st) + ")");
    h = std::string(n == 1 ? "The step is" : "Every step is") +
        " wrapped in record_function, so torch's table has a row for " + (n == 1 ? "it" : "each") + ": " + column +
        " per call " + joinNames(rows) + ", " + kind + median + ".";
    if (n > 1) return h;
    torchNs = torch[0], costNs = cost[0], otherNs = other[0];
  } else {
    const StepSpread c = spreadOf(cost);
    torchNs = std::llround(spreadOf(torch).medianNs), costNs = std::llround(c.medianNs);
    otherNs = std::llround(spreadOf(other).medianNs);
    h = (folded ? "Every step is a ProfilerStep#N, which torch's table folds into one row, ProfilerStep* (" + column +
                      " per call: " + spanDurationText(torchNs) + ")"
         : oneName ? "Every step is wrapped in record_function(\"" + base +
                         "\"), which torch's table holds as one row (" + column + " per call: " +
                         spanDurationText(torchNs) + ", " + std::to_string(a.steps[0].torchRowCalls) + " calls)"
                   : "Every step is wrapped in record_function, so torch's table has a row for each (median " + column +
                         " per call: " + spanDurationText(torchNs) + ")") +
        ". Each step really cost " + spanDurationText(costNs) + " " + kind + " (median of " + std::to_string(n) +
        " steps, p10-p90 " + spanDurationText(std::llround(c.p10Ns)) + "-" + spanDurationText(std::llround(c.p90Ns)) +
        ").";
  }
  // What the row misses. Work launched from other threads (autograd runs the backward pass on its own)
  // is not under the step's ops; said only where it accounts for the gap, within a tenth.
  if (a.gpu && costNs > 0 && torchNs >= 0 && (costNs - torchNs) * 20 > costNs) {
    const int64_t gap = costNs - torchNs;
    h += " torch's row shows " +
         std::to_string(std::llround(100.0 * static_cast<double>(torchNs) / static_cast<double>(costNs))) + "% of it";
    if (otherNs > 0 && std::llabs(gap - otherNs) * 10 <= gap)
      h += ": " + spanDurationText(otherNs) +
           " a step was launched from other threads than the step's (autograd runs the backward pass on one), and "
           "torch counts that work under their ops, not under the step";
    else
      h += " (torch links GPU work to the step's row through the ops nested in it on its own thread, by External "
           "id; work launched elsewhere, or without an id, is not counted there)";
    h += ".";
  }
  return h;
}

std::string headlineOf(const FoundingAnswer& a) {
  if (a.steps.empty()) return {};
  std::vector<const AnswerStep*> wrapped, bare;
  for (const AnswerStep& st : a.steps) (st.wrapped && st.torchRowNs >= 0 ? wrapped : bare).push_back(&st);
  auto names = [](const std::vector<const AnswerStep*>& v, const char* last = " and ") {
    std::vector<std::string> n;
    for (const AnswerStep* st : v) n.push_back(st->name);
    return joinNames(n, 4, last);
  };
  auto figures = [](const std::vector<const AnswerStep*>& v, bool torch) {
    std::vector<std::string> n;
    for (const AnswerStep* st : v) n.push_back(torch ? torchRowText(*st) : costText(*st));
    return joinNames(n, 4);
  };
  const std::string kind = a.gpu ? "of GPU time" : "of host time in their own ops";
  const std::string column = a.gpu ? "CUDA total" : "CPU total";
  const std::string median = a.iterations > 1 ? " (medians of " + std::to_string(a.iterations) + " iterations)" : "";
  std::string h;
  if (bare.empty()) return wrappedHeadline(a, column, kind, median);
  if (!wrapped.empty())
    h = (wrapped.size() == 1 ? "Only " : "") + names(wrapped) + (wrapped.size() == 1 ? " is" : " are") +
        " wrapped in record_function, so torch's table has a row for " + (wrapped.size() == 1 ? "it" : "them") +
        (a.steps.size() > wrapped.size() + bare.size() ? "" : " alone") + " (" + column +
        " per call: " + figures(wrapped, true) + "). " + names(bare) + (bare.size() == 1 ? " has" : " have") +
        " no row, so " + (bare.size() == 1 ? "it reads" : "they read") + " as zero";
  else
    h = std::string(bare.size() == 1 ? "The step is" : "No step is") +
        " wrapped in record_function, so torch's table has no row for " + names(bare, " or ") + ": " +
        (bare.size() == 1 ? "it reads" : "each reads") + " as zero";
  h += ", yet " + std::string(bare.size() == 1 ? "it" : "they") + " really cost " + figures(bare, false) + " " + kind +
       median + ".";
  // Where torch's table put that time instead: the ops' rows, the largest first.
  std::map<std::string, int64_t> under;
  for (const AnswerStep* st : bare)
    for (const auto& [op, ns] : st->shownUnder) under[op] += ns;
  std::vector<std::pair<std::string, int64_t>> ops(under.begin(), under.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& p, const auto& q) { return p.second > q.second; });
  std::string top;
  for (size_t i = 0; i < ops.size() && i < 3; ++i) top += (i ? ", " : "") + ops[i].first;
  if (!top.empty())
    h += " torch's table counts it under their ops' rows instead (" + top + (ops.size() > 3 ? ", ..." : "") + ").";
  return h;
}

}  // namespace

int64_t AnswerStep::costNs() const { return cost.n ? std::llround(cost.medianNs) : 0; }

size_t FoundingAnswer::unwrapped() const {
  return static_cast<size_t>(std::count_if(steps.begin(), steps.end(), [](const AnswerStep& s) { return !s.wrapped; }));
}

std::string FoundingAnswer::costTitle() const {
  return gpu ? "GPU time of the work it launched (by correlation)" : "host time of its own ops";
}

std::string FoundingAnswer::torchTitle() const {
  return gpu ? "torch's table: its own row's CUDA total per call"
             : "torch's table: its own row's CPU total per call (the median of its calls)";
}

FoundingAnswer foundingAnswer(const EventStore& s, const Explanation& x, const KeyAverages& torchByName,
                              const EngineRun* engine) {
  FoundingAnswer a;
  a.cpuRun = engine && engine->device.isCpu();
  a.gpu = !a.cpuRun && (x.ledger.timing == "cupti" || x.ledger.timing == "roctracer");
  a.engineRun = engine && !engine->steps.empty() && x.stepSource == "engine";
  // Rows: an engine run's workload steps (its iterations together), else each step of the trace.
  if (a.engineRun) {
    std::map<std::string, size_t> row;
    for (const RunStepRecord& r : engine->steps) {
      row[r.name] = a.steps.size();
      AnswerStep st;
      st.name = r.name;
      st.wrapped = r.wrapped;
      a.steps.push_back(std::move(st));
    }
    for (size_t i = 0; i < x.steps.size(); ++i)
      if (const auto it = row.find(baseName(x.steps[i].name)); it != row.end())
        a.steps[it->second].steps.push_back(static_cast<int>(i));
  } else {
    for (size_t i = 0; i < x.steps.size(); ++i) {
      AnswerStep st;
      st.name = x.steps[i].name;
      st.wrapped = x.steps[i].wrapped;
      st.steps.push_back(static_cast<int>(i));
      a.steps.push_back(std::move(st));
    }
  }
  // torch's own rows: the step's CPU-side row, which carries its CUDA total (a record_function's,
  // else an op's of that name: an older Kineto writes ProfilerStep#N as a cpu_op).
  std::map<std::string, const KeyAverageRow*> rows;
  for (const KeyAverageRow& r : torchByName.rows) {
    if (r.deviceType != DeviceType::Cpu) continue;
    const auto [it, added] = rows.emplace(r.name, &r);
    if (!added && r.userAnnotation && !it->second->userAnnotation) it->second = &r;
  }
  for (AnswerStep& st : a.steps) {
    // torch's table folds every ProfilerStep#N into one row, "ProfilerStep*".
    // A wrapped step's row is its record_function's own name: the step finder labels a repeated name's
    // steps "name #2", ..., and torch's table holds them all in one row.
    const std::string rowName = st.name.starts_with("ProfilerStep#") ? std::string("ProfilerStep*") : st.name;
    auto found = rows.find(rowName);
    if (found == rows.end() && st.wrapped && st.steps.size() == 1)
      if (const EventId ev = x.steps[static_cast<size_t>(st.steps[0])].event; ev != kNoEvent)
        found = rows.find(std::string(s.name(s.event(ev))));
    if (found != rows.end() && found->second->calls > 0) {
      const KeyAverageRow& r = *found->second;
      st.torchRowCalls = r.calls;
      st.torchRowTotalNs = a.gpu ? r.deviceTotalNs : r.cpuTotalNs;
      if (a.gpu) {
        st.torchRowNs = r.deviceTotalNs / static_cast<int64_t>(r.calls);
      } else {
        std::vector<int64_t> calls;
        for (EventId id : r.events) calls.push_back(s.event(id).dur);
        st.torchRowSpread = spreadOf(std::move(calls));
        st.torchRowNs = st.torchRowSpread.n ? std::llround(st.torchRowSpread.medianNs) : r.cpuTotalNs;
      }
    }
    std::vector<int64_t> per, others;
    // Per op, its time in each iteration (0 where it did not run): the median, as the cost's.
    std::map<std::string, std::vector<int64_t>> under;
    for (size_t it = 0; it < st.steps.size(); ++it) {
      const StepReport& r = x.steps[static_cast<size_t>(st.steps[it])];
      std::map<std::string, int64_t> ops;
      if (a.gpu) {
        per.push_back(r.gpuAttributedNs);
        int64_t other = 0;
        for (const Launch& l : r.launches) {
          ops[l.op == kNoEvent ? std::string("(no op)") : std::string(s.name(s.event(l.op)))] +=
              l.gpuEndNs - l.gpuStartNs;
          if (r.lane != UINT32_MAX && l.launch != kNoEvent && s.event(l.launch).lane != r.lane)
            other += l.gpuEndNs - l.gpuStartNs;
        }
        others.push_back(other);
      } else {
        per.push_back(ownOpsNs(s, r.hostStartNs, r.hostEndNs, r.lane, &ops));
      }
      for (const auto& [name, ns] : ops) {
        std::vector<int64_t>& v = under[name];
        v.resize(st.steps.size(), 0);
        v[it] = ns;
      }
    }
    st.cost = spreadOf(std::move(per));
    if (!others.empty()) st.otherThreadsNs = std::llround(spreadOf(std::move(others)).medianNs);
    for (auto& [name, v] : under) {
      const StepSpread sp = spreadOf(std::move(v));
      st.shownUnder.emplace_back(name, std::llround(sp.medianNs));
    }
    std::stable_sort(st.shownUnder.begin(), st.shownUnder.end(),
                     [](const auto& p, const auto& q) { return p.second > q.second; });
    a.iterations = std::max(a.iterations, static_cast<int>(st.steps.size()));
  }
  a.headline = headlineOf(a);
  return a;
}

std::string torchRowText(const AnswerStep& s) {
  return s.torchRowNs < 0 ? std::string("no row") : spanDurationText(s.torchRowNs);
}

std::string costText(const AnswerStep& s) { return s.cost.n ? spanDurationText(s.costNs()) : std::string("-"); }

std::string torchRowSpreadText(const AnswerStep& s) {
  if (s.torchRowNs < 0 || s.torchRowSpread.n < 2) return {};
  return "p10-p90 " + spanDurationText(std::llround(s.torchRowSpread.p10Ns)) + "-" +
         spanDurationText(std::llround(s.torchRowSpread.p90Ns));
}

std::string costSpreadText(const AnswerStep& s) {
  if (s.cost.n < 2) return {};
  return "p10-p90 " + spanDurationText(std::llround(s.cost.p10Ns)) + "-" + spanDurationText(std::llround(s.cost.p90Ns));
}

std::string foundingAnswerJson(const FoundingAnswer& a) {
  auto b = [](bool v) { return std::string(v ? "true" : "false"); };
  std::string out = "{\"gpu\": " + b(a.gpu) + ", \"engine_run\": " + b(a.engineRun) + ", \"cpu_run\": " + b(a.cpuRun) +
                    ", \"iterations\": " + std::to_string(a.iterations) + ", \"headline\": " + jsonString(a.headline) +
                    ", \"cost_title\": " + jsonString(a.costTitle()) +
                    ", \"torch_title\": " + jsonString(a.torchTitle()) + ", \"steps\": [";
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const AnswerStep& st = a.steps[i];
    out += (i ? ", " : "") + std::string("{\"name\": ") + jsonString(st.name) + ", \"wrapped\": " + b(st.wrapped) +
           ", \"torch_row_ns\": " + (st.torchRowNs < 0 ? std::string("null") : std::to_string(st.torchRowNs)) +
           ", \"torch_row_calls\": " + std::to_string(st.torchRowCalls) +
           ", \"torch_row_total_ns\": " + std::to_string(st.torchRowTotalNs) + ", \"torch_row_spread\": " +
           (st.torchRowSpread.n > 1 ? spreadJson(st.torchRowSpread) : std::string("null")) +
           ", \"cost_ns\": " + std::to_string(st.costNs()) +
           ", \"cost_spread\": " + (st.cost.n > 1 ? spreadJson(st.cost) : std::string("null")) +
           ", \"other_threads_ns\": " + std::to_string(st.otherThreadsNs) + ", \"shown_under\": [";
    for (size_t k = 0; k < st.shownUnder.size(); ++k)
      out += (k ? ", " : "") + std::string("{\"name\": ") + jsonString(st.shownUnder[k].first) +
             ", \"ns\": " + std::to_string(st.shownUnder[k].second) + "}";
    out += "]}";
  }
  return out + "]}";
}

}  // namespace attnscope
