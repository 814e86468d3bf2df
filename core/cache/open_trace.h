// Opening a trace the way every command and the viewer do: from its columnar cache when one is there
// and made from this trace (no JSON parse), else by reading the JSON, building the whole snapshot and
// writing the cache for next time.
//
// A trace larger than the memory budget (spill.h; $ATTNSCOPE_MEMORY_BUDGET, 1 GiB by default) is read
// with its large arrays spilled to files beside the cache, and once its cache is written the snapshot is
// the cache's, mapped: memory stays bounded by what is looked at, not by the file.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/read/trace_reader.h"
#include "core/snapshot/trace_snapshot.h"

namespace attnscope::cache {

enum class CacheUse {
  Auto,     // read a valid cache, else build and write one
  Off,      // neither read nor write (ATTNSCOPE_CACHE=off, --no-cache)
  Rebuild,  // write a fresh one whatever is there (ATTNSCOPE_CACHE=rebuild)
};
// From $ATTNSCOPE_CACHE (off|0|no, rebuild, on|auto); Auto when unset.
CacheUse cacheUseFromEnv();

// Progress stages (LoadProgress::stage) past the reader's 0 (reading) and 1 (building the store); the
// viewer's loader uses 3 for its timeline.
inline constexpr int kStageSnapshot = 2;    // torch's tables and the explanation
inline constexpr int kStageWriteCache = 4;  // writing the columnar cache
inline constexpr int kStageReadCache = 5;   // mapping the columnar cache

struct OpenOptions {
  ReaderLimits limits;
  CacheUse cache = cacheUseFromEnv();
  // Without a cache (off, or not available): what the snapshot needs to hold. With one, the snapshot
  // is always whole (both groupings and the explanation), as the cache holds it.
  SnapshotOptions snapshot;
};

struct CacheReport {
  enum class State { Off, Hit, Written, Failed };
  State state = State::Off;
  std::string dir;   // the cache folder
  std::string why;   // Off: why not; Written: what the old one lacked ("no cache ...", "stale: ...", "damaged: ...");
                     // Failed: what failed
  std::string note;  // the user cache was used: why
  uint64_t bytes = 0;
};

struct OpenedTrace {
  std::shared_ptr<const TraceSnapshot> snapshot;  // null when the trace could not be opened
  std::optional<LoadError> error;
  std::string warning;  // the reader's (kept in the cache, said again on later opens)
  bool cancelled = false;
  uint64_t jsonBytes = 0;
  uint64_t chunks = 0;
  uint64_t cutParts = 0;  // parts of the text cut into chunks on several threads (0: one cutter)
  bool spilled = false;   // read with its large arrays in files (larger than the memory budget)
  LoadTimings timings;
  double snapshotSeconds = 0, cacheSeconds = 0;
  // Resident set (MB) after each stage of a first open: read, snapshot, cache written (and mapped back).
  double rssReadMb = 0, rssSnapshotMb = 0, rssCacheMb = 0;
  // CPU time (user + system, every thread) of the same stages: over their wall time, how many cores
  // each kept busy.
  double cpuReadS = 0, cpuSnapshotS = 0, cpuCacheS = 0;
  CacheReport cache;
  bool ok() const { return snapshot != nullptr; }
};

OpenedTrace openTrace(const std::string& path, const OpenOptions& options = {});

// The reader's limits that change what a trace holds are the defaults (else no cache is used: a cache
// holds what the defaults read).
bool defaultContentLimits(const ReaderLimits& l);

}  // namespace attnscope::cache
