#include "core/store/event_store.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>

#include "core/store/parallel_sort.h"
#include "core/store/span_log.h"
#include "core/store/spill.h"
#include "core/store/threads.h"

namespace attnscope {

uint64_t StringTable::hash(std::string_view s) noexcept {
  // 8 bytes a step (arg strings like "Input Dims" run long), then a final mix.
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full);
  auto mix = [](uint64_t x) {
    x ^= x >> 32;
    x *= 0xD6E8FEB86659FD93ull;
    x ^= x >> 32;
    return x;
  };
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0x9FB21C651E98DF25ull;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (h ^ w) * 0x9FB21C651E98DF25ull;
  }
  return mix(h);
}

StringTable::StringTable() {
  slots_.assign(1024, 0);
  views_.reserve(256);
  hashes_.reserve(256);
  intern("");
}

size_t StringTable::slotOf(std::string_view s, uint64_t h) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const uint32_t v = slots_[i];
    if (v == 0) return i;
    if (hashes_[v - 1] == h && views_[v - 1] == s) return i;
  }
}

void StringTable::grow() {
  slots_.assign(slots_.size() * 2, 0);
  const size_t mask = slots_.size() - 1;
  for (uint32_t id = 0; id < views_.size(); ++id) {
    size_t i = hashes_[id] & mask;
    while (slots_[i] != 0) i = (i + 1) & mask;
    slots_[i] = id + 1;
  }
}

uint32_t StringTable::intern(std::string_view s, uint64_t h) {
  size_t slot = slotOf(s, h);
  if (slots_[slot] != 0) return slots_[slot] - 1;
  if ((views_.size() + 1) * 2 > slots_.size()) {
    grow();
    slot = slotOf(s, h);
  }
  // Each text is followed by a NUL, as std::string's is (callers may pass
  // view().data() to C APIs).
  if (s.size() + 1 > chunkLeft_) {
    const size_t size = std::max<size_t>(s.size() + 1, 64 << 10);
    chunks_.push_back(std::unique_ptr<char[]>(new char[size]));
    chunkAt_ = chunks_.back().get();
    chunkLeft_ = size;
  }
  if (!s.empty()) std::memcpy(chunkAt_, s.data(), s.size());
  chunkAt_[s.size()] = '\0';
  const auto id = static_cast<uint32_t>(views_.size());
  views_.emplace_back(chunkAt_, s.size());
  hashes_.push_back(h);
  chunkAt_ += s.size() + 1;
  chunkLeft_ -= s.size() + 1;
  slots_[slot] = id + 1;
  return id;
}

bool StringTable::find(std::string_view s, uint32_t* id) const {
  const size_t slot = slotOf(s, hash(s));
  if (slots_[slot] == 0) return false;
  *id = slots_[slot] - 1;
  return true;
}

namespace {
// The ids of index `x` whose key is `key`.
std::span<const EventId> idsOf(const IdIndex& x, int64_t key) {
  auto [lo, hi] = std::equal_range(x.key.begin(), x.key.end(), key);
  if (lo == hi) return {};
  return {x.event.data() + (lo - x.key.begin()), static_cast<size_t>(hi - lo)};
}
EventId lookup(const IdIndex& x, int64_t key) {
  const int64_t* it = std::lower_bound(x.key.begin(), x.key.end(), key);
  return it != x.key.end() && *it == key ? x.event[static_cast<size_t>(it - x.key.begin())] : kNoEvent;
}
}  // namespace

std::span<const EventId> EventStore::byCorrelation(int64_t correlation) const { return idsOf(byCorr_, correlation); }
std::span<const EventId> EventStore::byExternalId(int64_t externalId) const { return idsOf(byExt_, externalId); }
EventId EventStore::callOfCorrelation(int64_t correlation) const { return lookup(callByCorr_, correlation); }
EventId EventStore::opOfExternalId(int64_t externalId) const {
  return externalId > 0 ? lookup(opByExt_, externalId) : kNoEvent;
}

std::pair<EventId, EventId> EventStore::visibleRange(uint32_t laneIdx, int64_t t0, int64_t t1) const {
  const Lane& l = lanes_[laneIdx];
  const int64_t* start = ev_.start.data();
  const int64_t* dur = ev_.dur.data();
  // Any event overlapping [t0, t1) starts at or after t0 - maxDur.
  const int64_t from = t0 - laneMaxDur_[laneIdx];
  const int64_t* first = std::lower_bound(start + l.begin, start + l.end, from);
  const int64_t* last = std::lower_bound(first, start + l.end, t1);
  // Skip leading events that end before t0; later ones may too (the caller
  // checks), the range is a superset bounded by the lane's longest event.
  while (first < last && *first + dur[first - start] < t0) ++first;
  return {static_cast<EventId>(first - start), static_cast<EventId>(last - start)};
}

EventStore EventStore::fromParts(Parts&& p) {
  EventStore s;
  s.ev_ = std::move(p.events);
  s.args_ = std::move(p.args);
  s.links_ = std::move(p.links);
  s.lanes_ = std::move(p.lanes);
  s.laneMaxDur_ = std::move(p.laneMaxDur);
  s.comms_ = std::move(p.comms);
  s.strings_ = std::move(p.strings);
  s.byCorr_ = std::move(p.byCorr);
  s.byExt_ = std::move(p.byExt);
  s.callByCorr_ = std::move(p.callByCorr);
  s.opByExt_ = std::move(p.opByExt);
  for (int k = 0; k < kFamilyCount; ++k) s.familyCounts_[k] = p.familyCounts[k];
  for (int k = 0; k < kBadKindCount; ++k) s.bad_[k] = std::move(p.bad[k]);
  s.profilerRangeEvents_ = p.profilerRangeEvents;
  s.minTime_ = p.minTime;
  s.maxTime_ = p.maxTime;
  s.meta_ = std::move(p.meta);
  return s;
}

uint64_t EventStore::badTotal() const {
  uint64_t n = 0;
  for (int k = 0; k < kBadKindCount; ++k)
    if (isError(static_cast<BadKind>(k))) n += bad_[k].count;
  return n;
}

uint64_t EventStore::noteTotal() const {
  uint64_t n = 0;
  for (int k = 0; k < kBadKindCount; ++k)
    if (!isError(static_cast<BadKind>(k))) n += bad_[k].count;
  return n;
}

// ---------------------------------------------------------------------------

EventStoreBuilder::EventStoreBuilder() = default;

void EventStoreBuilder::reserve(size_t events, size_t args) {
  events_.reserve(events);
  args_.reserve(args);
}

namespace {
// Room for `extra` more elements, growing geometrically (repeated merges
// must not reallocate each time).
template <typename V>
void growFor(V& v, size_t extra) {
  if (v.size() + extra > v.capacity()) v.reserve(std::max(v.size() + extra, v.capacity() * 2));
}
}  // namespace

uint32_t EventStoreBuilder::lane(LaneKind kind, int64_t pid, int64_t tid) {
  const LaneKey key{kind, pid, tid};
  if (lastLane_ != kNoLane && lastKey_ == key) return lastLane_;
  auto [it, inserted] = laneIndex_.try_emplace(key, static_cast<uint32_t>(store_.lanes_.size()));
  if (inserted) {
    Lane l;
    l.kind = kind;
    l.pid = pid;
    l.tid = tid;
    store_.lanes_.push_back(l);
  }
  lastKey_ = key;
  lastLane_ = it->second;
  return it->second;
}

uint32_t EventStoreBuilder::addComm(const CommArgs& c) {
  store_.comms_.push_back(c);
  return static_cast<uint32_t>(store_.comms_.size() - 1);
}

uint32_t EventStoreBuilder::addArgs(const EventArgs& a) {
  args_.push_back(a);
  return static_cast<uint32_t>(args_.size() - 1);
}

void EventStoreBuilder::addEvent(const Event& e) {
  events_.push_back(e);
  store_.familyCounts_[static_cast<int>(e.family)]++;
}

void EventStoreBuilder::countBad(BadKind k, uint64_t offset, std::string_view detail, uint64_t n) {
  BadCount& b = store_.bad_[static_cast<int>(k)];
  if (b.count == 0) {
    b.firstOffset = offset;
    b.firstDetail = std::string(detail.substr(0, 200));
  }
  b.count += n;
}

std::vector<uint32_t> EventStoreBuilder::merge(EventStoreBuilder&& o, IdRemap remapId) {
  const StringTable& os = o.store_.strings_;
  std::vector<uint32_t> sr(os.size());
  for (uint32_t i = 0; i < os.size(); ++i) sr[i] = store_.strings_.intern(os.view(i), os.hashOf(i));
  std::vector<uint32_t> lr(o.store_.lanes_.size());
  for (uint32_t i = 0; i < lr.size(); ++i) {
    const Lane& l = o.store_.lanes_[i];
    lr[i] = lane(l.kind, remapId(l.pid, sr), remapId(l.tid, sr));
  }
  const auto argBase = static_cast<uint32_t>(args_.size());
  const auto commBase = static_cast<uint32_t>(store_.comms_.size());
  for (CommArgs c : o.store_.comms_) {
    for (uint32_t* id : {&c.collectiveName, &c.pgName, &c.pgDesc, &c.groupRanks, &c.commsId, &c.dtype}) *id = sr[*id];
    store_.comms_.push_back(c);
  }
  growFor(args_, o.args_.size());
  for (EventArgs a : o.args_) {
    a.inputDims = sr[a.inputDims];
    a.inputTypes = sr[a.inputTypes];
    a.concreteInputs = sr[a.concreteInputs];
    if (a.comm != kNoArgs) a.comm += commBase;
    args_.push_back(a);
  }
  growFor(events_, o.events_.size());
  for (Event e : o.events_) {
    e.name = sr[e.name];
    e.lane = lr[e.lane];
    if (e.args != kNoArgs) e.args += argBase;
    events_.push_back(e);
  }
  for (int k = 0; k < kFamilyCount; ++k) store_.familyCounts_[k] += o.store_.familyCounts_[k];
  store_.profilerRangeEvents_ += o.store_.profilerRangeEvents_;
  growFor(flows_, o.flows_.size());
  for (RawFlow f : o.flows_) {
    f.pid = remapId(f.pid, sr);
    f.tid = remapId(f.tid, sr);
    flows_.push_back(f);
  }
  for (int k = 0; k < kBadKindCount; ++k) {
    BadCount& mine = store_.bad_[k];
    BadCount& theirs = o.store_.bad_[k];
    if (theirs.count == 0) continue;
    if (mine.count == 0) {
      mine.firstOffset = theirs.firstOffset;
      mine.firstDetail = std::move(theirs.firstDetail);
    }
    mine.count += theirs.count;
  }
  return sr;
}

namespace {

// Stores this large are built on several threads (the work splits by lanes, records and indexes).
constexpr size_t kParallelBuildEvents = 50'000;

}  // namespace

bool EventStoreBuilder::parallelBuild() const {
  return events_.size() >= parallelMinEvents(kParallelBuildEvents) && store_.lanes_.size() >= 2 && workerThreads() >= 2;
}

unsigned EventStoreBuilder::buildParts() const {
  if (!parallelBuild()) return 1;
  return static_cast<unsigned>(std::min<size_t>(workerThreads(), store_.lanes_.size()));
}

EventStore EventStoreBuilder::build() && {
  {
    const spans::Span sp("store: lanes sorted");
    sortIntoLanes();
  }
  {
    const spans::Span sp("store: nesting");
    computeNesting();
  }
  const spans::Span whole("store: flows, indexes, records");
  // Flows bind to the sorted lanes; the id indexes do not depend on them. With three threads or more,
  // the two indexes on threads of their own.
  const unsigned parts = buildParts();
  if (parts >= 3)
    runParts(3, [this](size_t i) {
      const spans::Span sp(i == 0   ? "store: flows bound"
                           : i == 1 ? "store: correlation index"
                                    : "store: External id index");
      if (i == 0)
        bindFlows();
      else
        buildIndexes(i == 1, i == 2);
    });
  else
    runBoth(
        parts >= 2,
        [this] {
          const spans::Span sp("store: flows bound");
          bindFlows();
        },
        [this] {
          const spans::Span sp("store: id indexes");
          buildIndexes(true, true);
        });
  {
    const spans::Span sp("store: lanes labelled");
    labelLanes();
  }
  const spans::Span sp("store: records transposed");
  transpose();
  return std::move(store_);
}

void EventStoreBuilder::sortIntoLanes() {
  auto& ev = events_;
  // Order lanes: CPU threads first (by pid, tid), then GPU streams, then other.
  std::vector<uint32_t> laneOrder(store_.lanes_.size());
  std::iota(laneOrder.begin(), laneOrder.end(), 0u);
  std::stable_sort(laneOrder.begin(), laneOrder.end(), [&](uint32_t a, uint32_t b) {
    const Lane& la = store_.lanes_[a];
    const Lane& lb = store_.lanes_[b];
    if (la.kind != lb.kind) return la.kind < lb.kind;
    if (la.pid != lb.pid) return la.pid < lb.pid;
    return la.tid < lb.tid;
  });
  std::vector<uint32_t> newIndex(laneOrder.size());
  std::vector<Lane> lanes(laneOrder.size());
  for (uint32_t i = 0; i < laneOrder.size(); ++i) {
    newIndex[laneOrder[i]] = i;
    lanes[i] = store_.lanes_[laneOrder[i]];
  }
  store_.lanes_ = std::move(lanes);
  laneIndex_.clear();
  for (uint32_t i = 0; i < store_.lanes_.size(); ++i) {
    const Lane& l = store_.lanes_[i];
    laneIndex_.emplace(LaneKey{l.kind, l.pid, l.tid}, i);
  }
  lastLane_ = kNoLane;

  // Sort by (lane, start, -end): parents before children at equal start.
  // Large stores: lanes split in groups of about equal size (as many as the
  // build's parts), each group sorted and scanned on its own thread.
  // Ties (the same start and length: a call and its callee, e.g. aten::item and
  // aten::_local_scalar_dense) keep the file's order, which writes the caller first:
  // `reserved` holds each event's place in the file until the sort is done.
  std::vector<size_t> counts(store_.lanes_.size(), 0);
  for (size_t k = 0; k < ev.size(); ++k) {
    Event& e = ev[k];
    e.lane = newIndex[e.lane];
    e.reserved = static_cast<uint32_t>(k);
    counts[e.lane]++;
  }
  const auto byLaneStart = [](const Event& a, const Event& b) {
    if (a.lane != b.lane) return a.lane < b.lane;
    if (a.start != b.start) return a.start < b.start;
    if (a.dur != b.dur) return a.dur > b.dur;
    return a.reserved < b.reserved;
  };
  laneMaxDur_.assign(store_.lanes_.size(), 0);
  // Sorts [from, to) (whole lanes) and sets its lanes' ranges and longest events; its time span.
  struct Span {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
  };
  // A group larger than its share (a lane holding much of the trace) is sorted over threads of its own, as
  // many as its share of the events (parallel_sort.h; the order is strict, so the result is std::sort's).
  // Not while spilling: the sort's merge takes a buffer of half the group on the heap.
  const size_t threads = spill::spilling() ? 1 : workerThreads();
  auto sortPart = [&](size_t from, size_t to, Span* span) {
    detail::sortInParts(
        ev.begin() + static_cast<std::ptrdiff_t>(from), ev.begin() + static_cast<std::ptrdiff_t>(to), byLaneStart,
        std::max<size_t>(parallelMinEvents(size_t{1} << 18), 1024),
        static_cast<unsigned>(std::max<size_t>(1, (to - from) * threads / std::max<size_t>(ev.size(), 1))));
    size_t i = from;
    while (i < to) {
      const uint32_t ln = ev[i].lane;
      size_t j = i;
      int64_t maxDur = 0;
      for (; j < to && ev[j].lane == ln; ++j) {
        Event& e = ev[j];
        e.reserved = 0;
        maxDur = std::max(maxDur, e.dur);
        span->lo = std::min(span->lo, e.start);
        span->hi = std::max(span->hi, e.end());
      }
      store_.lanes_[ln].begin = static_cast<EventId>(i);
      store_.lanes_[ln].end = static_cast<EventId>(j);
      laneMaxDur_[ln] = maxDur;
      i = j;
    }
  };
  for (auto& l : store_.lanes_) l.begin = l.end = 0;
  // The events of groups [g0, g1) (lanes bounds[g0] to bounds[g1]) are [from, to): split in two by
  // lane (a partition, in place), each half on its own thread, down to one group each, sorted.
  const std::vector<uint32_t> bounds = splitByCounts(counts, buildParts());
  std::vector<Span> spans(bounds.size() - 1);
  std::function<void(size_t, size_t, size_t, size_t)> sortGroups = [&](size_t from, size_t to, size_t g0, size_t g1) {
    if (g1 - g0 == 1) {
      sortPart(from, to, &spans[g0]);
      return;
    }
    const size_t gm = (g0 + g1) / 2;
    const uint32_t k = bounds[gm];
    const auto mid =
        std::partition(ev.begin() + static_cast<std::ptrdiff_t>(from), ev.begin() + static_cast<std::ptrdiff_t>(to),
                       [k](const Event& e) { return e.lane < k; });
    const auto m = static_cast<size_t>(mid - ev.begin());
    runBoth(
        true, [&] { sortGroups(from, m, g0, gm); }, [&] { sortGroups(m, to, gm, g1); });
  };
  sortGroups(0, ev.size(), 0, spans.size());
  if (!ev.empty()) {
    store_.minTime_ = INT64_MAX;
    store_.maxTime_ = INT64_MIN;
    for (const Span& sp : spans) {
      store_.minTime_ = std::min(store_.minTime_, sp.lo);
      store_.maxTime_ = std::max(store_.maxTime_, sp.hi);
    }
  }
}

void EventStoreBuilder::computeNesting() {
  // Per CPU lane, a stack of open intervals: an event is a child of the
  // innermost open event that fully contains it. Partial overlaps do not
  // nest (same rule as torch's _populate_cpu_children).
  auto& ev = events_;
  auto nest = [&](uint32_t fromLane, uint32_t toLane) {
    std::vector<EventId> stack;
    for (uint32_t li = fromLane; li < toLane; ++li) {
      Lane& lane = store_.lanes_[li];
      if (lane.kind != LaneKind::CpuThread) continue;
      stack.clear();
      uint16_t maxDepth = 0;
      for (EventId i = lane.begin; i < lane.end; ++i) {
        Event& e = ev[i];
        while (!stack.empty()) {
          const Event& p = ev[stack.back()];
          if (e.start >= p.end() && !(e.dur == 0 && e.start == p.start)) {
            stack.pop_back();
          } else if (e.end() > p.end()) {
            stack.pop_back();
          } else {
            break;
          }
        }
        e.parent = stack.empty() ? kNoEvent : stack.back();
        e.depth = static_cast<uint16_t>(std::min<size_t>(stack.size(), 0xFFFF));
        maxDepth = std::max(maxDepth, e.depth);
        if (e.dur > 0) stack.push_back(i);
      }
      lane.maxDepth = maxDepth;
    }
  };
  const auto lanes = static_cast<uint32_t>(store_.lanes_.size());
  const unsigned parts = buildParts();
  if (parts == 1) {
    nest(0, lanes);
    return;
  }
  std::vector<size_t> counts(lanes);
  for (uint32_t i = 0; i < lanes; ++i) counts[i] = store_.lanes_[i].end - store_.lanes_[i].begin;
  const std::vector<uint32_t> bounds = splitByCounts(counts, parts);
  runParts(bounds.size() - 1, [&](size_t g) { nest(bounds[g], bounds[g + 1]); });
}

void EventStoreBuilder::bindFlows() {
  // A flow end binds to the event on its lane that starts at its timestamp
  // (or, with "bp":"e", the innermost event enclosing it).
  auto& ev = events_;
  auto findOn = [&](uint32_t laneIdx, int64_t ts, bool enclosing) -> EventId {
    const Lane& l = store_.lanes_[laneIdx];
    const Event* b = ev.data() + l.begin;
    const Event* e = ev.data() + l.end;
    const Event* it = std::upper_bound(b, e, ts, [](int64_t t, const Event& x) { return t < x.start; });
    // Walk back over the events starting at or before ts: the latest one
    // starting exactly at ts is the innermost (the launch itself, not its op);
    // failing that, with "bp":"e", the innermost one enclosing ts.
    EventId best = kNoEvent;
    for (const Event* p = it; p != b;) {
      --p;
      if (p->start == ts && p->family != Family::Memory) {
        best = static_cast<EventId>(p - ev.data());
        break;
      }
      if (!enclosing) break;
      if (p->end() >= ts && p->dur > 0) {
        best = static_cast<EventId>(p - ev.data());
        break;
      }
      if (it - p > 64) break;
    }
    return best;
  };

  // Each flow end's event replaces its timestamp (nothing else needs it):
  // no map from ids, only the flows themselves sorted in place, so a trace
  // of millions of flows needs no memory beyond them.
  for (auto& f : flows_) {
    EventId target = kNoEvent;
    for (LaneKind k : {LaneKind::CpuThread, LaneKind::GpuStream}) {
      auto it = laneIndex_.find(LaneKey{k, f.pid, f.tid});
      if (it == laneIndex_.end()) continue;
      target = findOn(it->second, f.ts, f.bindEnclosing || !f.start);
      if (target != kNoEvent) break;
    }
    f.ts = target == kNoEvent ? -1 : static_cast<int64_t>(target);
  }
  // The ends of one flow side by side, in the file's order.
  std::sort(flows_.begin(), flows_.end(), [](const RawFlow& a, const RawFlow& b) {
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.id != b.id) return a.id < b.id;
    return a.offset < b.offset;
  });
  struct Half {
    EventId ev = kNoEvent;
    bool seen = false;
    uint64_t offset = 0;
  };
  uint64_t dangling = 0, firstDangling = UINT64_MAX;
  std::string firstDetail;
  for (size_t i = 0; i < flows_.size();) {
    const LinkKind kind = flows_[i].kind;
    const int64_t id = flows_[i].id;
    Half from, to;  // the last start and the last end of the id in the file
    for (; i < flows_.size() && flows_[i].kind == kind && flows_[i].id == id; ++i) {
      Half& h = flows_[i].start ? from : to;
      h = {flows_[i].ts < 0 ? kNoEvent : static_cast<EventId>(flows_[i].ts), true, flows_[i].offset};
    }
    if (from.ev != kNoEvent && to.ev != kNoEvent) {
      links_.push_back({from.ev, to.ev, id, kind});
      continue;
    }
    ++dangling;
    const uint64_t at = from.seen ? from.offset : to.offset;
    if (at < firstDangling) {
      firstDangling = at;
      firstDetail =
          "flow id " + std::to_string(id) + (from.seen && to.seen ? " has an end with no event" : " has only one end");
    }
  }
  spill::Vector<RawFlow>().swap(flows_);
  if (dangling) countBad(BadKind::DanglingFlow, firstDangling, firstDetail, dangling);
  std::sort(links_.begin(), links_.end(),
            [](const Link& a, const Link& b) { return a.from < b.from || (a.from == b.from && a.to < b.to); });
}

void EventStoreBuilder::buildIndexes(bool correlation, bool external) {
  // Each index touches only its own arrays, so the two may be built at once on two threads; one call
  // that builds both reads the events once.
  auto& ev = events_;
  size_t nc = 0, nx = 0;
  for (const Event& e : ev) {
    nc += correlation && e.correlation != kNoId;
    nx += external && e.externalId != kNoId;
  }
  if (correlation) byCorr_.reserve(nc);
  if (external) byExt_.reserve(nx);
  for (EventId i = 0; i < ev.size(); ++i) {
    if (correlation && ev[i].correlation != kNoId) byCorr_.emplace_back(ev[i].correlation, i);
    if (external && ev[i].externalId != kNoId) byExt_.emplace_back(ev[i].externalId, i);
  }
  // Per id, the first call / op in event order (the pairs are sorted by id, then event). No two pairs
  // are equal (an event is in a list once), so a sort over threads gives std::sort's list; on 4 threads
  // or more it runs over threads of its own (beside the flows and the other index, each a job of one
  // thread), not while spilling (its merge's buffer).
  const bool overThreads = workerThreads() >= 4 && !spill::spilling();
  const auto sortPairs = [overThreads](spill::Vector<std::pair<int64_t, EventId>>& v) {
    if (overThreads)
      parallelSort(v.begin(), v.end(), std::less<std::pair<int64_t, EventId>>());
    else
      std::sort(v.begin(), v.end());
  };
  if (correlation) {
    sortPairs(byCorr_);
    for (size_t i = 0; i < byCorr_.size();) {
      const int64_t id = byCorr_[i].first;
      EventId call = kNoEvent;
      for (; i < byCorr_.size() && byCorr_[i].first == id; ++i) {
        const Family f = ev[byCorr_[i].second].family;
        if (call == kNoEvent && (f == Family::CudaRuntime || f == Family::CudaDriver)) call = byCorr_[i].second;
      }
      if (call != kNoEvent) callByCorr_.emplace_back(id, call);
    }
  }
  if (external) {
    sortPairs(byExt_);
    for (size_t i = 0; i < byExt_.size();) {
      const int64_t id = byExt_[i].first;
      EventId op = kNoEvent, annotation = kNoEvent;
      for (; i < byExt_.size() && byExt_[i].first == id; ++i) {
        const Family f = ev[byExt_[i].second].family;
        if (op == kNoEvent && f == Family::CpuOp) op = byExt_[i].second;
        if (annotation == kNoEvent && f == Family::UserAnnotation) annotation = byExt_[i].second;
      }
      if (op != kNoEvent || annotation != kNoEvent) opByExt_.emplace_back(id, op != kNoEvent ? op : annotation);
    }
  }
}

namespace {

// The pairs as an index's two columns; the pairs' memory is given back.
IdIndex splitIndex(spill::Vector<std::pair<int64_t, EventId>>& pairs) {
  IdIndex x;
  int64_t* key = nullptr;
  EventId* event = nullptr;
  x.key = Col<int64_t>::uninitialized(pairs.size(), &key);
  x.event = Col<EventId>::uninitialized(pairs.size(), &event);
  for (size_t i = 0; i < pairs.size(); ++i) {
    key[i] = pairs[i].first;
    event[i] = pairs[i].second;
  }
  spill::Vector<std::pair<int64_t, EventId>>().swap(pairs);
  return x;
}

// Records [lo, hi) into one column per field, a block at a time from the end, the records' pages given
// back behind the copy when the buffer is large (a large store is never held twice).
template <typename Rec, typename Fill>
void transposeRange(spill::Vector<Rec>& recs, size_t lo, size_t hi, Fill fill) {
  constexpr size_t kBlock = size_t{1} << 16;
  static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const bool drop = recs.size() * sizeof(Rec) >= (size_t{64} << 20);
  size_t done = hi;
  while (done > lo) {
    const size_t from = done - lo > kBlock ? done - kBlock : lo;
    for (size_t i = from; i < done; ++i) fill(i, recs[i]);
    if (drop) {
      // The copied records' whole pages: never read again (the buffer is freed after).
      const auto pl = (reinterpret_cast<uintptr_t>(recs.data() + from) + page - 1) / page * page;
      const auto ph = reinterpret_cast<uintptr_t>(recs.data() + done) / page * page;
      // A spilled buffer's file gives its blocks back too, so the records and the columns never take the
      // disk twice.
      if (ph > pl) spill::discardPages(reinterpret_cast<void*>(pl), ph - pl);
    }
    done = from;
  }
}

// All the records, in `parts` ranges on as many threads (each range's pages dropped as it goes: a page
// across a boundary is kept until the buffer goes); the records' buffer freed.
template <typename Rec, typename Fill>
void transposeInto(spill::Vector<Rec>& recs, unsigned parts, Fill fill) {
  const size_t n = recs.size();
  if (parts >= 2 && n >= parallelMinEvents(kParallelBuildEvents))
    runParts(parts, [&](size_t p) { transposeRange(recs, n * p / parts, n * (p + 1) / parts, fill); });
  else
    transposeRange(recs, 0, n, fill);
  spill::Vector<Rec>().swap(recs);
}

}  // namespace

void EventStoreBuilder::transpose() {
  // Each table's columns written uninitialised (no pass of zeros first), the records in as many ranges
  // as the build has parts, each on its own thread, and the four id indexes two and two (each on its
  // own thread with four parts), spilled or not.
  const unsigned parts = buildParts();
#define ATTNSCOPE_DECL(col, T, field) \
  T* col##Out = nullptr;              \
  Col<T> col = Col<T>::uninitialized(n, &col##Out);
#define ATTNSCOPE_SET(col, T, field) col##Out[i] = static_cast<T>(r.field);
  {
    const size_t n = events_.size();
    ATTNSCOPE_EVENT_COLUMNS(ATTNSCOPE_DECL)
    transposeInto<Event>(events_, parts, [&](size_t i, const Event& r) { ATTNSCOPE_EVENT_COLUMNS(ATTNSCOPE_SET) });
#define ATTNSCOPE_MOVE(col, T, field) store_.ev_.col = std::move(col);
    ATTNSCOPE_EVENT_COLUMNS(ATTNSCOPE_MOVE)
#undef ATTNSCOPE_MOVE
  }
  {
    const size_t n = args_.size();
    ATTNSCOPE_ARGS_COLUMNS(ATTNSCOPE_DECL)
    transposeInto<EventArgs>(args_, parts, [&](size_t i, const EventArgs& r) { ATTNSCOPE_ARGS_COLUMNS(ATTNSCOPE_SET) });
#define ATTNSCOPE_MOVE(col, T, field) store_.args_.col = std::move(col);
    ATTNSCOPE_ARGS_COLUMNS(ATTNSCOPE_MOVE)
#undef ATTNSCOPE_MOVE
  }
  {
    const size_t n = links_.size();
    ATTNSCOPE_LINK_COLUMNS(ATTNSCOPE_DECL)
    transposeInto<Link>(links_, parts, [&](size_t i, const Link& r) { ATTNSCOPE_LINK_COLUMNS(ATTNSCOPE_SET) });
#define ATTNSCOPE_MOVE(col, T, field) store_.links_.col = std::move(col);
    ATTNSCOPE_LINK_COLUMNS(ATTNSCOPE_MOVE)
#undef ATTNSCOPE_MOVE
  }
#undef ATTNSCOPE_DECL
#undef ATTNSCOPE_SET
  store_.laneMaxDur_ = Col<int64_t>(spill::Vector<int64_t>(laneMaxDur_.begin(), laneMaxDur_.end()));
  const bool large = byCorr_.size() + byExt_.size() >= parallelMinEvents(kParallelBuildEvents);
  if (parts >= 4 && large) {
    runParts(4, [this](size_t i) {
      if (i == 0) store_.byCorr_ = splitIndex(byCorr_);
      if (i == 1) store_.callByCorr_ = splitIndex(callByCorr_);
      if (i == 2) store_.byExt_ = splitIndex(byExt_);
      if (i == 3) store_.opByExt_ = splitIndex(opByExt_);
    });
  } else {
    auto correlation = [this] {
      store_.byCorr_ = splitIndex(byCorr_);
      store_.callByCorr_ = splitIndex(callByCorr_);
    };
    auto external = [this] {
      store_.byExt_ = splitIndex(byExt_);
      store_.opByExt_ = splitIndex(opByExt_);
    };
    runBoth(parts >= 2 && large, correlation, external);
  }
}

void EventStoreBuilder::labelLanes() {
  const auto& meta = store_.meta_;
  for (auto& l : store_.lanes_) {
    if (l.kind == LaneKind::GpuStream) {
      // 2021-era Kineto wrote a stream's tid as a name ("stream 7"): the trace's own words, not the
      // synthetic id the reader gave it.
      const auto named = l.tid < 0 ? meta.threadNames.find(l.tid) : meta.threadNames.end();
      l.label = "GPU " + std::to_string(l.pid) + " / " +
                (named != meta.threadNames.end() && !named->second.empty() ? named->second
                                                                           : "stream " + std::to_string(l.tid));
    } else if (l.kind == LaneKind::CpuThread) {
      if (l.pid == -1) {
        l.label = "profiler overhead";
        continue;
      }
      std::string proc = "process " + std::to_string(l.pid);
      auto pit = meta.processNames.find(l.pid);
      if (pit != meta.processNames.end()) proc = pit->second + " (" + std::to_string(l.pid) + ")";
      std::string thr = "thread " + std::to_string(l.tid);
      if (auto it = meta.threadNames.find(l.tid); it != meta.threadNames.end() && !it->second.empty())
        thr = it->second.find(std::to_string(l.tid)) != std::string::npos
                  ? it->second
                  : it->second + " (" + std::to_string(l.tid) + ")";
      l.label = proc + " / " + thr;
    } else {
      auto name = [&](int64_t id) {
        auto it = meta.processNames.find(id);
        if (it == meta.processNames.end()) return std::to_string(id);
        return it->second.empty() ? std::string("(unnamed)") : it->second;
      };
      l.label = name(l.pid) + " / " + name(l.tid);
    }
  }
}

}  // namespace attnscope
