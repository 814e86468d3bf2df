#include "core/tables/key_averages.h"

#include "core/store/span_log.h"
#include "core/store/work_counters.h"
#include "core/tables/attribution.h"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace attnscope {

namespace {

// torch/autograd/profiler_util.py: _filter_name
bool filteredName(std::string_view n) {
  return n == "[memory]" || n == "[OutOfMemory]" || n == "profiler::_record_function_enter" ||
         n == "profiler::_record_function_enter_new" || n == "profiler::_record_function_exit" ||
         n == "aten::is_leaf" || n == "aten::output_nr" || n == "aten::_version";
}

// c10::DeviceType values that torch counts as CPU / device memory.
bool cpuMemDevice(int32_t t) { return t == 0 || t == 2 || t == 5; }              // CPU, MKLDNN, IDEEP
bool devMemDevice(int32_t t) { return t == 1 || t == 6 || t == 12 || t == 20; }  // CUDA, HIP, XPU, PU1

// One FunctionEvent of torch's post-processing. A large trace has one per event, for each attribution:
// 64 bytes, aligned (spill::Vector places it so), so a record is one cache line (the sort moves them
// all). Its memory bytes are kept apart (MemBytes), and only when the trace has memory records.
struct alignas(64) Fe {
  int64_t start = 0;
  int64_t end = 0;
  int64_t id = 0;      // correlation_id()
  int64_t linked = 0;  // linked_correlation_id()
  int64_t kernelNs = 0;
  EventId ev = kNoEvent;  // kNoEvent for synthesized [memory] rows
  uint32_t name = 0;      // interned, after _rewrite_name
  uint32_t thread = 0;    // lane index used for nesting
  uint32_t shapes = 0;
  uint32_t parent = UINT32_MAX;
  Family family = Family::CpuOp;
  // Whole bytes, not bit-fields: a bit-field's store reads its byte first, and the first read of a
  // fresh page maps the zero page, so each page of a new array would fault twice (the second time
  // with a TLB flush on every CPU the process runs on: 1.3 s against 0.7 s for torch's table of the
  // 1 GB trace on 2 threads, when tried).
  bool cpu = true;
  bool deleted = false;
  bool unlinked = false;  // corrected mode: GPU work nobody launched (its own row)
  bool userAnnotation() const { return family == Family::UserAnnotation || family == Family::GpuUserAnnotation; }
};
static_assert(sizeof(Fe) == 64);

// The memory an Fe's span covers (torch's cpu_memory_usage, device_memory_usage), beside it.
struct MemBytes {
  int64_t cpu = 0;
  int64_t dev = 0;
};

bool torchDeviceFamily(Family f) {
  return f == Family::Kernel || f == Family::GpuMemcpy || f == Family::GpuMemset || f == Family::GpuUserAnnotation ||
         f == Family::CudaSync;
}
bool torchCpuFamily(Family f) {
  return f == Family::CpuOp || f == Family::UserAnnotation || f == Family::CudaRuntime || f == Family::CudaDriver ||
         f == Family::Overhead;
}

// The thread torch's post-processing runs on, which is where Kineto puts
// events that have no linked op: the lane whose tid == pid, else the CPU
// lane with the most ops.
uint32_t mainLane(const EventStore& s) {
  uint32_t best = UINT32_MAX;
  uint64_t bestOps = 0;
  for (uint32_t i = 0; i < s.lanes().size(); ++i) {
    const Lane& l = s.lanes()[i];
    if (l.kind != LaneKind::CpuThread) continue;
    uint64_t ops = 0;
    for (const Event& e : s.laneEvents(i)) ops += e.family == Family::CpuOp;
    if (ops == 0) continue;
    if (l.pid == l.tid) return i;
    if (ops > bestOps) {
      bestOps = ops;
      best = i;
    }
  }
  return best;
}

// External id of the innermost cpu_op on `lane` containing time `t`.
// (Kineto hands the profiler's overhead records the correlation of the op
// running when they happened; that is how Activity Buffer Request ends up
// owning that op's kernels.)
int64_t enclosingOpExternalId(const EventStore& s, uint32_t lane, int64_t t) {
  if (lane == UINT32_MAX) return 0;
  auto evs = s.laneEvents(lane);
  auto it = std::upper_bound(evs.begin(), evs.end(), t, [](int64_t x, const Event& e) { return x < e.start; });
  if (it == evs.begin()) return 0;
  EventId cur = static_cast<EventId>((it - 1) - evs.begin()) + s.lanes()[lane].begin;
  // Walk previous siblings/ancestors: the innermost container of t.
  while (cur != kNoEvent) {
    const Event& e = s.event(cur);
    if (e.start <= t && t < e.end() && e.family == Family::CpuOp && e.externalId > 0) return e.externalId;
    if (e.start <= t && t < e.end()) {
      cur = e.parent;
      continue;
    }
    // Not containing: try its parent (which may contain t), else stop.
    cur = e.parent;
  }
  return 0;
}

// Corrected attribution: each GPU activity's duration goes to the op that
// launched it (attribution.h), else to the launching runtime call; a
// filtered op (torch drops some names) passes it to its nearest kept
// ancestor. Activities with neither become "[unlinked GPU work]".
void linkCorrected(const EventStore& store, const spill::Vector<uint32_t>& feOf, spill::Vector<Fe>& fes,
                   uint32_t unlinkedName) {
  for (Fe& g : fes) {
    if (g.cpu || !isGpuWork(g.family)) continue;
    const GpuOwner o = gpuOwner(store, g.ev);
    EventId t = o.op != kNoEvent ? o.op : o.launch;
    while (t != kNoEvent && feOf[t] == UINT32_MAX) t = store.event(t).parent;
    if (t == kNoEvent || !fes[feOf[t]].cpu) {
      g.unlinked = true;
      g.name = unlinkedName;
      continue;
    }
    fes[feOf[t]].kernelNs += g.end - g.start;
  }
}

// Link device work (and runtime calls) to the frontend events by id
// (torch's device_corr_map): every CPU Fe whose `id` some Fe carries as its
// `linked` id adds that Fe's duration to its kernel time (GPU work) or moves
// it to its thread (runtime calls). Torch walks the pairs; an id that
// thousands of events share (hostile traces do) makes that quadratic, so the
// GPU time per id and the last claiming thread per id are found once: the
// same sums, the same final threads. Kineto's External ids are dense small
// integers: a flat array per id; sparse ids are looked up in a sorted list.
void linkByExternalId(spill::Vector<Fe>& fes) {
  constexpr uint32_t kNone = UINT32_MAX;
  int64_t lo = INT64_MAX, hi = 0;
  size_t count = 0;
  for (const Fe& f : fes) {
    if (f.linked <= 0) continue;
    lo = std::min(lo, f.linked);
    hi = std::max(hi, f.linked);
    ++count;
  }
  if (count == 0) return;
  spill::Vector<int64_t> sparse;  // the linked ids, when they are too spread for a flat array
  const bool dense = static_cast<uint64_t>(hi - lo) <= 8 * count + 4096;
  if (!dense) {
    sparse.reserve(count);
    for (const Fe& f : fes)
      if (f.linked > 0) sparse.push_back(f.linked);
    std::sort(sparse.begin(), sparse.end());
    sparse.erase(std::unique(sparse.begin(), sparse.end()), sparse.end());
  }
  auto slot = [&](int64_t id) -> size_t {
    if (id < lo || id > hi) return SIZE_MAX;
    if (dense) return static_cast<size_t>(id - lo);
    auto it = std::lower_bound(sparse.begin(), sparse.end(), id);
    return it != sparse.end() && *it == id ? static_cast<size_t>(it - sparse.begin()) : SIZE_MAX;
  };
  const size_t slots = dense ? static_cast<size_t>(hi - lo + 1) : sparse.size();
  spill::Vector<int64_t> gpuNs(slots, 0);
  spill::Vector<uint32_t> thread(slots, kNone);
  for (const Fe& g : fes) {
    if (g.linked <= 0 || g.cpu) continue;
    const size_t k = slot(g.linked);  // every linked id has a slot; g++ 13 cannot see it
    if (k != SIZE_MAX) gpuNs[k] += g.end - g.start;
  }
  for (Fe& f : fes) {
    if (f.linked != 0 || !f.cpu) continue;
    const size_t k = slot(f.id);
    if (k == SIZE_MAX) continue;
    f.kernelNs += gpuNs[k];
    thread[k] = f.thread;
  }
  for (Fe& g : fes) {
    if (g.linked <= 0 || !g.cpu) continue;
    const size_t k = slot(g.linked);
    if (k != SIZE_MAX && thread[k] != kNone) g.thread = thread[k];
  }
}

// Torch's order: by start, longer first, else as added (a stable sort).
// The events arrive lane by lane, each lane already in that order: the
// sorted runs are merged pairwise on small keys, then the events moved once.
void sortLikeTorch(spill::Vector<Fe>& fes, spill::Vector<MemBytes>& mem) {
  struct Key {
    int64_t start, end;
    uint32_t index;
  };
  const auto before = [](const Key& a, const Key& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.index < b.index;
  };
  const size_t n = fes.size();
  spill::Vector<Key> keys(n), tmp(n);
  std::vector<size_t> runs{0};
  for (uint32_t i = 0; i < n; ++i) {
    keys[i] = {fes[i].start, fes[i].end, i};
    if (i > 0 && before(keys[i], keys[i - 1])) runs.push_back(i);
  }
  runs.push_back(n);
  while (runs.size() > 2) {
    std::vector<size_t> merged{0};
    for (size_t r = 0; r + 1 < runs.size(); r += 2) {
      const size_t a = runs[r], m = runs[r + 1], b = r + 2 < runs.size() ? runs[r + 2] : m;
      std::merge(keys.begin() + a, keys.begin() + m, keys.begin() + m, keys.begin() + b, tmp.begin() + a, before);
      merged.push_back(b);
    }
    keys.swap(tmp);
    runs.swap(merged);
  }
  spill::Vector<Key>().swap(tmp);
  if (!mem.empty()) {
    spill::Vector<MemBytes> sorted;
    sorted.reserve(n);
    for (size_t k = 0; k < n; ++k) sorted.push_back(mem[keys[k].index]);
    mem.swap(sorted);
  }
  if (spill::spilling()) {
    // Spilled (a trace larger than the memory budget): gathered into a new array, written front to back
    // and read in a few interleaved streams (one per lane), where following the permutation's cycles
    // would write pages all over a file-backed array.
    spill::Vector<Fe> sorted;
    sorted.reserve(n);
    for (size_t k = 0; k < n; ++k) sorted.push_back(fes[keys[k].index]);
    fes.swap(sorted);
    return;
  }
  // fes[k] = old fes[keys[k].index], in place (a copy of fes would be the
  // largest allocation of a huge trace's load): cycle by cycle. Each step's
  // load waits on the one before it, so the records a few steps further along
  // the cycle are fetched ahead (their places are in `from`, small enough to
  // stay in the cache), and the keys go first.
  spill::Vector<uint32_t> from(n);
  for (size_t k = 0; k < n; ++k) from[k] = keys[k].index;
  spill::Vector<Key>().swap(keys);
  constexpr uint32_t kPlaced = UINT32_MAX;
  constexpr int kAhead = 16;
  const auto fetch = [&](size_t i) {
    const char* p = reinterpret_cast<const char*>(&fes[i]);
    __builtin_prefetch(p);
    __builtin_prefetch(p + sizeof(Fe) - 1);
  };
  for (size_t k = 0; k < n; ++k) {
    if (from[k] == kPlaced) continue;
    if (from[k] == k) {
      from[k] = kPlaced;
      continue;
    }
    const Fe first = fes[k];
    // `ahead` runs up to kAhead places before `dst` along the cycle, and stops at its end (k).
    size_t ahead = k;
    for (int d = 0; d < kAhead && (ahead = from[ahead]) != k; ++d) fetch(ahead);
    size_t dst = k;
    while (true) {
      const size_t src = from[dst];
      from[dst] = kPlaced;
      if (src == k) {
        fes[dst] = first;
        break;
      }
      if (ahead != k && (ahead = from[ahead]) != k) fetch(ahead);
      fes[dst] = fes[src];
      dst = src;
    }
  }
}

std::string_view rewriteName(std::string_view n, std::string& scratch) {
  if (n.starts_with("ProfilerStep#")) {
    scratch = "ProfilerStep*";
    return scratch;
  }
  return n;
}

// Torch's FunctionEvents for one attribution, linked, nested, deduplicated,
// with their device totals: everything key_averages needs but the grouping,
// so both groupings can share it.
struct Prepared {
  bool corrected = false;
  StringTable names;  // local: rewritten names, stable ids for keys
  spill::Vector<Fe> fes;
  spill::Vector<MemBytes> memBytes;                 // beside fes; empty when the trace has no memory records
  spill::Vector<uint32_t> firstChild, nextSibling;  // children as linked lists
  spill::Vector<int64_t> devTotal;
};

constexpr uint32_t kNoFe = UINT32_MAX;

void prepare(const EventStore& store, Attribution attribution, Prepared& p) {
  const auto& events = store.events();
  // Local ids for names (after torch's renaming) and shapes, looked up once
  // per store string rather than hashed once per event.
  StringTable& names = p.names;
  constexpr uint32_t kUnseen = UINT32_MAX, kFiltered = UINT32_MAX - 1;
  spill::Vector<uint32_t> local(store.strings().size(), kUnseen);
  std::string scratch;
  auto localName = [&](uint32_t sid) {
    uint32_t& l = local[sid];
    if (l == kUnseen) {
      const std::string_view nm = store.str(sid);
      l = filteredName(nm) ? kFiltered : names.intern(rewriteName(nm, scratch));
    }
    return l;
  };
  uint32_t memorySid = 0, oomSid = 0;
  const bool hasMemoryName = store.strings().find("[memory]", &memorySid);
  const bool hasOomName = store.strings().find("[OutOfMemory]", &oomSid);

  // Memory records, sorted by time.
  struct Mem {
    int64_t ts;
    EventId ev;
    bool used;
  };
  spill::Vector<Mem> mem;
  for (EventId i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (e.family == Family::Memory && hasMemoryName && e.name == memorySid) mem.push_back({e.start, i, false});
  }
  std::stable_sort(mem.begin(), mem.end(), [](const Mem& a, const Mem& b) { return a.ts < b.ts; });

  const bool corrected = p.corrected = attribution == Attribution::Corrected;
  const uint32_t mainThread = mainLane(store);
  spill::Vector<uint32_t> feOf(events.size(), UINT32_MAX);  // store event -> Fe (before sorting)
  spill::Vector<Fe>& fes = p.fes;
  fes.reserve(events.size());
  spill::Vector<MemBytes>& memBytes = p.memBytes;
  const bool withMem = !mem.empty();
  if (withMem) memBytes.reserve(events.size());
  uint32_t memLane = UINT32_MAX;
  auto memFrom = mem.begin();
  for (EventId i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    const bool cpu = torchCpuFamily(e.family);
    const bool gpu = torchDeviceFamily(e.family);
    if (!cpu && !gpu) continue;
    const uint32_t name = localName(e.name);
    if (name == kFiltered) continue;
    Fe f;
    f.ev = i;
    f.name = name;
    f.thread = e.lane;
    f.start = e.start;
    f.end = e.end();
    f.family = e.family;
    f.cpu = cpu;
    if (e.family == Family::CpuOp || e.family == Family::UserAnnotation) {
      f.id = e.externalId > 0 ? e.externalId : 0;
      f.linked = 0;
    } else if (e.family == Family::GpuUserAnnotation) {
      f.id = 0;
      f.linked = 0;
    } else if (e.family == Family::Overhead) {
      f.id = corrected ? 0 : enclosingOpExternalId(store, mainThread, e.start);  // quarantined
      f.linked = 0;
    } else {
      f.id = e.correlation > 0 ? e.correlation : 0;
      f.linked = e.externalId > 0 ? e.externalId : 0;
    }
    if (corrected) f.linked = 0;  // linked below, by correlation and nesting
    if (!corrected && cpu && f.linked == 0 && e.family != Family::CpuOp && e.family != Family::UserAnnotation &&
        mainThread != UINT32_MAX)
      f.thread = mainThread;  // Kineto events with no parent op
    // The profiler's own work (Kineto files it under pid -1) happened on the
    // thread it interrupted: nested there, it is subtracted from the self CPU
    // time of the op it interrupted instead of being counted twice.
    if (corrected && e.family == Family::Overhead && mainThread != UINT32_MAX) f.thread = mainThread;
    if (e.family == Family::CpuOp) {
      const auto a = store.argsOf(e);
      if (a && a->inputDims) {
        f.shapes = localName(a->inputDims);  // a shape string is never filtered or renamed
      }
    }
    MemBytes m;
    if (cpu) {
      // A lane's events come in start order: the first memory record at or
      // after the start only moves forward along a lane.
      if (e.lane != memLane) {
        memLane = e.lane;
        memFrom = mem.begin();
      }
      while (memFrom != mem.end() && memFrom->ts < f.start) ++memFrom;
      for (auto it = memFrom; it != mem.end() && it->ts <= f.end; ++it) {
        const auto a = store.argsOf(events[it->ev]);
        if (a) {
          if (cpuMemDevice(a->deviceType))
            m.cpu += a->bytes;
          else if (devMemDevice(a->deviceType))
            m.dev += a->bytes;
        }
        it->used = true;
      }
    }
    feOf[i] = static_cast<uint32_t>(fes.size());
    fes.push_back(f);
    if (withMem) memBytes.push_back(m);
  }
  if (corrected) linkCorrected(store, feOf, fes, names.intern("[unlinked GPU work]"));
  spill::Vector<uint32_t>().swap(feOf);

  linkByExternalId(fes);

  // Memory records no CPU event covered become top-level "[memory]" rows.
  const uint32_t memName = names.intern("[memory]");
  for (const Mem& m : mem) {
    if (m.used) continue;
    const Event& e = events[m.ev];
    Fe f;
    f.name = memName;
    f.thread = e.lane;
    f.start = f.end = e.start;
    f.family = Family::Memory;
    MemBytes mb;
    const auto a = store.argsOf(e);
    if (a) {
      if (cpuMemDevice(a->deviceType))
        mb.cpu = a->bytes;
      else if (devMemDevice(a->deviceType))
        mb.dev = a->bytes;
    }
    fes.push_back(f);
    memBytes.push_back(mb);  // there are memory records, so memBytes runs beside fes
  }
  if (hasOomName) {
    const uint32_t oomName = names.intern("[OutOfMemory]");
    for (EventId i = 0; i < events.size(); ++i) {
      const Event& e = events[i];
      if (e.family == Family::Memory && e.name == oomSid) {
        Fe f;
        f.ev = i;
        f.name = oomName;
        f.thread = e.lane;
        f.start = f.end = e.start;
        f.family = Family::Memory;
        fes.push_back(f);
        if (withMem) memBytes.push_back({});
      }
    }
  }

  {
    const spans::Span sp("table: torch's order");
    sortLikeTorch(fes, memBytes);
  }

  // Nesting per thread (CPU events only), torch's _populate_cpu_children: one
  // pass in time order with a stack per thread. Children are kept as linked
  // lists (first child, next sibling) in the order they were found.
  const uint32_t n = static_cast<uint32_t>(fes.size());
  constexpr uint32_t kNone = kNoFe;
  spill::Vector<uint32_t>& firstChild = p.firstChild;
  spill::Vector<uint32_t>& nextSibling = p.nextSibling;
  firstChild.assign(n, kNone);
  nextSibling.assign(n, kNone);
  spill::Vector<uint32_t> lastChild(n, kNone), childCount(n, 0);
  {
    std::vector<std::vector<uint32_t>> stacks(store.lanes().size());
    for (uint32_t i = 0; i < n; ++i) {
      Fe& f = fes[i];
      if (!f.cpu && f.family != Family::Memory) continue;
      auto& stack = stacks[f.thread];
      while (!stack.empty()) {
        const uint32_t top = stack.back();
        const Fe& open = fes[top];
        if (f.start >= open.end || f.end > open.end) {
          stack.pop_back();
        } else {
          f.parent = top;
          if (lastChild[top] == kNone)
            firstChild[top] = i;
          else
            nextSibling[lastChild[top]] = i;
          lastChild[top] = i;
          childCount[top]++;
          break;
        }
      }
      stack.push_back(i);
    }
  }

  // torch's _remove_dup_nodes: a single child with its parent's name is merged.
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t i = 0; i < n; ++i) {
      Fe& f = fes[i];
      if (f.deleted || f.parent == UINT32_MAX) continue;
      const uint32_t pi = f.parent;
      Fe& up = fes[pi];
      if (up.name == f.name && childCount[pi] == 1) {
        firstChild[pi] = firstChild[i];
        lastChild[pi] = lastChild[i];
        childCount[pi] = childCount[i];
        up.kernelNs = corrected ? up.kernelNs + f.kernelNs : f.kernelNs;  // torch drops the parent's
        for (uint32_t c = firstChild[i]; c != kNone; c = nextSibling[c]) fes[c].parent = pi;
        f.deleted = true;
        changed = true;
      }
    }
  }

  // Totals bottom-up: children come after their parents in sorted order.
  spill::Vector<int64_t>& devTotal = p.devTotal;
  devTotal.assign(n, 0);
  for (uint32_t i = n; i-- > 0;) {
    const Fe& f = fes[i];
    if (f.deleted) continue;
    if (!f.cpu && f.family != Family::Memory) {
      devTotal[i] = f.end - f.start;
      continue;
    }
    int64_t sum = f.kernelNs;
    for (uint32_t c = firstChild[i]; c != kNone; c = nextSibling[c]) sum += devTotal[c];
    devTotal[i] = sum;
  }
}

KeyAverages aggregate(const Prepared& p, GroupBy groupBy, Attribution attribution) {
  KeyAverages out;
  out.attribution = attribution;
  out.groupBy = groupBy;
  const bool corrected = p.corrected;
  const spill::Vector<Fe>& fes = p.fes;
  const auto& firstChild = p.firstChild;
  const auto& nextSibling = p.nextSibling;
  const auto& devTotal = p.devTotal;
  const auto memOf = [&p](uint32_t i) { return p.memBytes.empty() ? MemBytes{} : p.memBytes[i]; };
  const StringTable& names = p.names;
  constexpr uint32_t kNone = kNoFe;
  const auto n = static_cast<uint32_t>(fes.size());

  struct Key {
    uint32_t name;
    uint32_t shapes;
    bool cpu;
    bool ua;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const noexcept {
      return (static_cast<size_t>(k.name) * 1000003u) ^ (static_cast<size_t>(k.shapes) << 20) ^ (k.cpu ? 1u : 0u) ^
             (k.ua ? 2u : 0u);
    }
  };
  std::unordered_map<Key, uint32_t, KeyHash> rowOf;
  const bool byShape = groupBy == GroupBy::InputShape;
  for (uint32_t i = 0; i < n; ++i) {
    const Fe& f = fes[i];
    if (f.deleted) continue;
    const bool cpuDevice = f.cpu || f.family == Family::Memory;
    Key k{f.name, byShape ? f.shapes : 0u, cpuDevice, f.userAnnotation()};
    auto [it, inserted] = rowOf.try_emplace(k, static_cast<uint32_t>(out.rows.size()));
    if (inserted) {
      KeyAverageRow r;
      r.name = std::string(names.view(f.name));
      r.deviceType = cpuDevice ? DeviceType::Cpu : DeviceType::Cuda;
      r.userAnnotation = f.userAnnotation();
      r.family = f.family;
      if (byShape) r.inputShapes = std::string(f.shapes ? names.view(f.shapes) : kNoInputShapes);
      out.rows.push_back(std::move(r));
    }
    KeyAverageRow& r = out.rows[it->second];
    r.calls++;
    if (f.ev != kNoEvent) r.events.push_back(f.ev);
    if (cpuDevice) {
      const int64_t dur = f.end - f.start;
      int64_t childCpu = 0, childDev = 0, childCpuMem = 0, childDevMem = 0;
      for (uint32_t c = firstChild[i]; c != kNone; c = nextSibling[c]) {
        const Fe& ch = fes[c];
        childCpu += ch.end - ch.start;
        childDev += devTotal[c];
        const MemBytes cm = memOf(c);
        childCpuMem += cm.cpu;
        childDevMem += cm.dev;
      }
      r.cpuTotalNs += dur;
      r.selfCpuNs += dur - childCpu;
      r.deviceTotalNs += devTotal[i];
      r.selfDeviceNs += devTotal[i] - childDev;
      const MemBytes fm = memOf(i);
      r.cpuMemBytes += fm.cpu;
      r.deviceMemBytes += fm.dev;
      r.selfCpuMemBytes += fm.cpu - childCpuMem;
      r.selfDeviceMemBytes += fm.dev - childDevMem;
    } else {
      r.deviceTotalNs += devTotal[i];
      // Corrected: a GPU activity is self time of the op that launched it,
      // a gpu_user_annotation is a span; only unlinked work is its own.
      if (!corrected || f.unlinked) r.selfDeviceNs += devTotal[i];
    }
  }

  for (const auto& r : out.rows) {
    out.sumSelfCpuNs += r.selfCpuNs;
    if (corrected || (r.deviceType == DeviceType::Cuda && !r.userAnnotation)) out.sumSelfDeviceNs += r.selfDeviceNs;
  }
  workCounters().keyAverageTables++;
  return out;
}

}  // namespace

KeyAverages computeKeyAverages(const EventStore& store, GroupBy groupBy, Attribution attribution) {
  Prepared p;
  prepare(store, attribution, p);
  return aggregate(p, groupBy, attribution);
}

KeyAveragesBothGroupings computeKeyAveragesBothGroupings(const EventStore& store, Attribution attribution) {
  Prepared p;
  prepare(store, attribution, p);
  return {aggregate(p, GroupBy::Name, attribution), aggregate(p, GroupBy::InputShape, attribution)};
}

std::vector<OverheadOwnership> torchOverheadOwnership(const EventStore& store) {
  std::vector<OverheadOwnership> out;
  const uint32_t mainThread = mainLane(store);
  // Torch gives every overhead event inside the op the op's GPU time; each
  // GPU activity is listed once, with the first of them (so thousands of
  // overhead events sharing an id cost one pass, not one each).
  std::unordered_set<int64_t> listed;
  for (EventId i = 0; i < store.events().size(); ++i) {
    const Event& e = store.event(i);
    if (e.family != Family::Overhead) continue;
    const int64_t ext = enclosingOpExternalId(store, mainThread, e.start);
    if (ext <= 0 || !listed.insert(ext).second) continue;
    OverheadOwnership o;
    o.overhead = i;
    o.op = store.opOfExternalId(ext);
    for (EventId id : store.byExternalId(ext))
      if (isGpuWork(store.event(id).family)) o.gpu.push_back(id);
    if (!o.gpu.empty()) out.push_back(std::move(o));
  }
  return out;
}

}  // namespace attnscope
