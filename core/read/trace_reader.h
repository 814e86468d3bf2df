// Reads Chrome-trace JSON as torch.profiler (Kineto) exports it: the object
// form with "traceEvents" or the plain array form, .json or .json.gz.
//
// One bad event never aborts the load: it is counted by kind with its byte
// offset (EventStore::bad). A file that cannot be a trace at all gives one
// error naming the file and the reason.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "core/store/event_store.h"

namespace attnscope {

// Shared with another thread while a load runs (the app's progress bar and
// its Cancel button): the reader writes the counts, the watcher reads them
// and may set `cancel`, after which the load ends soon with an error
// (LoadResult::cancelled).
struct LoadProgress {
  std::atomic<uint64_t> bytesDone{0};   // of the file (compressed bytes for a .gz)
  std::atomic<uint64_t> bytesTotal{0};  // the file's size
  std::atomic<uint64_t> events{0};      // events read so far
  std::atomic<int> stage{0};            // 0 reading, 1 building the store; callers add their own
  std::atomic<bool> cancel{false};
};

struct ReaderLimits {
  // A .gz may inflate to this many bytes, or to maxDecompressedRatio times
  // its own size when that is more (real traces compress 5-20x, a bomb of
  // blanks 1000x); past it, it is refused as a bomb. Inflating is streamed:
  // the limit bounds time, not memory.
  uint64_t maxDecompressedBytes = 8ull << 30;
  uint64_t maxDecompressedRatio = 100;  // 0: the byte limit alone
  uint64_t maxFileBytes = 16ull << 30;
  uint32_t maxDepth = 256;             // JSON nesting
  uint32_t maxStringBytes = 1u << 20;  // one name or arg string
  uint64_t maxEvents = 200'000'000;
  // One event's text: larger is not a trace event (a bomb of one string or
  // of nesting); the file is refused (the chunks never hold more than this).
  uint64_t maxEventBytes = 64ull << 20;
  // Texts at least this large (object form) are parsed in chunks of whole
  // events on several threads, gzip streams inflated as they are parsed;
  // anything unusual falls back to the one-pass reader.
  uint64_t parallelMinBytes = 4ull << 20;
  // Chunk size: at most this, at least 4 KiB, about an eighth of the text
  // below 8 MiB (enough chunks to share between threads). Small chunks
  // keep each parser's buffers in cache and reused (fresh pages cost).
  uint64_t chunkBytes = 1ull << 20;
  // A text in memory is cut into chunks in parts on several threads from this many threads on (below,
  // one thread cuts it ahead of the parsers, which keeps them busy); the tests set it lower.
  unsigned parallelCutMinThreads = 4;
  // Not a limit: where the load reports progress and looks for a cancel.
  LoadProgress* progress = nullptr;
};

// How many bytes a .gz of `compressedBytes` may inflate to.
uint64_t decompressLimit(const ReaderLimits& limits, uint64_t compressedBytes);

struct LoadError {
  std::string path;
  std::string message;  // "not a trace: top-level value is a number"
  std::string what() const { return path + ": " + message; }
};

// Where the load time went, in seconds (for attnscope-bench).
struct LoadTimings {
  double read = 0;        // file -> memory
  double decompress = 0;  // .gz -> JSON text
  double parse = 0;       // JSON -> raw events (simdjson On-Demand)
  double build = 0;       // sort into lanes, nesting, flows, indexes
};

struct LoadResult {
  LoadTimings timings;
  std::optional<EventStore> store;
  std::optional<LoadError> error;
  // Non-fatal: e.g. "JSON ends early at byte 1234: kept the 120 events before it".
  std::string warning;
  uint64_t jsonBytes = 0;  // size of the (decompressed) JSON text
  uint64_t chunks = 0;     // chunks the events were parsed in (0: one pass)
  // Parts of the text cut into chunks on several threads and taken as cut (0: one thread cut it all).
  uint64_t cutParts = 0;
  bool cancelled = false;  // LoadProgress::cancel stopped it (error says so)
  bool ok() const { return store.has_value(); }
};

// Parses a JSON number token in microseconds ("5367878831155.178") into exact
// integer nanoseconds (the reader's rule for "ts" and "dur"); false when it is
// not a number or out of range.
bool microsecondsToNs(std::string_view token, int64_t* ns);

// Reads and parses a trace file (.json or .json.gz, detected by magic bytes).
LoadResult loadTrace(const std::string& path, const ReaderLimits& limits = {});

// Parses trace JSON already in memory (used by tests and the fuzzer).
LoadResult parseTrace(std::string_view json, const std::string& nameForErrors, const ReaderLimits& limits = {});

}  // namespace attnscope
