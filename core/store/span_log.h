// Where a first open's time went, thread by thread, for the scaling scripts: with ATTNSCOPE_REPORT_SPANS
// set, each Span records its name, the thread it ran on and when it began and ended; report() lists them
// in start order (seconds since the first span). A span costs one check of a flag when the log is off.
// The log is the process's: attnscope-cli prints it after an open (a tool for us, not a user's figure).
#pragma once

#include <chrono>
#include <string>

namespace attnscope::spans {

bool on();
// Records one span (the clock's own time points); called by ~Span.
void add(const char* name, std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point end);
// One line per span, in start order: "span NAME thread T START END" (seconds, to the microsecond); empty when off.
std::string report();
// Forgets the spans so far (a test's open on its own).
void clear();

class Span {
 public:
  explicit Span(const char* name) : name_(on() ? name : nullptr) {
    if (name_) start_ = std::chrono::steady_clock::now();
  }
  ~Span() {
    if (name_) add(name_, start_, std::chrono::steady_clock::now());
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  const char* name_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace attnscope::spans
