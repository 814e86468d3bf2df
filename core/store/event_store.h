// The one event store every view reads (table, timeline, explanation).
//
// Layout follows the craft notes: fixed-size records, int64 nanoseconds,
// interned names, and lanes (a CPU thread = pid+tid, a GPU stream =
// device+stream) whose events are contiguous and start-sorted inside one
// vector. Everything optional (shapes, bytes, grid, ...) lives in a side
// table so the hot record stays small.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/store/column.h"
#include "core/store/spill.h"

namespace attnscope {

using EventId = uint32_t;
inline constexpr EventId kNoEvent = std::numeric_limits<EventId>::max();
inline constexpr uint32_t kNoArgs = std::numeric_limits<uint32_t>::max();
inline constexpr int64_t kNoId = -1;  // absent correlation / external id

enum class Family : uint8_t {
  CpuOp,              // cat cpu_op: aten ops and other RecordFunction ops
  UserAnnotation,     // cat user_annotation: record_function scopes on the CPU
  GpuUserAnnotation,  // cat gpu_user_annotation: device-side span of a scope
  CudaRuntime,        // cat cuda_runtime: cudaLaunchKernel, cudaMemcpyAsync, ...
  CudaDriver,         // cat cuda_driver: cuLaunchKernel, ...
  Kernel,             // cat kernel
  GpuMemcpy,          // cat gpu_memcpy
  GpuMemset,          // cat gpu_memset
  CudaSync,           // cat cuda_sync: CUPTI synchronization records
  Overhead,           // cat overhead: the profiler's own work (Activity Buffer Request)
  PythonFunction,     // cat python_function (with_stack)
  CpuInstant,         // cat cpu_instant_event other than memory
  Memory,             // [memory] instant events: allocation (+) / free (-)
  Other,              // anything else with a duration (Trace spans, unknown cats)
  Count
};
inline constexpr int kFamilyCount = static_cast<int>(Family::Count);

std::string_view familyName(Family f);  // the trace's `cat` spelling
// GPU work in one word ("kernel", "memcpy", "memset"); "" for every other family.
std::string_view gpuWorkWord(Family f);
bool isGpuFamily(Family f);  // runs on a device timeline
bool isCpuFamily(Family f);  // runs on a host thread
// Kernels, copies and memsets: the GPU activities whose durations are work.
inline bool isGpuWork(Family f) { return f == Family::Kernel || f == Family::GpuMemcpy || f == Family::GpuMemset; }

enum class LaneKind : uint8_t { CpuThread, GpuStream, Other };

struct Lane {
  LaneKind kind = LaneKind::Other;
  int64_t pid = 0;    // process id (CPU) or device index (GPU)
  int64_t tid = 0;    // thread id (CPU) or stream id (GPU)
  std::string label;  // "python3 (1489) / thread 1489", "GPU 0 / stream 7"
  EventId begin = 0;  // events [begin, end) of the store belong to this lane
  EventId end = 0;
  uint16_t maxDepth = 0;  // deepest nesting on the lane (CPU lanes)
};

// One event, 56 bytes: what the builder collects and what the store hands out (by value: the store
// keeps each field in a column of its own, EventColumns).
struct Event {
  int64_t start = 0;            // ns, on the trace's clock (ts * 1000)
  int64_t dur = 0;              // ns, >= 0 (instants are 0)
  int64_t correlation = kNoId;  // CUPTI correlation id (runtime <-> GPU work)
  int64_t externalId = kNoId;   // "External id": op <-> runtime/GPU work
  uint32_t name = 0;            // interned
  uint32_t lane = 0;
  EventId parent = kNoEvent;  // enclosing event on the same CPU lane
  uint32_t args = kNoArgs;    // index into EventStore::args
  Family family = Family::Other;
  uint8_t pad = 0;
  uint16_t depth = 0;     // 0 = top level on its lane
  uint32_t reserved = 0;  // 0 (the builder uses it while it sorts)

  int64_t end() const { return start + dur; }
};
static_assert(sizeof(Event) == 56);

// Args that tables and explanations need. Strings are interned ids
// (0 = empty string).
struct EventArgs {
  uint32_t inputDims = 0;       // torch's str(input_shapes): "[[8, 16, 1024, 64], []]"
  uint32_t inputTypes = 0;      // JSON text of "Input type"
  uint32_t concreteInputs = 0;  // JSON text of "Concrete Inputs"
  int64_t bytes = 0;            // memcpy/memset bytes, memory event bytes (signed)
  int64_t totalAllocated = -1;  // memory events
  int64_t totalReserved = -1;
  int32_t device = -1;      // GPU device / memory event device id
  int32_t deviceType = -1;  // memory events: 0 CPU, 1 CUDA (c10::DeviceType)
  int32_t stream = -1;
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int64_t sequenceNumber = -1;
  int64_t fwdThreadId = -1;
  // Kernels (Kineto writes them from CUPTI's kernel record and the device's properties).
  int32_t registersPerThread = -1;
  int32_t sharedMemory = -1;  // bytes, static + dynamic
  float blocksPerSm = -1;     // "blocks per SM"
  float warpsPerSm = -1;      // "warps per SM"
  float occupancyPct = -1;    // "est. achieved occupancy %"
  // Memory events: the block's address (an allocation and its free share it).
  int64_t addr = 0;
  bool hasAddr = false;
  uint32_t comm = kNoArgs;  // index into EventStore::comms() (collectives' args), kNoArgs when none
};

// A collective's args, as torch's record_param_comms and Kineto write them on the op and on the NCCL
// kernel ("Collective name", "Process Group Name", "Seq", "Comms Id", ...). Strings are interned ids
// (0 = absent); numbers -1 when absent. A number given where text is expected keeps its JSON text.
struct CommArgs {
  uint32_t collectiveName = 0;
  uint32_t pgName = 0;
  uint32_t pgDesc = 0;
  uint32_t groupRanks = 0;  // "Process Group Ranks", as text
  uint32_t commsId = 0;     // "Comms Id": the same on every rank for one collective
  uint32_t dtype = 0;
  int64_t inNelems = -1, outNelems = -1;
  int64_t seq = -1;
  int64_t groupSize = -1;
};

enum class LinkKind : uint8_t { Ac2g, FwdBwd, Other };

struct Link {
  EventId from = kNoEvent;  // e.g. the cudaLaunchKernel
  EventId to = kNoEvent;    // e.g. the kernel
  int64_t id = 0;           // flow id
  LinkKind kind = LinkKind::Ac2g;
};

// The store's columns, one per field (name, type, the field of Event / EventArgs / Link it holds):
// the builder transposes its records into them, the columnar cache writes and maps them as they are.
#define ATTNSCOPE_EVENT_COLUMNS(X)     \
  X(start, int64_t, start)             \
  X(dur, int64_t, dur)                 \
  X(correlation, int64_t, correlation) \
  X(external_id, int64_t, externalId)  \
  X(name, uint32_t, name)              \
  X(lane, uint32_t, lane)              \
  X(parent, uint32_t, parent)          \
  X(args, uint32_t, args)              \
  X(family, Family, family)            \
  X(depth, uint16_t, depth)

#define ATTNSCOPE_ARGS_COLUMNS(X)                      \
  X(input_dims, uint32_t, inputDims)                   \
  X(input_types, uint32_t, inputTypes)                 \
  X(concrete_inputs, uint32_t, concreteInputs)         \
  X(bytes, int64_t, bytes)                             \
  X(total_allocated, int64_t, totalAllocated)          \
  X(total_reserved, int64_t, totalReserved)            \
  X(device, int32_t, device)                           \
  X(device_type, int32_t, deviceType)                  \
  X(stream, int32_t, stream)                           \
  X(grid_x, int32_t, grid[0])                          \
  X(grid_y, int32_t, grid[1])                          \
  X(grid_z, int32_t, grid[2])                          \
  X(block_x, int32_t, block[0])                        \
  X(block_y, int32_t, block[1])                        \
  X(block_z, int32_t, block[2])                        \
  X(sequence_number, int64_t, sequenceNumber)          \
  X(fwd_thread_id, int64_t, fwdThreadId)               \
  X(registers_per_thread, int32_t, registersPerThread) \
  X(shared_memory, int32_t, sharedMemory)              \
  X(blocks_per_sm, float, blocksPerSm)                 \
  X(warps_per_sm, float, warpsPerSm)                   \
  X(occupancy_pct, float, occupancyPct)                \
  X(addr, int64_t, addr)                               \
  X(has_addr, uint8_t, hasAddr)                        \
  X(comm, uint32_t, comm)

#define ATTNSCOPE_LINK_COLUMNS(X) \
  X(from, uint32_t, from)         \
  X(to, uint32_t, to)             \
  X(id, int64_t, id)              \
  X(kind, LinkKind, kind)

// The trace's "distributedInfo" (torch.distributed's rank, world size and process groups).
struct ProcessGroupConfig {
  std::string name;  // "pg_name": "0", "1", ...
  std::string desc;  // "pg_desc": "default_pg", ...
  std::string backendConfig;
  int64_t size = -1;  // "pg_size"
  std::vector<int64_t> ranks;
  bool operator==(const ProcessGroupConfig&) const = default;
};
struct DistributedInfo {
  bool present = false;  // the trace has a distributedInfo object
  std::string backend;
  int64_t rank = -1;
  int64_t worldSize = -1;
  int64_t pgCount = -1;
  bool hasPgConfig = false;
  std::vector<ProcessGroupConfig> pgConfig;
};

struct DeviceProperties {
  int id = 0;
  std::string name;
  int64_t totalGlobalMem = 0;
  int computeMajor = 0;
  int computeMinor = 0;
  int numSms = 0;
};

// Why an event was not loaded. Kept by kind with the first byte offset seen.
enum class BadKind : uint8_t {
  NotAnObject,
  MissingField,  // no ph / name / ts, or X without dur
  BadType,       // a field of the wrong JSON type
  BadNumber,     // NaN/Inf/overflowing time, negative duration
  StringTooLong,
  UnknownPhase,  // ph we do not model (counted, not an error)
  DanglingFlow,  // flow whose other end or event is missing
  TooManyEvents,
  TooDeep,  // a value nested deeper than the reader's limit
  Count
};
inline constexpr int kBadKindCount = static_cast<int>(BadKind::Count);
std::string_view badKindName(BadKind k);

struct BadCount {
  uint64_t count = 0;
  uint64_t firstOffset = 0;  // byte offset in the (decompressed) JSON text
  std::string firstDetail;
};

// Interned strings: ids are dense from 0 ("" is id 0); views stay valid for
// the table's life (the text lives in chunks that never move, each text
// followed by a NUL). Open
// addressing over the ids: one probe sequence of 4-byte slots per lookup.
class StringTable {
 public:
  StringTable();
  StringTable(StringTable&&) noexcept = default;
  StringTable& operator=(StringTable&&) noexcept = default;
  uint32_t intern(std::string_view s) { return intern(s, hash(s)); }
  // With the hash already known (hash(s), or another table's hashOf(id)).
  uint32_t intern(std::string_view s, uint64_t h);
  std::string_view view(uint32_t id) const { return views_[id]; }
  uint64_t hashOf(uint32_t id) const { return hashes_[id]; }
  size_t size() const { return views_.size(); }
  // Looks up without inserting; returns false when absent.
  bool find(std::string_view s, uint32_t* id) const;
  static uint64_t hash(std::string_view s) noexcept;

 private:
  size_t slotOf(std::string_view s, uint64_t h) const;  // s's slot, or the empty one to fill
  void grow();
  std::vector<std::string_view> views_;
  std::vector<uint64_t> hashes_;
  std::vector<uint32_t> slots_;  // 0 empty, else id + 1; size a power of two
  std::vector<std::unique_ptr<char[]>> chunks_;
  size_t chunkLeft_ = 0;
  char* chunkAt_ = nullptr;
};

struct EventColumns {
#define ATTNSCOPE_COLUMN_MEMBER(col, T, field) Col<T> col;
  ATTNSCOPE_EVENT_COLUMNS(ATTNSCOPE_COLUMN_MEMBER)
};
struct ArgsColumns {
  ATTNSCOPE_ARGS_COLUMNS(ATTNSCOPE_COLUMN_MEMBER)
};
struct LinkColumns {
  ATTNSCOPE_LINK_COLUMNS(ATTNSCOPE_COLUMN_MEMBER)
#undef ATTNSCOPE_COLUMN_MEMBER
};
// The id indexes: (key, event) sorted by key then event, as two columns each.
struct IdIndex {
  Col<int64_t> key;
  Col<EventId> event;
  size_t size() const { return key.size(); }
};

class EventStore;

// Records of the store by position, handed out by value (the store keeps columns, not records):
// `for (const Event& e : store.events())`, `store.laneEvents(lane)[k]`, std::lower_bound over it.
template <typename T, T (EventStore::*Get)(uint32_t) const>
class RecordRange {
 public:
  class iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using reference = T;
    using pointer = void;
    iterator() = default;
    iterator(const EventStore* s, uint32_t i) : s_(s), i_(i) {}
    T operator*() const { return (s_->*Get)(i_); }
    T operator[](difference_type k) const { return (s_->*Get)(static_cast<uint32_t>(i_ + k)); }
    uint32_t index() const { return i_; }
    iterator& operator++() { return ++i_, *this; }
    iterator operator++(int) { return iterator(s_, i_++); }
    iterator& operator--() { return --i_, *this; }
    iterator operator--(int) { return iterator(s_, i_--); }
    iterator& operator+=(difference_type k) { return i_ = static_cast<uint32_t>(i_ + k), *this; }
    iterator& operator-=(difference_type k) { return i_ = static_cast<uint32_t>(i_ - k), *this; }
    friend iterator operator+(iterator a, difference_type k) { return a += k; }
    friend iterator operator+(difference_type k, iterator a) { return a += k; }
    friend iterator operator-(iterator a, difference_type k) { return a -= k; }
    friend difference_type operator-(const iterator& a, const iterator& b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const iterator& a, const iterator& b) { return a.i_ == b.i_; }
    friend auto operator<=>(const iterator& a, const iterator& b) { return a.i_ <=> b.i_; }

   private:
    const EventStore* s_ = nullptr;
    uint32_t i_ = 0;
  };
  RecordRange(const EventStore* s, uint32_t begin, uint32_t end) : s_(s), begin_(begin), end_(end) {}
  size_t size() const { return end_ - begin_; }
  bool empty() const { return begin_ == end_; }
  T operator[](size_t k) const { return (s_->*Get)(static_cast<uint32_t>(begin_ + k)); }
  T front() const { return (*this)[0]; }
  T back() const { return (*this)[size() - 1]; }
  iterator begin() const { return iterator(s_, begin_); }
  iterator end() const { return iterator(s_, end_); }
  uint32_t firstId() const { return begin_; }  // the store id of element 0

 private:
  const EventStore* s_;
  uint32_t begin_, end_;
};

// The store. Built once by a reader (or the engine) through EventStoreBuilder,
// or mapped from the columnar cache (core/cache); then immutable: views share
// it read-only across threads.
class EventStore {
 public:
  Event event(EventId id) const {
    Event e;
#define ATTNSCOPE_GET_EVENT(col, T, field) e.field = ev_.col[id];
    ATTNSCOPE_EVENT_COLUMNS(ATTNSCOPE_GET_EVENT)
#undef ATTNSCOPE_GET_EVENT
    return e;
  }
  using Events = RecordRange<Event, &EventStore::event>;
  Events events() const { return Events(this, 0, static_cast<uint32_t>(size())); }
  size_t size() const { return ev_.start.size(); }  // events
  const EventColumns& columns() const { return ev_; }
  const std::vector<Lane>& lanes() const { return lanes_; }
  Events laneEvents(uint32_t lane) const {
    const Lane& l = lanes_[lane];
    return Events(this, l.begin, l.end);
  }
  // The args record `i` (an event's Event::args), assembled from its columns.
  EventArgs argsAt(uint32_t i) const {
    EventArgs a;
#define ATTNSCOPE_GET_ARGS(col, T, field) a.field = args_.col[i];
    ATTNSCOPE_ARGS_COLUMNS(ATTNSCOPE_GET_ARGS)
#undef ATTNSCOPE_GET_ARGS
    return a;
  }
  size_t argsCount() const { return args_.input_dims.size(); }
  std::optional<EventArgs> argsOf(const Event& e) const {
    if (e.args == kNoArgs) return std::nullopt;
    return argsAt(e.args);
  }
  const ArgsColumns& argsColumns() const { return args_; }
  // The collective's args an event carries, or nullptr.
  const CommArgs* commOf(const Event& e) const {
    if (e.args == kNoArgs) return nullptr;
    const uint32_t c = args_.comm[e.args];
    return c != kNoArgs ? &comms_[c] : nullptr;
  }
  const std::vector<CommArgs>& comms() const { return comms_; }
  Link link(uint32_t i) const {
    Link l;
#define ATTNSCOPE_GET_LINK(col, T, field) l.field = links_.col[i];
    ATTNSCOPE_LINK_COLUMNS(ATTNSCOPE_GET_LINK)
#undef ATTNSCOPE_GET_LINK
    return l;
  }
  using Links = RecordRange<Link, &EventStore::link>;
  Links links() const { return Links(this, 0, static_cast<uint32_t>(links_.from.size())); }
  const LinkColumns& linkColumns() const { return links_; }
  const StringTable& strings() const { return strings_; }
  std::string_view name(const Event& e) const { return strings_.view(e.name); }
  std::string_view str(uint32_t id) const { return strings_.view(id); }

  // GPU work / runtime calls by CUPTI correlation id, and everything
  // carrying an External id (ops, runtime calls, GPU work).
  std::span<const EventId> byCorrelation(int64_t correlation) const;
  std::span<const EventId> byExternalId(int64_t externalId) const;
  // The first CUDA runtime/driver call carrying `correlation` (the launch
  // its GPU work belongs to), and the first cpu_op (else user_annotation)
  // carrying External id `externalId`; kNoEvent when there is none. Built
  // once: a hostile trace may give one id to thousands of events.
  EventId callOfCorrelation(int64_t correlation) const;
  // The cpu_op (else user_annotation) carrying External id `externalId` (kNoEvent for ids <= 0).
  EventId opOfExternalId(int64_t externalId) const;
  // The four indexes, as the cache writes them.
  const IdIndex& correlationIndex() const { return byCorr_; }
  const IdIndex& externalIdIndex() const { return byExt_; }
  const IdIndex& callIndex() const { return callByCorr_; }
  const IdIndex& opIndex() const { return opByExt_; }
  const Col<int64_t>& laneMaxDur() const { return laneMaxDur_; }

  // Events of a lane overlapping [t0, t1): binary search on start plus the
  // lane's max duration bound; returns [first, last) ids.
  std::pair<EventId, EventId> visibleRange(uint32_t lane, int64_t t0, int64_t t1) const;

  uint64_t familyCount(Family f) const { return familyCounts_[static_cast<int>(f)]; }
  // Events of cat cuda_profiler_range: a counter-profiling trace (CUPTI's range profiler replays each
  // kernel to read its counters, and writes the ranges with times split evenly over the span).
  uint64_t profilerRangeEvents() const { return profilerRangeEvents_; }
  const BadCount& bad(BadKind k) const { return bad_[static_cast<int>(k)]; }
  // Events that could not be loaded (malformed). Unpaired flow ends and
  // unmodelled phases are counted too, but are not errors: Kineto writes a
  // flow start for sync calls that launch no GPU work.
  uint64_t badTotal() const;
  uint64_t noteTotal() const;
  static bool isError(BadKind k) { return k != BadKind::DanglingFlow && k != BadKind::UnknownPhase; }
  int64_t minTime() const { return minTime_; }
  int64_t maxTime() const { return maxTime_; }

  // Trace-level metadata.
  struct Meta {
    std::string sourcePath;
    int schemaVersion = 0;
    int64_t baseTimeNanoseconds = 0;
    std::string traceName;
    bool recordShapes = false;
    bool profileMemory = false;
    bool withStack = false;
    int cudaRuntimeVersion = 0;
    int cudaDriverVersion = 0;
    int cuptiVersion = 0;
    std::vector<DeviceProperties> devices;
    std::unordered_map<int64_t, std::string> processNames;  // pid -> name
    std::unordered_map<int64_t, std::string> threadNames;   // tid -> name
    std::string attnscopeJson;                              // raw text of an "attnscope" metadata object, if any
    std::string recordJson;  // raw text of an "attnscope_record" object (a script recorded by attnscope-cli record)
    DistributedInfo distributed;  // "distributedInfo"
    std::string partial;          // non-empty: the reader kept only the start of a cut file (what it said)
    std::string hostName;         // "hostname" (or "hostName", "host_name") where a trace writer puts it
  };
  const Meta& meta() const { return meta_; }
  // The reader, before it hands the store over: the file was cut and salvaged.
  void markPartial(std::string why) { meta_.partial = std::move(why); }

  // Everything the columnar cache (core/cache) reads back: the store made from its parts. The columns
  // must hold what a build made (sorted lanes, nesting, indexes); nothing is checked here.
  struct Parts {
    EventColumns events;
    ArgsColumns args;
    LinkColumns links;
    std::vector<Lane> lanes;
    Col<int64_t> laneMaxDur;
    std::vector<CommArgs> comms;
    StringTable strings;
    IdIndex byCorr, byExt, callByCorr, opByExt;
    uint64_t familyCounts[kFamilyCount] = {};
    uint64_t profilerRangeEvents = 0;
    BadCount bad[kBadKindCount];
    int64_t minTime = 0, maxTime = 0;
    Meta meta;
  };
  static EventStore fromParts(Parts&& p);

 private:
  friend class EventStoreBuilder;
  EventColumns ev_;
  std::vector<Lane> lanes_;
  ArgsColumns args_;
  std::vector<CommArgs> comms_;
  LinkColumns links_;
  StringTable strings_;
  Col<int64_t> laneMaxDur_;
  IdIndex byCorr_, byExt_;
  IdIndex callByCorr_;  // one per correlation
  IdIndex opByExt_;     // one per External id
  uint64_t familyCounts_[kFamilyCount] = {};
  uint64_t profilerRangeEvents_ = 0;
  BadCount bad_[kBadKindCount];
  int64_t minTime_ = 0;
  int64_t maxTime_ = 0;
  Meta meta_;
};

// Collects raw events in any order, then sorts them into lanes, computes
// nesting and indexes. Used by the JSON reader, the engine and tests.
class EventStoreBuilder {
 public:
  struct RawFlow {
    int64_t id = 0;
    int64_t ts = 0;
    int64_t pid = 0;
    int64_t tid = 0;
    bool start = false;
    bool bindEnclosing = false;  // "bp": "e"
    uint64_t offset = 0;         // byte offset in the JSON text
    LinkKind kind = LinkKind::Ac2g;
  };

  EventStoreBuilder();
  // Room for this many events and args records (a reader's estimate).
  void reserve(size_t events, size_t args);
  StringTable& strings() { return store_.strings_; }
  EventStore::Meta& meta() { return store_.meta_; }

  uint32_t lane(LaneKind kind, int64_t pid, int64_t tid);
  // Returns the index of the new args record.
  uint32_t addArgs(const EventArgs& a);
  // Returns the index of the new collective's args record (for EventArgs::comm).
  uint32_t addComm(const CommArgs& c);
  void addEvent(const Event& e);  // e.lane must come from lane()
  void addFlow(const RawFlow& f) { flows_.push_back(f); }
  void countProfilerRange() { ++store_.profilerRangeEvents_; }
  // `n` bad events of kind k; the first one (offset, detail) is kept if none was before.
  void countBad(BadKind k, uint64_t offset, std::string_view detail, uint64_t n = 1);
  size_t eventCount() const { return events_.size(); }

  EventStore build() &&;

  // Appends everything `other` collected (after this builder's own events),
  // as if its events had been added here in order: strings are re-interned,
  // lanes re-keyed (pid/tid through remapId, given the string id map), args
  // and bad counts merged. Meta is left alone. Returns other's string id ->
  // this builder's string id.
  using IdRemap = int64_t (*)(int64_t id, const std::vector<uint32_t>& stringMap);
  std::vector<uint32_t> merge(EventStoreBuilder&& other, IdRemap remapId);

 private:
  bool parallelBuild() const;
  // How many parts the build splits into (1, or up to the threads and the lanes).
  unsigned buildParts() const;
  void sortIntoLanes();
  void computeNesting();
  void bindFlows();
  void buildIndexes(bool correlation, bool external);
  void labelLanes();
  void transpose();  // the records into the store's columns

  struct LaneKey {
    LaneKind kind;
    int64_t pid;
    int64_t tid;
    bool operator==(const LaneKey&) const = default;
  };
  struct LaneKeyHash {
    size_t operator()(const LaneKey& k) const noexcept {
      // Unsigned: a trace's pid may be any 64-bit number (a signed product overflows).
      const uint64_t mixed = static_cast<uint64_t>(k.pid) * 1000003u + static_cast<uint64_t>(k.tid);
      return std::hash<uint64_t>()(mixed) ^ static_cast<size_t>(k.kind);
    }
  };
  static constexpr uint32_t kNoLane = std::numeric_limits<uint32_t>::max();

  EventStore store_;
  spill::Vector<Event> events_;
  spill::Vector<EventArgs> args_;
  spill::Vector<Link> links_;
  std::vector<int64_t> laneMaxDur_;
  spill::Vector<std::pair<int64_t, EventId>> byCorr_, byExt_, callByCorr_, opByExt_;
  std::unordered_map<LaneKey, uint32_t, LaneKeyHash> laneIndex_;
  LaneKey lastKey_{LaneKind::Other, 0, 0};
  uint32_t lastLane_ = kNoLane;
  spill::Vector<RawFlow> flows_;
};

}  // namespace attnscope
