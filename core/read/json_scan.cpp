#include "core/read/json_scan.h"

#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace attnscope::reader {

namespace {

inline bool blank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// One byte inside a string: follows backslash escapes (*escaped: the byte
// before was an unescaped backslash); true when the byte ends the string.
inline bool closesString(char c, bool* escaped) {
  if (*escaped) {
    *escaped = false;
    return false;
  }
  if (c == '\\') {
    *escaped = true;
    return false;
  }
  return c == '"';
}

// The first byte at or after i that is not a blank.
size_t skipBlanks(const char* p, size_t i, size_t n) {
#if defined(__SSE2__)
  const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'), tab = _mm_set1_epi8('\t');
  while (n - i >= 16 && blank(p[i])) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i b = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, sp), _mm_cmpeq_epi8(x, nl)),
                                   _mm_or_si128(_mm_cmpeq_epi8(x, cr), _mm_cmpeq_epi8(x, tab)));
    const auto m = static_cast<unsigned>(_mm_movemask_epi8(b));
    if (m != 0xFFFFu) return i + static_cast<size_t>(__builtin_ctz(~m));
    i += 16;
  }
#endif
  while (i < n && blank(p[i])) ++i;
  return i;
}

#if defined(__SSE2__)
struct Masks {
  uint64_t quote = 0, backslash = 0, open = 0, close = 0;
};

inline Masks masks64(const char* p) {
  Masks m;
  const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), lower = _mm_set1_epi8(0x20);
  // '{' and '[' differ only in bit 0x20, as do '}' and ']'.
  const __m128i op = _mm_set1_epi8('{'), cl = _mm_set1_epi8('}');
  for (int k = 0; k < 4; ++k) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    const __m128i xl = _mm_or_si128(x, lower);
    const int sh = 16 * k;
    m.quote |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, q)))} << sh;
    m.backslash |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, bs)))} << sh;
    m.open |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(xl, op)))} << sh;
    m.close |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(xl, cl)))} << sh;
  }
  return m;
}

// Bits of the bytes that a backslash escapes; *carry: the block's last byte
// is an unescaped backslash (so the next block's first byte is escaped).
inline uint64_t escapedBytes(uint64_t backslash, bool* carry) {
  uint64_t esc = *carry ? 1 : 0;
  *carry = false;
  while (backslash) {
    const int j = __builtin_ctzll(backslash);
    backslash &= backslash - 1;
    if ((esc >> j) & 1) continue;  // an escaped backslash is a plain character
    if (j == 63)
      *carry = true;
    else
      esc |= uint64_t{1} << (j + 1);
  }
  return esc;
}

// Bit i set when an odd number of bits at or below i are set in x.
inline uint64_t prefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

// The block's bytes inside strings (a quote that opens one counts as inside, one that closes it as
// outside), given *escaped (its first byte is escaped) and *inString (it starts inside a string);
// both are left as they are for the next block.
inline uint64_t stringBits(const Masks& m, bool* escaped, bool* inString) {
  const uint64_t quotes = m.quote & ~escapedBytes(m.backslash, escaped);
  const uint64_t str = prefixXor(quotes) ^ (*inString ? ~uint64_t{0} : 0);
  *inString = (str >> 63) != 0;
  return str;
}

// Walks the block's brackets outside strings (`st`; `open`: which are openers), keeping *depth: the bit of
// the first that takes it from 1 to 0, or 64 when none does.
template <typename Depth>
inline int closingBit(uint64_t open, uint64_t st, Depth* depth) {
  while (st) {
    const int j = __builtin_ctzll(st);
    st &= st - 1;
    if ((open >> j) & 1)
      ++*depth;
    else if ((*depth)-- == 1)
      return j;
  }
  return 64;
}
#endif

std::string mib(uint64_t b) { return std::to_string(b >> 20) + " MiB"; }

// Blanks outside strings are kept as written up to this many in a row; a
// longer run is kept as one space (a bomb of blanks costs no memory, and
// ordinary formatting is kept byte for byte).
constexpr size_t kBlankRun = 64;

// Appends the blanks p[i, end) as kept.
void keepBlanks(const char* p, size_t i, size_t end, std::string* out) {
  if (end - i <= kBlankRun)
    out->append(p + i, end - i);
  else
    out->push_back(' ');
}

}  // namespace

void ElementCutter::resumeAfter(uint64_t lastEnd) {
  depth_ = 0;
  inString_ = escaped_ = scalar_ = scalarString_ = sawComma_ = false;
  expectComma_ = true;
  elemFirst_ = runFirst_ = closeAt_ = kNoByte;
  lastEnd_ = lastEnd;
  elements_ = 0;
  error_.clear();
}

bool ElementCutter::justAfter(uint64_t lastEnd) const {
  return depth_ == 0 && !inString_ && !escaped_ && !scalar_ && !scalarString_ && expectComma_ && !sawComma_ &&
         lastEnd_ == lastEnd && closeAt_ == kNoByte && error_.empty();
}

namespace {

// Whether text[at] is escaped: an odd run of backslashes just before it (looked at back to `floor`).
bool escapedAt(const char* text, uint64_t floor, uint64_t at) {
  uint64_t k = at;
  while (k > floor && text[k - 1] == '\\') --k;
  return ((at - k) & 1) != 0;
}

// One byte of a stretch, as the 64-byte masks take it: a backslash escapes the next byte; a quote not
// escaped flips *in; a bracket returns +1 or -1 (0 for anything else) with *in as it stands.
inline int stepByte(char c, bool* esc, bool* in) {
  const bool e = *esc;
  *esc = c == '\\' && !e;
  if (c == '"') {
    if (!e) *in = !*in;
    return 0;
  }
  if (c == '{' || c == '[') return 1;
  if (c == '}' || c == ']') return -1;
  return 0;
}

}  // namespace

StretchSummary summarize(const char* text, uint64_t floor, uint64_t from, uint64_t to) {
  StretchSummary m;
  bool esc = escapedAt(text, floor, from);
  bool rel = false;  // inside a string, counting from outside at `from`
  uint64_t i = from;
#if defined(__SSE2__)
  while (to - i >= 64) {
    const Masks k = masks64(text + i);
    const uint64_t str = stringBits(k, &esc, &rel);
    m.depthIfOut += __builtin_popcountll(k.open & ~str) - __builtin_popcountll(k.close & ~str);
    m.depthIfIn += __builtin_popcountll(k.open & str) - __builtin_popcountll(k.close & str);
    i += 64;
  }
#endif
  for (; i < to; ++i) {
    const bool wasIn = rel;
    const int d = stepByte(text[i], &esc, &rel);
    (wasIn ? m.depthIfIn : m.depthIfOut) += d;
  }
  m.oddQuotes = rel;
  return m;
}

uint64_t elementEndAfter(const char* text, uint64_t floor, uint64_t from, uint64_t to, TextState s) {
  bool esc = escapedAt(text, floor, from);
  bool in = s.inString;
  int64_t depth = s.depth;
  uint64_t i = from;
#if defined(__SSE2__)
  while (to - i >= 64) {
    const Masks k = masks64(text + i);
    const uint64_t str = stringBits(k, &esc, &in);
    const int j = closingBit(k.open, (k.open | k.close) & ~str, &depth);
    if (j < 64) return i + static_cast<uint64_t>(j) + 1;
    i += 64;
  }
#endif
  for (; i < to; ++i) {
    const bool wasIn = in;
    const int d = stepByte(text[i], &esc, &in);
    if (wasIn || d == 0) continue;
    if (d > 0)
      ++depth;
    else if (depth-- == 1)
      return i + 1;
  }
  return kNoByte;
}

ElementCutter::Stop ElementCutter::fail(std::string what, uint64_t at) {
  error_ = std::move(what) + " at byte " + std::to_string(at);
  return Stop::Error;
}

bool ElementCutter::takeRun(Run* run) {
  if (runFirst_ == kNoByte) {
    *run = {};
    return false;
  }
  *run = {runFirst_, lastEnd_};
  runFirst_ = kNoByte;
  return true;
}

ElementCutter::Stop ElementCutter::scan(const char* p, size_t n, uint64_t base, size_t* used, Run* run) {
  size_t i = 0;
  while (i < n) {
    if (depth_ > 0) {
      // Inside an element: only the brackets outside strings matter.
      bool ended = false;
#if defined(__SSE2__)
      while (n - i >= 64) {
        const Masks m = masks64(p + i);
        const uint64_t str = stringBits(m, &escaped_, &inString_);
        // (depth_ is 1 or more inside an element: it reaches 0 only at the element's end.)
        const int j = closingBit(m.open, (m.open | m.close) & ~str, &depth_);
        if (j < 64) {
          i += static_cast<size_t>(j);
          ended = true;
          break;
        }
        i += 64;
        if (base + i - elemFirst_ > maxElement_)
          return fail("an event larger than " + mib(maxElement_) + " (not a trace event)", elemFirst_);
      }
#endif
      // The block's last bytes as the masks take them (a backslash escapes the next byte outside
      // strings too), so where a call's text ends changes nothing (a part's cutter ends where the
      // next part starts).
      while (!ended && i < n) {
        const bool wasIn = inString_;
        const int d = stepByte(p[i], &escaped_, &inString_);
        if (!wasIn && d > 0) {
          ++depth_;
        } else if (!wasIn && d < 0 && --depth_ == 0) {
          ended = true;
          break;
        }
        ++i;
      }
      if (!ended) {
        if (base + n - elemFirst_ > maxElement_)
          return fail("an event larger than " + mib(maxElement_) + " (not a trace event)", elemFirst_);
        break;
      }
      // p[i] closed the element.
      lastEnd_ = base + i;
      inString_ = escaped_ = false;
      expectComma_ = true;
      ++elements_;
      ++i;
      continue;
    }
    if (scalarString_) {
      if (closesString(p[i], &escaped_)) {
        scalarString_ = false;
        lastEnd_ = base + i;
        expectComma_ = true;
        ++elements_;
      }
      ++i;
      continue;
    }
    const char c = p[i];
    if (scalar_) {
      if (c != ',' && c != ']' && !blank(c)) {
        lastEnd_ = base + i;
        ++i;
        continue;
      }
      scalar_ = false;
      expectComma_ = true;
      ++elements_;
    }
    if (blank(c)) {
      const size_t j = skipBlanks(p, i, n);
      // A long run of blanks after some elements: hand them out now, so
      // the blanks never need to be kept.
      if (runFirst_ != kNoByte && base + j - lastEnd_ > target_) {
        takeRun(run);
        *used = j;
        return Stop::Cut;
      }
      i = j;
      continue;
    }
    if (c == ',') {
      if (!expectComma_) return fail("a ',' where an event should be", base + i);
      expectComma_ = false;
      sawComma_ = true;
      ++i;
      if (runFirst_ != kNoByte && lastEnd_ + 1 - runFirst_ >= target_) {
        takeRun(run);
        *used = i;
        return Stop::Cut;
      }
      continue;
    }
    if (c == ']') {
      if (sawComma_) return fail("a ',' just before the end of the events", base + i);
      closeAt_ = base + i;
      takeRun(run);
      *used = i + 1;
      return Stop::Close;
    }
    // The next element.
    if (expectComma_) return fail("two events without a ',' between them", base + i);
    sawComma_ = false;
    if (runFirst_ == kNoByte) runFirst_ = base + i;
    elemFirst_ = base + i;
    if (c == '{' || c == '[') {
      depth_ = 1;
      inString_ = escaped_ = false;
    } else if (c == '"') {
      scalarString_ = true;
      escaped_ = false;
    } else {
      scalar_ = true;  // not an event: the parser counts it
      lastEnd_ = base + i;
    }
    ++i;
  }
  *used = n;
  return Stop::NeedMore;
}

HeadScanner::Stop HeadScanner::fail(std::string what, uint64_t at) {
  error_ = std::move(what) + " (at byte " + std::to_string(at) + ")";
  return Stop::Error;
}

HeadScanner::Stop HeadScanner::scan(const char* p, size_t n, uint64_t base, size_t* used) {
  static constexpr std::string_view kKey = "\"traceEvents\"";
  for (size_t i = 0; i < n; ++i) {
    const char c = p[i];
    if (inString_) {
      // Up to the next quote or backslash at once.
      size_t k = i;
      if (!escaped_)
        while (k < n && p[k] != '"' && p[k] != '\\') ++k;
      if (k > i) {
        kept_.append(p + i, k - i);
        i = k - 1;
        if (kept_.size() > maxKept_) break;
        continue;
      }
      kept_ += c;
      if (closesString(c, &escaped_)) {
        inString_ = false;
        if (depth_ == 1) {
          keyPending_ = true;
          keyIsEvents_ = std::string_view(kept_).substr(stringStart_) == kKey;
        }
      }
      continue;
    }
    if (blank(c)) {
      const size_t end = skipBlanks(p, i, n);
      if (started_) keepBlanks(p, i, end, &kept_);
      i = end - 1;
      continue;
    }
    if (!started_) {
      if (c == '[') {
        arrayForm_ = true;
        openAt_ = base + i;
        *used = i + 1;
        return Stop::Found;
      }
      if (c != '{') return fail("not an object or an array", base + i);
      started_ = true;
      depth_ = 1;
      kept_ += c;
      continue;
    }
    const bool key = keyPending_ && c == ':';
    keyPending_ = false;
    if (key) {
      lastWasKey_ = keyIsEvents_;
      kept_ += c;
      continue;
    }
    if (c == '[' && depth_ == 1 && lastWasKey_) {
      openAt_ = base + i;
      kept_ += c;
      *used = i + 1;
      return Stop::Found;
    }
    lastWasKey_ = false;
    if (c == '"') {
      inString_ = true;
      stringStart_ = kept_.size();
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if (c == '}' || c == ']') {
      if (depth_ == 1) return fail("the object ends without a \"traceEvents\" array", base + i);
      --depth_;
    }
    kept_ += c;
    if (kept_.size() > maxKept_) break;
  }
  if (kept_.size() > maxKept_) return fail("more than " + mib(maxKept_) + " of text before \"traceEvents\"", base + n);
  *used = n;
  return Stop::NeedMore;
}

bool compactJson(const char* p, size_t n, bool* inString, bool* escaped, std::string* out, size_t cap) {
  size_t i = 0;
  while (i < n) {
    if (*inString) {
      // Up to the string's end (or the piece's), copied at once.
      size_t k = i;
      while (k < n)
        if (closesString(p[k++], escaped)) {
          *inString = false;
          break;
        }
      out->append(p + i, k - i);
      i = k;
    } else if (blank(p[i])) {
      const size_t end = skipBlanks(p, i, n);
      keepBlanks(p, i, end, out);
      i = end;
    } else {
      size_t k = i;
      while (k < n && p[k] != '"' && !blank(p[k])) ++k;
      if (k < n && p[k] == '"') {
        *inString = true;
        ++k;
      }
      out->append(p + i, k - i);
      i = k;
    }
    if (out->size() > cap) return false;
  }
  return true;
}

}  // namespace attnscope::reader
