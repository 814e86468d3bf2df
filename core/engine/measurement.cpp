#include "core/engine/measurement.h"

#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "core/engine/clock.h"
#include "core/engine/cupti_collector.h"
#include "core/run/timing_methods.h"
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
  for (const auto& w : r->spans) {
    if (w.iteration < 0 || w.iteration >= iters) continue;
    r->stepNs[w.iteration][w.step] = w.endNs - w.startNs;
  }
}

}  // namespace

MeasurementResult runMeasurement(TimingMethod method, const RunConfig& cfg, at::Device device, RunCapture* cap,
                                 const std::string& torchTracePath) {
  if (method == TimingMethod::Torch) return runTorchMeasurement(cfg, device, torchTracePath);
  MeasurementResult r;
  r.method = method;
  r.pid = ::getpid();
  const bool cuda = device.is_cuda();
  const std::unique_ptr<Workload> workload = makeWorkload(cfg, device, timingName(method));
  Workload& w = *workload;

  std::unique_ptr<CuptiCollector> cupti;
  std::unique_ptr<OpRecorder> recorder;
  StepHooks hooks;
  std::vector<std::array<cudaEvent_t, 2>> stepEvents;
  int eventIteration = 0;  // the hooks below refer to it for the whole pass
  int64_t windowStart = 0;
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
    windowStart = t0;
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
      r.collection.warmupRecordsLeftOut = st.recordsBeforeWindow;
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
    r.collection.clockOverNs = ck.sinceCalibrationNs;
    r.collection.clockUncertaintyNs = ck.sandwichNs;
    recorder->takeInto(cap);
    for (CollectiveOpRecord& c : w.takeCollectives(windowStart)) cap->collectives.push_back(std::move(c));
    cap->distributed = w.distributedInfo();
  }
  recorder.reset();
  return r;
}

EngineRun passRun(const MeasurementResult& r) {
  EngineRun run;
  TimingSeries t;
  t.method = std::string(timingName(r.method));
  t.measures = std::string(timingInfo(r.method).measures);
  t.process = r.child ? "child" : "parent";
  t.pid = r.pid;
  for (const auto& it : r.stepNs) t.steps.emplace_back(it.begin(), it.end());
  for (const EventTiming& o : r.eventOps)
    t.ops.push_back({o.name, o.userScope, o.hostEndNs - o.hostStartNs, o.elapsedNs});
  t.trace = r.tracePath;
  t.streamDevice = r.eventDevice;
  t.streamId = r.eventStream;
  run.timing.push_back(std::move(t));
  for (int k = 0; k < kStepCount; ++k) {
    RunStepRecord st{std::string(kStepNames[k]), std::string(kStepKeys[k]), false, {}};
    for (const StepSpan& w : r.spans)
      if (w.step == k) st.iterations.push_back(RunIteration{w.iteration, w.startNs, w.endNs, 0, -1, -1, 0});
    run.steps.push_back(std::move(st));
  }
  run.collection = r.collection;
  run.notes = r.notes;
  return run;
}

std::string measurementResultJson(const MeasurementResult& r) { return engineRunJson(passRun(r)); }

bool parseMeasurementResult(const std::string& json, MeasurementResult* r, std::string* error) {
  const std::optional<EngineRun> run = parseEngineRun(json);
  if (!run || run->timing.size() != 1) {
    *error = "a pass result is not one pass's run (" +
             std::string(run ? std::to_string(run->timing.size()) + " timing methods" : "not a JSON object") + ")";
    return false;
  }
  const TimingSeries& t = run->timing.front();
  const TimingMethodInfo* info = timingByKey(t.method);
  if (!info) {
    *error = "a pass result names no known timing method ('" + t.method + "')";
    return false;
  }
  r->method = info->method;
  r->pid = t.pid;
  r->child = true;
  for (const auto& it : t.steps) {
    std::array<int64_t, kStepCount> a{-1, -1, -1, -1};
    for (size_t k = 0; k < a.size() && k < it.size(); ++k) a[k] = it[k];
    r->stepNs.push_back(a);
  }
  for (size_t k = 0; k < run->steps.size(); ++k)
    for (const RunIteration& it : run->steps[k].iterations)
      r->spans.push_back(StepSpan{it.iteration, static_cast<int>(k), it.hostStartNs, it.hostEndNs});
  for (const RunOpTiming& o : t.ops) r->eventOps.push_back(EventTiming{o.name, o.userScope, 0, o.cpuNs, o.cudaEventNs});
  r->tracePath = t.trace;
  r->eventDevice = t.streamDevice;
  r->eventStream = t.streamId;
  r->collection = run->collection;
  r->notes = run->notes;
  return true;
}

}  // namespace attnscope::engine
