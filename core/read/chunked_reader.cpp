#include "core/read/chunked_reader.h"

#include "core/read/chunk_parse.h"
#include "core/store/span_log.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/read/gzip.h"
#include "core/read/json_scan.h"
#include "core/read/trace_parser.h"
#include "core/store/threads.h"

namespace attnscope::reader {

namespace {

constexpr size_t kNone = static_cast<size_t>(-1);
constexpr size_t kPad = simdjson::SIMDJSON_PADDING;
// The object's text before and after the events array is kept whole (without
// its blanks): at most this much of each.
constexpr uint64_t kMaxHead = uint64_t{64} << 20;

size_t chunkTarget(const ReaderLimits& limits, uint64_t total) {
  return static_cast<size_t>(std::max<uint64_t>(std::min<uint64_t>(limits.chunkBytes, total / 8), 4096));
}

// A private file mapping's pages before `upTo` go back to the kernel (read again, unchanged, from the
// page cache if anything touched them), in steps of 4 MiB, or all that is left when `last`.
void dropMappedBefore(const char* base, size_t upTo, size_t* dropped, bool last) {
  static const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t end = upTo / page * page;
  if (end > *dropped + (size_t{4} << 20) || (last && end > *dropped)) {
    ::madvise(const_cast<char*>(base) + *dropped, end - *dropped, MADV_DONTNEED);
    *dropped = end;
  }
}

// A growable buffer followed by SIMDJSON_PADDING bytes.
struct Buf {
  std::unique_ptr<char[]> p;
  size_t cap = 0;
  // Room for `want` bytes plus padding, keeping p[0, keep).
  void ensure(size_t keep, size_t want) {
    if (cap >= want + kPad) return;
    const size_t grown = std::max(want, cap + cap / 2);
    auto bigger = std::unique_ptr<char[]>(new char[grown + kPad]);
    if (keep && p) std::memcpy(bigger.get(), p.get(), std::min(keep, cap));
    p = std::move(bigger);
    cap = grown + kPad;
  }
};

// A few buffers shared by the parsing threads (each holds at most one chunk
// when it asks for the next, so hw + 1 never runs out).
class BufPool {
 public:
  BufPool() : bufs_(workerThreads() + 1) {
    for (size_t i = 0; i < bufs_.size(); ++i) free_.push_back(i);
  }
  size_t acquire() {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.empty()) return kNone;
    const size_t s = free_.back();
    free_.pop_back();
    return s;
  }
  void release(size_t slot) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(slot);
  }
  Buf& operator[](size_t slot) { return bufs_[slot]; }

 private:
  std::vector<Buf> bufs_;
  std::mutex mu_;
  std::vector<size_t> free_;
};

void noteProgress(const ReaderLimits& limits, uint64_t bytes) {
  if (limits.progress) limits.progress->bytesDone.store(bytes, std::memory_order_relaxed);
}

bool cancelled(const ReaderLimits& limits) {
  return limits.progress && limits.progress->cancel.load(std::memory_order_relaxed);
}

// What both sources share: the object around the events, how the text ended.
class ScannedSource : public ChunkSource {
 public:
  explicit ScannedSource(HeadScanner head) : head_(std::move(head)) {}
  void stop() override { stopped_ = true; }
  bool complete() const override { return complete_ && !stopped_.load(); }
  std::string metadataJson() const override {
    if (head_.arrayForm()) return {};
    return head_.kept() + "]" + (partial_.empty() ? tail_ : "}");
  }
  bool arrayForm() const override { return head_.arrayForm(); }
  std::string partialNote() const override { return partial_; }

 protected:
  HeadScanner head_;
  bool complete_ = false;
  std::string tail_, partial_, why_;
  std::atomic<bool> stopped_{false};
};

// ---------------------------------------------------------------------------
// Chunks over text in memory, cut as the parsing threads ask for them: by one
// cutter running one chunk ahead of the parsers, under a lock, or (from
// parallelCutMinThreads threads on) in parts that the parsing threads cut
// ahead, each on its own (Part, below).

class TextChunks : public ScannedSource {
 public:
  TextChunks(char* text, size_t n, const ReaderLimits& limits, bool drop, size_t target, HeadScanner head,
             uint64_t open)
      : ScannedSource(std::move(head)),
        text_(text),
        n_(n),
        limits_(limits),
        drop_(drop),
        target_(target),
        cutter_(target, limits.maxEventBytes),
        scanAt_(open + 1),
        start_(open + 1) {
    // In parts on several threads when there are enough threads for one cutter to hold the parsers
    // back (on 2 or 3, the parsing takes longer than the cut), and text for more than two parts (a
    // smaller text's chunks are an eighth of it: its parts would be one and a sliver).
    const uint64_t part = uint64_t{target} * 8;
    const uint64_t parts = (n_ - start_ + part - 1) / part;
    if (workerThreads() >= limits.parallelCutMinThreads && parts >= 3) {
      parts_.resize(static_cast<size_t>(parts));
      for (size_t s = 0; s < parts_.size(); ++s) parts_[s].x = start_ + s * part;
      parts_[0].b = start_;
      known_ = 1;
      window_ = 2 * size_t{workerThreads()};
      parallel_ = true;
    }
  }

  bool next(Chunk* w) override {
    std::unique_lock<std::mutex> lock(mu_);
    while (parallel_) {
      if (finished_ || stopped_.load() || cancelled(limits_)) return false;
      const int got = nextInParts(lock, w);
      if (got >= 0) return got == 1;
    }
    // (Also after a wait above: the rest may have been cut, alone, meanwhile.)
    if (finished_ || stopped_.load() || cancelled(limits_)) return false;
    ElementCutter::Run run;
    while (true) {
      // In pieces, so that a long stretch with nothing to hand out (blanks)
      // still shows progress and can be cancelled.
      const size_t piece = std::min<size_t>(n_ - scanAt_, size_t{64} << 20);
      size_t used = 0;
      const auto stop = cutter_.scan(text_ + scanAt_, piece, scanAt_, &used, &run);
      scanAt_ += used;
      if (stop == ElementCutter::Stop::NeedMore && scanAt_ < n_) {
        noteProgress(limits_, scanAt_);
        if (cancelled(limits_)) {
          finished_ = true;
          return false;
        }
        continue;
      }
      if (stop == ElementCutter::Stop::Cut) break;
      if (stop == ElementCutter::Stop::Error) {
        why_ = cutter_.error();
        finished_ = true;
        return false;
      }
      if (stop == ElementCutter::Stop::Close) {
        finished_ = true;
        if (!readTail(cutter_.closeAt() + 1)) return false;
        complete_ = true;
        if (run.first == kNoByte) return false;
        break;
      }
      // The text ends inside the events: keep the whole ones.
      finished_ = true;
      if (cutter_.elements() + elementsBefore_ == 0) return false;
      complete_ = true;
      partial_ = "the file ends early (cut inside an event?): kept the events before byte " +
                 std::to_string(cutter_.lastEnd() + 1);
      run = cutter_.rest();
      if (run.first == kNoByte) return false;
      break;
    }
    handOut(run, w);
    noteProgress(limits_, scanAt_);
    return true;
  }

  void release(const Chunk& w) override {
    pool_.release(w.slot);
    std::lock_guard<std::mutex> lock(mu_);
    done_[w.index] = true;
    while (frontier_ < done_.size() && done_[frontier_]) ++frontier_;
    if (!drop_) return;
    // Pages wholly before the first chunk still in use go back to the kernel.
    const size_t upTo = frontier_ < spans_.size() ? spans_[frontier_].first - 1 : std::min<size_t>(scanAt_, n_);
    dropMappedBefore(text_, upTo, &dropped_, finished_ && frontier_ == spans_.size());
  }

  // (Threads waiting for a part's cut see it at once.)
  void stop() override {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    more_.notify_all();
  }

  uint64_t jsonBytes() const override { return n_; }
  uint64_t expectedBytes() const override { return n_; }
  uint64_t cutParts() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return taken_;
  }

 private:
  struct Span {
    size_t first = 0, last = 0;  // the run's first and last bytes
  };

  // The text after the array (object form: the rest of the object).
  bool readTail(size_t from) {
    bool inString = false, escaped = false;
    if (!compactJson(text_ + from, n_ - from, &inString, &escaped, &tail_, kMaxHead)) {
      why_ = "more than 64 MiB of text after the events";
      return false;
    }
    if (head_.arrayForm() && !tail_.empty()) return false;  // trailing content: the one-pass reader says so
    return true;
  }

  // A copy in a pooled buffer with its own padding: simdjson reads up to 64
  // bytes past a chunk's end, so a chunk marked in place in the text would be
  // read by one thread while the next chunk's '[' is written by another.
  void handOut(const ElementCutter::Run& run, Chunk* w) {
    const Span s{static_cast<size_t>(run.first), static_cast<size_t>(run.last)};
    const size_t len = s.last - s.first + 3;  // '[' run ']'
    const size_t slot = pool_.acquire();      // each parsing thread holds at most one
    Buf& b = pool_[slot];
    b.ensure(0, len);
    b.p[0] = '[';
    std::memcpy(b.p.get() + 1, text_ + s.first, len - 2);
    b.p[len - 1] = ']';
    std::memset(b.p.get() + len, 0, kPad);
    *w = {b.p.get(), len, s.first - 1, spans_.size(), slot};
    spans_.push_back(s);
    done_.push_back(false);
  }

  // The text cut in parts on several threads. Part s starts at x (nominal); what its text does to the
  // string state and the nesting (summarize) gives, as a prefix over the parts before, the state at
  // the next part's x, and from it b: the first element end at or after x (part 0: the array's first
  // byte). A cutter takes up [b, e), e the next part's b (or the text's end), resumed just after an
  // element. The parts are handed out in order; each one's cutter, stopping at e, checks that the
  // next part's start was right (justAfter); where it was not (not valid JSON), the rest of the
  // text is cut by that cutter, one thread at a time, as without parts. So the elements handed out
  // are the ones one cutter finds; only where the runs between them are cut differs.
  struct Part {
    uint64_t x = 0;
    StretchSummary sum;
    bool summing = false, summed = false;
    TextState state;       // at x (once known_ > the part's index)
    uint64_t b = kNoByte;  // kNoByte: no element ends in the part (its text is the part before's)
    bool cutting = false, cut = false, taken = false;
    uint64_t e = 0;
    std::vector<ElementCutter::Run> runs;
    ElementCutter::Stop stop = ElementCutter::Stop::NeedMore;
    ElementCutter cutter{0, 0};
  };

  uint64_t partEnd(size_t s) const { return s + 1 < parts_.size() ? parts_[s + 1].x : n_; }

  // Where part s's cut ends, once it is known: the next b, or the text's end.
  bool cutEnd(size_t s, uint64_t* e) const {
    for (size_t t = s + 1; t < known_; ++t)
      if (parts_[t].b != kNoByte) {
        *e = parts_[t].b;
        return true;
      }
    if (known_ < parts_.size()) return false;
    *e = n_;
    return true;
  }

  // States and starts of the parts whose parts before are summed. Under mu_.
  void settle() {
    while (known_ < parts_.size() && parts_[known_ - 1].summed) {
      Part& p = parts_[known_];
      p.state = after(parts_[known_ - 1].state, parts_[known_ - 1].sum);
      p.b = elementEndAfter(text_, start_, p.x, partEnd(known_), p.state);
      ++known_;
    }
  }

  void cutPart(Part& p) {
    const spans::Span sp("cut part");
    p.cutter = ElementCutter(target_, limits_.maxEventBytes);
    if (&p != &parts_[0]) p.cutter.resumeAfter(p.b - 1);
    uint64_t at = p.b;
    while (true) {
      size_t used = 0;
      ElementCutter::Run run;
      p.stop = p.cutter.scan(text_ + at, static_cast<size_t>(p.e - at), at, &used, &run);
      at += used;
      if (p.stop == ElementCutter::Stop::Cut) {
        p.runs.push_back(run);
        continue;
      }
      if (p.stop == ElementCutter::Stop::Close && run.first != kNoByte) p.runs.push_back(run);
      return;
    }
  }

  // Cuts the text from part s on with one cutter, as without parts (`cutter` is where it stands).
  void goOnAlone(ElementCutter cutter, uint64_t at) {
    cutter_ = std::move(cutter);
    scanAt_ = at;
    parallel_ = false;
  }

  // Runs a job with mu_ let go (`lock` holds it before and after). Whoever waits is woken when it ends,
  // however it ends: one that throws (out of memory) ends the cutting, and the exception goes on to
  // the parsing thread, which stops the load.
  template <typename Job>
  void runJob(std::unique_lock<std::mutex>& lock, Job&& job) {
    ++busy_;
    lock.unlock();
    try {
      job();
    } catch (...) {
      lock.lock();
      --busy_;
      finished_ = true;
      more_.notify_all();
      throw;
    }
    lock.lock();
    --busy_;
    more_.notify_all();
  }

  // One step of next() with parts: 1 a chunk is in *w, 0 nothing more, -1 call again (a job was done,
  // or the rest goes on without parts). Under `lock`, which a job lets go of while it runs.
  int nextInParts(std::unique_lock<std::mutex>& lock, Chunk* w) {
    Part& h = parts_[hand_];
    if (h.cut) {
      if (!h.taken) {
        h.taken = true;
        ++taken_;
      }
      if (ran_ < h.runs.size()) {
        const ElementCutter::Run& run = h.runs[ran_++];
        handOut(run, w);
        scanAt_ = run.last + 1;
        noteProgress(limits_, scanAt_);
        return 1;
      }
      if (h.stop == ElementCutter::Stop::Error) {
        why_ = h.cutter.error();
        finished_ = true;
        return 0;
      }
      if (h.stop == ElementCutter::Stop::Close) {
        finished_ = true;
        if (!readTail(h.cutter.closeAt() + 1)) return 0;
        complete_ = true;
        return 0;
      }
      // At e: the next part's start, if the cutter agrees; at the end of the text, as without parts.
      size_t t = hand_ + 1;
      while (t < parts_.size() && parts_[t].b != h.e) ++t;
      if (h.e == n_ || t == parts_.size() || !h.cutter.justAfter(h.e - 1)) {
        goOnAlone(std::move(h.cutter), h.e);
        return -1;
      }
      elementsBefore_ += h.cutter.elements();
      const ElementCutter::Run rest = h.cutter.rest();
      h.runs = {};
      hand_ = t;
      ran_ = 0;
      more_.notify_all();  // the window moved
      if (rest.first == kNoByte) return -1;
      handOut(rest, w);
      scanAt_ = rest.last + 1;
      noteProgress(limits_, scanAt_);
      return 1;
    }
    // A job: a cut whose ends are known (the one at hand first), else a sum, within the window.
    const size_t end = std::min(parts_.size(), hand_ + window_);
    for (size_t s = hand_; s < std::min(end, known_); ++s) {
      Part& p = parts_[s];
      if (p.b == kNoByte || p.cutting || !cutEnd(s, &p.e)) continue;
      p.cutting = true;
      runJob(lock, [&] { cutPart(p); });
      p.cut = true;
      return -1;
    }
    for (size_t s = hand_; s + 1 < std::min(end + 1, parts_.size()); ++s) {
      Part& p = parts_[s];
      if (p.summing) continue;
      p.summing = true;
      runJob(lock, [&] {
        const spans::Span sp("sum part");
        p.sum = summarize(text_, start_, p.x, partEnd(s));
      });
      p.summed = true;
      settle();
      return -1;
    }
    if (busy_ == 0 && !h.cutting) {
      // Nothing to do and nobody at work: no element ends in the window's parts (one huge element).
      ElementCutter c(target_, limits_.maxEventBytes);
      if (hand_ > 0) c.resumeAfter(h.b - 1);
      goOnAlone(std::move(c), h.b);
      return -1;
    }
    more_.wait(lock);
    return -1;
  }

  char* text_;
  size_t n_;
  const ReaderLimits& limits_;
  bool drop_;
  size_t target_;
  ElementCutter cutter_;
  size_t scanAt_;
  uint64_t start_;
  bool parallel_ = false;
  std::vector<Part> parts_;
  size_t known_ = 0;   // parts whose state and b are known
  size_t hand_ = 0;    // the part being handed out
  size_t ran_ = 0;     // its runs handed out
  size_t window_ = 0;  // parts summed or cut ahead of hand_ (the pages they touch stay resident)
  size_t busy_ = 0;    // jobs running
  uint64_t elementsBefore_ = 0;
  uint64_t taken_ = 0;  // parts whose cut was taken
  std::condition_variable more_;
  BufPool pool_;
  mutable std::mutex mu_;
  std::deque<Span> spans_;
  std::deque<bool> done_;
  bool finished_ = false;
  size_t frontier_ = 0;
  size_t dropped_ = 0;
};

// ---------------------------------------------------------------------------
// Chunks inflated from a gzip stream by the parsing threads themselves: a
// thread that needs a chunk inflates it (one at a time, in stream order)
// into a buffer of a small pool, then parses it while the text is still in
// its cache. No extra thread competes for the cores, and nothing waits on a
// producer that the scheduler has not run yet. What a buffer keeps between
// two inflates is the run of events not yet handed out: blanks between
// events are dropped as they come.

class GzipChunks : public ScannedSource {
 public:
  GzipChunks(const char* data, size_t size, const ReaderLimits& limits, bool drop)
      : ScannedSource(HeadScanner(kMaxHead)),
        data_(data),
        drop_(drop),
        z_(data, size, limits.maxDecompressedBytes),
        limits_(limits),
        cutter_(0, 0) {
    // The trailer's size is a hint a hostile file can set to 4 GiB: trusted
    // (for reservations) only up to 100x the compressed size.
    const uint64_t hint = gzipSizeHint(data, size);
    expected_ = hint >= size && hint / 100 <= size ? hint : uint64_t{size} * 8;
    chunk_ = chunkTarget(limits, expected_);
    cutter_ = ElementCutter(chunk_, limits.maxEventBytes);
    if (limits.progress) limits.progress->bytesTotal.store(size, std::memory_order_relaxed);
  }

  bool next(Chunk* w) override {
    std::lock_guard<std::mutex> lock(inflateMu_);
    if (finished_ || stopped_.load() || cancelled(limits_)) return false;
    if (!headRead_ && !readHead()) {
      finished_ = true;
      return false;
    }
    const size_t slot = pool_.acquire();
    if (slot == kNone || !inflateChunk(slot, w)) {
      finished_ = true;
      if (slot != kNone) pool_.release(slot);
      return false;
    }
    noteProgress(limits_, z_.consumed());
    dropInflated();
    return true;
  }

  void release(const Chunk& w) override { pool_.release(w.slot); }
  uint64_t jsonBytes() const override { return z_.produced(); }
  std::string fatalError() const override { return z_.error(); }
  double decompressSeconds() const override { return inflateS_; }
  uint64_t expectedBytes() const override { return expected_; }

  std::string fallbackRefused() override {
    // The one-pass reader needs the whole text: only when it is small.
    // Inflating on (into a scratch buffer) finds out how large it is.
    static constexpr uint64_t kWholeMax = uint64_t{256} << 20;
    std::lock_guard<std::mutex> lock(inflateMu_);
    std::unique_ptr<char[]> scratch(new char[1 << 20]);
    while (!z_.done() && z_.produced() <= kWholeMax && !cancelled(limits_)) {
      size_t got = 0;
      if (!z_.read(scratch.get(), 1 << 20, &got)) return z_.error();
    }
    if (z_.done() && z_.produced() <= kWholeMax) return {};
    const std::string why = why_.empty() ? "malformed JSON" : why_;
    return "cannot read this .gz as a trace: " + why + " (over 256 MiB of JSON: too large to read whole)";
  }

 private:
  // Inflates into b.p[1 + len, 1 + want) (p[0] is kept for a '[') until it
  // is full or the stream ends.
  bool fill(Buf& b, size_t& len, size_t want) {
    b.ensure(1 + len, 1 + want);
    const auto t0 = std::chrono::steady_clock::now();
    while (len < want && !z_.done()) {
      size_t got = 0;
      if (!z_.read(b.p.get() + 1 + len, want - len, &got)) {
        why_ = z_.error();
        return false;
      }
      len += got;
    }
    inflateS_ += secondsSince(t0);
    return true;
  }

  // Up to the '[' of the events; what follows is carried into the first chunk.
  bool readHead() {
    Buf piece;
    uint64_t at = 0;
    bool bom = true;
    while (true) {
      size_t len = 0;
      if (!fill(piece, len, size_t{1} << 20)) return false;
      size_t from = 0;
      if (bom && len >= 3 && std::memcmp(piece.p.get() + 1, "\xEF\xBB\xBF", 3) == 0) from = 3;
      bom = false;
      size_t used = 0;
      const auto stop = head_.scan(piece.p.get() + 1 + from, len - from, at + from, &used);
      if (stop == HeadScanner::Stop::Error) {
        why_ = head_.error();
        return false;
      }
      if (stop == HeadScanner::Stop::Found) {
        carry_.assign(piece.p.get() + 1 + from + used, len - from - used);
        carryAt_ = scanAt_ = at + from + used;
        headRead_ = true;
        return true;
      }
      at += len;
      noteProgress(limits_, z_.consumed());
      if (cancelled(limits_)) return false;
      if (z_.done()) {
        why_ = "the text ends before the events";
        return false;
      }
    }
  }

  // The next chunk into pool_[slot]: the carried bytes, then fresh text,
  // scanned until a run of events is ready.
  bool inflateChunk(size_t slot, Chunk* w) {
    Buf& b = pool_[slot];
    uint64_t bufAt = carryAt_;  // text offset of b.p[1]
    size_t len = carry_.size();
    b.ensure(0, 1 + len + chunk_);
    if (len) std::memcpy(b.p.get() + 1, carry_.data(), len);
    carry_.clear();
    while (true) {
      const size_t from = static_cast<size_t>(scanAt_ - bufAt);
      size_t used = 0;
      ElementCutter::Run run;
      const auto stop = cutter_.scan(b.p.get() + 1 + from, len - from, scanAt_, &used, &run);
      scanAt_ += used;
      if (stop == ElementCutter::Stop::Error) {
        why_ = cutter_.error();
        return false;
      }
      if (stop == ElementCutter::Stop::Cut || stop == ElementCutter::Stop::Close) {
        const size_t rest = static_cast<size_t>(scanAt_ - bufAt);
        if (stop == ElementCutter::Stop::Close) {
          if (!readTail(b.p.get() + 1 + rest, len - rest)) return false;
          complete_ = true;
          finished_ = true;
          if (run.first == kNoByte) return false;
        } else {
          carry_.assign(b.p.get() + 1 + rest, len - rest);
          carryAt_ = scanAt_;
        }
        return handOut(b, bufAt, run, slot, w);
      }
      if (z_.done()) {
        // The text ends inside the events: keep the whole ones.
        finished_ = true;
        run = cutter_.rest();
        complete_ = cutter_.elements() > 0;
        if (!complete_) {
          why_ = "the text ends before any event";
          return false;
        }
        partial_ = z_.truncated() ? "the .gz ends early (cut after " + std::to_string(z_.consumed()) +
                                        " of its bytes, " + std::to_string(z_.produced()) + " bytes of JSON)"
                                  : "the JSON ends early (cut inside an event?): kept the events before byte " +
                                        std::to_string(cutter_.lastEnd() + 1);
        if (run.first == kNoByte) return false;
        return handOut(b, bufAt, run, slot, w);
      }
      // Keep only the run being gathered; blanks and handed-out text go.
      const uint64_t keep = std::min(cutter_.keepFrom(), scanAt_);
      if (keep > bufAt) {
        const auto drop = static_cast<size_t>(keep - bufAt);
        std::memmove(b.p.get() + 1, b.p.get() + 1 + drop, len - drop);
        len -= drop;
        bufAt = keep;
      }
      noteProgress(limits_, z_.consumed());
      if (cancelled(limits_) || !fill(b, len, len + chunk_)) return false;
    }
  }

  bool handOut(Buf& b, uint64_t bufAt, const ElementCutter::Run& run, size_t slot, Chunk* w) {
    const auto first = static_cast<size_t>(run.first - bufAt) + 1;  // in b.p
    const auto last = static_cast<size_t>(run.last - bufAt) + 1;
    b.p[first - 1] = '[';
    b.p[last + 1] = ']';
    std::memset(b.p.get() + last + 2, 0, kPad);
    *w = {b.p.get() + first - 1, last - first + 3, run.first - 1, index_++, slot};
    return true;
  }

  // What follows the events' ']' (the rest of the object), without blanks.
  bool readTail(const char* p, size_t n) {
    bool inString = false, escaped = false;
    std::unique_ptr<char[]> scratch;
    while (true) {
      if (!compactJson(p, n, &inString, &escaped, &tail_, kMaxHead)) {
        why_ = "more than 64 MiB of text after the events";
        return false;
      }
      if (z_.done() || cancelled(limits_)) break;
      if (!scratch) scratch.reset(new char[1 << 20]);
      size_t got = 0;
      if (!z_.read(scratch.get(), 1 << 20, &got)) {
        why_ = z_.error();
        return false;
      }
      p = scratch.get();
      n = got;
    }
    if (head_.arrayForm() && !tail_.empty()) {
      why_ = "text after the array of events";
      return false;
    }
    return true;
  }

  // The compressed bytes already inflated go back to the kernel (the inflater may still look at the
  // last 1 MiB). Under inflateMu_.
  void dropInflated() {
    constexpr size_t kMargin = size_t{1} << 20;
    if (drop_ && z_.consumed() > kMargin) dropMappedBefore(data_, z_.consumed() - kMargin, &dropped_, false);
  }
  const char* data_;
  bool drop_;
  size_t dropped_ = 0;
  GunzipStream z_;
  const ReaderLimits& limits_;
  ElementCutter cutter_;
  uint64_t expected_ = 0;
  size_t chunk_ = 0;
  std::mutex inflateMu_;  // one thread inflates at a time; guards the stream state below
  bool headRead_ = false;
  bool finished_ = false;
  std::string carry_;
  uint64_t carryAt_ = 0, scanAt_ = 0;
  size_t index_ = 0;
  double inflateS_ = 0;
  BufPool pool_;
};

// ---------------------------------------------------------------------------

}  // namespace

std::unique_ptr<ChunkSource> textChunks(char* text, size_t n, size_t skip, const ReaderLimits& limits,
                                        bool dropParsedPages) {
  HeadScanner head(kMaxHead);
  size_t used = 0;
  if (head.scan(text + skip, n - skip, skip, &used) != HeadScanner::Stop::Found) return nullptr;
  const uint64_t open = head.openAt();
  if (limits.progress) limits.progress->bytesTotal.store(n, std::memory_order_relaxed);
  return std::make_unique<TextChunks>(text, n, limits, dropParsedPages, chunkTarget(limits, n - open), std::move(head),
                                      open);
}

std::unique_ptr<ChunkSource> gzipChunks(const char* data, size_t size, const ReaderLimits& limits, bool dropReadPages) {
  return std::make_unique<GzipChunks>(data, size, limits, dropReadPages);
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

  // One thread at a time merges, outside the lock: the others go on parsing (a merge under the lock kept
  // every thread that finished a chunk waiting for it). A thread waits before taking another chunk while
  // 2 per thread wait to be merged, so the parsed chunks held stay bounded when the merge is the slower.
  std::condition_variable drained;
  bool merging = false;
  const size_t maxPending = 2 * size_t{workerThreads()};
  auto worker = [&] {
    try {
      od::parser parser;
      size_t capacity = 0;
      Chunk w;
      for (;;) {
        {
          std::unique_lock<std::mutex> lock(mu);
          drained.wait(lock, [&] { return failed || pending.size() < maxPending; });
          if (failed) return;
        }
        if (!src.next(&w)) break;
        Parsed d;
        d.p = std::make_unique<Parser>(limits, w.text, w.offset);
        d.p->metaLog = &d.log;
        size_t fixed = 0, firstBad = 0;
        bool ok = false;
        {
          const spans::Span sp("parse chunk");
          ok = parseChunk(parser, capacity, w, *d.p, limits, &fixed, &firstBad);
        }
        src.release(w);
        std::unique_lock<std::mutex> lock(mu);
        if (!ok) {
          failed = true;
          src.stop();
          drained.notify_all();
          return;
        }
        if (fixed) {
          utfFixed += fixed;
          utfFirst = std::min<uint64_t>(utfFirst, w.offset + firstBad);
        }
        pending.emplace(w.index, std::move(d));
        if (merging) continue;  // the merging thread takes it
        merging = true;
        // Merge in text order, as a one-pass read would have added them. Only the merging thread reads
        // or writes the builder, the meta log and the counts; the lock hands them from one to the next.
        for (auto it = pending.find(nextMerge); it != pending.end(); it = pending.find(nextMerge)) {
          Parsed m = std::move(it->second);
          pending.erase(it);
          ++nextMerge;
          drained.notify_all();
          lock.unlock();
          {
            const spans::Span sp("merge chunk");
            const std::vector<uint32_t> map = b.merge(std::move(m.p->b), &remapSyntheticId);
            for (MetaOp& op : m.log) {
              op.id = remapSyntheticId(op.id, map);
              metaOps.push_back(std::move(op));
            }
            seen += m.p->eventsSeen;
            ++chunks;
            if (limits.progress) limits.progress->events.store(b.eventCount(), std::memory_order_relaxed);
          }
          lock.lock();
        }
        merging = false;
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      failed = true;
      src.stop();
      drained.notify_all();
    }
  };
  {
    const unsigned hw = workerThreads();
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
  if (cancelled(limits)) return cancelledLoad(path);
  // Not for us: the one-pass reader takes the text, if it may hold it whole.
  auto notHere = [&]() -> std::optional<LoadResult> {
    std::string refused = src.fallbackRefused();
    if (cancelled(limits)) return cancelledLoad(path);
    if (!refused.empty()) return fail(path, refused);
    return std::nullopt;
  };
  if (failed || !src.complete() || !pending.empty()) return notHere();
  if (b.eventCount() > limits.maxEvents || b.eventCount() == 0 || seen == 0) return notHere();

  Parser mp(limits, nullptr);
  if (!src.arrayForm() && !parseMetadata(src.metadataJson(), mp, limits)) return notHere();
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
  const std::string partial = src.partialNote();
  if (!partial.empty()) result.warning = partial + (result.warning.empty() ? "" : "; " + result.warning);
  result.timings.parse = secondsSince(t0);
  result.timings.decompress = src.decompressSeconds();
  if (limits.progress) {
    limits.progress->bytesDone.store(limits.progress->bytesTotal.load(std::memory_order_relaxed),
                                     std::memory_order_relaxed);
    limits.progress->stage.store(1, std::memory_order_relaxed);
  }
  const auto tb = std::chrono::steady_clock::now();
  result.store.emplace(std::move(b).build());
  if (!partial.empty()) result.store->markPartial(partial);
  result.timings.build = secondsSince(tb);
  result.jsonBytes = src.jsonBytes();
  result.chunks = chunks;
  result.cutParts = src.cutParts();
  return result;
}

}  // namespace attnscope::reader
