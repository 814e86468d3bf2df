#include "core/cache/records.h"

namespace attnscope::cache {

// Each record's fields, once, for writing and reading. A record that grows fails its static_assert:
// list the new field below (and bump kCacheVersion in trace_cache.h).
#define ATTNSCOPE_RECORD(T, size, ...)                                                       \
  static_assert(sizeof(T) == (size), "a field was added to " #T ": list it in records.cpp"); \
  template <typename Ar>                                                                     \
  void fieldsOf(Ar& ar, T& x) {                                                              \
    ar(__VA_ARGS__);                                                                         \
  }                                                                                          \
  void save(ArchiveOut& a, const T& x) { fieldsOf(a, const_cast<T&>(x)); }                   \
  void load(ArchiveIn& a, T& x) { fieldsOf(a, x); }

// The store's metadata.
ATTNSCOPE_RECORD(Lane, 72, x.kind, x.pid, x.tid, x.label, x.begin, x.end, x.maxDepth)
ATTNSCOPE_RECORD(DeviceProperties, 64, x.id, x.name, x.totalGlobalMem, x.computeMajor, x.computeMinor, x.numSms)
ATTNSCOPE_RECORD(ProcessGroupConfig, 128, x.name, x.desc, x.backendConfig, x.size, x.ranks)
ATTNSCOPE_RECORD(DistributedInfo, 96, x.present, x.backend, x.rank, x.worldSize, x.pgCount, x.hasPgConfig, x.pgConfig)
ATTNSCOPE_RECORD(CommArgs, 56, x.collectiveName, x.pgName, x.pgDesc, x.groupRanks, x.commsId, x.dtype, x.inNelems,
                 x.outNelems, x.seq, x.groupSize)
ATTNSCOPE_RECORD(BadCount, 48, x.count, x.firstOffset, x.firstDetail)
ATTNSCOPE_RECORD(EventStore::Meta, 456, x.sourcePath, x.schemaVersion, x.baseTimeNanoseconds, x.traceName,
                 x.recordShapes, x.profileMemory, x.withStack, x.cudaRuntimeVersion, x.cudaDriverVersion,
                 x.cuptiVersion, x.devices, x.processNames, x.threadNames, x.attnscopeJson, x.recordJson, x.distributed,
                 x.partial, x.hostName)

// torch's tables (a row's events are stored apart).
ATTNSCOPE_RECORD(KeyAverageRow, 208, x.name, x.deviceType, x.userAnnotation, x.inputShapes, x.family, x.calls,
                 x.selfCpuNs, x.cpuTotalNs, x.selfDeviceNs, x.deviceTotalNs, x.cpuMemBytes, x.selfCpuMemBytes,
                 x.deviceMemBytes, x.selfDeviceMemBytes)

// The explanation.
ATTNSCOPE_RECORD(Launch, 56, x.launch, x.gpu, x.op, x.correlation, x.launchNs, x.gpuStartNs, x.gpuEndNs, x.graph)
ATTNSCOPE_RECORD(Region, 72, x.name, x.event, x.hostStartNs, x.hostEndNs, x.gpuAttributedNs, x.launches)
ATTNSCOPE_RECORD(Awaited, 40, x.gpu, x.correlation, x.gpuStartNs, x.gpuEndNs, x.queuedNs)
ATTNSCOPE_RECORD(SyncWait, 168, x.ev, x.api, x.startNs, x.durNs, x.opChain, x.chainEvents, x.issuer, x.awaited, x.step,
                 x.group)
ATTNSCOPE_RECORD(SyncGroup, 160, x.key, x.api, x.count, x.totalNs, x.maxNs, x.waits, x.steps, x.awaitedTop)
ATTNSCOPE_RECORD(StepReport, 288, x.name, x.wrapped, x.event, x.lane, x.hostStartNs, x.hostEndNs, x.launches,
                 x.gpuStartNs, x.gpuEndNs, x.gpuAttributedNs, x.gpuBusyInHostWindowNs, x.eventNs, x.cudaEventRecords,
                 x.syncWaits, x.regions, x.kernelNs, x.memcpyNs, x.memsetNs, x.communicationNs, x.idleNs, x.syncWaitNs,
                 x.spillOutNs, x.spillInNs, x.spillFrom, x.graphLaunches)
ATTNSCOPE_RECORD(DoubleCount, 104, x.kind, x.name, x.ns, x.pct, x.evidence)
ATTNSCOPE_RECORD(GapCause, 72, x.cause, x.ns, x.text)
ATTNSCOPE_RECORD(Ledger, 256, x.timing, x.wallSpanNs, x.gpuActivities, x.gpuActivitySumNs, x.gpuUnionNs,
                 x.torchSelfDeviceTotalNs, x.torchSelfDeviceAllRowsNs, x.correctedSelfDeviceNs, x.doubleCounting,
                 x.unlinkedGpu, x.unlinkedGpuNs, x.overheadOwnedGpu, x.overheadOwnedGpuNs, x.cudaEventRecords,
                 x.launchesWithoutGpuRecord, x.droppedRecords, x.recordsWithoutTimestamps, x.torchGapNs,
                 x.torchGapCauses)
ATTNSCOPE_RECORD(Verdict, 152, x.step, x.ns, x.kind, x.text, x.evidence, x.glossary)
ATTNSCOPE_RECORD(StepSpread, 48, x.n, x.medianNs, x.minNs, x.maxNs, x.p10Ns, x.p90Ns)
ATTNSCOPE_RECORD(ProfilerInflation, 176, x.step, x.noProfiler, x.collector, x.torch)
ATTNSCOPE_RECORD(StepWaits, 200, x.name, x.startNs, x.endNs, x.hostStartNs, x.hostEndNs, x.parts, x.deviceBusyNs,
                 x.busyByDevice, x.communicationOverlappedNs)
ATTNSCOPE_RECORD(EvidenceItem, 200, x.kind, x.name, x.count, x.ns, x.share, x.detail, x.inside, x.where, x.events)
ATTNSCOPE_RECORD(Fix, 96, x.code, x.text, x.because)
ATTNSCOPE_RECORD(PeriodicWork, 96, x.every, x.steps, x.extraNs, x.what, x.text)
ATTNSCOPE_RECORD(DiagnosedCause, 272, x.code, x.totalNs, x.share, x.perStep, x.steps, x.label, x.text, x.fix,
                 x.evidence, x.hints, x.items, x.fixes)
ATTNSCOPE_RECORD(Diagnosis, 528, x.steps, x.causes, x.minor, x.stepSource, x.wallNs, x.headline, x.traceKind,
                 x.recordStartNs, x.recordEndNs, x.notes, x.periodic, x.moments)
ATTNSCOPE_RECORD(Explanation, 992, x.steps, x.inflation, x.runNotes, x.syncWaits, x.syncGroups, x.ledger, x.verdicts,
                 x.diagnosis, x.stepSource, x.partial)

// The founding answer.
ATTNSCOPE_RECORD(AnswerStep, 216, x.name, x.wrapped, x.steps, x.torchRowNs, x.torchRowCalls, x.torchRowTotalNs,
                 x.torchRowSpread, x.cost, x.otherThreadsNs, x.shownUnder)
ATTNSCOPE_RECORD(FoundingAnswer, 64, x.gpu, x.engineRun, x.cpuRun, x.iterations, x.steps, x.headline)

#undef ATTNSCOPE_RECORD

std::string storeRecords(const EventStore& s) {
  ArchiveOut a;
  a(s.meta(), s.lanes(), s.comms());
  for (int k = 0; k < kFamilyCount; ++k) a.put(s.familyCount(static_cast<Family>(k)));
  for (int k = 0; k < kBadKindCount; ++k) a.putItem(s.bad(static_cast<BadKind>(k)));
  a(s.minTime(), s.maxTime(), s.profilerRangeEvents());
  a.put(std::vector<int64_t>(s.laneMaxDur().begin(), s.laneMaxDur().end()));
  return std::move(a.bytes());
}

bool readStoreRecords(std::string_view bytes, EventStore::Parts* p) {
  ArchiveIn a(bytes);
  a(p->meta, p->lanes, p->comms, p->familyCounts, p->bad, p->minTime, p->maxTime, p->profilerRangeEvents);
  std::vector<int64_t> maxDur;
  a.get(maxDur);
  p->laneMaxDur = Col<int64_t>(spill::Vector<int64_t>(maxDur.begin(), maxDur.end()));
  return !a.bad() && a.atEnd();
}

std::string tableRecords(const KeyAverages& t) {
  ArchiveOut a;
  a(t.attribution, t.groupBy, t.sumSelfCpuNs, t.sumSelfDeviceNs, t.rows);
  for (const KeyAverageRow& r : t.rows) a.put<uint64_t>(r.events.size());
  return std::move(a.bytes());
}

bool readTableRecords(std::string_view bytes, KeyAverages* t, std::vector<uint64_t>* eventCounts) {
  ArchiveIn a(bytes);
  a(t->attribution, t->groupBy, t->sumSelfCpuNs, t->sumSelfDeviceNs, t->rows);
  eventCounts->assign(t->rows.size(), 0);
  for (uint64_t& n : *eventCounts) a.get(n);
  return !a.bad() && a.atEnd();
}

std::string explanationRecords(const Explanation& x) {
  ArchiveOut a;
  a.putItem(x);
  return std::move(a.bytes());
}

bool readExplanationRecords(std::string_view bytes, Explanation* x) {
  ArchiveIn a(bytes);
  a.getItem(*x);
  return !a.bad() && a.atEnd();
}

std::string answerRecords(const FoundingAnswer* x) {
  ArchiveOut a;
  a.put<uint8_t>(x != nullptr ? 1 : 0);
  if (x) a.putItem(*x);
  return std::move(a.bytes());
}

bool readAnswerRecords(std::string_view bytes, std::shared_ptr<const FoundingAnswer>* x) {
  ArchiveIn a(bytes);
  uint8_t present = 0;
  a.get(present);
  if (present > 1) return false;
  if (present == 1) {
    auto answer = std::make_shared<FoundingAnswer>();
    a.getItem(*answer);
    *x = std::move(answer);
  }
  return !a.bad() && a.atEnd();
}

}  // namespace attnscope::cache
