#include "core/run/engine_metadata.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "core/store/work_counters.h"
#include "core/text/duration.h"

namespace attnscope {

namespace {

double percentile(const std::vector<int64_t>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return static_cast<double>(sorted[lo]) + frac * static_cast<double>(sorted[hi] - sorted[lo]);
}

std::string fixed3(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace

StepSpread spreadOf(std::vector<int64_t> values) {
  std::erase_if(values, [](int64_t v) { return v < 0; });
  StepSpread s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.n = static_cast<int>(values.size());
  s.minNs = static_cast<double>(values.front());
  s.maxNs = static_cast<double>(values.back());
  s.medianNs = percentile(values, 0.5);
  s.p10Ns = percentile(values, 0.1);
  s.p90Ns = percentile(values, 0.9);
  return s;
}

std::string spreadText(const StepSpread& s, std::string_view single) {
  std::string t = usText(std::llround(s.medianNs));
  if (s.n > 1) return t + " [" + usText(std::llround(s.p10Ns)) + "-" + usText(std::llround(s.p90Ns)) + "]";
  return t + std::string(single);
}

bool insideSpread(double ns, const StepSpread& s) { return s.n > 1 && ns >= s.p10Ns && ns <= s.p90Ns; }

std::string spreadJson(const StepSpread& s) {
  return "{\"n\": " + std::to_string(s.n) + ", \"median_ns\": " + fixed3(s.medianNs) +
         ", \"min_ns\": " + fixed3(s.minNs) + ", \"max_ns\": " + fixed3(s.maxNs) + ", \"p10_ns\": " + fixed3(s.p10Ns) +
         ", \"p90_ns\": " + fixed3(s.p90Ns) + "}";
}

std::vector<StepSpread> TimingSeries::spread() const {
  std::vector<StepSpread> out(kStepCount);
  for (int k = 0; k < kStepCount; ++k) {
    std::vector<int64_t> v;
    v.reserve(steps.size());
    for (const auto& it : steps)
      if (static_cast<size_t>(k) < it.size()) v.push_back(it[static_cast<size_t>(k)]);
    out[static_cast<size_t>(k)] = spreadOf(std::move(v));
  }
  return out;
}

const TimingSeries* EngineMetadata::timingOf(std::string_view method) const {
  for (const TimingSeries& t : timing)
    if (t.method == method) return &t;
  return nullptr;
}

namespace {

using Value = simdjson::simdjson_result<simdjson::dom::element>;

// A string field, "" when it is missing or not a string.
std::string str(Value v) {
  std::string_view sv;
  return v.get_string().get(sv) ? std::string() : std::string(sv);
}

// An integer field written as an integer (the engine's) or, leniently, as a number.
bool integer(Value v, int64_t* out) {
  if (!v.get_int64().get(*out)) return true;
  double d = 0;
  if (v.get_double().get(d)) return false;
  *out = static_cast<int64_t>(d);
  return true;
}

}  // namespace

std::optional<EngineMetadata> parseEngineMetadata(std::string_view json) {
  if (json.empty()) return std::nullopt;
  workCounters().engineMetadataParses++;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc) || !doc.is_object()) return std::nullopt;
  EngineMetadata m;
  simdjson::dom::element e;
  m.args = str(doc.at_pointer("/config/args"));
  if (!m.args.empty()) {
    std::vector<std::string> args;
    for (size_t i = 0; i < m.args.size();) {
      const size_t j = std::min(m.args.find(' ', i), m.args.size());
      if (j > i) args.push_back(m.args.substr(i, j - i));
      i = j + 1;
    }
    RunConfig c;
    if (!parseRunArgs(args, &c)) m.config = c;
  }
  if (!doc["device"].get(e)) m.device = e.is_object() ? str(e["name"]) : str(Value(std::move(e)));
  simdjson::dom::array steps;
  if (!doc["steps"].get_array().get(steps)) {
    for (auto step : steps) {
      std::string_view name;
      if (step["name"].get_string().get(name)) continue;
      bool wrapped = false;
      if (step["wrapped"].get_bool().get(wrapped)) wrapped = false;
      m.stepNames.emplace_back(name);
      m.wrapped.push_back(wrapped);
      simdjson::dom::array iters;
      if (step["iterations"].get_array().get(iters)) continue;
      for (auto it : iters) {
        int64_t i = 0, a = 0, b = 0;
        if (!integer(it["iteration"], &i) || !integer(it["host_start_ns"], &a) || !integer(it["host_end_ns"], &b))
          continue;
        EngineStep w;
        w.name = i == 0 ? std::string(name) : std::string(name) + " #" + std::to_string(i + 1);
        w.wrapped = wrapped;
        w.hostStartNs = a;
        w.hostEndNs = b;
        m.steps.push_back(std::move(w));
      }
    }
  }
  // Steps in time order (the metadata groups them by step).
  std::stable_sort(m.steps.begin(), m.steps.end(),
                   [](const EngineStep& x, const EngineStep& y) { return x.hostStartNs < y.hostStartNs; });
  simdjson::dom::object timing;
  if (!doc["timing"].get_object().get(timing)) {
    // The engine's method order (cupti, events, host, host-sync, torch), whatever the object's.
    for (int t = 0; t < kTimingMethodCount; ++t) {
      const std::string_view method = timingName(static_cast<TimingMethod>(t));
      simdjson::dom::element v;
      if (timing[method].get(v)) continue;
      TimingSeries s;
      s.method = std::string(method);
      s.measures = str(v["measures"]);
      s.process = str(v["process"]);
      simdjson::dom::array rows;
      if (!v["steps"].get_array().get(rows)) {
        for (auto row : rows) {
          std::vector<int64_t> r;
          simdjson::dom::array xs;
          if (!row.get_array().get(xs))
            for (auto x : xs) {
              int64_t n = -1;
              if (!integer(Value(std::move(x)), &n)) n = -1;
              r.push_back(n);
            }
          s.steps.push_back(std::move(r));
        }
      }
      m.timing.push_back(std::move(s));
    }
  }
  simdjson::dom::array notes;
  if (!doc["notes"].get_array().get(notes))
    for (simdjson::dom::element n : notes) m.notes.push_back(str(Value(std::move(n))));
  simdjson::dom::element c;
  if (!doc["collection"].get(c) && c.is_object()) {
    int64_t n = 0;
    if (!c["dropped_records"].get_int64().get(n)) m.droppedRecords = static_cast<uint64_t>(n);
    if (!c["records_without_timestamps"].get_int64().get(n)) m.recordsWithoutTimestamps = static_cast<uint64_t>(n);
    m.cupti = str(c["cupti"]);
    if (c["nvtx_ranges_pushed"].get_int64().get(m.nvtxPushed)) m.nvtxPushed = 0;
    if (c["nvtx_ranges_seen"].get_int64().get(m.nvtxSeen)) m.nvtxSeen = 0;
  }
  return m;
}

std::string timingMethodLabel(std::string_view method) {
  if (method == "cupti") return "CUPTI (its kernels' GPU time)";
  if (method == "events") return "CUDA events around it, nothing else recorded";
  if (method == "op-events") return "CUDA events around it while every op records a pair (use_cuda=True's way)";
  if (method == "host") return "host clock around it, no sync";
  if (method == "host-sync") return "host clock with a sync at its end";
  if (method == "torch") return "host clock under torch.profiler";
  return std::string(method);
}

std::optional<EngineMetadata> readEngineMetadata(const EventStore& store) {
  return parseEngineMetadata(store.meta().attnscopeJson);
}

std::string missingCollection(const EngineMetadata& m) {
  if (m.cupti.empty() || m.cupti == "ok") return {};
  if (m.cupti.starts_with("error: "))
    return "CUPTI reported a failure at the end of the run (" + m.cupti.substr(7) +
           "); the GPU activity collected may be incomplete.";
  std::string why = m.cupti;
  if (why.starts_with("unavailable: ")) why = why.substr(13);
  return "CUPTI unavailable: " + why + "; GPU kernels, copies and memsets were not collected.";
}

}  // namespace attnscope
