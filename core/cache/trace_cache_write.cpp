// Writing the columnar cache (trace_cache.h): every table into a fresh folder beside the old one, the
// manifest last, everything fsynced, then the folder swapped in.
#include <arrow/io/file.h>
#include <arrow/ipc/api.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <new>
#include <random>
#include <thread>

#include "core/cache/cache_arrow.h"
#include "core/cache/records.h"
#include "core/cache/trace_cache.h"
#include "core/store/spill.h"

namespace attnscope::cache {

namespace fs = std::filesystem;
using namespace detail;

namespace detail {

std::shared_ptr<::arrow::Array> wrapBlob(const std::string& bytes, std::vector<int64_t>* offsets) {
  *offsets = {0, static_cast<int64_t>(bytes.size())};
  auto off = std::make_shared<::arrow::Buffer>(reinterpret_cast<const uint8_t*>(offsets->data()), 16);
  auto data = std::make_shared<::arrow::Buffer>(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int64_t>(bytes.size()));
  return ::arrow::MakeArray(::arrow::ArrayData::Make(::arrow::large_binary(), 1, {nullptr, off, data}, 0));
}

}  // namespace detail

namespace {

std::string hex64(uint64_t v) {
  static const char* d = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = d[v & 15];
  return s;
}

// A file written through a descriptor of our own, each block of kBlockBytes hashed as it goes by (no
// reading back), fsynced on Close. `direct` (a large trace's cache): written with O_DIRECT from an
// aligned buffer of kDirectBytes, past the page cache, so the write is not held back by the dirty pages
// of the spilled arrays and leaves the page cache to them (a file system that refuses O_DIRECT gets a
// plain write).
class HashingFile : public ::arrow::io::OutputStream {
 public:
  HashingFile(const std::string& path, bool direct) {
    constexpr int kFlags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
    if (direct) {
      fd_ = ::open(path.c_str(), kFlags | O_DIRECT, 0644);
      if (fd_ >= 0) direct_ = true;
    }
    if (fd_ < 0) fd_ = ::open(path.c_str(), kFlags, 0644);
    if (fd_ < 0) {
      openErrno_ = errno;
      return;
    }
    // A large trace's cache is written 8 MiB at a time even where O_DIRECT is refused (the read-ahead
    // and the drops below go by the same steps).
    cap_ = direct ? kDirectBytes : kBlockBytes;
    void* p = nullptr;
    if (::posix_memalign(&p, kDirectAlign, cap_) != 0) throw std::bad_alloc();
    buf_.reset(static_cast<char*>(p));
  }
  ~HashingFile() override {
    if (fd_ >= 0) ::close(fd_);
  }
  bool opened() const { return fd_ >= 0; }
  int openErrno() const { return openErrno_; }
  ::arrow::Status Write(const void* data, int64_t n) override {
    const auto* p = static_cast<const char*>(data);
    const bool spilled = n >= kAheadMin && spill::isSpilled(p);
    const char* dropFrom = p;  // copied, not dropped yet, from here
    for (int64_t left = n; left > 0;) {
      const auto take = static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(cap_ - fill_)));
      // Each step (8 MiB for a large trace's cache) asks for the next 32 MiB: asked again, the pages
      // already read cost a look-up each; asked less often (only past half of what was asked, tried),
      // the 30 GB trace's cache took 61.7 s against 18.3-19.5 s.
      if (spilled) spill::readAhead(p, static_cast<size_t>(std::min(left, kAheadBytes)));
      std::memcpy(buf_.get() + fill_, p, take);
      fill_ += take;
      p += take;
      left -= static_cast<int64_t>(take);
      if (spilled && (p - dropFrom >= static_cast<std::ptrdiff_t>(kDirectBytes) || left == 0)) {
        spill::dropPages(dropFrom, static_cast<size_t>(p - dropFrom));  // read once: out of the resident set
        dropFrom = p;
      }
      hashBlocks(false);
      if (fill_ == cap_) ARROW_RETURN_NOT_OK(flush());
    }
    return ::arrow::Status::OK();
  }
  ::arrow::Status Close() override {
    if (fd_ < 0) return ::arrow::Status::OK();
    hashBlocks(true);
    if (fill_ > 0) ARROW_RETURN_NOT_OK(flush());
    const bool ok = ::fsync(fd_) == 0;
    ::close(fd_);
    fd_ = -1;
    return ok ? ::arrow::Status::OK() : ::arrow::Status::IOError(std::strerror(errno));
  }
  ::arrow::Result<int64_t> Tell() const override { return static_cast<int64_t>(written_ + fill_); }
  bool closed() const override { return fd_ < 0; }
  const std::string& hashes() const { return hashes_; }
  uint64_t size() const { return written_; }

 private:
  static constexpr size_t kDirectBytes = size_t{8} << 20;
  static_assert(kDirectBytes % kBlockBytes == 0, "a flush must end on a block: hashed_ restarts at 0");
  static constexpr size_t kDirectAlign = 4096;
  static constexpr int64_t kAheadMin = int64_t{1} << 20, kAheadBytes = int64_t{32} << 20;
  // The bytes come from a spilled array (a trace larger than the memory budget), whose pages the kernel
  // may have written out and dropped: its next kAheadBytes are asked for (spill::readAhead) while these
  // are copied, and the pages copied are dropped from the process 8 MiB at a time (the governor's 20 ms
  // would let a fast copy past the budget). Without it each page was read on its own fault: the 30 GB
  // trace's cache took 78.6-82.9 s.
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  // Hashes the buffer's whole blocks not hashed yet (and, at the end, the last part block).
  void hashBlocks(bool last) {
    while (fill_ - hashed_ >= kBlockBytes || (last && fill_ > hashed_)) {
      const size_t n = std::min(kBlockBytes, fill_ - hashed_);
      const uint64_t h = hashBytes(buf_.get() + hashed_, n, written_ + hashed_);
      hashes_.append(reinterpret_cast<const char*>(&h), 8);
      hashed_ += n;
    }
  }
  ::arrow::Status writeAll(const char* p, size_t n) {
    for (size_t done = 0; done < n;) {
      const ssize_t w = ::write(fd_, p + done, n - done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && errno == EINVAL && direct_) {
        // Opened with O_DIRECT but a write refused (an alignment this file system wants larger): plain
        // writes from here.
        ARROW_RETURN_NOT_OK(plain());
        continue;
      }
      if (w <= 0) return ::arrow::Status::IOError(std::strerror(errno));
      done += static_cast<size_t>(w);
    }
    return ::arrow::Status::OK();
  }
  ::arrow::Status plain() {
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) != 0)
      return ::arrow::Status::IOError(std::strerror(errno));
    direct_ = false;
    return ::arrow::Status::OK();
  }
  ::arrow::Status flush() {
    size_t aligned = fill_;
    if (direct_) aligned = fill_ / kDirectAlign * kDirectAlign;
    ARROW_RETURN_NOT_OK(writeAll(buf_.get(), aligned));
    if (aligned < fill_) {
      // The file's last part, shorter than a page: a plain write.
      if (direct_) ARROW_RETURN_NOT_OK(plain());
      ARROW_RETURN_NOT_OK(writeAll(buf_.get() + aligned, fill_ - aligned));
    }
    written_ += fill_;
    fill_ = 0;
    hashed_ = 0;
    return ::arrow::Status::OK();
  }
  int fd_ = -1;
  int openErrno_ = 0;
  bool direct_ = false;
  size_t cap_ = 0;
  std::unique_ptr<char, Free> buf_;
  size_t fill_ = 0;    // bytes in buf_
  size_t hashed_ = 0;  // of them, hashed
  uint64_t written_ = 0;
  std::string hashes_;
};

void fsyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

// Writes tables into `dir`; two threads may write at once (the results and the first error are kept under
// a lock; after an error nothing more is written).
struct Writer {
  std::string dir, generation, error;
  std::vector<std::string> files;
  std::vector<int64_t> sizes;
  std::vector<std::string> hashes;
  uint64_t bytes = 0;
  bool direct = false;  // HashingFile's
  std::mutex mu;

  bool failed() {
    std::lock_guard<std::mutex> lock(mu);
    return !error.empty();
  }
  void fail(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu);
    if (error.empty()) error = why;
  }
  std::string firstError() {
    std::lock_guard<std::mutex> lock(mu);
    return error;
  }
  bool write(TableOut& t) {
    if (failed()) return false;
    const std::string path = dir + "/" + t.name + ".arrow";
    t.meta.emplace_back(kVersionKey, kCacheVersion);
    t.meta.emplace_back(kGenerationKey, generation);
    t.meta.emplace_back(kTableKey, t.name);
    std::vector<std::string> keys, values;
    for (auto& [k, v] : t.meta) keys.push_back(k), values.push_back(v);
    const auto schema = ::arrow::schema(t.fields, ::arrow::key_value_metadata(keys, values));
    const int64_t rows = t.arrays.empty() ? 0 : t.arrays.front()->length();
    auto opts = ::arrow::ipc::IpcWriteOptions::Defaults();
    opts.allow_64bit = true;
    opts.use_threads = false;
    opts.alignment = 64;
    auto out = std::make_shared<HashingFile>(path, direct);
    ::arrow::Status st =
        out->opened() ? ::arrow::Status::OK() : ::arrow::Status::IOError(std::strerror(out->openErrno()));
    if (st.ok()) {
      auto w = ::arrow::ipc::MakeFileWriter(out, schema, opts);
      st = w.status();
      if (st.ok()) st = (*w)->WriteRecordBatch(*::arrow::RecordBatch::Make(schema, rows, t.arrays));
      if (st.ok()) st = (*w)->Close();
      if (st.ok()) st = out->Close();
    }
    std::lock_guard<std::mutex> lock(mu);
    if (!st.ok()) {
      if (error.empty()) error = path + ": cannot be written (" + st.message() + ")";
      return false;
    }
    files.push_back(t.name);
    sizes.push_back(static_cast<int64_t>(out->size()));
    hashes.push_back(out->hashes());
    bytes += out->size();
    return true;
  }
};

const char* tableName(Attribution a, GroupBy g) {
  if (a == Attribution::Torch) return g == GroupBy::Name ? "table_torch_name" : "table_torch_shape";
  return g == GroupBy::Name ? "table_corrected_name" : "table_corrected_shape";
}

void writeTables(Writer& w, const TraceSnapshot& snap) {
  for (Attribution a : {Attribution::Torch, Attribution::Corrected}) {
    for (GroupBy g : {GroupBy::Name, GroupBy::InputShape}) {
      const KeyAverages& t = *snap.table(a, g);
      const std::string records = tableRecords(t);
      std::vector<int64_t> off;
      TableOut rows(tableName(a, g));
      rows.fields.push_back(::arrow::field("records", ::arrow::large_binary(), false));
      rows.arrays.push_back(wrapBlob(records, &off));
      w.write(rows);
      size_t n = 0;
      for (const KeyAverageRow& r : t.rows) n += r.events.size();
      spill::Vector<EventId> all;
      all.reserve(n);
      for (const KeyAverageRow& r : t.rows) all.insert(all.end(), r.events.begin(), r.events.end());
      TableOut ev(std::string(tableName(a, g)) + "_events");
      ev.addColumn("event", all);
      w.write(ev);
    }
  }
}

void writeStore(Writer& w, const EventStore& s) {
  {
    TableOut t("events");
#define ATTNSCOPE_ADD(col, T, field) t.addColumn(#col, s.columns().col);
    ATTNSCOPE_EVENT_COLUMNS(ATTNSCOPE_ADD)
#undef ATTNSCOPE_ADD
    w.write(t);
  }
  {
    TableOut t("args");
#define ATTNSCOPE_ADD(col, T, field) t.addColumn(#col, s.argsColumns().col);
    ATTNSCOPE_ARGS_COLUMNS(ATTNSCOPE_ADD)
#undef ATTNSCOPE_ADD
    w.write(t);
  }
  {
    TableOut t("links");
#define ATTNSCOPE_ADD(col, T, field) t.addColumn(#col, s.linkColumns().col);
    ATTNSCOPE_LINK_COLUMNS(ATTNSCOPE_ADD)
#undef ATTNSCOPE_ADD
    w.write(t);
  }
  {
    // The strings as one large_utf8 column (id = row).
    const StringTable& st = s.strings();
    std::vector<int64_t> offsets(st.size() + 1, 0);
    for (uint32_t i = 0; i < st.size(); ++i) offsets[i + 1] = offsets[i] + static_cast<int64_t>(st.view(i).size());
    std::string text;
    text.reserve(static_cast<size_t>(offsets.back()));
    for (uint32_t i = 0; i < st.size(); ++i) text += st.view(i);
    auto off = std::make_shared<::arrow::Buffer>(reinterpret_cast<const uint8_t*>(offsets.data()),
                                                 static_cast<int64_t>(offsets.size() * 8));
    auto data = std::make_shared<::arrow::Buffer>(reinterpret_cast<const uint8_t*>(text.data()),
                                                  static_cast<int64_t>(text.size()));
    TableOut t("strings");
    t.fields.push_back(::arrow::field("text", ::arrow::large_utf8(), false));
    t.arrays.push_back(::arrow::MakeArray(
        ::arrow::ArrayData::Make(::arrow::large_utf8(), static_cast<int64_t>(st.size()), {nullptr, off, data}, 0)));
    w.write(t);
  }
  const std::pair<const char*, const IdIndex*> indexes[] = {{"index_correlation", &s.correlationIndex()},
                                                            {"index_external_id", &s.externalIdIndex()},
                                                            {"index_call", &s.callIndex()},
                                                            {"index_op", &s.opIndex()}};
  for (const auto& [name, x] : indexes) {
    TableOut t(name);
    t.addColumn("key", x->key);
    t.addColumn("event", x->event);
    w.write(t);
  }
  const std::string records = storeRecords(s);
  std::vector<int64_t> off;
  TableOut t("store");
  t.fields.push_back(::arrow::field("records", ::arrow::large_binary(), false));
  t.arrays.push_back(wrapBlob(records, &off));
  w.write(t);
}

void writeActivity(Writer& w, const ActivityIndex& x) {
  const ActivityIndex::Parts& p = x.parts();
  TableOut calls("activity_calls");
  calls.addColumn("event", p.calls);
  calls.addColumn("start", p.callStart);
  w.write(calls);
  TableOut gpu("activity_gpu");
  gpu.addColumn("event", p.gpu);
  gpu.addColumn("start", p.gpuStart);
  gpu.meta.emplace_back("max_gpu_dur_ns", std::to_string(p.maxGpuDur));
  w.write(gpu);
  TableOut busy("activity_busy");
  busy.addColumn("start", p.busyStart);
  busy.addColumn("end", p.busyEnd);
  busy.addColumn("before", p.busyBefore);
  w.write(busy);
  // Another accelerator's lanes (MTIA): every device activity by start and its union; empty without.
  TableOut device("activity_device");
  device.addColumn("event", p.device);
  device.meta.emplace_back("accelerator", p.accelerator ? "1" : "0");
  w.write(device);
  TableOut deviceBusy("activity_device_busy");
  deviceBusy.addColumn("start", p.devStart);
  deviceBusy.addColumn("end", p.devEnd);
  deviceBusy.addColumn("before", p.devBefore);
  w.write(deviceBusy);
}

}  // namespace

bool available() { return true; }

std::string cacheFolder(const std::string& trace) { return cacheDirFor(trace, "traces").dir + "/trace"; }

struct CacheWriter::State {
  std::string trace;
  TraceKey key;
  std::shared_ptr<const EventStore> store;
  CacheDir where;
  Writer w;
  std::string beginError;  // the folder could not be made
  std::thread storeThread;
  bool storeStarted = false;  // the store's columns are (being) written on storeThread
  bool finished = false;

  void writeStoreHere() {
    try {
      writeStore(w, *store);
    } catch (const std::exception& e) {
      w.fail(std::string("writing the cache: ") + e.what());
    } catch (...) {
      w.fail("writing the cache: an unknown error");
    }
  }
  void startStore() {
    try {
      storeThread = std::thread([this] { writeStoreHere(); });
      storeStarted = true;
    } catch (...) {
      // No thread: finish() writes the columns itself.
    }
  }
  void join() {
    if (storeThread.joinable()) storeThread.join();
  }
  // Unfinished: the writing stops after its current file, the folder goes.
  void abandon() {
    w.fail("abandoned");
    join();
    std::error_code ec;
    if (!w.dir.empty()) fs::remove_all(w.dir, ec);
  }
};

CacheWriter::CacheWriter(const std::string& trace, const TraceKey& key, std::shared_ptr<const EventStore> store,
                         CacheWriteMode mode)
    : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.trace = trace;
  s.key = key;
  s.store = std::move(store);
  s.where = cacheDirFor(trace, "traces");
  std::random_device rd;
  s.w.generation = hex64((uint64_t{rd()} << 32) ^ rd() ^ static_cast<uint64_t>(::getpid()));
  const std::string dir = s.where.dir + "/.trace-" + s.w.generation;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    s.beginError = dir + ": cannot create the cache folder (" + ec.message() + ")";
    return;
  }
  s.w.dir = dir;
  s.w.direct = mode.direct;
  if (mode.early && s.store) s.startStore();
}

CacheWriter::~CacheWriter() {
  if (s_->finished)
    s_->join();
  else
    s_->abandon();
}

WriteOutcome CacheWriter::finish(const TraceSnapshot& snap, const CacheExtras& extras) {
  State& s = *s_;
  Writer& w = s.w;
  WriteOutcome out;
  if (s.where.fallback) out.note = s.where.why + ": its cache is in " + s.where.dir;
  if (!s.beginError.empty()) {
    out.error = s.beginError;
    return out;
  }
  if (s.finished || !snap.store || snap.store.get() != s.store.get() || !snap.explanation || !snap.torchByInputShape ||
      !snap.correctedByInputShape) {
    out.error = "internal: the cache needs a complete snapshot of its store, once";
    return out;
  }
  // The store's columns on a second thread (started at construction, or now), the derived tables here:
  // each file is written as the page cache takes it, so two at once keep both cores busy where one waits.
  if (!s.storeStarted) s.startStore();
  try {
    writeActivity(w, snap.index);
    writeTables(w, snap);
    const std::string records = explanationRecords(*snap.explanation);
    std::vector<int64_t> off;
    TableOut t("explanation");
    t.fields.push_back(::arrow::field("records", ::arrow::large_binary(), false));
    t.arrays.push_back(wrapBlob(records, &off));
    w.write(t);
    const std::string answer = answerRecords(snap.answer.get());
    std::vector<int64_t> answerOff;
    TableOut a("answer");
    a.fields.push_back(::arrow::field("records", ::arrow::large_binary(), false));
    a.arrays.push_back(wrapBlob(answer, &answerOff));
    w.write(a);
  } catch (const std::exception& e) {
    w.fail(std::string("writing the cache: ") + e.what());
  }
  s.join();
  if (!s.storeStarted) s.writeStoreHere();  // no second thread: one after the other
  if (!w.failed()) {
    // The manifest: one row per file, the key in its metadata.
    std::vector<int64_t> nameOffsets{0};
    std::string names;
    for (const std::string& f : w.files) names += f, nameOffsets.push_back(static_cast<int64_t>(names.size()));
    TableOut m("manifest");
    auto off = std::make_shared<::arrow::Buffer>(reinterpret_cast<const uint8_t*>(nameOffsets.data()),
                                                 static_cast<int64_t>(nameOffsets.size() * 8));
    auto data = std::make_shared<::arrow::Buffer>(reinterpret_cast<const uint8_t*>(names.data()),
                                                  static_cast<int64_t>(names.size()));
    m.fields.push_back(::arrow::field("file", ::arrow::large_utf8(), false));
    m.arrays.push_back(::arrow::MakeArray(::arrow::ArrayData::Make(
        ::arrow::large_utf8(), static_cast<int64_t>(w.files.size()), {nullptr, off, data}, 0)));
    m.addColumn("bytes", w.sizes);
    std::vector<int64_t> hashOffsets{0};
    std::string hashes;
    for (const std::string& h : w.hashes) hashes += h, hashOffsets.push_back(static_cast<int64_t>(hashes.size()));
    auto hoff = std::make_shared<::arrow::Buffer>(reinterpret_cast<const uint8_t*>(hashOffsets.data()),
                                                  static_cast<int64_t>(hashOffsets.size() * 8));
    auto hdata = std::make_shared<::arrow::Buffer>(reinterpret_cast<const uint8_t*>(hashes.data()),
                                                   static_cast<int64_t>(hashes.size()));
    m.fields.push_back(::arrow::field("block_hashes", ::arrow::large_binary(), false));
    m.arrays.push_back(::arrow::MakeArray(::arrow::ArrayData::Make(
        ::arrow::large_binary(), static_cast<int64_t>(w.files.size()), {nullptr, hoff, hdata}, 0)));
    m.meta = {{"trace", s.trace},
              {"trace_size", std::to_string(s.key.size)},
              {"trace_mtime_ns", std::to_string(s.key.mtimeNs)},
              {"trace_content_hash", hex64(s.key.contentHash)},
              {"json_bytes", std::to_string(extras.jsonBytes)},
              {"reader_warning", extras.warning}};
    w.write(m);
  }
  if (w.failed()) {
    out.error = w.firstError();
    return out;  // the destructor removes the folder
  }
  s.finished = true;
  fsyncDir(w.dir);
  // Swap it in: the old folder aside, the new one in its place, the old one removed.
  const std::string final = s.where.dir + "/trace";
  const std::string old = s.where.dir + "/.trace-old-" + w.generation;
  std::error_code ec;
  const bool hadOld = fs::exists(final, ec);
  if (hadOld) fs::rename(final, old, ec);
  fs::rename(w.dir, final, ec);
  if (ec) {
    // Another process put its cache there first: keep theirs.
    fs::remove_all(w.dir, ec);
  }
  if (hadOld) fs::remove_all(old, ec);
  fsyncDir(s.where.dir);
  out.ok = true;
  out.dir = final;
  out.bytes = w.bytes;
  return out;
}

}  // namespace attnscope::cache
