// Internal to the reader: the events array parsed in chunks of whole
// events on several threads, merged in text order into one store.
//
// A chunk is "[" + consecutive events + "]". Where chunks are cut is found
// by following the JSON's structure (json_scan.h), so any layout works:
// Kineto's one event per line, minified text, the top-level array form.
// Chunks come from the text in memory (a mapped file: a chunk is the text
// itself with the bytes around it set to '[' and ']' for the parse, or a
// copy where two chunks touch; pages already parsed are handed back to the
// kernel, so a huge file never needs its whole text resident) or from a
// gzip stream that the parsing threads inflate chunk by chunk into a few
// reused buffers (the decompressed text never exists whole, and blanks
// between events are never kept: a bomb of blanks costs time, not memory).
// The object around the array is kept without its blanks and parsed at the
// end as a small document.
// Anything unusual (a JSON error, ambiguous ids) makes parseChunks() return
// nothing: the caller then runs the one-pass reader, which owns the error
// reporting, unless the source says the text is too large to read whole.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/read/trace_reader.h"

namespace attnscope::reader {

struct Chunk {
  char* text = nullptr;  // "[...]" followed by SIMDJSON_PADDING readable bytes
  size_t len = 0;
  uint64_t offset = 0;  // of text[0] in the whole JSON text
  size_t index = 0;     // 0, 1, 2, ... in text order
  size_t slot = 0;      // the source's bookkeeping
};

class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  // Blocks until the next chunk is ready; false at the end, after stop()
  // or when the source failed.
  virtual bool next(Chunk* w) = 0;
  // The parser is done with `w`: its bytes may be restored, reused or dropped.
  virtual void release(const Chunk& w) = 0;
  // A parser failed: hand out no more chunks.
  virtual void stop() = 0;
  // After next() returned false: did every chunk come out?
  virtual bool complete() const = 0;
  // The trace object without its events ("traceEvents": []), after the end.
  virtual std::string metadataJson() const = 0;
  virtual uint64_t jsonBytes() const = 0;
  // A failure no other reader can get past (a corrupt gzip stream, a bomb).
  virtual std::string fatalError() const { return {}; }
  // After a failure: "" when the one-pass reader may read the whole text,
  // else why it may not (too large to hold whole) with what went wrong.
  virtual std::string fallbackRefused() { return {}; }
  // The text ended before the events array did: what was kept, said to the user.
  virtual std::string partialNote() const { return {}; }
  // The top-level array form (no object around the events).
  virtual bool arrayForm() const { return false; }
  virtual double decompressSeconds() const { return 0; }
  // Parts of the text cut on several threads whose cut was taken (0: one cutter did it all).
  virtual uint64_t cutParts() const { return 0; }
  // How much JSON text there is, or a guess (store reservations).
  virtual uint64_t expectedBytes() const = 0;
};

// Chunks over `text` (n bytes, SIMDJSON_PADDING writable bytes after them;
// `skip`: a byte order mark), or nullptr when it has no usable shape. With
// dropParsedPages, `text` is a private file mapping whose parsed pages may
// be discarded.
std::unique_ptr<ChunkSource> textChunks(char* text, size_t n, size_t skip, const ReaderLimits& limits,
                                        bool dropParsedPages);

// Chunks over the decompressed text of a gzip stream.
// `dropReadPages`: `data` is a private file mapping whose pages, once inflated, go back to the kernel (a
// huge .gz would otherwise stay resident whole).
std::unique_ptr<ChunkSource> gzipChunks(const char* data, size_t size, const ReaderLimits& limits,
                                        bool dropReadPages = false);

// Nothing: use the one-pass reader. Otherwise the store, or a fatal error.
std::optional<LoadResult> parseChunks(ChunkSource& src, const std::string& path, const ReaderLimits& limits);

}  // namespace attnscope::reader
