#include "core/read/chunked_reader.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/read/gzip.h"
#include "core/read/trace_parser.h"

namespace attnscope::reader {

namespace {

constexpr size_t kNone = static_cast<size_t>(-1);
constexpr size_t kPad = simdjson::SIMDJSON_PADDING;

// The '[' that opens "traceEvents" in text[first, n), or kNone. `first` is
// the object's '{'.
size_t findEventsOpen(const char* text, size_t first, size_t n) {
  static constexpr std::string_view kKey = "\"traceEvents\"";
  const void* hit = ::memmem(text + first, n - first, kKey.data(), kKey.size());
  if (!hit) return kNone;
  size_t open = static_cast<size_t>(static_cast<const char*>(hit) - text) + kKey.size();
  while (open < n && isWs(text[open])) ++open;
  if (open >= n || text[open] != ':') return kNone;
  ++open;
  while (open < n && isWs(text[open])) ++open;
  return open < n && text[open] == '[' ? open : kNone;
}

// The array's closing ']' in text(open, n): the last one before the final
// '}' that follows a '}' (Kineto writes only a few short keys after the
// array), or kNone.
size_t findEventsClose(const char* text, size_t open, size_t n) {
  size_t z = n;
  while (z > open && isWs(text[z - 1])) --z;
  if (z <= open + 1 || text[z - 1] != '}') return kNone;
  --z;  // the closing '}' of the top object
  for (size_t q = z; q > open + 1 && z - q < (size_t{1} << 20);) {
    --q;
    if (text[q] != ']') continue;
    size_t r = q;
    while (r > open && isWs(text[r - 1])) --r;
    if (r > open + 1 && text[r - 1] == '}') return q;
    return kNone;
  }
  return kNone;
}

// A place to cut between two events: the ',' after one and the '{' of the next.
struct Cut {
  size_t comma = 0;
  size_t brace = 0;
};

// Does the newline at `nl` sit in "}" blanks "," blanks "\n" blanks "{",
// with the '}' after `from` and the '{' before `end`? `*blanks` gets the run
// of blanks around `nl`: every newline in it has the same answer, so the
// callers step over the run (a text of a million newlines is one look, not
// a million looks at a million blanks each).
bool cutAtNewline(const char* text, size_t from, size_t nl, size_t end, Cut* cut, std::pair<size_t, size_t>* blanks) {
  size_t c = nl;
  while (c > from && isWs(text[c - 1])) --c;
  size_t j = nl + 1;
  while (j < end && isWs(text[j])) ++j;
  *blanks = {c, j};
  if (c <= from + 1 || text[c - 1] != ',' || j >= end || text[j] != '{') return false;
  size_t q = c - 1;
  while (q > from && isWs(text[q - 1])) --q;
  if (q <= from || text[q - 1] != '}') return false;
  *cut = {c - 1, j};
  return true;
}

// The first cut at or after `p`, looking no further than `limit`.
bool cutForward(const char* text, size_t from, size_t p, size_t limit, size_t end, Cut* cut) {
  while (p < limit) {
    const void* nl = std::memchr(text + p, '\n', limit - p);
    if (!nl) return false;
    p = static_cast<size_t>(static_cast<const char*>(nl) - text);
    std::pair<size_t, size_t> blanks;
    if (cutAtNewline(text, from, p, end, cut, &blanks)) return true;
    p = blanks.second;
  }
  return false;
}

// The last cut in text(from, end).
bool cutBackward(const char* text, size_t from, size_t end, Cut* cut) {
  size_t p = end;
  while (p > from) {
    const void* nl = ::memrchr(text + from, '\n', p - from);
    if (!nl) return false;
    p = static_cast<size_t>(static_cast<const char*>(nl) - text);
    std::pair<size_t, size_t> blanks;
    if (cutAtNewline(text, from, p, end, cut, &blanks)) return true;
    p = blanks.first;
  }
  return false;
}

size_t chunkTarget(const ReaderLimits& limits, uint64_t total) {
  return static_cast<size_t>(std::max<uint64_t>(std::min<uint64_t>(limits.chunkBytes, total / 8), 4096));
}

// ---------------------------------------------------------------------------
// Chunks over text in memory.

class TextChunks : public ChunkSource {
 public:
  TextChunks(char* text, size_t n, size_t skip, size_t open, size_t close, bool drop)
      : text_(text), n_(n), skip_(skip), open_(open), close_(close), drop_(drop) {}

  // Cuts every ~`target` bytes; false when some stretch has no place to cut.
  bool plan(size_t target) {
    size_t begin = open_;  // the chunk's '[' (a blank turned '[' after the first)
    size_t from = open_ + 1;
    while (close_ - from > target + target / 2) {
      Cut c;
      const size_t p = from + target;
      if (!cutForward(text_, from, p, std::min(close_, p + std::max<size_t>(target, size_t{8} << 20)), close_, &c))
        return false;
      spans_.push_back({begin, c.comma});
      begin = c.brace - 1;
      from = c.brace;
    }
    spans_.push_back({begin, close_});
    saved_.resize(spans_.size());
    done_.assign(spans_.size(), false);
    return true;
  }

  bool next(Chunk* w) override {
    const size_t i = next_.fetch_add(1);
    if (stopped_.load() || i >= spans_.size()) return false;
    const auto [b, e] = spans_[i];
    saved_[i] = {text_[b], text_[e]};
    text_[b] = '[';
    text_[e] = ']';
    w->text = text_ + b;
    w->len = e - b + 1;
    w->offset = b;
    w->index = i;
    return true;
  }

  void release(const Chunk& w) override {
    const auto [b, e] = spans_[w.index];
    text_[b] = saved_[w.index].first;
    text_[e] = saved_[w.index].second;
    std::lock_guard<std::mutex> lock(mu_);
    done_[w.index] = true;
    while (frontier_ < done_.size() && done_[frontier_]) ++frontier_;
    if (!drop_) return;
    // Pages wholly before the first chunk still in use go back to the
    // kernel (a private file mapping: they would be read again from the
    // page cache, unchanged, if anything touched them).
    static const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const size_t upTo = frontier_ < spans_.size() ? spans_[frontier_].first : n_;
    const size_t end = upTo / page * page;
    if (end > dropped_ + (size_t{4} << 20) || (frontier_ == spans_.size() && end > dropped_)) {
      ::madvise(text_ + dropped_, end - dropped_, MADV_DONTNEED);
      dropped_ = end;
    }
  }

  void stop() override { stopped_ = true; }
  bool complete() const override { return !stopped_.load() && next_.load() >= spans_.size(); }
  std::string metadataJson() const override {
    std::string md(text_ + skip_, open_ + 1 - skip_);
    md += ']';
    md.append(text_ + close_ + 1, n_ - close_ - 1);
    return md;
  }
  uint64_t jsonBytes() const override { return n_; }
  uint64_t expectedBytes() const override { return n_; }

 private:
  char* text_;
  size_t n_, skip_, open_, close_;
  bool drop_;
  std::vector<std::pair<size_t, size_t>> spans_;  // [first, last] bytes of each chunk
  std::vector<std::pair<char, char>> saved_;      // what '[' and ']' replaced
  std::atomic<size_t> next_{0};
  std::atomic<bool> stopped_{false};
  std::mutex mu_;
  std::vector<bool> done_;
  size_t frontier_ = 0;
  size_t dropped_ = 0;
};

// ---------------------------------------------------------------------------
// Chunks inflated from a gzip stream by the parsing threads themselves: a
// thread that needs a chunk inflates it (one at a time, in stream order)
// into a buffer of a small pool, then parses it while the text is still in
// its cache. No extra thread competes for the cores, and nothing waits on a
// producer that the scheduler has not run yet.

class GzipChunks : public ChunkSource {
 public:
  GzipChunks(const char* data, size_t size, const ReaderLimits& limits) : z_(data, size, limits.maxDecompressedBytes) {
    const uint64_t hint = gzipSizeHint(data, size);
    expected_ = hint >= size ? hint : uint64_t{size} * 8;
    chunk_ = chunkTarget(limits, expected_);
    // Each parsing thread holds at most one chunk when it asks for the next.
    const unsigned hw = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
    bufs_.resize(hw + 1);
    for (size_t i = 0; i < bufs_.size(); ++i) free_.push_back(i);
  }

  bool next(Chunk* w) override {
    std::lock_guard<std::mutex> lock(inflateMu_);
    if (finished_ || stopped_.load()) return false;
    if (!headRead_ && !readHead()) {
      finished_ = true;
      return false;
    }
    const size_t slot = acquire();
    if (slot == kNone || !inflateChunk(slot, w)) {
      finished_ = true;
      if (slot != kNone) releaseSlot(slot);
      return false;
    }
    return true;
  }

  void release(const Chunk& w) override { releaseSlot(w.slot); }

  void stop() override {
    stopped_ = true;
    std::lock_guard<std::mutex> lock(freeMu_);
    freeCv_.notify_all();
  }

  bool complete() const override { return complete_; }
  std::string metadataJson() const override { return head_ + "]" + tail_; }
  uint64_t jsonBytes() const override { return z_.produced(); }
  std::string fatalError() const override { return z_.error(); }
  double decompressSeconds() const override { return inflateS_; }
  uint64_t expectedBytes() const override { return expected_; }

 private:
  struct Buf {
    std::unique_ptr<char[]> p;
    size_t cap = 0;
  };

  // Makes room for `want` bytes plus padding, keeping b.p[0, len).
  static void ensure(Buf& b, size_t len, size_t want) {
    if (b.cap >= want + kPad) return;
    auto bigger = std::unique_ptr<char[]>(new char[want + kPad]);
    if (len) std::memcpy(bigger.get(), b.p.get(), len);
    b.p = std::move(bigger);
    b.cap = want + kPad;
  }

  // Inflates into b.p[len, want) until it is full or the stream ends.
  bool fill(Buf& b, size_t& len, size_t want) {
    ensure(b, len, want);
    const auto t0 = std::chrono::steady_clock::now();
    while (len < want && !z_.done()) {
      size_t got = 0;
      if (!z_.read(b.p.get() + len, want - len, &got)) return false;
      len += got;
    }
    inflateS_ += secondsSince(t0);
    std::memset(b.p.get() + len, 0, kPad);
    return true;
  }

  size_t acquire() {
    std::unique_lock<std::mutex> lock(freeMu_);
    freeCv_.wait(lock, [&] { return stopped_.load() || !free_.empty(); });
    if (free_.empty()) return kNone;
    const size_t s = free_.back();
    free_.pop_back();
    return s;
  }

  void releaseSlot(size_t slot) {
    std::lock_guard<std::mutex> lock(freeMu_);
    free_.push_back(slot);
    freeCv_.notify_one();
  }

  // Everything up to the '[' of "traceEvents"; what follows is carried into
  // the first chunk.
  bool readHead() {
    Buf head;
    size_t len = 0, open = kNone, skip = 0, first = 0;
    for (size_t want = 1 << 16; open == kNone; want *= 2) {
      if (want > (size_t{64} << 20) || !fill(head, len, want)) return false;
      skip = len >= 3 && std::memcmp(head.p.get(), "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
      first = skip;
      while (first < len && isWs(head.p[first])) ++first;
      if (first < len && head.p[first] != '{') return false;
      if (first < len) open = findEventsOpen(head.p.get(), first, len);
      if (open == kNone && z_.done()) return false;
    }
    head_.assign(head.p.get() + skip, open + 1 - skip);
    carry_.assign(head.p.get() + open + 1, len - open - 1);
    carryOffset_ = open + 1;
    headRead_ = true;
    return true;
  }

  // The next chunk into bufs_[slot]: '[', the carried start of its first
  // event, fresh text up to the last cut, ']'.
  bool inflateChunk(size_t slot, Chunk* w) {
    Buf& b = bufs_[slot];
    const uint64_t offset = carryOffset_ - 1;
    size_t want = std::max(chunk_, carry_.size() + chunk_ / 4) + 1;
    ensure(b, 0, want);
    b.p[0] = '[';
    std::memcpy(b.p.get() + 1, carry_.data(), carry_.size());
    size_t len = 1 + carry_.size();
    while (true) {
      if (!fill(b, len, want)) return false;
      if (z_.done()) {
        const size_t close = findEventsClose(b.p.get(), 0, len);
        if (close == kNone) return false;
        tail_.assign(b.p.get() + close + 1, len - close - 1);
        *w = {b.p.get(), close + 1, offset, index_++, slot};
        complete_ = true;
        finished_ = true;  // the next call ends the stream
        return true;
      }
      Cut c;
      if (cutBackward(b.p.get(), 0, len, &c)) {
        carry_.assign(b.p.get() + c.brace, len - c.brace);
        carryOffset_ = offset + c.brace;
        b.p[c.comma] = ']';
        *w = {b.p.get(), c.comma + 1, offset, index_++, slot};
        return true;
      }
      want *= 2;  // an event longer than the chunk
    }
  }

  GunzipStream z_;
  uint64_t expected_ = 0;
  size_t chunk_ = 0;
  std::mutex inflateMu_;  // one thread inflates at a time; guards the stream state below
  bool headRead_ = false;
  bool finished_ = false;
  bool complete_ = false;
  std::string head_, tail_, carry_;
  uint64_t carryOffset_ = 0;
  size_t index_ = 0;
  double inflateS_ = 0;
  std::vector<Buf> bufs_;
  std::mutex freeMu_;
  std::condition_variable freeCv_;
  std::vector<size_t> free_;
  std::atomic<bool> stopped_{false};
};

// ---------------------------------------------------------------------------

// Parses one chunk into `p`; false when the text is not what we expect.
bool parseChunk(od::parser& parser, size_t& capacity, const Chunk& w, Parser& p, const ReaderLimits& limits,
                size_t* fixed, size_t* firstBad) {
  if (w.len > capacity) {
    // One level less: these arrays sit at the top, not inside an object.
    if (parser.allocate(std::max<size_t>(w.len, 64), parserDepth(limits) - 1)) return false;
    capacity = w.len;
  }
  od::document doc;
  auto ec = parser.iterate(w.text, w.len, w.len + kPad).get(doc);
  if (ec == simdjson::UTF8_ERROR) {
    *fixed = repairUtf8(w.text, w.len, firstBad);
    ec = parser.iterate(w.text, w.len, w.len + kPad).get(doc);
  }
  if (ec) return false;
  od::array arr;
  if (doc.get_array().get(arr)) return false;
  for (auto item : arr) {
    od::value v;
    if (item.get(v)) return false;
    if (!p.event(doc, v)) return false;
  }
  const char* tl = nullptr;
  return !(!doc.current_location().get(tl) && tl && tl < w.text + w.len) && !p.ambiguousId;
}

// The object around the events; false when it is not exactly one
// "traceEvents": [] plus metadata keys.
bool parseMetadata(std::string md, Parser& mp, const ReaderLimits& limits) {
  const size_t len = md.size();
  md.resize(len + kPad, '\0');
  mp.textBase = md.data();
  od::parser parser;
  if (parser.allocate(std::max<size_t>(len, 64), parserDepth(limits))) return false;
  od::document doc;
  if (parser.iterate(md.data(), len, md.size()).get(doc)) return false;
  od::object obj;
  if (doc.get_object().get(obj)) return false;
  int eventKeys = 0;
  for (auto field : obj) {
    std::string_view key;
    od::value v;
    if (!readField(field, &key, &v)) return false;
    if (key == "traceEvents") {
      od::array arr;
      if (v.get_array().get(arr)) return false;
      for (auto el : arr) {
        (void)el;
        return false;
      }
      ++eventKeys;
    } else {
      mp.topMeta(key, v);
    }
  }
  const char* tl = nullptr;
  if (!doc.current_location().get(tl) && tl && tl < md.data() + len) return false;
  return eventKeys == 1;
}

}  // namespace

std::unique_ptr<ChunkSource> textChunks(char* text, size_t n, size_t skip, const ReaderLimits& limits,
                                        bool dropParsedPages) {
  size_t first = skip;
  while (first < n && isWs(text[first])) ++first;
  if (first >= n || text[first] != '{') return nullptr;
  const size_t open = findEventsOpen(text, first, n);
  if (open == kNone) return nullptr;
  const size_t close = findEventsClose(text, open, n);
  if (close == kNone) return nullptr;
  auto src = std::make_unique<TextChunks>(text, n, skip, open, close, dropParsedPages);
  if (!src->plan(chunkTarget(limits, close - open))) return nullptr;
  return src;
}

std::unique_ptr<ChunkSource> gzipChunks(const char* data, size_t size, const ReaderLimits& limits) {
  return std::make_unique<GzipChunks>(data, size, limits);
}

std::optional<LoadResult> parseChunks(ChunkSource& src, const std::string& path, const ReaderLimits& limits) {
  const auto t0 = std::chrono::steady_clock::now();
  struct Parsed {
    std::unique_ptr<Parser> p;
    std::vector<MetaOp> log;
  };
  std::mutex mu;
  std::map<size_t, Parsed> pending;  // parsed chunks waiting for their turn to merge
  size_t nextMerge = 0;
  EventStoreBuilder b;
  // Kineto spends ~300-400 bytes of JSON per event: reserving for one per
  // 128 bytes avoids regrowth; untouched reserve costs no memory.
  const uint64_t expected = src.expectedBytes();
  b.reserve(static_cast<size_t>(expected / 128), static_cast<size_t>(expected / 256));
  std::vector<MetaOp> metaOps;
  uint64_t seen = 0, utfFixed = 0, utfFirst = UINT64_MAX, chunks = 0;
  bool failed = false;

  auto worker = [&] {
    try {
      od::parser parser;
      size_t capacity = 0;
      Chunk w;
      while (src.next(&w)) {
        Parsed d;
        d.p = std::make_unique<Parser>(limits, w.text, w.offset);
        d.p->metaLog = &d.log;
        size_t fixed = 0, firstBad = 0;
        const bool ok = parseChunk(parser, capacity, w, *d.p, limits, &fixed, &firstBad);
        src.release(w);
        std::lock_guard<std::mutex> lock(mu);
        if (!ok) {
          failed = true;
          src.stop();
          return;
        }
        if (fixed) {
          utfFixed += fixed;
          utfFirst = std::min<uint64_t>(utfFirst, w.offset + firstBad);
        }
        pending.emplace(w.index, std::move(d));
        // Merge in text order, as a one-pass read would have added them.
        for (auto it = pending.find(nextMerge); it != pending.end(); it = pending.find(++nextMerge)) {
          Parsed m = std::move(it->second);
          pending.erase(it);
          const std::vector<uint32_t> map = b.merge(std::move(m.p->b), &remapSyntheticId);
          for (MetaOp& op : m.log) {
            op.id = remapSyntheticId(op.id, map);
            metaOps.push_back(std::move(op));
          }
          seen += m.p->eventsSeen;
          ++chunks;
        }
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      failed = true;
      src.stop();
    }
  };
  {
    const unsigned hw = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
    std::vector<std::thread> threads;
    try {
      for (unsigned k = 1; k < hw; ++k) threads.emplace_back(worker);
    } catch (...) {
      // Fewer threads: the ones running (and this one) do the work.
    }
    worker();
    for (auto& t : threads) t.join();
  }
  if (!src.fatalError().empty()) return fail(path, src.fatalError());
  if (failed || !src.complete() || !pending.empty()) return std::nullopt;
  if (b.eventCount() > limits.maxEvents || b.eventCount() == 0 || seen == 0) return std::nullopt;

  Parser mp(limits, nullptr);
  if (!parseMetadata(src.metadataJson(), mp, limits)) return std::nullopt;
  auto& meta = b.meta();
  meta = std::move(mp.b.meta());
  for (MetaOp& op : metaOps) {
    if (op.overwrite) {
      if (op.process) meta.processNames[op.id] = op.name;
      if (op.thread) meta.threadNames[op.id] = op.name;
    } else {
      if (op.process) meta.processNames.emplace(op.id, op.name);
      if (op.thread) meta.threadNames.emplace(op.id, op.name);
    }
  }
  meta.sourcePath = path;

  LoadResult result;
  if (utfFixed)
    result.warning = std::to_string(utfFixed) + " invalid UTF-8 byte(s) replaced with '?' (first at byte " +
                     std::to_string(utfFirst) + ")";
  result.timings.parse = secondsSince(t0);
  result.timings.decompress = src.decompressSeconds();
  const auto tb = std::chrono::steady_clock::now();
  result.store.emplace(std::move(b).build());
  result.timings.build = secondsSince(tb);
  result.jsonBytes = src.jsonBytes();
  result.chunks = chunks;
  return result;
}

}  // namespace attnscope::reader
