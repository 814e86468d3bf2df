// The Parquet tables of parquet_export.h, written with Parquet C++ (the pyarrow wheel's), one row
// group of at most kRows rows at a time.
#include "core/cache/parquet_export.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/util/compression.h>
#include <parquet/arrow/writer.h>

#include <algorithm>
#include <filesystem>

#include "core/explain/diagnosis.h"
#include "core/tables/attribution.h"

namespace attnscope::cache {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kRows = int64_t{1} << 20;

// One Parquet file being written: its builders, flushed as a row group every kRows rows.
class Table {
 public:
  Table(std::string dir, std::string name, ::arrow::FieldVector fields)
      : name_(std::move(name)),
        final_(dir + "/" + name_ + ".parquet"),
        tmp_(final_ + ".tmp"),
        schema_(::arrow::schema(std::move(fields))) {}

  bool open(std::string* error) {
    for (const auto& f : schema_->fields()) {
      auto b = ::arrow::MakeBuilder(f->type());
      if (!b.ok()) return fail(b.status(), error);
      builders_.push_back(std::move(*b));
    }
    auto sink = ::arrow::io::FileOutputStream::Open(tmp_);
    if (!sink.ok()) return fail(sink.status(), error);
    sink_ = *sink;
    const auto codec = ::arrow::util::Codec::IsAvailable(::arrow::Compression::ZSTD) ? ::arrow::Compression::ZSTD
                       : ::arrow::util::Codec::IsAvailable(::arrow::Compression::SNAPPY)
                           ? ::arrow::Compression::SNAPPY
                           : ::arrow::Compression::UNCOMPRESSED;
    auto props = ::parquet::WriterProperties::Builder().compression(codec)->max_row_group_length(kRows)->build();
    auto arrowProps = ::parquet::ArrowWriterProperties::Builder().store_schema()->build();
    auto w = ::parquet::arrow::FileWriter::Open(*schema_, ::arrow::default_memory_pool(), sink_, props, arrowProps);
    if (!w.ok()) return fail(w.status(), error);
    writer_ = std::move(*w);
    return true;
  }
  template <typename B>
  B& col(int i) {
    return static_cast<B&>(*builders_[static_cast<size_t>(i)]);
  }
  // Appends to column i (a failure is kept and reported at the row's end).
  void putI64(int i, int64_t v) { note(col<::arrow::Int64Builder>(i).Append(v)); }
  void putI32(int i, int32_t v) { note(col<::arrow::Int32Builder>(i).Append(v)); }
  void putF64(int i, double v) { note(col<::arrow::DoubleBuilder>(i).Append(v)); }
  void putStr(int i, std::string_view v) { note(col<::arrow::StringBuilder>(i).Append(v)); }
  void putNull(int i) { note(builders_[static_cast<size_t>(i)]->AppendNull()); }
  // v, or a null when `present` is false.
  void i64(int i, int64_t v, bool present) { present ? putI64(i, v) : putNull(i); }
  void i32(int i, int32_t v, bool present) { present ? putI32(i, v) : putNull(i); }
  void str(int i, std::string_view v, bool present) { present ? putStr(i, v) : putNull(i); }

  bool endRow(std::string* error) {
    if (!status_.ok()) return fail(status_, error);
    return ++rows_ % kRows != 0 || flush(error);
  }
  bool close(std::string* error) {
    if (!flush(error)) return false;
    ::arrow::Status st = writer_->Close();
    if (st.ok()) st = sink_->Close();
    if (!st.ok()) return fail(st, error);
    std::error_code ec;
    fs::rename(tmp_, final_, ec);
    if (ec) {
      *error = final_ + ": cannot be written (" + ec.message() + ")";
      return false;
    }
    return true;
  }
  uint64_t rows() const { return rows_; }

 private:
  bool flush(std::string* error) {
    const int64_t n = builders_.empty() ? 0 : builders_.front()->length();
    if (n == 0) return true;
    ::arrow::ArrayVector arrays;
    for (auto& b : builders_) {
      std::shared_ptr<::arrow::Array> a;
      if (auto st = b->Finish(&a); !st.ok()) return fail(st, error);
      arrays.push_back(std::move(a));
    }
    if (auto st = writer_->WriteRecordBatch(*::arrow::RecordBatch::Make(schema_, n, arrays)); !st.ok())
      return fail(st, error);
    return true;
  }
  void note(const ::arrow::Status& st) {
    if (status_.ok() && !st.ok()) status_ = st;
  }
  bool fail(const ::arrow::Status& st, std::string* error) {
    if (error->empty()) *error = final_ + ": cannot be written (" + st.message() + ")";
    return false;
  }

  std::string name_, final_, tmp_;
  std::shared_ptr<::arrow::Schema> schema_;
  std::vector<std::unique_ptr<::arrow::ArrayBuilder>> builders_;
  std::shared_ptr<::arrow::io::FileOutputStream> sink_;
  std::unique_ptr<::parquet::arrow::FileWriter> writer_;
  uint64_t rows_ = 0;
  ::arrow::Status status_;
};

::arrow::FieldVector fields(std::initializer_list<std::pair<const char*, std::shared_ptr<::arrow::DataType>>> cols,
                            std::initializer_list<const char*> nullable = {}) {
  ::arrow::FieldVector out;
  for (const auto& col : cols) {
    // Not a structured binding: Clang before 16 cannot capture one in a lambda.
    const std::string_view name = col.first;
    const bool canBeNull = std::find_if(nullable.begin(), nullable.end(),
                                        [&](const char* n) { return std::string_view(n) == name; }) != nullable.end();
    out.push_back(::arrow::field(std::string(name), col.second, canBeNull));
  }
  return out;
}

std::string_view laneType(LaneKind k) {
  return k == LaneKind::CpuThread ? "thread" : k == LaneKind::GpuStream ? "gpu_stream" : "other";
}

// Which step each event belongs to: GPU work by the step that launched it (the explanation's
// launches), anything else by the host window it started in (the latest step starting at or before
// it whose window holds it).
class StepOf {
 public:
  StepOf(const EventStore& s, const Explanation& x) : steps_(x.steps), gpu_(s.size(), -1) {
    for (size_t k = 0; k < x.steps.size(); ++k)
      for (const Launch& l : x.steps[k].launches)
        if (l.gpu != kNoEvent && l.gpu < gpu_.size() && gpu_[l.gpu] < 0) gpu_[l.gpu] = static_cast<int32_t>(k);
    for (size_t k = 0; k < steps_.size(); ++k) order_.push_back(k);
    std::sort(order_.begin(), order_.end(),
              [&](size_t a, size_t b) { return steps_[a].hostStartNs < steps_[b].hostStartNs; });
  }
  int32_t of(EventId id, const Event& e) const {
    if (isGpuFamily(e.family)) return gpu_[id];
    auto it = std::upper_bound(order_.begin(), order_.end(), e.start,
                               [&](int64_t t, size_t k) { return t < steps_[k].hostStartNs; });
    // Overlapping windows: the latest starting one that still holds it.
    for (int back = 0; it != order_.begin() && back < 8; ++back) {
      --it;
      if (e.start < steps_[*it].hostEndNs) return static_cast<int32_t>(*it);
    }
    return -1;
  }

 private:
  const std::vector<StepReport>& steps_;
  spill::Vector<int32_t> gpu_;
  std::vector<size_t> order_;
};

// The diagnosis's cause at a moment: its rules' moments, merged into one sorted list.
class CauseAt {
 public:
  explicit CauseAt(const Diagnosis& d) {
    for (int c = 0; c < kCauseCount; ++c)
      for (const auto& [a, b] : d.moments[c]) spans_.push_back({a, b, static_cast<Cause>(c)});
    std::sort(spans_.begin(), spans_.end(), [](const Span& x, const Span& y) { return x.start < y.start; });
  }
  const char* at(int64_t t) const {
    auto it = std::upper_bound(spans_.begin(), spans_.end(), t, [](int64_t v, const Span& s) { return v < s.start; });
    if (it == spans_.begin()) return nullptr;
    --it;
    return t < it->end ? causeCode(it->cause).data() : nullptr;
  }

 private:
  struct Span {
    int64_t start, end;
    Cause cause;
  };
  std::vector<Span> spans_;
};

bool writeSlices(const TraceSnapshot& snap, const std::string& dir, std::string* error, uint64_t* rows) {
  const EventStore& s = *snap.store;
  Table t(
      dir, "slice",
      fields({{"id", ::arrow::int64()},
              {"ts", ::arrow::int64()},
              {"dur", ::arrow::int64()},
              {"track_id", ::arrow::int64()},
              {"category", ::arrow::utf8()},
              {"name", ::arrow::utf8()},
              {"depth", ::arrow::int32()},
              {"parent_id", ::arrow::int64()},
              {"arg_set_id", ::arrow::int64()},
              {"external_id", ::arrow::int64()},
              {"correlation", ::arrow::int64()},
              {"launch_id", ::arrow::int64()},
              {"op_id", ::arrow::int64()},
              {"op", ::arrow::utf8()},
              {"step", ::arrow::int32()},
              {"cause", ::arrow::utf8()}},
             {"parent_id", "arg_set_id", "external_id", "correlation", "launch_id", "op_id", "op", "step", "cause"}));
  if (!t.open(error)) return false;
  const StepOf stepOf(s, *snap.explanation);
  const CauseAt causeAt(snap.explanation->diagnosis);
  for (EventId id = 0; id < s.size(); ++id) {
    const Event e = s.event(id);
    const bool gpu = isGpuFamily(e.family);
    EventId launch = kNoEvent, op = kNoEvent;
    if (gpu) {
      const GpuOwner o = gpuOwner(s, id);
      launch = o.launch;
      op = o.op;
    } else {
      op = enclosingOp(s, id);
    }
    t.putI64(0, id);
    t.putI64(1, e.start);
    t.putI64(2, e.dur);
    t.putI64(3, e.lane);
    t.putStr(4, familyName(e.family));
    t.putStr(5, s.name(e));
    t.putI32(6, e.depth);
    t.i64(7, e.parent, e.parent != kNoEvent);
    t.i64(8, e.args, e.args != kNoArgs);
    t.i64(9, e.externalId, e.externalId != kNoId);
    t.i64(10, e.correlation, e.correlation != kNoId);
    t.i64(11, launch, launch != kNoEvent);
    t.i64(12, op, op != kNoEvent);
    t.str(13, op != kNoEvent ? s.name(s.event(op)) : std::string_view(), op != kNoEvent);
    const int32_t step = stepOf.of(id, e);
    t.i32(14, step, step >= 0);
    const char* cause = causeAt.at(e.start);
    t.str(15, cause ? cause : "", cause != nullptr);
    if (!t.endRow(error)) return false;
  }
  *rows = t.rows();
  return t.close(error);
}

bool writeTracks(const EventStore& s, const std::string& dir, std::string* error) {
  Table t(dir, "thread_track",
          fields({{"id", ::arrow::int64()},
                  {"name", ::arrow::utf8()},
                  {"type", ::arrow::utf8()},
                  {"pid", ::arrow::int64()},
                  {"tid", ::arrow::int64()}}));
  if (!t.open(error)) return false;
  for (size_t i = 0; i < s.lanes().size(); ++i) {
    const Lane& l = s.lanes()[i];
    t.putI64(0, static_cast<int64_t>(i));
    t.putStr(1, l.label);
    t.putStr(2, laneType(l.kind));
    t.putI64(3, l.pid);
    t.putI64(4, l.tid);
    if (!t.endRow(error)) return false;
  }
  return t.close(error);
}

bool writeFlows(const EventStore& s, const std::string& dir, std::string* error) {
  Table t(dir, "flow",
          fields({{"id", ::arrow::int64()},
                  {"slice_out", ::arrow::int64()},
                  {"slice_in", ::arrow::int64()},
                  {"flow_id", ::arrow::int64()},
                  {"kind", ::arrow::utf8()}}));
  if (!t.open(error)) return false;
  int64_t i = 0;
  for (const Link& l : s.links()) {
    t.putI64(0, i++);
    t.putI64(1, l.from);
    t.putI64(2, l.to);
    t.putI64(3, l.id);
    t.putStr(4, l.kind == LinkKind::Ac2g ? "ac2g" : l.kind == LinkKind::FwdBwd ? "fwdbwd" : "other");
    if (!t.endRow(error)) return false;
  }
  return t.close(error);
}

// Memory totals as counters: a track per (device, allocated|reserved).
bool writeCounters(const EventStore& s, const std::string& dir, std::string* error) {
  Table c(dir, "counter",
          fields({{"id", ::arrow::int64()},
                  {"ts", ::arrow::int64()},
                  {"track_id", ::arrow::int64()},
                  {"value", ::arrow::float64()},
                  {"slice_id", ::arrow::int64()}}));
  if (!c.open(error)) return false;
  std::vector<std::tuple<int32_t, int32_t, bool>> tracks;  // device type, device, reserved
  auto trackOf = [&](int32_t type, int32_t device, bool reserved) {
    const auto key = std::tuple{type, device, reserved};
    auto it = std::find(tracks.begin(), tracks.end(), key);
    if (it != tracks.end()) return static_cast<int64_t>(it - tracks.begin());
    tracks.push_back(key);
    return static_cast<int64_t>(tracks.size() - 1);
  };
  // In time order, as the counters' values follow one another.
  spill::Vector<EventId> mem;
  for (EventId id = 0; id < s.size(); ++id)
    if (s.columns().family[id] == Family::Memory && s.columns().args[id] != kNoArgs) mem.push_back(id);
  std::stable_sort(mem.begin(), mem.end(),
                   [&](EventId a, EventId b) { return s.columns().start[a] < s.columns().start[b]; });
  int64_t row = 0;
  for (EventId id : mem) {
    const EventArgs a = s.argsAt(s.columns().args[id]);
    for (const bool reserved : {false, true}) {
      const int64_t v = reserved ? a.totalReserved : a.totalAllocated;
      if (v < 0) continue;
      c.putI64(0, row++);
      c.putI64(1, s.columns().start[id]);
      c.putI64(2, trackOf(a.deviceType, a.device, reserved));
      c.putF64(3, static_cast<double>(v));
      c.putI64(4, id);
      if (!c.endRow(error)) return false;
    }
  }
  if (!c.close(error)) return false;
  Table t(dir, "counter_track",
          fields({{"id", ::arrow::int64()},
                  {"name", ::arrow::utf8()},
                  {"type", ::arrow::utf8()},
                  {"device_type", ::arrow::utf8()},
                  {"device", ::arrow::int64()},
                  {"unit", ::arrow::utf8()}}));
  if (!t.open(error)) return false;
  for (size_t i = 0; i < tracks.size(); ++i) {
    const auto [type, device, reserved] = tracks[i];
    const std::string where = type == 0 ? "CPU" : "GPU " + std::to_string(device);
    t.putI64(0, static_cast<int64_t>(i));
    t.putStr(1, where + (reserved ? " memory reserved" : " memory allocated"));
    t.putStr(2, reserved ? "memory_reserved" : "memory_allocated");
    t.putStr(3, type == 0 ? "cpu" : type == 1 ? "cuda" : "other");
    t.putI64(4, device);
    t.putStr(5, "bytes");
    if (!t.endRow(error)) return false;
  }
  return t.close(error);
}

// Perfetto's args: one row per (arg set, key) with the value in the column of its type; the keys are
// Kineto's, under "args.".
bool writeArgs(const EventStore& s, const std::string& dir, std::string* error) {
  Table t(dir, "args",
          fields({{"arg_set_id", ::arrow::int64()},
                  {"flat_key", ::arrow::utf8()},
                  {"key", ::arrow::utf8()},
                  {"int_value", ::arrow::int64()},
                  {"string_value", ::arrow::utf8()},
                  {"real_value", ::arrow::float64()},
                  {"value_type", ::arrow::utf8()}},
                 {"int_value", "string_value", "real_value"}));
  if (!t.open(error)) return false;
  int64_t set = 0;
  bool ok = true;
  auto row = [&](std::string_view key, const char* type) {
    const std::string k = "args." + std::string(key);
    t.putI64(0, set);
    t.putStr(1, k);
    t.putStr(2, k);
    t.putStr(6, type);
  };
  auto integer = [&](std::string_view key, int64_t v) {
    row(key, "int");
    t.putI64(3, v);
    t.putNull(4);
    t.putNull(5);
    ok = ok && t.endRow(error);
  };
  auto text = [&](std::string_view key, std::string_view v) {
    row(key, "string");
    t.putNull(3);
    t.putStr(4, v);
    t.putNull(5);
    ok = ok && t.endRow(error);
  };
  auto real = [&](std::string_view key, double v) {
    row(key, "real");
    t.putNull(3);
    t.putNull(4);
    t.putF64(5, v);
    ok = ok && t.endRow(error);
  };
  auto triple = [](const int32_t* v) {
    return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + "]";
  };
  for (; set < static_cast<int64_t>(s.argsCount()) && ok; ++set) {
    const EventArgs a = s.argsAt(static_cast<uint32_t>(set));
    if (a.inputDims) text("Input Dims", s.str(a.inputDims));
    if (a.inputTypes) text("Input type", s.str(a.inputTypes));
    if (a.concreteInputs) text("Concrete Inputs", s.str(a.concreteInputs));
    if (a.bytes != 0) integer("Bytes", a.bytes);
    if (a.totalAllocated >= 0) integer("Total Allocated", a.totalAllocated);
    if (a.totalReserved >= 0) integer("Total Reserved", a.totalReserved);
    if (a.device >= 0) integer("device", a.device);
    if (a.deviceType >= 0) integer("Device Type", a.deviceType);
    if (a.stream >= 0) integer("stream", a.stream);
    if (a.grid[0] || a.grid[1] || a.grid[2]) text("grid", triple(a.grid));
    if (a.block[0] || a.block[1] || a.block[2]) text("block", triple(a.block));
    if (a.sequenceNumber >= 0) integer("Sequence number", a.sequenceNumber);
    if (a.fwdThreadId >= 0) integer("Fwd thread id", a.fwdThreadId);
    if (a.registersPerThread >= 0) integer("registers per thread", a.registersPerThread);
    if (a.sharedMemory >= 0) integer("shared memory", a.sharedMemory);
    if (a.blocksPerSm >= 0) real("blocks per SM", a.blocksPerSm);
    if (a.warpsPerSm >= 0) real("warps per SM", a.warpsPerSm);
    if (a.occupancyPct >= 0) real("est. achieved occupancy %", a.occupancyPct);
    if (a.hasAddr) integer("Addr", a.addr);
    if (a.comm != kNoArgs && a.comm < s.comms().size()) {
      const CommArgs& c = s.comms()[a.comm];
      const std::pair<const char*, uint32_t> texts[] = {{"Collective name", c.collectiveName},
                                                        {"Process Group Name", c.pgName},
                                                        {"Process Group Description", c.pgDesc},
                                                        {"Process Group Ranks", c.groupRanks},
                                                        {"Comms Id", c.commsId},
                                                        {"dtype", c.dtype}};
      for (const auto& [k, v] : texts)
        if (v) text(k, s.str(v));
      const std::pair<const char*, int64_t> nums[] = {
          {"In msg nelems", c.inNelems}, {"Out msg nelems", c.outNelems}, {"Seq", c.seq}, {"Group size", c.groupSize}};
      for (const auto& [k, v] : nums)
        if (v >= 0) integer(k, v);
    }
  }
  return ok && t.close(error);
}

// The explanation's steps (what slice.step points at), and the diagnosis's steps with their time by
// cause (the diagnosis may cut the trace into other steps: optimizer steps, where the explanation
// has the annotations).
bool writeSteps(const TraceSnapshot& snap, const std::string& dir, std::string* error) {
  const Explanation& x = *snap.explanation;
  Table t(dir, "step",
          fields({{"id", ::arrow::int32()},
                  {"name", ::arrow::utf8()},
                  {"ts", ::arrow::int64()},
                  {"dur", ::arrow::int64()},
                  {"gpu_ns", ::arrow::int64()},
                  {"idle_ns", ::arrow::int64()},
                  {"source", ::arrow::utf8()}}));
  if (!t.open(error)) return false;
  for (size_t k = 0; k < x.steps.size(); ++k) {
    const StepReport& st = x.steps[k];
    t.putI32(0, static_cast<int32_t>(k));
    t.putStr(1, st.name);
    t.putI64(2, st.hostStartNs);
    t.putI64(3, st.hostNs());
    t.putI64(4, st.gpuAttributedNs);
    t.putI64(5, st.idleNs);
    t.putStr(6, x.stepSource);
    if (!t.endRow(error)) return false;
  }
  if (!t.close(error)) return false;
  Table c(dir, "step_cause",
          fields({{"step", ::arrow::int32()},
                  {"step_name", ::arrow::utf8()},
                  {"ts", ::arrow::int64()},
                  {"dur", ::arrow::int64()},
                  {"cause", ::arrow::utf8()},
                  {"label", ::arrow::utf8()},
                  {"cause_dur", ::arrow::int64()},
                  {"source", ::arrow::utf8()}}));
  if (!c.open(error)) return false;
  const Diagnosis& d = x.diagnosis;
  for (size_t k = 0; k < d.steps.size(); ++k) {
    const StepWaits& w = d.steps[k];
    for (int cause = 0; cause < kCauseCount; ++cause) {
      if (w.parts[cause] == 0) continue;
      c.putI32(0, static_cast<int32_t>(k));
      c.putStr(1, w.name);
      c.putI64(2, w.startNs);
      c.putI64(3, w.spanNs());
      c.putStr(4, causeCode(static_cast<Cause>(cause)));
      c.putStr(5, causeLabel(static_cast<Cause>(cause)));
      c.putI64(6, w.parts[cause]);
      c.putStr(7, d.stepSource);
      if (!c.endRow(error)) return false;
    }
  }
  return c.close(error);
}

}  // namespace

ExportOutcome exportParquet(const TraceSnapshot& snap, const std::string& dir) {
  ExportOutcome out;
  if (!snap.store || !snap.explanation) {
    out.error = "internal: the export needs a snapshot with its explanation";
    return out;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    out.error = dir + ": cannot create the folder (" + ec.message() + ")";
    return out;
  }
  const EventStore& s = *snap.store;
  out.ok = writeSlices(snap, dir, &out.error, &out.rows) && writeTracks(s, dir, &out.error) &&
           writeFlows(s, dir, &out.error) && writeCounters(s, dir, &out.error) && writeArgs(s, dir, &out.error) &&
           writeSteps(snap, dir, &out.error);
  return out;
}

}  // namespace attnscope::cache
