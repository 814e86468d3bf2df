// The columnar cache of one trace: everything its snapshot holds, as Arrow IPC files written and read
// with Arrow C++ (the pyarrow wheel's), so a later open maps them instead of parsing the JSON.
//
// `<cache dir>/trace/` (cache_dir.h: beside the trace, or the user cache when its folder is read-only):
//   events.arrow        one column per event field (start, dur, correlation, external_id, name, lane,
//                       parent, args, family, depth), lanes contiguous and start-sorted as the store has them
//   args.arrow          the events' optional fields, one column each (input_dims ... comm)
//   links.arrow         flows bound to their events (from, to, id, kind)
//   strings.arrow       the interned names and texts, by id (text)
//   index_*.arrow       the id indexes (key, event): correlation, external_id, call (first runtime call of
//                       a correlation), op (the op of an External id)
//   activity_*.arrow    the activity index: runtime calls and GPU work by start, the GPU busy union
//   table_*.arrow       torch's tables (both attributions, both groupings): the rows as records, and
//   table_*_events.arrow  the events behind each row
//   store.arrow, explanation.arrow   the store's metadata, lanes and counts, and the explanation, as records
//   manifest.arrow      written last: the cache version, the trace's key (size, mtime, content hash),
//                       the generation every file carries, and each file's size and edge hash
// Each file is one record batch; the columns are mapped, never copied: a column of the store is a view
// of the mapping (spill.h drops its pages past the memory budget). A cache of another version, of another
// trace, stale (the key differs), or damaged (a file missing, cut, of another generation, or failing
// Arrow's checks) is not used; the caller rebuilds it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/cache/cache_dir.h"
#include "core/snapshot/trace_snapshot.h"

namespace attnscope::cache {

// 1: the first columnar cache.
inline constexpr const char* kCacheVersion = "2";

// Whether this build has the cache (Arrow C++ was found); kNoCache says why not.
bool available();
inline constexpr const char* kNoCache =
    "this build has no columnar cache (built without Arrow C++: pip install pyarrow and rebuild)";

struct WriteOutcome {
  bool ok = false;
  std::string dir;     // the cache folder (…/trace)
  std::string note;    // the user cache was used: why
  std::string error;   // !ok: what failed, naming the path
  uint64_t bytes = 0;  // written
};

// What the reader said about the trace, kept with its cache (a later open says it again).
struct CacheExtras {
  std::string warning;
  uint64_t jsonBytes = 0;
};

// How a cache is written.
// - early: the store's columns are written on a thread of their own from construction, so their write
//   and fsync overlap the snapshot's work; without it (a spilled trace: one large array at a time),
//   finish() writes them. (Early on a spilled 12 GB trace: 104 s against 90 s, the snapshot's faults and
//   the write's dirty pages in each other's way.)
// - direct: the files are written with O_DIRECT, past the page cache (a spilled trace: its write is not
//   held back by the spilled arrays' dirty pages, and does not push the arrays' pages out; the 12 GB
//   trace's cache phase 6.0-7.3 s against 11.1-12.4 s). A file system that refuses it gets plain writes.
struct CacheWriteMode {
  bool early = true;
  bool direct = false;
};

// The cache of one trace being written, in two parts: the store's columns (most of the bytes) as soon
// as the store is built, and the tables derived from it when the snapshot is done (CacheWriteMode).
// Atomic: a folder written beside the old one, then swapped in; a writer destroyed unfinished (the
// open cancelled or failed) stops after the file it is writing and removes its folder.
class CacheWriter {
 public:
  CacheWriter(const std::string& trace, const TraceKey& key, std::shared_ptr<const EventStore> store,
              CacheWriteMode mode);
  ~CacheWriter();
  CacheWriter(const CacheWriter&) = delete;
  CacheWriter& operator=(const CacheWriter&) = delete;
  // `snap` is the snapshot of the store given above, complete (both groupings, the explanation). Once.
  WriteOutcome finish(const TraceSnapshot& snap, const CacheExtras& extras = {});

  struct State;

 private:
  std::unique_ptr<State> s_;
};

struct OpenedCache {
  std::shared_ptr<const TraceSnapshot> snapshot;  // its store is mapped from the cache
  std::string dir;
  CacheExtras extras;
};

// The cache of `trace` when it is there, whole and made from this trace (`key`); nullopt otherwise with
// `why` in words ("no cache in DIR", "stale: the trace changed", "damaged: ..."). `damaged` is set when
// a cache was there but could not be trusted (the caller rebuilds it).
std::optional<OpenedCache> openCache(const std::string& trace, const TraceKey& key, std::string* why,
                                     bool* damaged = nullptr);

// The folder the cache of `trace` is (or goes) in.
std::string cacheFolder(const std::string& trace);

}  // namespace attnscope::cache
