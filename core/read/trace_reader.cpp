#include "core/read/trace_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "core/read/chunked_reader.h"
#include "core/read/gzip.h"
#include "core/read/trace_parser.h"
#include "core/store/threads.h"

namespace attnscope {

using namespace reader;

namespace {

// Outcome of one parse attempt over the buffer.
struct Attempt {
  LoadResult result;
  simdjson::error_code docError = simdjson::SUCCESS;  // set when the text itself is broken
};

Attempt parseOnce(char* text, size_t n, size_t skip, const std::string& path, const ReaderLimits& limits,
                  std::string warning) {
  Attempt at;
  const auto t0 = std::chrono::steady_clock::now();
  od::parser parser;
  if (parser.allocate(std::max<size_t>(n - skip, 64), parserDepth(limits)) != simdjson::SUCCESS) {
    at.result = fail(path, "cannot allocate the JSON parser for " + std::to_string(n) + " bytes");
    return at;
  }
  Parser p(limits, text);
  od::document doc;
  auto ec = parser.iterate(text + skip, n - skip, n - skip + simdjson::SIMDJSON_PADDING).get(doc);
  od::json_type top = od::json_type::null;
  if (!ec) ec = doc.type().get(top);
  if (ec) {
    at.docError = ec;
    at.result = fail(path, ec == simdjson::DEPTH_ERROR ? "JSON nesting is too deep (limit " +
                                                             std::to_string(limits.maxDepth) + " levels, --max-depth)"
                                                       : describe(ec));
    return at;
  }

  std::string docError;
  uint64_t docErrorOffset = 0;
  bool sawEvents = false;
  bool brokenEvent = false;  // the error is inside an element (not counted as read)
  auto noteError = [&](simdjson::error_code e) {
    at.docError = e;
    docError = e == simdjson::DEPTH_ERROR
                   ? "JSON nesting is too deep (limit " + std::to_string(limits.maxDepth) + " levels, --max-depth)"
                   : describe(e);
    docErrorOffset = p.offsetOf(doc);
  };
  bool stopped = false;
  auto readEvents = [&](od::array arr) {
    sawEvents = true;
    for (auto item : arr) {
      if ((p.eventsSeen & 4095) == 0 && limits.progress) {
        limits.progress->events.store(p.eventsSeen, std::memory_order_relaxed);
        if (limits.progress->cancel.load(std::memory_order_relaxed)) {
          stopped = true;
          return false;
        }
      }
      od::value v;
      if (auto e = item.get(v)) {
        noteError(e);
        return false;
      }
      if (!p.event(doc, v)) {
        noteError(simdjson::TAPE_ERROR);
        docError = "malformed JSON inside an event";
        brokenEvent = true;
        return false;
      }
    }
    return true;
  };

  if (top == od::json_type::array) {
    od::array arr;
    if (auto e = doc.get_array().get(arr)) {
      at.docError = e;
      at.result = fail(path, describe(e));
      return at;
    }
    readEvents(arr);
  } else if (top == od::json_type::object) {
    od::object obj;
    if (auto e = doc.get_object().get(obj)) {
      at.docError = e;
      at.result = fail(path, describe(e));
      return at;
    }
    for (auto field : obj) {
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) {
        noteError(e);
        break;
      }
      od::value v;
      if (auto e = field.value().get(v)) {
        noteError(e);
        break;
      }
      if (key == "traceEvents") {
        od::json_type t;
        if (auto e = v.type().get(t)) {
          noteError(e);
          break;
        }
        if (t != od::json_type::array) {
          at.result = fail(path, "not a trace: \"traceEvents\" is " + typeName(t) + ", expected an array");
          return at;
        }
        od::array arr;
        if (auto e = v.get_array().get(arr)) {
          noteError(e);
          break;
        }
        if (!readEvents(arr)) break;
      } else {
        p.topMeta(key, v);
      }
    }
    if (!sawEvents) {
      at.result = fail(path, docError.empty() ? "not a trace: the JSON object has no \"traceEvents\" array"
                                              : docError + " before any \"traceEvents\"");
      if (docError.empty()) at.docError = simdjson::SUCCESS;
      return at;
    }
  } else {
    at.result = fail(path, "not a trace: the top-level JSON value is " + typeName(top) +
                               ", expected an object with \"traceEvents\" or an array of events");
    return at;
  }

  if (stopped) {
    at.result = cancelledLoad(path);
    return at;
  }
  if (limits.progress) limits.progress->events.store(p.eventsSeen, std::memory_order_relaxed);
  const char* tail = nullptr;
  if (docError.empty() && !doc.current_location().get(tail) && tail && tail < text + n) {
    const auto off = static_cast<uint64_t>(tail - text);
    if (!warning.empty()) warning += "; ";
    warning += "trailing content after the trace at byte " + std::to_string(off) +
               " was ignored (two JSON documents in one file?)";
  }
  const std::string where = docErrorOffset ? " at byte " + std::to_string(docErrorOffset) : "";
  if (!docError.empty()) {
    // Broken where nothing but white space follows: the file was cut there.
    size_t rest = docErrorOffset;
    while (rest < n && isWs(text[rest])) ++rest;
    if (rest >= n) docError = "the file ends early (cut inside an event?)";
    const uint64_t complete = p.eventsSeen - (brokenEvent ? 1 : 0);
    if (complete == 0) {
      at.result = fail(path, docError + where);
      return at;
    }
    if (!warning.empty()) warning += "; ";
    warning += docError + where + ": kept the " + std::to_string(complete) + " event(s) before it";
  }
  // Every event bad: this cannot be used as a trace.
  p.b.meta().sourcePath = path;
  if (p.b.eventCount() == 0 && p.eventsSeen > 0) {
    EventStore probe = std::move(p.b).build();
    if (probe.badTotal() > 0) {
      for (int k = 0; k < kBadKindCount; ++k) {
        const BadCount& bc = probe.bad(static_cast<BadKind>(k));
        if (bc.count == 0 || !EventStore::isError(static_cast<BadKind>(k))) continue;
        at.result = fail(path, "no event could be loaded: " + std::to_string(probe.badTotal()) +
                                   " bad (first: " + std::string(badKindName(static_cast<BadKind>(k))) + " at byte " +
                                   std::to_string(bc.firstOffset) + ": " + bc.firstDetail + ")");
        return at;
      }
    }
    at.result.store.emplace(std::move(probe));
    at.result.warning = std::move(warning);
    at.result.jsonBytes = n;
    return at;
  }
  at.result.timings.parse = secondsSince(t0);
  if (limits.progress) {
    limits.progress->bytesDone.store(limits.progress->bytesTotal.load(std::memory_order_relaxed),
                                     std::memory_order_relaxed);
    limits.progress->stage.store(1, std::memory_order_relaxed);
  }
  const auto tb = std::chrono::steady_clock::now();
  at.result.store.emplace(std::move(p.b).build());
  at.result.timings.build = secondsSince(tb);
  at.result.warning = std::move(warning);
  at.result.jsonBytes = n;
  return at;
}

bool truncationLike(simdjson::error_code e) {
  return e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT || e == simdjson::UNCLOSED_STRING || e == simdjson::TAPE_ERROR;
}

// simdjson::validate_utf8, on two threads for large texts: split after a
// '\n' (an ASCII byte is never inside a multi-byte sequence).
bool validUtf8(const char* p, size_t n, const ReaderLimits& limits) {
  if (n < limits.parallelMinBytes || n < 2 || workerThreads() < 2) return simdjson::validate_utf8(p, n);
  const void* nl = std::memchr(p + n / 2, '\n', n - n / 2);
  if (!nl) return simdjson::validate_utf8(p, n);
  const size_t cut = static_cast<size_t>(static_cast<const char*>(nl) - p) + 1;
  bool second = false;
  try {
    std::thread t([&] { second = simdjson::validate_utf8(p + cut, n - cut); });
    const bool first = simdjson::validate_utf8(p, cut);
    t.join();
    return first && second;
  } catch (...) {
    return simdjson::validate_utf8(p, n);
  }
}

// Parses `text` (n bytes followed by SIMDJSON_PADDING writable bytes).
// Large object-form texts go through the chunked reader first (`mapped`: the
// text is a private file mapping whose parsed pages may be dropped); the
// one-pass reader takes anything else and whatever the chunks could not.
LoadResult parseBuffer(char* text, size_t n, const std::string& path, const ReaderLimits& limits, bool mapped,
                       bool tryChunks = true) {
  // A UTF-8 byte order mark is allowed and skipped.
  size_t skip = 0;
  if (n >= 3 && static_cast<unsigned char>(text[0]) == 0xEF && static_cast<unsigned char>(text[1]) == 0xBB &&
      static_cast<unsigned char>(text[2]) == 0xBF)
    skip = 3;
  size_t first = skip;
  while (first < n && (text[first] == ' ' || text[first] == '\n' || text[first] == '\r' || text[first] == '\t'))
    ++first;
  if (first == n) return fail(path, n == 0 ? "file is empty" : "file is empty (only white space)");
  if (limits.progress && limits.progress->bytesTotal.load(std::memory_order_relaxed) == 0)
    limits.progress->bytesTotal.store(n, std::memory_order_relaxed);
  if (text[first] != '{' && text[first] != '[') {
    const char c = text[first];
    return fail(path, "not a trace: not valid JSON for a trace: byte " + std::to_string(first) + " is '" +
                          std::string(1, (c >= 0x20 && c < 0x7f) ? c : '?') +
                          "', expected torch.profiler's Chrome-trace JSON (an object or an array)");
  }

  if (tryChunks && n - skip >= limits.parallelMinBytes && limits.maxDepth >= 2) {
    if (auto src = textChunks(text, n, skip, limits, mapped)) {
      if (auto r = parseChunks(*src, path, limits)) return std::move(*r);
    }
  }

  std::string warning;
  if (!validUtf8(text + skip, n - skip, limits)) {
    size_t firstBad = 0;
    const size_t fixed = repairUtf8(text + skip, n - skip, &firstBad);
    warning = std::to_string(fixed) + " invalid UTF-8 byte(s) replaced with '?' (first at byte " +
              std::to_string(firstBad + skip) + ")";
  }

  Attempt at = parseOnce(text, n, skip, path, limits, warning);
  if (at.result.ok() || at.result.cancelled || !truncationLike(at.docError)) return std::move(at.result);

  // The text ends early (a cut download, a killed writer). Close the event
  // array after the last complete-looking object and keep what precedes it.
  const std::string closer = text[first] == '{' ? "]}" : "]";
  size_t end = n;
  for (int tries = 0; tries < 4; ++tries) {
    size_t pos = end;
    while (pos > first && text[pos - 1] != '}') --pos;
    if (pos <= first + 1) break;
    const size_t newLen = pos + closer.size();
    if (newLen + simdjson::SIMDJSON_PADDING > n + simdjson::SIMDJSON_PADDING) {
      end = pos - 1;
      continue;
    }
    std::vector<char> copy(text + pos, text + n);
    std::memcpy(text + pos, closer.data(), closer.size());
    std::memset(text + newLen, 0, n - newLen);
    Attempt salvaged = parseOnce(text, newLen, skip, path, limits, warning);
    if (salvaged.result.ok() && !salvaged.result.store->events().empty()) {
      auto& w = salvaged.result.warning;
      const std::string cut =
          "the file ends early (" + at.result.error->message + "): kept the events before byte " + std::to_string(pos);
      w = (w.empty() ? "" : w + "; ") + cut;
      salvaged.result.store->markPartial(cut);
      return std::move(salvaged.result);
    }
    std::memcpy(text + pos, copy.data(), copy.size());
    end = pos - 1;
  }
  return std::move(at.result);
}

// A .gz: inflated as a stream into the chunked reader when large (the
// whole text never exists at once); otherwise, or when the chunks cannot
// take it, decompressed whole for the one-pass reader, but never more than
// kWholeMax bytes of it: past that the stream is the only way.
LoadResult parseGzip(const char* data, size_t size, const std::string& path, const ReaderLimits& limits, LoadTimings tm,
                     bool mapped = false) {
  static constexpr uint64_t kWholeMax = uint64_t{256} << 20;
  ReaderLimits lim = limits;
  lim.maxDecompressedBytes = decompressLimit(limits, size);
  if (limits.progress) limits.progress->bytesTotal.store(size, std::memory_order_relaxed);
  auto streamed = [&]() -> std::optional<LoadResult> {
    auto src = gzipChunks(data, size, lim, mapped);
    auto r = parseChunks(*src, path, lim);
    if (r) r->timings.read = tm.read;
    return r;
  };
  bool chunksTried = false;
  const uint64_t hint = gzipSizeHint(data, size);
  if ((hint >= size ? hint : uint64_t{size} * 8) >= limits.parallelMinBytes && limits.maxDepth >= 2) {
    chunksTried = true;
    if (auto r = streamed()) return std::move(*r);
  }
  const auto td = std::chrono::steady_clock::now();
  std::vector<char> out;
  size_t outSize = 0;
  std::string err;
  uint64_t truncatedAt = 0;
  bool overLimit = false;
  if (!gunzip(data, size, std::min(lim.maxDecompressedBytes, kWholeMax), simdjson::SIMDJSON_PADDING, &out, &outSize,
              &err, &truncatedAt, &overLimit)) {
    if (overLimit && lim.maxDecompressedBytes > kWholeMax) {
      // Larger than its trailer said: only the stream may read it.
      out = {};
      if (!chunksTried && limits.maxDepth >= 2)
        if (auto r = streamed()) return std::move(*r);
      return fail(path,
                  "cannot read this .gz as a trace: its JSON is malformed and over 256 MiB (too large to "
                  "read whole)");
    }
    return fail(path, err);
  }
  tm.decompress = secondsSince(td);
  if (limits.progress) limits.progress->bytesDone.store(size, std::memory_order_relaxed);
  LoadResult r = parseBuffer(out.data(), outSize, path, limits, false, !chunksTried && !truncatedAt);
  r.timings.read = tm.read;
  r.timings.decompress = tm.decompress;
  if (truncatedAt && r.ok()) {
    // The JSON it held was salvaged like a cut .json (or happened to end whole).
    const std::string cut = "the .gz ends early (cut after " + std::to_string(truncatedAt) + " of its bytes, " +
                            std::to_string(outSize) + " bytes of JSON)";
    r.warning = cut + (r.warning.empty() ? "" : "; " + r.warning);
    r.store->markPartial(r.store->meta().partial.empty() ? cut : cut + "; " + r.store->meta().partial);
  }
  return r;
}

}  // namespace

uint64_t decompressLimit(const ReaderLimits& limits, uint64_t compressedBytes) {
  const uint64_t r = limits.maxDecompressedRatio;
  if (r == 0 || compressedBytes > UINT64_MAX / r) return limits.maxDecompressedBytes;
  return std::max(limits.maxDecompressedBytes, compressedBytes * r);
}

LoadResult parseTrace(std::string_view json, const std::string& nameForErrors, const ReaderLimits& limits) {
  if (isGzip(json.data(), json.size())) return parseGzip(json.data(), json.size(), nameForErrors, limits, {});
  std::vector<char> buf(json.size() + simdjson::SIMDJSON_PADDING, '\0');
  std::memcpy(buf.data(), json.data(), json.size());
  return parseBuffer(buf.data(), json.size(), nameForErrors, limits, false);
}

LoadResult loadTrace(const std::string& path, const ReaderLimits& limits) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (fstat then says
  // it is not a regular file); reads of regular files do not care.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fail(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return fail(path, std::string("cannot stat: ") + std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return fail(path, "is a directory, not a trace file");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(path, "is not a regular file");
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > limits.maxFileBytes) {
    ::close(fd);
    return fail(path,
                "file is " + std::to_string(size) + " bytes, over the limit of " + std::to_string(limits.maxFileBytes));
  }
  const auto t0 = std::chrono::steady_clock::now();
  LoadTimings tm;
  // Large files are mapped (no copy, no zeroing) when the page tail leaves
  // room for simdjson's padding; MAP_PRIVATE keeps in-place repairs private.
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  if (size >= (1u << 20) && (size % page) + simdjson::SIMDJSON_PADDING <= page) {
    void* m = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) return fail(path, std::string("cannot map the file: ") + std::strerror(errno));
    struct Unmap {
      void* p;
      size_t n;
      ~Unmap() { ::munmap(p, n); }
    } unmap{m, size};
    char* text = static_cast<char*>(m);
    tm.read = secondsSince(t0);
    if (isGzip(text, size)) return parseGzip(text, size, path, limits, tm, /*mapped=*/true);
    LoadResult r = parseBuffer(text, size, path, limits, true);
    r.timings.read = tm.read;
    return r;
  }
  std::vector<char> buf(size + simdjson::SIMDJSON_PADDING, '\0');
  size_t got = 0;
  while (got < size) {
    const ssize_t r = ::read(fd, buf.data() + got, size - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return fail(path, std::string("read failed: ") + std::strerror(err));
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  tm.read = secondsSince(t0);
  if (isGzip(buf.data(), got)) return parseGzip(buf.data(), got, path, limits, tm);
  LoadResult r = parseBuffer(buf.data(), got, path, limits, false);
  r.timings.read = tm.read;
  return r;
}

}  // namespace attnscope
