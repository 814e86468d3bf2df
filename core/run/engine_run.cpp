#include "core/run/engine_run.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <type_traits>
#include <utility>

#include "core/run/timing_methods.h"
#include "core/store/work_counters.h"
#include "core/text/duration.h"
#include "core/text/json_out.h"

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
  if (!o["ranks"].get_int64().get(n)) {
    if (n < 1 || n > 64) return std::nullopt;
    c.ranks = static_cast<int>(n);
  }
  if (!o["backend"].get_string().get(sv)) {
    if (sv != "gloo" && sv != "nccl") return std::nullopt;
    c.backend = sv == "nccl" ? RankBackend::Nccl : RankBackend::Gloo;
  }
  if (!o["rank"].get_int64().get(n)) c.rank = static_cast<int>(n);
  if (!o["slow_rank"].get_int64().get(n)) c.slowRank = static_cast<int>(n);
  if (!o["slow_us"].get_int64().get(n)) c.slowUs = n;
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

// ---- the writer ------------------------------------------------------------------------------

namespace {

std::string num(int64_t v) { return std::to_string(v); }
std::string num(uint64_t v) { return std::to_string(v); }
std::string boolText(bool b) { return b ? "true" : "false"; }

std::string seriesJson(const TimingSeries& t) {
  std::string s =
      "{\"process\": " + jsonString(t.process) + ", \"pid\": " + num(t.pid) + ", \"unit\": \"ns\", \"steps\": [";
  for (size_t i = 0; i < t.steps.size(); ++i) {
    s += i ? ", [" : "[";
    for (size_t k = 0; k < t.steps[i].size(); ++k) s += (k ? ", " : "") + num(t.steps[i][k]);
    s += "]";
  }
  // The spread per step, for readers of the file (derived from "steps": not read back).
  s += "], \"spread\": {";
  const std::vector<StepSpread> sp = t.spread();
  for (size_t k = 0; k < sp.size(); ++k) s += (k ? ", " : "") + jsonString(kStepNames[k]) + ": " + spreadJson(sp[k]);
  s += "}, \"measures\": " + jsonString(t.measures);
  if (!t.ops.empty()) {
    s += ", \"ops\": [";
    for (size_t i = 0; i < t.ops.size(); ++i)
      s += (i ? ", " : "") + std::string("{\"name\": ") + jsonString(t.ops[i].name) +
           ", \"user_scope\": " + boolText(t.ops[i].userScope) + ", \"cpu_ns\": " + num(t.ops[i].cpuNs) +
           ", \"cuda_event_ns\": " + num(t.ops[i].cudaEventNs) + "}";
    s += "]";
  }
  if (!t.trace.empty()) s += ", \"trace\": " + jsonString(t.trace);
  if (t.streamId >= 0)
    s += ", \"stream\": {\"device\": " + std::to_string(t.streamDevice) + ", \"id\": " + num(t.streamId) + "}";
  return s + "}";
}

std::string collectionJson(const RunCollection& c) {
  const AssembleStats& a = c.assembled;
  return "{\"cupti\": " + jsonString(c.cupti) + ", \"dropped_records\": " + num(c.droppedRecords) +
         ", \"buffers_capped\": " + num(c.buffersCapped) + ", \"buffers_pooled\": " + num(c.buffersPooled) +
         ", \"buffers_added\": " + num(c.buffersAdded) +
         ", \"records_without_timestamps\": " + num(c.recordsWithoutTimestamps) +
         ", \"warmup_records_left_out\": " + num(c.warmupRecordsLeftOut) +
         ", \"errors\": " + jsonStringArray(c.errors) + ", \"clock\": {\"source\": " + jsonString(c.clock) +
         ", \"drift_ns\": " + num(c.clockDriftNs) + ", \"over_ns\": " + num(c.clockOverNs) +
         ", \"uncertainty_ns\": " + num(c.clockUncertaintyNs) + "}" + ", \"gpu_activities\": " + num(a.gpuActivities) +
         ", \"gpu_linked_to_launch\": " + num(a.gpuLinkedToLaunch) + ", \"gpu_linked_to_op\": " + num(a.gpuLinkedToOp) +
         ", \"gpu_unlinked\": " + num(a.gpuUnlinked) + ", \"api_calls\": " + num(a.runtimeCalls) +
         ", \"api_calls_without_op\": " + num(a.runtimeWithoutOp) +
         ", \"api_calls_with_call_id\": " + num(a.apiCallsWithCallId) + ", \"sync_records\": " + num(a.syncRecords) +
         ", \"overhead_records\": " + num(a.overheadRecords) +
         ", \"driver_work_records\": " + num(a.driverWorkRecords) +
         ", \"nvtx_ranges_pushed\": " + num(c.nvtxRangesPushed) + ", \"nvtx_ranges_seen\": " + num(a.markers) +
         ", \"trace_pass\": " + jsonString(c.tracePass) + "}";
}

}  // namespace

std::string engineRunJson(const EngineRun& r) {
  std::string s = "{\"version\": " + std::to_string(r.version);
  if (r.config) s += ", \"config\": " + runConfigJson(*r.config);
  s += ", \"versions\": {\"libtorch\": " + jsonString(r.versions.libtorch) +
       ", \"cuda_runtime\": " + std::to_string(r.versions.cudaRuntime) +
       ", \"cuda_driver\": " + std::to_string(r.versions.cudaDriver) +
       ", \"cupti\": " + std::to_string(r.versions.cupti) + "}";
  if (r.device.isCpu() || r.device.name.empty())
    s += ", \"device\": " + jsonString(r.device.name);
  else
    s += ", \"device\": {\"name\": " + jsonString(r.device.name) + ", \"compute\": " + jsonString(r.device.compute) +
         ", \"sms\": " + std::to_string(r.device.sms) + ", \"total_global_mem\": " + num(r.device.totalGlobalMem) + "}";
  s += ", \"steps\": [";
  for (size_t k = 0; k < r.steps.size(); ++k) {
    const RunStepRecord& st = r.steps[k];
    s += (k ? ", " : "") + std::string("{\"name\": ") + jsonString(st.name) + ", \"key\": " + jsonString(st.key) +
         ", \"wrapped\": " + boolText(st.wrapped) + ", \"iterations\": [";
    for (size_t i = 0; i < st.iterations.size(); ++i) {
      const RunIteration& it = st.iterations[i];
      s += (i ? ", " : "") + std::string("{\"iteration\": ") + std::to_string(it.iteration) +
           ", \"host_start_ns\": " + num(it.hostStartNs) + ", \"host_end_ns\": " + num(it.hostEndNs) +
           ", \"gpu_ns\": " + num(it.gpuNs) + ", \"gpu_start_ns\": " + num(it.gpuStartNs) +
           ", \"gpu_end_ns\": " + num(it.gpuEndNs) + ", \"launches\": " + std::to_string(it.launches) + "}";
    }
    s += "]}";
  }
  s += "], \"timing\": {";
  for (size_t i = 0; i < r.timing.size(); ++i)
    s += (i ? ", " : "") + jsonString(r.timing[i].method) + ": " + seriesJson(r.timing[i]);
  s += "}, \"collection\": " + collectionJson(r.collection) + ", \"notes\": " + jsonStringArray(r.notes);
  return s + "}";
}

// ---- the reader ------------------------------------------------------------------------------

namespace {

int64_t intOr(Value v, int64_t fallback) {
  int64_t n = 0;
  return integer(v, &n) ? n : fallback;
}
uint64_t countOr(Value v) { return static_cast<uint64_t>(std::max<int64_t>(0, intOr(v, 0))); }

RunCollection readCollection(simdjson::dom::element c) {
  RunCollection r;
  if (!c.is_object()) return r;
  r.cupti = str(c["cupti"]);
  r.droppedRecords = countOr(c["dropped_records"]);
  r.buffersCapped = countOr(c["buffers_capped"]);
  r.buffersPooled = countOr(c["buffers_pooled"]);
  r.buffersAdded = countOr(c["buffers_added"]);
  r.recordsWithoutTimestamps = countOr(c["records_without_timestamps"]);
  r.warmupRecordsLeftOut = countOr(c["warmup_records_left_out"]);
  simdjson::dom::array errors;
  if (!c["errors"].get_array().get(errors))
    for (simdjson::dom::element e : errors) r.errors.push_back(str(Value(std::move(e))));
  simdjson::dom::element clock;
  if (!c["clock"].get(clock) && clock.is_object()) {
    r.clock = str(clock["source"]);
    r.clockDriftNs = intOr(clock["drift_ns"], 0);
    r.clockOverNs = intOr(clock["over_ns"], 0);
    r.clockUncertaintyNs = intOr(clock["uncertainty_ns"], 0);
  }
  AssembleStats& a = r.assembled;
  a.gpuActivities = countOr(c["gpu_activities"]);
  a.gpuLinkedToLaunch = countOr(c["gpu_linked_to_launch"]);
  a.gpuLinkedToOp = countOr(c["gpu_linked_to_op"]);
  a.gpuUnlinked = countOr(c["gpu_unlinked"]);
  a.runtimeCalls = countOr(c["api_calls"]);
  a.runtimeWithoutOp = countOr(c["api_calls_without_op"]);
  a.apiCallsWithCallId = countOr(c["api_calls_with_call_id"]);
  a.syncRecords = countOr(c["sync_records"]);
  a.overheadRecords = countOr(c["overhead_records"]);
  a.driverWorkRecords = countOr(c["driver_work_records"]);
  a.markers = countOr(c["nvtx_ranges_seen"]);
  r.nvtxRangesPushed = countOr(c["nvtx_ranges_pushed"]);
  r.tracePass = str(c["trace_pass"]);
  return r;
}

TimingSeries readSeries(std::string_view method, simdjson::dom::element v) {
  TimingSeries s;
  s.method = std::string(method);
  s.measures = str(v["measures"]);
  s.process = str(v["process"]);
  s.pid = intOr(v["pid"], 0);
  simdjson::dom::array rows;
  if (!v["steps"].get_array().get(rows))
    for (auto row : rows) {
      std::vector<int64_t> r;
      simdjson::dom::array xs;
      if (!row.get_array().get(xs))
        for (auto x : xs) r.push_back(intOr(Value(std::move(x)), -1));
      s.steps.push_back(std::move(r));
    }
  simdjson::dom::array ops;
  if (!v["ops"].get_array().get(ops))
    for (auto o : ops) {
      RunOpTiming t;
      t.name = str(o["name"]);
      if (o["user_scope"].get_bool().get(t.userScope)) t.userScope = false;
      t.cpuNs = intOr(o["cpu_ns"], 0);
      t.cudaEventNs = intOr(o["cuda_event_ns"], -1);
      s.ops.push_back(std::move(t));
    }
  s.trace = str(v["trace"]);
  simdjson::dom::element stream;
  if (!v["stream"].get(stream) && stream.is_object()) {
    s.streamDevice = static_cast<int>(intOr(stream["device"], -1));
    s.streamId = intOr(stream["id"], -1);
  }
  return s;
}

}  // namespace

std::optional<EngineRun> parseEngineRun(std::string_view json) {
  if (json.empty()) return std::nullopt;
  workCounters().engineMetadataParses++;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc) || !doc.is_object()) return std::nullopt;
  EngineRun m;
  m.version = static_cast<int>(intOr(doc["version"], 1));
  simdjson::dom::element e;
  if (!doc["config"].get(e)) m.config = readRunConfig(e);
  if (!doc["versions"].get(e) && e.is_object()) {
    m.versions.libtorch = str(e["libtorch"]);
    m.versions.cudaRuntime = static_cast<int>(intOr(e["cuda_runtime"], 0));
    m.versions.cudaDriver = static_cast<int>(intOr(e["cuda_driver"], 0));
    m.versions.cupti = static_cast<int>(intOr(e["cupti"], 0));
  }
  if (!doc["device"].get(e)) {
    if (e.is_object()) {
      m.device.name = str(e["name"]);
      m.device.compute = str(e["compute"]);
      m.device.sms = static_cast<int>(intOr(e["sms"], 0));
      m.device.totalGlobalMem = intOr(e["total_global_mem"], 0);
    } else {
      m.device.name = str(Value(std::move(e)));
    }
  }
  simdjson::dom::array steps;
  if (!doc["steps"].get_array().get(steps))
    for (auto step : steps) {
      RunStepRecord st;
      std::string_view name;
      if (step["name"].get_string().get(name)) continue;
      st.name = std::string(name);
      st.key = str(step["key"]);
      if (step["wrapped"].get_bool().get(st.wrapped)) st.wrapped = false;
      simdjson::dom::array iters;
      if (!step["iterations"].get_array().get(iters))
        for (auto it : iters) {
          RunIteration w;
          int64_t i = 0, a = 0, b = 0;
          if (!integer(it["iteration"], &i) || !integer(it["host_start_ns"], &a) || !integer(it["host_end_ns"], &b))
            continue;
          w.iteration = static_cast<int>(i);
          w.hostStartNs = a;
          w.hostEndNs = b;
          w.gpuNs = intOr(it["gpu_ns"], 0);
          w.gpuStartNs = intOr(it["gpu_start_ns"], -1);
          w.gpuEndNs = intOr(it["gpu_end_ns"], -1);
          w.launches = static_cast<int>(intOr(it["launches"], 0));
          st.iterations.push_back(w);
        }
      m.steps.push_back(std::move(st));
    }
  simdjson::dom::object timing;
  if (!doc["timing"].get_object().get(timing))
    // The timing table's order, whatever the object's.
    for (const TimingMethodInfo& t : timingMethods()) {
      simdjson::dom::element v;
      if (!timing[t.key].get(v) && v.is_object()) m.timing.push_back(readSeries(t.key, v));
    }
  if (!doc["collection"].get(e)) m.collection = readCollection(e);
  simdjson::dom::array notes;
  if (!doc["notes"].get_array().get(notes))
    for (simdjson::dom::element n : notes) m.notes.push_back(str(Value(std::move(n))));
  return m;
}

std::optional<EngineRun> readEngineRun(const EventStore& store) { return parseEngineRun(store.meta().attnscopeJson); }

const TimingSeries* EngineRun::timingOf(std::string_view method) const {
  for (const TimingSeries& t : timing)
    if (t.method == method) return &t;
  return nullptr;
}

std::vector<std::string> EngineRun::stepNames() const {
  std::vector<std::string> out;
  for (const RunStepRecord& s : steps) out.push_back(s.name);
  return out;
}

std::vector<bool> EngineRun::wrapped() const {
  std::vector<bool> out;
  for (const RunStepRecord& s : steps) out.push_back(s.wrapped);
  return out;
}

std::vector<EngineStep> EngineRun::windows() const {
  std::vector<EngineStep> out;
  for (const RunStepRecord& s : steps)
    for (const RunIteration& it : s.iterations) {
      EngineStep w;
      w.name = it.iteration == 0 ? s.name : s.name + " #" + std::to_string(it.iteration + 1);
      w.wrapped = s.wrapped;
      w.hostStartNs = it.hostStartNs;
      w.hostEndNs = it.hostEndNs;
      out.push_back(std::move(w));
    }
  // In time order (the object groups them by step).
  std::stable_sort(out.begin(), out.end(),
                   [](const EngineStep& x, const EngineStep& y) { return x.hostStartNs < y.hostStartNs; });
  return out;
}

std::string timingMethodLabel(std::string_view method) {
  const TimingMethodInfo* t = timingByKey(method);
  return t ? std::string(t->label) : std::string(method);
}

std::string missingCollection(const EngineRun& m) {
  if (m.collection.cupti.empty() || m.collection.cupti == "ok") return {};
  if (m.collection.cupti.starts_with("error: "))
    return "CUPTI reported a failure at the end of the run (" + m.collection.cupti.substr(7) +
           "); the GPU activity collected may be incomplete.";
  std::string why = m.collection.cupti;
  if (why.starts_with("unavailable: ")) why = why.substr(13);
  return "CUPTI unavailable: " + why + "; GPU kernels, copies and memsets were not collected.";
}

}  // namespace attnscope
