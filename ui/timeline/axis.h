// Time <-> pixel mapping of the timeline and its adaptive ruler ticks.
// Times are int64 nanoseconds on the trace clock; pixels are doubles from
// the left edge of the event area.
#pragma once

#include "core/text/duration.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::ui {

class TimeAxis {
 public:
  static constexpr int64_t kMinSpanNs = 50;  // deepest zoom: 50 ns across the view

  // The whole trace [lo, hi) and the event area width in pixels.
  void setBounds(int64_t lo, int64_t hi);
  void setWidth(int width);
  int width() const { return width_; }
  int64_t boundsLo() const { return lo_; }
  int64_t boundsHi() const { return hi_; }

  // The visible range [start, start + span).
  int64_t start() const { return start_; }
  int64_t span() const { return span_; }
  int64_t end() const { return start_ + span_; }
  void setVisibleRange(int64_t start, int64_t span);  // clamped to the bounds (with a margin)
  void fitAll();

  double nsPerPixel() const { return static_cast<double>(span_) / width_; }
  double x(int64_t t) const { return static_cast<double>(t - start_) * width_ / span_; }
  int64_t time(double x) const;

  // Zoom by `factor` (> 1 zooms in) keeping the time under pixel `x` fixed.
  void zoomAt(double x, double factor);
  void panPixels(double dx);  // positive moves the view later in time

 private:
  void clamp();
  int64_t lo_ = 0, hi_ = 1;
  int64_t start_ = 0, span_ = 1;
  int width_ = 1;
};

struct Tick {
  int64_t t = 0;
  bool major = false;
  std::string label;  // major ticks only
};

// Ticks for the visible range: the step is 1, 2 or 5 x 10^k ns with about
// `minPixels` between labelled ticks, labels relative to `origin` in the
// unit that suits the step (ns, us, ms, s).
std::vector<Tick> axisTicks(const TimeAxis& axis, int64_t origin, int minPixels = 100);
int64_t niceStep(double rawNs);

}  // namespace attnscope::ui
