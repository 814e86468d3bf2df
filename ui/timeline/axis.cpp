#include "ui/timeline/axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnscope::ui {

void TimeAxis::setBounds(int64_t lo, int64_t hi) {
  lo_ = lo;
  hi_ = std::max(hi, lo + kMinSpanNs);
  clamp();
}

void TimeAxis::setWidth(int width) { width_ = std::max(1, width); }

void TimeAxis::setVisibleRange(int64_t start, int64_t span) {
  start_ = start;
  span_ = span;
  clamp();
}

void TimeAxis::fitAll() {
  const int64_t full = hi_ - lo_;
  const int64_t margin = full / 100;
  start_ = lo_ - margin;
  span_ = full + 2 * margin;
  clamp();
}

int64_t TimeAxis::time(double px) const {
  return start_ + static_cast<int64_t>(std::llround(px * static_cast<double>(span_) / width_));
}

void TimeAxis::zoomAt(double px, double factor) {
  if (factor <= 0) return;
  const int64_t anchor = time(px);
  const double newSpan = std::max<double>(kMinSpanNs, static_cast<double>(span_) / factor);
  span_ = static_cast<int64_t>(std::llround(newSpan));
  start_ = anchor - static_cast<int64_t>(std::llround(px * newSpan / width_));
  clamp();
}

void TimeAxis::panPixels(double dx) {
  start_ += static_cast<int64_t>(std::llround(dx * static_cast<double>(span_) / width_));
  clamp();
}

void TimeAxis::clamp() {
  const int64_t full = hi_ - lo_;
  const int64_t margin = std::max<int64_t>(full / 20, kMinSpanNs);
  span_ = std::clamp<int64_t>(span_, kMinSpanNs, full + 2 * margin);
  start_ = std::clamp<int64_t>(start_, lo_ - margin, hi_ + margin - span_);
}

int64_t niceStep(double raw) {
  if (raw <= 1) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw) return static_cast<int64_t>(std::llround(m * p));
  }
  return static_cast<int64_t>(std::llround(10 * p));
}

std::vector<Tick> axisTicks(const TimeAxis& axis, int64_t origin, int minPixels) {
  std::vector<Tick> out;
  const int64_t major = niceStep(axis.nsPerPixel() * std::max(minPixels, 10));
  // Five minor ticks per major one when the major step starts with 1 or 5,
  // four when it starts with 2.
  int64_t m = major;
  while (m >= 10) m /= 10;
  const int64_t minor = std::max<int64_t>(1, major / (m == 2 ? 4 : 5));
  auto floorDiv = [](int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); };
  const int64_t rel0 = axis.start() - origin;
  for (int64_t k = floorDiv(rel0, minor);; ++k) {
    const int64_t rel = k * minor;
    const int64_t t = origin + rel;
    if (t > axis.end()) break;
    if (t < axis.start()) continue;
    Tick tick;
    tick.t = t;
    tick.major = rel % major == 0;
    if (tick.major) tick.label = tickText(rel, major);
    out.push_back(std::move(tick));
    if (out.size() > 4096) break;  // never: minor >= ns per 2 px
  }
  return out;
}

}  // namespace attnscope::ui
