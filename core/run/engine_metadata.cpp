#include "core/run/engine_metadata.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <type_traits>
#include <utility>

#include "core/run/timing_methods.h"
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

// The config object's fields (see parseRunConfigJson).
std::optional<RunConfig> readRunConfig(simdjson::dom::element o) {
  if (!o.is_object()) return std::nullopt;
  RunConfig c;
  auto pick = [](std::string_view v, auto count, auto nameOf, auto* out) {
    for (int i = 0; i < count; ++i) {
      const auto x = static_cast<std::remove_pointer_t<decltype(out)>>(i);
      if (nameOf(x) == v) {
        *out = x;
        return true;
      }
    }
    return false;
  };
  std::string_view sv;
  if (!o["device"].get_string().get(sv) && !pick(
                                               sv, 3, [](RunDevice d) { return deviceName(d); }, &c.device))
    return std::nullopt;
  int64_t n = 0;
  if (!o["device_index"].get_int64().get(n)) c.deviceIndex = static_cast<int>(n);
  simdjson::dom::array shape;
  if (!o["shape"].get_array().get(shape)) {
    if (shape.size() != 4) return std::nullopt;
    size_t i = 0;
    for (auto d : shape) {
      if (d.get_int64().get(n) || n <= 0) return std::nullopt;
      c.shape[i++] = n;
    }
  }
  if (!o["dtype"].get_string().get(sv) && !pick(
                                              sv, 3, [](RunDType d) { return dtypeName(d); }, &c.dtype))
    return std::nullopt;
  uint64_t seed = 0;
  if (!o["seed"].get_uint64().get(seed)) c.seed = seed;
  simdjson::dom::object wrap;
  if (!o["wrap"].get_object().get(wrap)) {
    bool on = false;
    for (int k = 0; k < kStepCount; ++k)
      if (!wrap[kStepKeys[static_cast<size_t>(k)]].get_bool().get(on)) c.wrap[static_cast<size_t>(k)] = on;
    if (!wrap["full"].get_bool().get(on)) c.wrapFull = on;
  }
  if (!o["sync"].get_string().get(sv) && !pick(
                                             sv, 4, [](SyncMode m) { return syncName(m); }, &c.sync))
    return std::nullopt;
  if (!o["scale"].get_string().get(sv) && !pick(
                                              sv, 2, [](ScaleMode m) { return scaleName(m); }, &c.scale))
    return std::nullopt;
  if (!o["warmup"].get_int64().get(n)) c.warmup = static_cast<int>(n);
  if (!o["iters"].get_int64().get(n)) c.iters = static_cast<int>(n);
  simdjson::dom::array timing;
  if (!o["timing"].get_array().get(timing)) {
    c.timing.fill(false);
    c.timingGiven = true;
    for (auto x : timing) {
      const TimingMethodInfo* t = x.get_string().get(sv) ? nullptr : timingByKey(sv);
      if (!t) return std::nullopt;
      c.timing[static_cast<size_t>(t->method)] = true;
    }
  }
  bool shapes = false;
  if (!o["record_shapes"].get_bool().get(shapes)) c.recordShapes = shapes;
  if (!o["out"].get_string().get(sv)) {
    c.out = std::string(sv);
  } else if (!o["args"].get_string().get(sv)) {
    // Older engines wrote the path only in the command line, after "--out " and before any flag.
    const size_t at = sv.find("--out ");
    if (at != std::string_view::npos) {
      std::string_view rest = sv.substr(at + 6);
      rest = rest.substr(0, std::min(rest.find(" --"), rest.size()));
      c.out = std::string(rest);
    }
  }
  return c;
}

}  // namespace

std::optional<RunConfig> parseRunConfigJson(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc)) return std::nullopt;
  return readRunConfig(doc);
}

std::optional<EngineMetadata> parseEngineMetadata(std::string_view json) {
  if (json.empty()) return std::nullopt;
  workCounters().engineMetadataParses++;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc) || !doc.is_object()) return std::nullopt;
  EngineMetadata m;
  simdjson::dom::element e;
  m.args = str(doc.at_pointer("/config/args"));
  simdjson::dom::element config;
  if (!doc["config"].get(config)) m.config = readRunConfig(config);
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
  const TimingMethodInfo* t = timingByKey(method);
  return t ? std::string(t->label) : std::string(method);
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
