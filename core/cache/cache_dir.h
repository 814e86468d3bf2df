// Where a trace's caches live, and what identifies the trace they were made from.
//
// Beside the trace: `<trace>.attnscope/` (the columnar cache in its `trace/` folder, the per-rank
// summary's files at its top). When the trace's folder is read-only (or not writable), the user cache:
// $ATTNSCOPE_CACHE_DIR, else $XDG_CACHE_HOME/attnscope/<kind>, else ~/.cache/attnscope/<kind>, in a
// folder named by a hash of the trace's full path and its file name.
#pragma once

#include <cstdint>
#include <string>

namespace attnscope::cache {

struct CacheDir {
  std::string dir;        // the folder the cache is (or goes) in; not created here
  bool fallback = false;  // the user cache, the trace's folder being read-only
  std::string why;        // fallback: why, in words naming the folder
};

// `kind`: the user cache's subfolder ("traces", "ranks").
CacheDir cacheDirFor(const std::string& trace, const std::string& kind);

// What a cache is keyed by: the trace's size, its modification time, and a hash of its content read in
// 17 places (the first and last MiB and 15 blocks of 64 KiB spread evenly between them: 2.9 MiB read
// whatever the size, so a changed byte is seen unless it falls between the samples and the size and
// time stay the same).
struct TraceKey {
  int64_t size = -1;
  int64_t mtimeNs = -1;
  uint64_t contentHash = 0;
  bool operator==(const TraceKey&) const = default;
};
// False with `error` (naming the file) when it cannot be read.
bool traceKey(const std::string& trace, TraceKey* out, std::string* error);

// A 64-bit hash of `n` bytes (the content hash's).
uint64_t hashBytes(const void* data, size_t n, uint64_t seed = 0);

}  // namespace attnscope::cache
