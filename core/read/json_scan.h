// Internal to the reader: finds where a JSON text can be cut between the
// elements of the events array without parsing it, by following its
// structure (strings, escapes, nesting) rather than its line breaks. So any
// layout (Kineto's one event per line, json.dump's minified text, the
// top-level array form, any white space) can be parsed in chunks of whole
// events on several threads.
//
// ElementCutter walks the inside of the array: between elements byte by
// byte (a comma, blanks, the start of the next element), inside an element
// 64 bytes at a time with SIMD masks (quotes, backslashes, brackets), only
// stopping at the brackets outside strings. It hands out runs of whole
// elements [first byte, last byte] of about `target` bytes; a long run of
// blanks between elements ends the run early, so what a caller must keep
// in memory is bounded by `target` plus the largest element, never by the
// blanks (a gzip bomb of blanks costs time, not memory).
//
// HeadScanner walks the object around the array up to its '[' (the object
// form's "traceEvents" key, found by structure), keeping the text without
// its formatting but with any run of more than 64 blanks outside strings
// kept as one space; compactJson does the same to a piece of text (the
// object's tail after the array).
#pragma once

#include <cstdint>
#include <string>

namespace attnscope::reader {

inline constexpr uint64_t kNoByte = ~uint64_t{0};

class ElementCutter {
 public:
  // An element larger than maxElement bytes stops the scan with an error.
  // Nesting costs nothing here (a counter): the parser bounds its descent.
  ElementCutter(uint64_t target, uint64_t maxElement) : target_(target), maxElement_(maxElement) {}

  struct Run {
    uint64_t first = kNoByte;  // first byte of the first element
    uint64_t last = kNoByte;   // last byte of the last element
  };

  enum class Stop {
    NeedMore,  // every byte was scanned: give the next piece
    Cut,       // a run is ready (*run); call again with the rest
    Close,     // the array's ']' (at closeAt()); *run is the last run, if any
    Error,     // error() says what and where
  };

  // Scans p[0, n), whose first byte sits at `base` in the whole text (the
  // byte just after the previous call's last). *used: bytes scanned.
  Stop scan(const char* p, size_t n, uint64_t base, size_t* used, Run* run);

  // At the end of the text without the array's ']': the complete elements
  // not yet handed out (the text was cut short), and where the cut is.
  // (None when the run's only element is the one cut short.)
  Run rest() const {
    if (runFirst_ == kNoByte || lastEnd_ == kNoByte || lastEnd_ < runFirst_) return {};
    return {runFirst_, lastEnd_};
  }
  uint64_t lastEnd() const { return lastEnd_; }
  // Where the run being gathered starts (kNoByte: nothing to keep).
  uint64_t keepFrom() const { return runFirst_; }
  uint64_t closeAt() const { return closeAt_; }
  uint64_t elements() const { return elements_; }
  const std::string& error() const { return error_; }

  // Resumes after an element whose last byte is `lastEnd`: where another cutter, on another thread,
  // takes up a part of the text that starts just after an element (TextChunks' parts).
  void resumeAfter(uint64_t lastEnd);
  // In the state resumeAfter(lastEnd) sets (as far as the bytes that follow can tell): so a cutter
  // that stops where the next part starts checks that part's start.
  bool justAfter(uint64_t lastEnd) const;

 private:
  Stop fail(std::string what, uint64_t at);
  bool takeRun(Run* run);

  uint64_t target_;
  uint64_t maxElement_;
  // Inside an element: nesting (the element's own '{' is 1), string state.
  uint32_t depth_ = 0;
  bool inString_ = false;
  bool escaped_ = false;
  bool scalar_ = false;        // a bare number/word element at the top
  bool scalarString_ = false;  // a string element at the top
  bool expectComma_ = false;   // an element ended; a ',' or the ']' comes next
  bool sawComma_ = false;      // a ',' came after the last element
  uint64_t elemFirst_ = kNoByte;
  uint64_t runFirst_ = kNoByte;
  uint64_t lastEnd_ = kNoByte;
  uint64_t closeAt_ = kNoByte;
  uint64_t elements_ = 0;
  std::string error_;
};

// For cutting the events' text in parts on several threads (simdjson's first stage, by parts): what
// a stretch of text does to the string state and the nesting, for both states it may start in. The
// state at each part's start is then a prefix over the parts before it, and the first element end
// after that start (elementEndAfter) is where a cutter can take up the text. A backslash escapes the
// byte after it, as inside strings (the escape state at a stretch's start is found by looking back at
// the backslashes before it). Exact for valid JSON; on anything else the cutters' own check at each
// part's start (ElementCutter::justAfter) finds the mismatch.
struct TextState {
  bool inString = false;
  int64_t depth = 0;  // inside the events array: 0 between elements
};
struct StretchSummary {
  bool oddQuotes = false;  // an odd number of quotes not escaped
  int64_t depthIfOut = 0;  // the nesting's change when the stretch starts outside a string
  int64_t depthIfIn = 0;   // ... inside one
};
// text[from, to): `text` is the whole text (the backslashes before `from`, back to `floor`, are looked at).
StretchSummary summarize(const char* text, uint64_t floor, uint64_t from, uint64_t to);
inline TextState after(TextState s, const StretchSummary& m) {
  return {s.inString != m.oddQuotes, s.depth + (s.inString ? m.depthIfIn : m.depthIfOut)};
}
// The byte after the first element end in text[from, to) (a bracket outside strings that takes the
// nesting from 1 to 0), given the state at `from`; kNoByte when there is none.
uint64_t elementEndAfter(const char* text, uint64_t floor, uint64_t from, uint64_t to, TextState s);

// Follows the object around the events array up to its '['.
class HeadScanner {
 public:
  explicit HeadScanner(uint64_t maxKept) : maxKept_(maxKept) {}
  enum class Stop { NeedMore, Found, Error };
  // Scans p[0, n) (at `base` in the text). Found: the '[' of "traceEvents"
  // (object form) or of the top-level array is at openAt(); `*used` counts
  // the bytes up to and including it.
  Stop scan(const char* p, size_t n, uint64_t base, size_t* used);
  uint64_t openAt() const { return openAt_; }
  bool arrayForm() const { return arrayForm_; }
  // The object up to the '[' (long runs of blanks as one space).
  const std::string& kept() const { return kept_; }
  const std::string& error() const { return error_; }

 private:
  Stop fail(std::string what, uint64_t at);
  uint64_t maxKept_;
  std::string kept_;
  uint32_t depth_ = 0;
  bool started_ = false;
  bool inString_ = false;
  bool escaped_ = false;
  size_t stringStart_ = 0;   // in kept_
  bool lastWasKey_ = false;  // the last token at depth 1 was "traceEvents" followed by ':'
  bool keyPending_ = false;  // a string at depth 1 just closed: is it a key?
  bool keyIsEvents_ = false;
  bool arrayForm_ = false;
  uint64_t openAt_ = kNoByte;
  std::string error_;
};

// Appends p[0, n) to *out, a run of more than 64 blanks outside strings as
// one space; *inString and
// *escaped carry the state between pieces. False when *out would pass `cap`.
bool compactJson(const char* p, size_t n, bool* inString, bool* escaped, std::string* out, size_t cap);

}  // namespace attnscope::reader
