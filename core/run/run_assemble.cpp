#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/run/run_capture.h"

namespace attnscope {

namespace {

Family familyOf(ActivityKind k) {
  switch (k) {
    case ActivityKind::Kernel:
      return Family::Kernel;
    case ActivityKind::Memcpy:
      return Family::GpuMemcpy;
    case ActivityKind::Memset:
      return Family::GpuMemset;
    case ActivityKind::Runtime:
      return Family::CudaRuntime;
    case ActivityKind::Driver:
    case ActivityKind::DriverWork:
      return Family::CudaDriver;
    case ActivityKind::Sync:
      return Family::CudaSync;
    case ActivityKind::Overhead:
      return Family::Overhead;
    case ActivityKind::Marker:
      return Family::Other;
  }
  return Family::Other;
}

bool isGpuWork(ActivityKind k) {
  return k == ActivityKind::Kernel || k == ActivityKind::Memcpy || k == ActivityKind::Memset;
}

}  // namespace

EventStore assembleRunStore(const RunCapture& cap, AssembleStats* stats) {
  AssembleStats st;
  EventStoreBuilder b;
  auto& meta = b.meta();
  meta.schemaVersion = 1;
  meta.devices = cap.devices;
  meta.cudaRuntimeVersion = cap.cudaRuntimeVersion;
  meta.cudaDriverVersion = cap.cudaDriverVersion;
  meta.cuptiVersion = cap.cuptiVersion;
  meta.recordShapes = cap.inputShapes;
  meta.profileMemory = !cap.memory.empty();
  meta.processNames[cap.pid] = cap.processName;
  meta.distributed = cap.distributed;

  std::unordered_map<uint32_t, int64_t> extOf;
  std::unordered_set<uint32_t> taggedWithCall;
  for (const auto& x : cap.externalCorrelations) {
    if (x.kind == ExternalCorrelationRecord::Kind::Call)
      taggedWithCall.insert(x.correlation);
    else
      extOf[x.correlation] = static_cast<int64_t>(x.externalId);
  }
  // The engine pushes no op's External id to CUPTI by default (one id per
  // call of the block instead): each API call belongs to the innermost op (or
  // scope) running on its thread when it began (one clock for both); an
  // op-kind id from CUPTI stays where no op contains the call.
  {
    std::unordered_map<int64_t, std::vector<const CpuOpRecord*>> opsOf;
    for (const auto& op : cap.ops)
      if (op.externalId != kNoId && op.endNs >= op.startNs) opsOf[op.tid].push_back(&op);
    std::unordered_map<int64_t, std::vector<const ActivityRecord*>> callsOf;
    for (const auto& a : cap.activities)
      if ((a.kind == ActivityKind::Runtime || a.kind == ActivityKind::Driver) && a.correlation)
        callsOf[a.tid].push_back(&a);
    for (auto& [tid, calls] : callsOf) {
      auto found = opsOf.find(tid);
      if (found == opsOf.end()) continue;
      auto& ops = found->second;
      std::sort(ops.begin(), ops.end(), [](const CpuOpRecord* x, const CpuOpRecord* y) {
        return x->startNs != y->startNs ? x->startNs < y->startNs : x->endNs > y->endNs;
      });
      std::sort(calls.begin(), calls.end(),
                [](const ActivityRecord* x, const ActivityRecord* y) { return x->startNs < y->startNs; });
      std::vector<const CpuOpRecord*> open;  // nested ops around the current time, innermost last
      size_t k = 0;
      for (const ActivityRecord* call : calls) {
        for (; k < ops.size() && ops[k]->startNs <= call->startNs; ++k) {
          while (!open.empty() && open.back()->endNs < ops[k]->startNs) open.pop_back();
          open.push_back(ops[k]);
        }
        while (!open.empty() && open.back()->endNs < call->startNs) open.pop_back();
        if (!open.empty()) extOf[call->correlation] = open.back()->externalId;
      }
    }
  }
  std::unordered_map<uint32_t, const ActivityRecord*> launchOf;
  for (const auto& a : cap.activities)
    if ((a.kind == ActivityKind::Runtime || a.kind == ActivityKind::Driver) && a.correlation)
      launchOf.emplace(a.correlation, &a);

  std::vector<std::pair<const CpuOpRecord*, const CollectiveRecord*>> opsAndComms;
  for (const auto& op : cap.ops) opsAndComms.emplace_back(&op, nullptr);
  for (const auto& c : cap.collectives) opsAndComms.emplace_back(&c.op, &c.comm);
  for (const auto& [opp, comm] : opsAndComms) {
    const CpuOpRecord& op = *opp;
    Event e;
    e.start = op.startNs;
    e.dur = std::max<int64_t>(0, op.endNs - op.startNs);
    e.name = b.strings().intern(op.name);
    e.family = op.userScope ? Family::UserAnnotation : Family::CpuOp;
    e.lane = b.lane(LaneKind::CpuThread, cap.pid, op.tid);
    e.externalId = op.externalId;
    if (!op.inputDims.empty() || !op.inputTypes.empty() || op.sequenceNumber >= 0 || comm) {
      EventArgs a;
      if (!op.inputDims.empty()) a.inputDims = b.strings().intern(op.inputDims);
      if (!op.inputTypes.empty()) a.inputTypes = b.strings().intern(op.inputTypes);
      a.sequenceNumber = op.sequenceNumber;
      if (comm) {
        const CollectiveRecord& r = *comm;
        auto text = [&](const std::string& t) { return t.empty() ? uint32_t{0} : b.strings().intern(t); };
        CommArgs c;
        c.collectiveName = text(r.name);
        c.pgName = text(r.pgName);
        c.pgDesc = text(r.pgDesc);
        c.groupRanks = text(r.groupRanks);
        c.dtype = text(r.dtype);
        c.inNelems = r.inNelems;
        c.outNelems = r.outNelems;
        c.seq = r.seq;
        c.groupSize = r.groupSize;
        a.comm = b.addComm(c);
      }
      e.args = b.addArgs(a);
    }
    b.addEvent(e);
  }

  for (const auto& a : cap.activities) {
    Event e;
    e.start = a.startNs;
    e.dur = std::max<int64_t>(0, a.endNs - a.startNs);
    e.name = b.strings().intern(a.name);
    e.family = familyOf(a.kind);
    if (a.correlation) e.correlation = a.correlation;
    if (auto it = extOf.find(a.correlation); a.correlation && it != extOf.end()) e.externalId = it->second;
    switch (a.kind) {
      case ActivityKind::Kernel:
      case ActivityKind::Memcpy:
      case ActivityKind::Memset:
      case ActivityKind::Sync: {
        e.lane = b.lane(LaneKind::GpuStream, std::max(a.device, 0), a.stream);
        EventArgs x;
        x.device = a.device;
        x.stream = a.stream;
        x.bytes = a.bytes;
        std::copy(a.grid, a.grid + 3, x.grid);
        std::copy(a.block, a.block + 3, x.block);
        e.args = b.addArgs(x);
        if (isGpuWork(a.kind)) {
          ++st.gpuActivities;
          auto l = launchOf.find(a.correlation);
          if (a.correlation && l != launchOf.end()) {
            ++st.gpuLinkedToLaunch;
            if (e.externalId != kNoId) ++st.gpuLinkedToOp;
            EventStoreBuilder::RawFlow s;
            s.id = a.correlation;
            s.ts = l->second->startNs;
            s.pid = cap.pid;
            s.tid = l->second->tid;
            s.start = true;
            b.addFlow(s);
            EventStoreBuilder::RawFlow f;
            f.id = a.correlation;
            f.ts = a.startNs;
            f.pid = std::max(a.device, 0);
            f.tid = a.stream;
            f.bindEnclosing = true;
            b.addFlow(f);
          } else {
            ++st.gpuUnlinked;
          }
        } else {
          ++st.syncRecords;
        }
        break;
      }
      case ActivityKind::Runtime:
      case ActivityKind::Driver:
        e.lane = b.lane(LaneKind::CpuThread, cap.pid, a.tid);
        ++st.runtimeCalls;
        st.apiCallsWithCallId += taggedWithCall.count(a.correlation);
        if (e.externalId == kNoId) ++st.runtimeWithoutOp;
        break;
      case ActivityKind::Overhead:
        e.lane = b.lane(LaneKind::CpuThread, -1, 0);  // where Kineto puts it
        ++st.overheadRecords;
        break;
      case ActivityKind::DriverWork:
        // The thread that waited for the driver (the profiler's lane when
        // CUPTI did not say which).
        e.lane = a.tid ? b.lane(LaneKind::CpuThread, cap.pid, a.tid) : b.lane(LaneKind::CpuThread, -1, 0);
        ++st.driverWorkRecords;
        break;
      case ActivityKind::Marker:
        e.lane = b.lane(LaneKind::Other, cap.pid, a.tid);
        ++st.markers;
        break;
    }
    b.addEvent(e);
  }

  for (const auto& m : cap.memory) {
    Event e;
    e.start = m.ts;
    e.name = b.strings().intern("[memory]");
    e.family = Family::Memory;
    e.lane = b.lane(LaneKind::CpuThread, cap.pid, m.tid);
    EventArgs a;
    a.bytes = m.bytes;
    a.deviceType = m.deviceType;
    a.device = m.device;
    a.totalAllocated = m.totalAllocated;
    a.totalReserved = m.totalReserved;
    if (m.addr != 0) a.addr = static_cast<int64_t>(m.addr), a.hasAddr = true;
    e.args = b.addArgs(a);
    b.addEvent(e);
  }
  if (stats) *stats = st;
  return std::move(b).build();
}

}  // namespace attnscope
