// Writing the columnar cache (trace_cache.h): every table into a fresh folder beside the old one, the
// manifest last, everything fsynced, then the folder swapped in.
#include <arrow/io/file.h>
#include <arrow/ipc/api.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "core/cache/cache_arrow.h"
#include "core/cache/records.h"
#include "core/cache/trace_cache.h"

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

// A file's hash per block of kBlockBytes (read back from the page cache right after the write), and
// the file made durable.
bool blockHashes(const std::string& path, uint64_t* size, std::string* hashes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const off_t end = ::lseek(fd, 0, SEEK_END);
  bool ok = end >= 0;
  std::vector<char> buf(kBlockBytes);
  hashes->clear();
  for (off_t at = 0; ok && at < end; at += static_cast<off_t>(kBlockBytes)) {
    const auto n = static_cast<size_t>(std::min<off_t>(static_cast<off_t>(kBlockBytes), end - at));
    ok = ::pread(fd, buf.data(), n, at) == static_cast<ssize_t>(n);
    const uint64_t h = hashBytes(buf.data(), n, static_cast<uint64_t>(at));
    hashes->append(reinterpret_cast<const char*>(&h), 8);
  }
  ok = ok && ::fsync(fd) == 0;
  ::close(fd);
  *size = static_cast<uint64_t>(end);
  return ok;
}

void fsyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

struct Writer {
  std::string dir, generation, error;
  std::vector<std::string> files;
  std::vector<int64_t> sizes;
  std::vector<std::string> hashes;
  uint64_t bytes = 0;

  bool write(TableOut& t) {
    if (!error.empty()) return false;
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
    auto out = ::arrow::io::FileOutputStream::Open(path);
    ::arrow::Status st = out.status();
    if (st.ok()) {
      auto w = ::arrow::ipc::MakeFileWriter(*out, schema, opts);
      st = w.status();
      if (st.ok()) st = (*w)->WriteRecordBatch(*::arrow::RecordBatch::Make(schema, rows, t.arrays));
      if (st.ok()) st = (*w)->Close();
      if (st.ok()) st = (*out)->Close();
    }
    uint64_t size = 0;
    std::string hash;
    if (!st.ok() || !blockHashes(path, &size, &hash)) {
      error = path + ": cannot be written (" + (st.ok() ? std::string(std::strerror(errno)) : st.message()) + ")";
      return false;
    }
    files.push_back(t.name);
    sizes.push_back(static_cast<int64_t>(size));
    hashes.push_back(std::move(hash));
    bytes += size;
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
}

}  // namespace

bool available() { return true; }

std::string cacheFolder(const std::string& trace) { return cacheDirFor(trace, "traces").dir + "/trace"; }

WriteOutcome writeCache(const std::string& trace, const TraceKey& key, const TraceSnapshot& snap,
                        const CacheExtras& extras) {
  WriteOutcome out;
  if (!snap.store || !snap.explanation || !snap.torchByInputShape || !snap.correctedByInputShape) {
    out.error = "internal: the cache needs a complete snapshot";
    return out;
  }
  const CacheDir where = cacheDirFor(trace, "traces");
  if (where.fallback) out.note = where.why + ": its cache is in " + where.dir;
  std::random_device rd;
  Writer w;
  w.generation = hex64((uint64_t{rd()} << 32) ^ rd() ^ static_cast<uint64_t>(::getpid()));
  const std::string final = where.dir + "/trace";
  w.dir = where.dir + "/.trace-" + w.generation;
  std::error_code ec;
  fs::create_directories(w.dir, ec);
  if (ec) {
    out.error = w.dir + ": cannot create the cache folder (" + ec.message() + ")";
    return out;
  }
  writeStore(w, *snap.store);
  writeActivity(w, snap.index);
  writeTables(w, snap);
  {
    const std::string records = explanationRecords(*snap.explanation);
    std::vector<int64_t> off;
    TableOut t("explanation");
    t.fields.push_back(::arrow::field("records", ::arrow::large_binary(), false));
    t.arrays.push_back(wrapBlob(records, &off));
    w.write(t);
  }
  if (w.error.empty()) {
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
    m.meta = {{"trace", trace},
              {"trace_size", std::to_string(key.size)},
              {"trace_mtime_ns", std::to_string(key.mtimeNs)},
              {"trace_content_hash", hex64(key.contentHash)},
              {"json_bytes", std::to_string(extras.jsonBytes)},
              {"reader_warning", extras.warning}};
    w.write(m);
  }
  if (!w.error.empty()) {
    fs::remove_all(w.dir, ec);
    out.error = w.error;
    return out;
  }
  fsyncDir(w.dir);
  // Swap it in: the old folder aside, the new one in its place, the old one removed.
  const std::string old = where.dir + "/.trace-old-" + w.generation;
  const bool hadOld = fs::exists(final, ec);
  if (hadOld) fs::rename(final, old, ec);
  fs::rename(w.dir, final, ec);
  if (ec) {
    // Another process put its cache there first: keep theirs.
    fs::remove_all(w.dir, ec);
  }
  if (hadOld) fs::remove_all(old, ec);
  fsyncDir(where.dir);
  out.ok = true;
  out.dir = final;
  out.bytes = w.bytes;
  return out;
}

}  // namespace attnscope::cache
