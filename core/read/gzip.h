// .gz decompression with a size cap (refuses decompression bombs): whole
// (gunzip) or as a stream (GunzipStream), ISA-L's inflate when the build
// found it (about 3x zlib's speed), else zlib's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attnscope {

bool isGzip(const char* data, size_t size);

// The decompressed size a gzip stream announces in its last member's
// trailer (ISIZE, modulo 4 GiB), or 0 when there is none. A hint only.
uint64_t gzipSizeHint(const char* data, size_t size);

// "isa-l" or "zlib": which inflate this build uses.
const char* gunzipBackend();

// Decompresses a gzip (possibly multi-member) stream piece by piece.
class GunzipStream {
 public:
  GunzipStream(const char* data, size_t size, uint64_t maxOut);
  ~GunzipStream();
  GunzipStream(const GunzipStream&) = delete;
  GunzipStream& operator=(const GunzipStream&) = delete;

  // Fills out[0, cap) as far as the stream goes; *got is what it wrote.
  // Returns false on an error (error() says which: "gzip data is corrupt at
  // byte N", "decompressed size exceeds the limit of N bytes"); true
  // otherwise, with done() set once the stream has ended. A stream cut
  // short ends there: done() and truncated(), what came out is kept.
  bool read(char* out, size_t cap, size_t* got);
  bool done() const { return done_; }
  bool truncated() const { return truncated_; }
  size_t consumed() const { return consumed_; }
  const std::string& error() const { return error_; }
  uint64_t produced() const { return produced_; }
  bool overLimit() const { return produced_ > maxOut_; }

 private:
  struct Impl;
  bool fail(std::string message);
  std::unique_ptr<Impl> impl_;
  const char* data_;
  size_t size_;
  size_t consumed_ = 0;
  uint64_t maxOut_;
  uint64_t produced_ = 0;
  bool memberEnded_ = false;
  bool done_ = false;
  bool truncated_ = false;
  std::string error_;
};

// Decompresses a whole gzip stream into `out`, leaving `padding` zeroed
// bytes after the data (simdjson needs them). On failure returns false with
// `error` set as GunzipStream::error(). A stream cut short gives what it
// holds; `truncatedAt` (may be null) is then the compressed size read, else 0.
// `overLimit` (may be null) is set when it failed for passing maxOut.
bool gunzip(const char* data, size_t size, uint64_t maxOut, size_t padding, std::vector<char>* out, size_t* outSize,
            std::string* error, uint64_t* truncatedAt = nullptr, bool* overLimit = nullptr);

}  // namespace attnscope
