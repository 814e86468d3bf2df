#include "core/engine/measurement.h"

#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <simdjson.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "core/engine/clock.h"
#include "core/engine/cupti_collector.h"
#include "core/text/json_out.h"

namespace attnscope::engine {

MeasurementResult runTorchMeasurement(const RunConfig& cfg, at::Device device, const std::string& tracePath);

void progress(const RunConfig& cfg, std::string_view phase, int iteration, const std::string& message) {
  if (!cfg.progressJson || !cfg.pass.empty()) return;
  std::string line = "{\"phase\": " + jsonString(phase) + ", \"iteration\": " + std::to_string(iteration) +
                     ", \"message\": " + jsonString(message) + "}\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

namespace {

void fillStepTimes(MeasurementResult* r, int iters) {
  r->stepNs.assign(static_cast<size_t>(iters), {0, 0, 0, 0});
  r->blockNs.assign(static_cast<size_t>(iters), 0);
  std::vector<int64_t> first(static_cast<size_t>(iters), -1), last(static_cast<size_t>(iters), 0);
  for (const auto& w : r->spans) {
    if (w.iteration < 0 || w.iteration >= iters) continue;
    r->stepNs[w.iteration][w.step] = w.endNs - w.startNs;
    auto& f = first[w.iteration];
    if (f < 0 || w.startNs < f) f = w.startNs;
    last[w.iteration] = std::max(last[w.iteration], w.endNs);
  }
  for (int i = 0; i < iters; ++i) r->blockNs[i] = first[i] < 0 ? 0 : last[i] - first[i];
}

}  // namespace

MeasurementResult runMeasurement(TimingMethod method, const RunConfig& cfg, at::Device device, RunCapture* cap,
                                 const std::string& torchTracePath) {
  if (method == TimingMethod::Torch) return runTorchMeasurement(cfg, device, torchTracePath);
  MeasurementResult r;
  r.method = method;
  r.pid = ::getpid();
  const bool cuda = device.is_cuda();
  Workload w(cfg, device);

  std::unique_ptr<CuptiCollector> cupti;
  std::unique_ptr<OpRecorder> recorder;
  StepHooks hooks;
  std::vector<std::array<cudaEvent_t, 2>> stepEvents;
  int eventIteration = 0;  // the hooks below refer to it for the whole pass
  if (method == TimingMethod::Cupti) {
    // The trace pass's collectors start before the warm-up, so their
    // first-use costs (CUPTI's set-up, its first buffer, the recorder's
    // first per-thread buffers) fall there, not in the first measured step.
    if (cuda) {
      cupti = std::make_unique<CuptiCollector>();
      r.collection.cupti = cupti->status();
      if (cupti->available() && !cupti->apiFilterNote().empty()) r.notes.push_back(cupti->apiFilterNote());
    } else {
      r.collection.cupti = "unavailable: the run is on the CPU (no CUDA activity to collect)";
    }
    recorder = std::make_unique<OpRecorder>(RecordMode::Trace, cuda, cupti && cupti->available(), 0, cfg.recordShapes);
    if (!cfg.recordShapes)
      r.notes.push_back(
          "input shapes were not recorded (as torch.profiler's record_shapes=False): --record-shapes (the Run "
          "panel's Record input shapes box) records them, at a cost inside the timed steps");
  }

  // The warm-up pushes its External ids too: CUPTI's first push of a kind
  // sets up its per-thread stack (the first measured step paid ~60-120 us
  // for it on the H200).
  const bool callIds = recorder && recorder->pushesCallIds();
  for (int i = 0; i < cfg.warmup; ++i) {
    {
      const CallExternalId id(callIds, 0);
      w.call(-1, nullptr);
    }
    progress(cfg, "warmup", i, std::string(timingName(method)) + " pass: warm-up call " + std::to_string(i + 1));
  }
  w.synchronize();
  if (method == TimingMethod::Cupti) {
    // The measured window starts here: what was recorded before it is the
    // warm-up's, left out when the records are taken (no flush in between).
    const auto t0 = static_cast<int64_t>(nowNs());
    if (cupti) cupti->setWindowStart(t0);
    recorder->startWindow(t0);
  } else if (method == TimingMethod::Events || method == TimingMethod::OpEvents) {
    // op-events: a CUDA event pair around every op and scope too, as
    // use_cuda=True records them, from events created here, before the loop.
    if (method == TimingMethod::OpEvents)
      recorder = std::make_unique<OpRecorder>(RecordMode::Events, cuda, false, cuda ? 256 * cfg.iters + 256 : 0);
    if (cuda) {
      stepEvents.resize(static_cast<size_t>(cfg.iters) * kStepCount);
      for (auto& p : stepEvents) {
        cudaEventCreate(&p[0]);
        cudaEventCreate(&p[1]);
      }
      // The stream the workload runs on (the current one): the step events
      // time that stream only, and the trace says which it was.
      const c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream();
      r.eventStream = stream.id();
      r.eventDevice = stream.device_index();
      hooks.onStepStart = [&](int s) {
        cudaEventRecord(stepEvents[static_cast<size_t>(eventIteration) * kStepCount + s][0],
                        c10::cuda::getCurrentCUDAStream());
      };
      hooks.onStepEnd = [&](int s) {
        cudaEventRecord(stepEvents[static_cast<size_t>(eventIteration) * kStepCount + s][1],
                        c10::cuda::getCurrentCUDAStream());
        if (s == kStepCount - 1) ++eventIteration;
      };
    }
  }

  for (int i = 0; i < cfg.iters; ++i) {
    {
      const CallExternalId id(callIds, static_cast<uint64_t>(i) + 1);
      // The trace pass marks its iterations as torch.profiler's step() does,
      // so other tools (HTA, Perfetto's queries) find the steps too.
      const std::string stepName = "ProfilerStep#" + std::to_string(i);
      w.call(i, &r.spans, stepEvents.empty() ? nullptr : &hooks, method == TimingMethod::HostSync,
             method == TimingMethod::Cupti ? &stepName : nullptr);
    }
    progress(cfg, "measure", i, std::string(timingName(method)) + " pass: iteration " + std::to_string(i + 1));
  }
  fillStepTimes(&r, cfg.iters);

  if (method == TimingMethod::Events || method == TimingMethod::OpEvents) {
    if (recorder) {
      r.eventOps = recorder->eventTimings();
      if (const uint64_t late = recorder->eventsCreatedLate())
        r.notes.push_back("op-events: " + std::to_string(late) +
                          " CUDA events were created while measuring (the pool made up front ran out)");
    }
    if (cuda) {
      cudaDeviceSynchronize();
      for (int i = 0; i < cfg.iters; ++i)
        for (int s = 0; s < kStepCount; ++s) {
          auto& p = stepEvents[static_cast<size_t>(i) * kStepCount + s];
          float ms = 0;
          r.stepNs[i][s] = cudaEventElapsedTime(&ms, p[0], p[1]) == cudaSuccess
                               ? static_cast<int64_t>(static_cast<double>(ms) * 1e6)
                               : -1;
        }
      for (auto& p : stepEvents) {
        cudaEventDestroy(p[0]);
        cudaEventDestroy(p[1]);
      }
    } else {
      r.notes.push_back("events: no CUDA device, so no CUDA events; step times are host times");
    }
  }
  if (method == TimingMethod::Cupti) {
    w.synchronize();
    if (cupti) {
      cupti->finish(cap);
      const CuptiStats& st = cupti->stats();
      r.collection.cupti = cupti->status();
      r.collection.droppedRecords = st.droppedRecords;
      r.collection.buffersCapped = st.buffersCapped;
      r.collection.buffersPooled = st.buffersPooled;
      r.collection.buffersAdded = st.buffersAdded;
      r.collection.recordsWithoutTimestamps = st.recordsWithoutTimestamps;
      r.collection.recordsBeforeWindow = st.recordsBeforeWindow;
      r.collection.errors = st.errors;
      if (const uint64_t bad = CallExternalId::failures()) {
        r.collection.errors.push_back(std::to_string(bad) +
                                      " External-id pushes or pops failed (some API calls may carry the wrong "
                                      "iteration)");
        if (r.collection.cupti == "ok") r.collection.cupti = "error: " + r.collection.errors.back();
      }
    }
    r.collection.nvtxRangesPushed = recorder->nvtxRangesPushed();
    if (const uint64_t open = recorder->nvtxRangesLeftOpen())
      r.notes.push_back(std::to_string(open) +
                        " record_function scope(s) ended on another thread than they began: each is filed under the "
                        "thread that began it, and its NVTX range is left open there");
    const ClockCheck ck = checkClock();
    r.collection.clock = gTscClock.enabled ? "tsc" : "monotonic";
    r.collection.clockDriftNs = ck.driftNs;
    r.collection.clockSinceCalibrationNs = ck.sinceCalibrationNs;
    r.collection.clockUncertaintyNs = ck.sandwichNs;
    recorder->takeInto(cap);
  }
  recorder.reset();
  return r;
}

std::string measurementResultJson(const MeasurementResult& r) {
  std::string s = "{\"method\": " + jsonString(timingName(r.method)) + ", \"pid\": " + std::to_string(r.pid);
  s += ", \"steps\": [";
  for (size_t i = 0; i < r.stepNs.size(); ++i) {
    s += i ? ", [" : "[";
    for (int k = 0; k < kStepCount; ++k) s += (k ? ", " : "") + std::to_string(r.stepNs[i][k]);
    s += "]";
  }
  s += "], \"block\": [";
  for (size_t i = 0; i < r.blockNs.size(); ++i) s += (i ? ", " : "") + std::to_string(r.blockNs[i]);
  s += "], \"spans\": [";
  for (size_t i = 0; i < r.spans.size(); ++i) {
    const auto& w = r.spans[i];
    s += (i ? ", [" : "[") + std::to_string(w.iteration) + ", " + std::to_string(w.step) + ", " +
         std::to_string(w.startNs) + ", " + std::to_string(w.endNs) + "]";
  }
  s += "], \"ops\": [";
  for (size_t i = 0; i < r.eventOps.size(); ++i) {
    const auto& o = r.eventOps[i];
    s += (i ? ", " : "") + std::string("{\"name\": ") + jsonString(o.name) +
         ", \"user_scope\": " + (o.userScope ? "true" : "false") +
         ", \"host_start_ns\": " + std::to_string(o.hostStartNs) + ", \"host_end_ns\": " + std::to_string(o.hostEndNs) +
         ", \"elapsed_ns\": " + std::to_string(o.elapsedNs) + "}";
  }
  s += "], \"collection\": {\"cupti\": " + jsonString(r.collection.cupti) +
       ", \"dropped_records\": " + std::to_string(r.collection.droppedRecords) +
       ", \"buffers_capped\": " + std::to_string(r.collection.buffersCapped) +
       ", \"buffers_pooled\": " + std::to_string(r.collection.buffersPooled) +
       ", \"buffers_added\": " + std::to_string(r.collection.buffersAdded) +
       ", \"records_without_timestamps\": " + std::to_string(r.collection.recordsWithoutTimestamps) +
       ", \"warmup_records_left_out\": " + std::to_string(r.collection.recordsBeforeWindow) +
       ", \"errors\": " + jsonStringArray(r.collection.errors) + ", \"clock\": " + jsonString(r.collection.clock) +
       ", \"clock_drift_ns\": " + std::to_string(r.collection.clockDriftNs) +
       ", \"clock_since_calibration_ns\": " + std::to_string(r.collection.clockSinceCalibrationNs) +
       ", \"clock_uncertainty_ns\": " + std::to_string(r.collection.clockUncertaintyNs) +
       ", \"nvtx_ranges_pushed\": " + std::to_string(r.collection.nvtxRangesPushed) +
       ", \"gpu_activities\": " + std::to_string(r.collection.assembled.gpuActivities) +
       ", \"gpu_linked_to_launch\": " + std::to_string(r.collection.assembled.gpuLinkedToLaunch) +
       ", \"gpu_linked_to_op\": " + std::to_string(r.collection.assembled.gpuLinkedToOp) +
       ", \"gpu_unlinked\": " + std::to_string(r.collection.assembled.gpuUnlinked) +
       ", \"markers\": " + std::to_string(r.collection.assembled.markers) +
       ", \"event_stream\": " + std::to_string(r.eventStream) + ", \"event_device\": " + std::to_string(r.eventDevice) +
       ", \"driver_work\": " + std::to_string(r.collection.assembled.driverWorkRecords) + "}";
  s += ", \"trace\": " + jsonString(r.tracePath) + ", \"notes\": [";
  for (size_t i = 0; i < r.notes.size(); ++i) s += (i ? ", " : "") + jsonString(r.notes[i]);
  s += "]}";
  return s;
}

bool parseMeasurementResult(const std::string& json, MeasurementResult* r, std::string* error) {
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  if (auto e = p.parse(json).get(doc)) {
    *error = std::string("pass result is not valid JSON: ") + simdjson::error_message(e);
    return false;
  }
  try {
    const std::string_view method = doc["method"].get_string();
    for (int m = 0; m < kTimingMethodCount; ++m)
      if (method == timingName(static_cast<TimingMethod>(m))) r->method = static_cast<TimingMethod>(m);
    r->pid = doc["pid"].get_int64();
    r->child = true;
    for (auto it : doc["steps"].get_array()) {
      std::array<int64_t, kStepCount> a{};
      int k = 0;
      for (auto v : it.get_array())
        if (k < kStepCount) a[k++] = v.get_int64();
      r->stepNs.push_back(a);
    }
    for (auto v : doc["block"].get_array()) r->blockNs.push_back(v.get_int64());
    for (auto it : doc["spans"].get_array()) {
      StepSpan w;
      auto a = it.get_array();
      w.iteration = static_cast<int>(int64_t(a.at(0)));
      w.step = static_cast<int>(int64_t(a.at(1)));
      w.startNs = a.at(2);
      w.endNs = a.at(3);
      r->spans.push_back(w);
    }
    for (auto it : doc["ops"].get_array()) {
      EventTiming t;
      t.name = std::string(std::string_view(it["name"]));
      t.userScope = bool(it["user_scope"]);
      t.hostStartNs = it["host_start_ns"];
      t.hostEndNs = it["host_end_ns"];
      t.elapsedNs = it["elapsed_ns"];
      r->eventOps.push_back(t);
    }
    auto c = doc["collection"];
    r->collection.cupti = std::string(std::string_view(c["cupti"]));
    r->collection.droppedRecords = uint64_t(int64_t(c["dropped_records"]));
    r->collection.buffersCapped = uint64_t(int64_t(c["buffers_capped"]));
    r->collection.buffersPooled = uint64_t(int64_t(c["buffers_pooled"]));
    r->collection.buffersAdded = uint64_t(int64_t(c["buffers_added"]));
    r->collection.recordsWithoutTimestamps = uint64_t(int64_t(c["records_without_timestamps"]));
    r->collection.recordsBeforeWindow = uint64_t(int64_t(c["warmup_records_left_out"]));
    for (auto e : c["errors"].get_array()) r->collection.errors.emplace_back(std::string_view(e));
    r->collection.clock = std::string(std::string_view(c["clock"]));
    r->collection.clockDriftNs = c["clock_drift_ns"];
    r->collection.clockSinceCalibrationNs = c["clock_since_calibration_ns"];
    r->collection.clockUncertaintyNs = c["clock_uncertainty_ns"];
    r->collection.nvtxRangesPushed = uint64_t(int64_t(c["nvtx_ranges_pushed"]));
    AssembleStats& st = r->collection.assembled;
    st.gpuActivities = uint64_t(int64_t(c["gpu_activities"]));
    st.gpuLinkedToLaunch = uint64_t(int64_t(c["gpu_linked_to_launch"]));
    st.gpuLinkedToOp = uint64_t(int64_t(c["gpu_linked_to_op"]));
    st.gpuUnlinked = uint64_t(int64_t(c["gpu_unlinked"]));
    st.markers = uint64_t(int64_t(c["markers"]));
    st.driverWorkRecords = uint64_t(int64_t(c["driver_work"]));
    r->eventStream = c["event_stream"];
    r->eventDevice = static_cast<int>(int64_t(c["event_device"]));
    r->tracePath = std::string(std::string_view(doc["trace"]));
    for (auto n : doc["notes"].get_array()) r->notes.emplace_back(std::string_view(n));
  } catch (const simdjson::simdjson_error& e) {
    *error = std::string("pass result is malformed: ") + e.what();
    return false;
  }
  return true;
}

}  // namespace attnscope::engine
