// Two snapshots of one trace compared cell for cell: every column of the store (events, args, links,
// the id indexes), its strings, lanes, collectives' args, counts and metadata, the activity index,
// torch's four tables (every figure of every row and the events behind it) and the explanation (its
// whole JSON, every bound lifted). The first difference, in words, or "" when there is none.
#pragma once

#include <string>

#include "core/cache/records.h"
#include "core/explain/explanation.h"
#include "core/snapshot/trace_snapshot.h"

namespace attnscope::testutil {

namespace detail {
template <typename A, typename B>
std::string firstDiff(const char* what, const A& a, const B& b) {
  if (a.size() != b.size())
    return std::string(what) + ": " + std::to_string(a.size()) + " against " + std::to_string(b.size()) + " values";
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i])) return std::string(what) + ": differs at " + std::to_string(i);
  return {};
}
}  // namespace detail

inline std::string compareStores(const EventStore& a, const EventStore& b) {
  std::string d;
#define ATTNSCOPE_CMP(col, T, field) \
  if (d.empty()) d = detail::firstDiff("events." #col, a.columns().col, b.columns().col);
  ATTNSCOPE_EVENT_COLUMNS(ATTNSCOPE_CMP)
#undef ATTNSCOPE_CMP
#define ATTNSCOPE_CMP(col, T, field) \
  if (d.empty()) d = detail::firstDiff("args." #col, a.argsColumns().col, b.argsColumns().col);
  ATTNSCOPE_ARGS_COLUMNS(ATTNSCOPE_CMP)
#undef ATTNSCOPE_CMP
#define ATTNSCOPE_CMP(col, T, field) \
  if (d.empty()) d = detail::firstDiff("links." #col, a.linkColumns().col, b.linkColumns().col);
  ATTNSCOPE_LINK_COLUMNS(ATTNSCOPE_CMP)
#undef ATTNSCOPE_CMP
  const std::pair<const IdIndex*, const IdIndex*> idx[] = {{&a.correlationIndex(), &b.correlationIndex()},
                                                           {&a.externalIdIndex(), &b.externalIdIndex()},
                                                           {&a.callIndex(), &b.callIndex()},
                                                           {&a.opIndex(), &b.opIndex()}};
  for (const auto& [x, y] : idx) {
    if (d.empty()) d = detail::firstDiff("index key", x->key, y->key);
    if (d.empty()) d = detail::firstDiff("index event", x->event, y->event);
  }
  if (!d.empty()) return d;
  if (a.strings().size() != b.strings().size()) return "strings: another count";
  for (uint32_t i = 0; i < a.strings().size(); ++i)
    if (a.str(i) != b.str(i)) return "strings: differs at " + std::to_string(i);
  if (a.lanes().size() != b.lanes().size()) return "lanes: another count";
  for (size_t i = 0; i < a.lanes().size(); ++i) {
    const Lane &x = a.lanes()[i], &y = b.lanes()[i];
    if (x.kind != y.kind || x.pid != y.pid || x.tid != y.tid || x.label != y.label || x.begin != y.begin ||
        x.end != y.end || x.maxDepth != y.maxDepth)
      return "lanes: differs at " + std::to_string(i);
  }
  if (d.empty()) d = detail::firstDiff("lane max durations", a.laneMaxDur(), b.laneMaxDur());
  if (a.comms().size() != b.comms().size()) return "comms: another count";
  for (size_t i = 0; i < a.comms().size(); ++i) {
    const CommArgs &x = a.comms()[i], &y = b.comms()[i];
    if (x.collectiveName != y.collectiveName || x.pgName != y.pgName || x.pgDesc != y.pgDesc ||
        x.groupRanks != y.groupRanks || x.commsId != y.commsId || x.dtype != y.dtype || x.inNelems != y.inNelems ||
        x.outNelems != y.outNelems || x.seq != y.seq || x.groupSize != y.groupSize)
      return "comms: differs at " + std::to_string(i);
  }
  for (int k = 0; k < kFamilyCount; ++k)
    if (a.familyCount(static_cast<Family>(k)) != b.familyCount(static_cast<Family>(k))) return "family counts differ";
  for (int k = 0; k < kBadKindCount; ++k) {
    const BadCount &x = a.bad(static_cast<BadKind>(k)), &y = b.bad(static_cast<BadKind>(k));
    if (x.count != y.count || x.firstOffset != y.firstOffset || x.firstDetail != y.firstDetail)
      return "bad counts differ (" + std::string(badKindName(static_cast<BadKind>(k))) + ")";
  }
  if (a.minTime() != b.minTime() || a.maxTime() != b.maxTime()) return "time span differs";
  const EventStore::Meta &m = a.meta(), &n = b.meta();
  if (m.schemaVersion != n.schemaVersion || m.baseTimeNanoseconds != n.baseTimeNanoseconds ||
      m.traceName != n.traceName || m.recordShapes != n.recordShapes || m.profileMemory != n.profileMemory ||
      m.withStack != n.withStack || m.cudaRuntimeVersion != n.cudaRuntimeVersion ||
      m.cudaDriverVersion != n.cudaDriverVersion || m.cuptiVersion != n.cuptiVersion ||
      m.processNames != n.processNames || m.threadNames != n.threadNames || m.attnscopeJson != n.attnscopeJson ||
      m.recordJson != n.recordJson || m.partial != n.partial || m.devices.size() != n.devices.size() ||
      m.distributed.present != n.distributed.present || m.distributed.rank != n.distributed.rank ||
      m.distributed.worldSize != n.distributed.worldSize || m.distributed.backend != n.distributed.backend ||
      m.distributed.pgConfig != n.distributed.pgConfig || m.hostName != n.hostName)
    return "metadata differs";
  if (a.profilerRangeEvents() != b.profilerRangeEvents()) return "profiler range events differ";
  for (size_t i = 0; i < m.devices.size(); ++i) {
    const DeviceProperties &x = m.devices[i], &y = n.devices[i];
    if (x.id != y.id || x.name != y.name || x.totalGlobalMem != y.totalGlobalMem || x.numSms != y.numSms ||
        x.computeMajor != y.computeMajor || x.computeMinor != y.computeMinor)
      return "devices differ";
  }
  return d;
}

inline std::string compareTables(const KeyAverages& a, const KeyAverages& b) {
  if (a.attribution != b.attribution || a.groupBy != b.groupBy || a.sumSelfCpuNs != b.sumSelfCpuNs ||
      a.sumSelfDeviceNs != b.sumSelfDeviceNs || a.rows.size() != b.rows.size())
    return "table totals or row count differ";
  for (size_t i = 0; i < a.rows.size(); ++i) {
    const KeyAverageRow &x = a.rows[i], &y = b.rows[i];
    if (x.name != y.name || x.deviceType != y.deviceType || x.userAnnotation != y.userAnnotation ||
        x.inputShapes != y.inputShapes || x.family != y.family || x.calls != y.calls || x.selfCpuNs != y.selfCpuNs ||
        x.cpuTotalNs != y.cpuTotalNs || x.selfDeviceNs != y.selfDeviceNs || x.deviceTotalNs != y.deviceTotalNs ||
        x.cpuMemBytes != y.cpuMemBytes || x.selfCpuMemBytes != y.selfCpuMemBytes ||
        x.deviceMemBytes != y.deviceMemBytes || x.selfDeviceMemBytes != y.selfDeviceMemBytes || !(x.events == y.events))
      return "row " + std::to_string(i) + " (" + x.name + ") differs";
  }
  return {};
}

inline std::string compareSnapshots(const TraceSnapshot& a, const TraceSnapshot& b) {
  std::string d = compareStores(*a.store, *b.store);
  if (!d.empty()) return "store: " + d;
  const ActivityIndex::Parts &x = a.index.parts(), &y = b.index.parts();
  for (const auto& [what, p, q] : {std::tuple{"calls", &x.calls, &y.calls}, std::tuple{"gpu", &x.gpu, &y.gpu},
                                   std::tuple{"device work", &x.device, &y.device}})
    if (d.empty()) d = detail::firstDiff(what, *p, *q);
  for (const auto& [what, p, q] :
       {std::tuple{"call starts", &x.callStart, &y.callStart}, std::tuple{"gpu starts", &x.gpuStart, &y.gpuStart},
        std::tuple{"busy starts", &x.busyStart, &y.busyStart}, std::tuple{"busy ends", &x.busyEnd, &y.busyEnd},
        std::tuple{"busy before", &x.busyBefore, &y.busyBefore}, std::tuple{"device starts", &x.devStart, &y.devStart},
        std::tuple{"device ends", &x.devEnd, &y.devEnd}, std::tuple{"device before", &x.devBefore, &y.devBefore}})
    if (d.empty()) d = detail::firstDiff(what, *p, *q);
  if (d.empty() && x.maxGpuDur != y.maxGpuDur) d = "longest GPU activity differs";
  if (d.empty() && x.accelerator != y.accelerator) d = "accelerator lanes differ";
  if (!d.empty()) return "activity index: " + d;
  for (Attribution at : {Attribution::Torch, Attribution::Corrected})
    for (GroupBy g : {GroupBy::Name, GroupBy::InputShape}) {
      const auto &t = a.table(at, g), &u = b.table(at, g);
      if (!t || !u) return "a table is missing";
      d = compareTables(*t, *u);
      if (!d.empty()) return "table: " + d;
    }
  if (!a.explanation || !b.explanation) return "an explanation is missing";
  ExplainOutputOptions all;
  all.all = true;
  if (explainJson(*a.store, *a.explanation, all) != explainJson(*b.store, *b.explanation, all))
    return "explanation JSON differs";
  if (explainText(*a.store, *a.explanation, all) != explainText(*b.store, *b.explanation, all))
    return "explanation text differs";
  // Every field, those no output prints included (each record lists all of its fields).
  if (cache::explanationRecords(*a.explanation) != cache::explanationRecords(*b.explanation))
    return "explanation records differ";
  // The founding answer (the Steps view, explain's founding_answer), every field.
  if (cache::answerRecords(a.answer.get()) != cache::answerRecords(b.answer.get())) return "founding answer differs";
  if (a.engine.has_value() != b.engine.has_value() || a.record.has_value() != b.record.has_value())
    return "engine or record metadata differs";
  return {};
}

}  // namespace attnscope::testutil
