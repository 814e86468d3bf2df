// Reading the columnar cache (trace_cache.h): the manifest first (version, the trace's key, every file's
// size and edge hash), then each file mapped and opened by Arrow, its columns viewed in place.
#include <arrow/io/memory.h>
#include <arrow/ipc/api.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <random>

#include "core/cache/cache_arrow.h"
#include "core/cache/records.h"
#include "core/cache/trace_cache.h"
#include "core/run/engine_run.h"
#include "core/run/script_run.h"

namespace attnscope::cache {

namespace fs = std::filesystem;
using namespace detail;

namespace detail {

std::string TableIn::meta(const std::string& key) const {
  const auto& md = batch->schema()->metadata();
  if (!md) return {};
  const int i = md->FindKey(key);
  return i < 0 ? std::string() : md->value(i);
}

std::string_view TableIn::blob(const std::string& col) {
  const auto a = batch->GetColumnByName(col);
  if (!a || a->type_id() != ::arrow::Type::LARGE_BINARY || a->length() != 1 || a->null_count() != 0) {
    fail("no archive '" + col + "'");
    return {};
  }
  return static_cast<const ::arrow::LargeBinaryArray&>(*a).GetView(0);
}

}  // namespace detail

namespace {

// A file mapped read-only; its pages are the governor's to drop (spill.h).
struct Mapping {
  void* p = MAP_FAILED;
  size_t n = 0;
  ~Mapping() {
    if (p != MAP_FAILED) {
      spill::unregisterRegion(p);
      ::munmap(p, n);
    }
  }
};

// Ids checked against their tables' sizes on open: a sample (each one touches pages of a column).
constexpr int kSamples = 256;

std::string hex64(uint64_t v) {
  static const char* d = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = d[v & 15];
  return s;
}

struct Reader {
  std::string dir;
  std::string error;                                                // the first failure
  std::string generation;                                           // the manifest's
  std::map<std::string, std::pair<int64_t, std::string>> expected;  // file -> (bytes, block hashes)
  bool whole = true;                                                // check every block (a small cache), else samples

  // Maps `name`.arrow and opens its one record batch; checks its size, edges and generation against the
  // manifest (when `checked`).
  bool open(const std::string& name, TableIn* t, bool checked = true) {
    t->name = name;
    t->error = &error;
    const std::string path = dir + "/" + name + ".arrow";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return t->fail(std::string("missing (") + std::strerror(errno) + ")");
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
      ::close(fd);
      return t->fail("empty");
    }
    auto m = std::make_shared<Mapping>();
    m->n = static_cast<size_t>(st.st_size);
    m->p = ::mmap(nullptr, m->n, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (m->p == MAP_FAILED) return t->fail(std::string("cannot be mapped (") + std::strerror(errno) + ")");
    spill::registerRegion(m->p, m->n);
    if (checked) {
      auto it = expected.find(name);
      if (it == expected.end()) return t->fail("not in the manifest");
      if (it->second.first != st.st_size) return t->fail("its size is not the manifest's (cut or rewritten)");
      const std::string& hashes = it->second.second;
      const size_t blocks = (m->n + kBlockBytes - 1) / kBlockBytes;
      if (hashes.size() != blocks * 8) return t->fail("the manifest's hashes do not fit it");
      const auto* bytes = static_cast<const char*>(m->p);
      auto blockOk = [&](size_t b) {
        const size_t at = b * kBlockBytes, n = std::min(kBlockBytes, m->n - at);
        uint64_t want = 0;
        std::memcpy(&want, hashes.data() + b * 8, 8);
        return hashBytes(bytes + at, n, at) == want;
      };
      bool ok = blockOk(0) && blockOk(blocks - 1);
      if (whole) {
        for (size_t b = 1; ok && b + 1 < blocks; ++b) ok = blockOk(b);
      } else {
        std::random_device rd;
        std::mt19937_64 rng((uint64_t{rd()} << 32) ^ rd());
        for (int k = 0; ok && k < kSampledBlocks && blocks > 2; ++k) ok = blockOk(1 + rng() % (blocks - 2));
      }
      ::madvise(m->p, m->n, MADV_DONTNEED);  // what the check read: not kept resident
      if (!ok) return t->fail("its bytes are not the ones written (damaged)");
    }
    auto buf = std::make_shared<::arrow::Buffer>(static_cast<const uint8_t*>(m->p), static_cast<int64_t>(m->n));
    auto in = std::make_shared<::arrow::io::BufferReader>(buf);
    auto opts = ::arrow::ipc::IpcReadOptions::Defaults();
    opts.use_threads = false;
    auto r = ::arrow::ipc::RecordBatchFileReader::Open(in, opts);
    if (!r.ok()) return t->fail("not an Arrow IPC file (" + r.status().message() + ")");
    if ((*r)->num_record_batches() != 1) return t->fail("not one record batch");
    auto b = (*r)->ReadRecordBatch(0);
    if (!b.ok()) return t->fail("unreadable (" + b.status().message() + ")");
    // ValidateFull: offsets and UTF-8 checked too (a string's or an archive's offsets are read); the
    // primitive columns cost it nothing more than Validate.
    if (auto v = (*b)->ValidateFull(); !v.ok()) return t->fail("fails Arrow's checks (" + v.message() + ")");
    t->batch = *b;
    t->keep = m;
    if (t->meta(kVersionKey) != kCacheVersion) return t->fail("made by another cache version");
    if (checked && t->meta(kGenerationKey) != generation) return t->fail("from another write of the cache");
    return true;
  }
};

bool readManifest(Reader& r, const TraceKey& key, std::string* why, bool* stale, CacheExtras* extras) {
  TableIn m;
  if (!r.open("manifest", &m, false)) {
    *why = r.error;
    return false;
  }
  if (m.meta("trace_size") != std::to_string(key.size) || m.meta("trace_mtime_ns") != std::to_string(key.mtimeNs) ||
      m.meta("trace_content_hash") != hex64(key.contentHash)) {
    *why = "stale: made from another version of the trace (its size, time or content changed)";
    *stale = true;
    return false;
  }
  r.generation = m.meta(kGenerationKey);
  extras->warning = m.meta("reader_warning");
  extras->jsonBytes = std::strtoull(m.meta("json_bytes").c_str(), nullptr, 10);
  const auto files = m.batch->GetColumnByName("file");
  const Col<int64_t> bytes = m.column<int64_t>("bytes", m.rows());
  const auto hashes = m.batch->GetColumnByName("block_hashes");
  if (!files || files->type_id() != ::arrow::Type::LARGE_STRING || !hashes ||
      hashes->type_id() != ::arrow::Type::LARGE_BINARY || !r.error.empty()) {
    *why = r.error.empty() ? "manifest.arrow: no file or block_hashes column" : r.error;
    return false;
  }
  const auto& names = static_cast<const ::arrow::LargeStringArray&>(*files);
  const auto& blocks = static_cast<const ::arrow::LargeBinaryArray&>(*hashes);
  uint64_t total = 0;
  for (int64_t i = 0; i < names.length(); ++i) {
    r.expected[std::string(names.GetView(i))] = {bytes[static_cast<size_t>(i)], std::string(blocks.GetView(i))};
    total += static_cast<uint64_t>(std::max<int64_t>(0, bytes[static_cast<size_t>(i)]));
  }
  r.whole = total <= kWholeCheckBytes;
  return true;
}

// The store from its files; nullopt with r.error set when something is wrong.
std::optional<EventStore> readStore(Reader& r, const std::string& trace) {
  EventStore::Parts p;
  TableIn ev, args, links, strings, store;
  if (!r.open("events", &ev) || !r.open("args", &args) || !r.open("links", &links) || !r.open("strings", &strings) ||
      !r.open("store", &store))
    return std::nullopt;
#define ATTNSCOPE_READ(col, T, field) p.events.col = ev.column<T>(#col, ev.rows());
  ATTNSCOPE_EVENT_COLUMNS(ATTNSCOPE_READ)
#undef ATTNSCOPE_READ
#define ATTNSCOPE_READ(col, T, field) p.args.col = args.column<T>(#col, args.rows());
  ATTNSCOPE_ARGS_COLUMNS(ATTNSCOPE_READ)
#undef ATTNSCOPE_READ
#define ATTNSCOPE_READ(col, T, field) p.links.col = links.column<T>(#col, links.rows());
  ATTNSCOPE_LINK_COLUMNS(ATTNSCOPE_READ)
#undef ATTNSCOPE_READ
  const std::pair<const char*, IdIndex*> indexes[] = {{"index_correlation", &p.byCorr},
                                                      {"index_external_id", &p.byExt},
                                                      {"index_call", &p.callByCorr},
                                                      {"index_op", &p.opByExt}};
  for (const auto& [name, x] : indexes) {
    TableIn t;
    if (!r.open(name, &t)) return std::nullopt;
    x->key = t.column<int64_t>("key", t.rows());
    x->event = t.column<EventId>("event", t.rows());
  }
  const auto text = strings.batch->GetColumnByName("text");
  if (!text || text->type_id() != ::arrow::Type::LARGE_STRING) {
    strings.fail("no text column");
    return std::nullopt;
  }
  const auto& sa = static_cast<const ::arrow::LargeStringArray&>(*text);
  // Ids are positions: interning them in order gives each its id back ("" is already 0).
  for (int64_t i = 0; i < sa.length(); ++i) {
    if (p.strings.intern(sa.GetView(i)) != static_cast<uint32_t>(i)) {
      strings.fail("the strings are not distinct");
      return std::nullopt;
    }
  }
  if (!readStoreRecords(store.blob("records"), &p)) {
    store.fail("its records are damaged");
    return std::nullopt;
  }
  if (!r.error.empty()) return std::nullopt;
  // The structure the views rely on: lanes tile the events, ids in range (checked on a sample: a full
  // pass would read every column).
  const size_t n = p.events.start.size(), nArgs = p.args.input_dims.size(), nStr = p.strings.size();
  EventId at = 0;
  for (const Lane& l : p.lanes) {
    if (l.begin != at || l.end < l.begin || l.end > n) return ev.fail("its lanes do not tile the events"), std::nullopt;
    at = l.end;
  }
  if (at != n || p.laneMaxDur.size() != p.lanes.size())
    return ev.fail("its lanes do not tile the events"), std::nullopt;
  std::mt19937_64 rng(n);
  for (int k = 0; k < kSamples && n > 0; ++k) {
    const size_t i = rng() % n;
    if (p.events.name[i] >= nStr || p.events.lane[i] >= p.lanes.size() ||
        (p.events.args[i] != kNoArgs && p.events.args[i] >= nArgs) ||
        (p.events.parent[i] != kNoEvent && p.events.parent[i] >= n))
      return ev.fail("an event refers past the tables (damaged)"), std::nullopt;
  }
  for (const IdIndex* x : {&p.byCorr, &p.byExt, &p.callByCorr, &p.opByExt})
    for (size_t k = 0; k < x->size(); k += std::max<size_t>(1, x->size() / kSamples))
      if (x->event[k] >= n) return ev.fail("an index refers past the events (damaged)"), std::nullopt;
  spill::dropAll();  // the pages the samples touched (the kernel maps 64 KiB around each)
  p.meta.sourcePath = trace;
  return EventStore::fromParts(std::move(p));
}

std::optional<ActivityIndex> readActivity(Reader& r, size_t events) {
  TableIn calls, gpu, busy, device, deviceBusy;
  if (!r.open("activity_calls", &calls) || !r.open("activity_gpu", &gpu) || !r.open("activity_busy", &busy) ||
      !r.open("activity_device", &device) || !r.open("activity_device_busy", &deviceBusy))
    return std::nullopt;
  ActivityIndex::Parts p;
  p.calls = calls.column<EventId>("event", calls.rows());
  p.callStart = calls.column<int64_t>("start", calls.rows());
  p.gpu = gpu.column<EventId>("event", gpu.rows());
  p.gpuStart = gpu.column<int64_t>("start", gpu.rows());
  p.maxGpuDur = std::strtoll(gpu.meta("max_gpu_dur_ns").c_str(), nullptr, 10);
  p.busyStart = busy.column<int64_t>("start", busy.rows());
  p.busyEnd = busy.column<int64_t>("end", busy.rows());
  p.busyBefore = busy.column<int64_t>("before", busy.rows());
  p.accelerator = device.meta("accelerator") == "1";
  p.device = device.column<EventId>("event", device.rows());
  p.devStart = deviceBusy.column<int64_t>("start", deviceBusy.rows());
  p.devEnd = deviceBusy.column<int64_t>("end", deviceBusy.rows());
  p.devBefore = deviceBusy.column<int64_t>("before", deviceBusy.rows());
  if (!r.error.empty()) return std::nullopt;
  for (const Col<EventId>* c : {&p.calls, &p.gpu, &p.device})
    for (size_t k = 0; k < c->size(); k += std::max<size_t>(1, c->size() / kSamples))
      if ((*c)[k] >= events) return calls.fail("the activity index refers past the events"), std::nullopt;
  return ActivityIndex::fromParts(std::move(p));
}

std::shared_ptr<const KeyAverages> readTable(Reader& r, const std::string& name, size_t events) {
  TableIn rows, ev;
  if (!r.open(name, &rows) || !r.open(name + "_events", &ev)) return nullptr;
  auto t = std::make_shared<KeyAverages>();
  std::vector<uint64_t> counts;
  if (!readTableRecords(rows.blob("records"), t.get(), &counts)) return rows.fail("its records are damaged"), nullptr;
  const Col<EventId> all = ev.column<EventId>("event", ev.rows());
  if (!r.error.empty()) return nullptr;
  uint64_t at = 0;
  for (size_t i = 0; i < t->rows.size(); ++i) {
    if (counts[i] > all.size() - at) return ev.fail("fewer events than its rows hold"), nullptr;
    t->rows[i].events = ListOf<EventId>(all.data() + at, counts[i], ev.keep);
    at += counts[i];
  }
  if (at != all.size()) return ev.fail("more events than its rows hold"), nullptr;
  for (size_t k = 0; k < all.size(); k += std::max<size_t>(1, all.size() / kSamples))
    if (all[k] >= events) return ev.fail("a row refers past the events"), nullptr;
  spill::dropAll();
  return t;
}

}  // namespace

namespace {
std::optional<OpenedCache> open(const std::string& trace, const TraceKey& key, std::string* why, bool* damaged);
}  // namespace

std::optional<OpenedCache> openCache(const std::string& trace, const TraceKey& key, std::string* why, bool* damaged) {
  try {
    return open(trace, key, why, damaged);
  } catch (const std::exception& e) {
    // Damage past every check (a count that reads as billions): rebuilt like any other.
    *why = std::string("damaged: ") + e.what();
    if (damaged) *damaged = true;
    return std::nullopt;
  }
}

namespace {

std::optional<OpenedCache> open(const std::string& trace, const TraceKey& key, std::string* why, bool* damaged) {
  if (damaged) *damaged = false;
  Reader r;
  r.dir = cacheFolder(trace);
  std::error_code ec;
  if (!fs::exists(r.dir + "/manifest.arrow", ec)) {
    *why = "no cache in " + r.dir;
    return std::nullopt;
  }
  bool stale = false;
  auto fail = [&](const std::string& what) -> std::optional<OpenedCache> {
    *why = stale ? what : "damaged: " + what;
    if (damaged) *damaged = true;
    return std::nullopt;
  };
  CacheExtras extras;
  if (!readManifest(r, key, why, &stale, &extras)) return fail(*why);
  std::optional<EventStore> store = readStore(r, trace);
  if (!store) return fail(r.error);
  auto snap = std::make_shared<TraceSnapshot>();
  auto shared = std::make_shared<const EventStore>(std::move(*store));
  const size_t n = shared->size();
  std::optional<ActivityIndex> index = readActivity(r, n);
  if (!index) return fail(r.error);
  snap->index = std::move(*index);
  snap->torchByName = readTable(r, "table_torch_name", n);
  snap->torchByInputShape = readTable(r, "table_torch_shape", n);
  snap->correctedByName = readTable(r, "table_corrected_name", n);
  snap->correctedByInputShape = readTable(r, "table_corrected_shape", n);
  if (!r.error.empty()) return fail(r.error);
  TableIn ex;
  if (!r.open("explanation", &ex)) return fail(r.error);
  auto x = std::make_shared<Explanation>();
  if (!readExplanationRecords(ex.blob("records"), x.get()))
    return fail(r.error.empty() ? "explanation.arrow: damaged" : r.error);
  snap->explanation = std::move(x);
  TableIn answer;
  if (!r.open("answer", &answer)) return fail(r.error);
  if (!readAnswerRecords(answer.blob("records"), &snap->answer))
    return fail(r.error.empty() ? "answer.arrow: damaged" : r.error);
  // The trace's own metadata objects (a few KB of its JSON, kept in the store's records).
  snap->engine = readEngineRun(*shared);
  snap->record = readScriptRun(*shared);
  snap->store = std::move(shared);
  // The checks above read pages here and there: none of them is what anything shows.
  spill::dropAll();
  return OpenedCache{std::move(snap), r.dir, std::move(extras)};
}

}  // namespace

}  // namespace attnscope::cache
