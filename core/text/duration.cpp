#include "core/text/duration.h"

#include <cmath>
#include <cstdio>

namespace attnscope {

namespace {

struct Unit {
  const char* name;
  double ns;  // nanoseconds per unit
};

constexpr Unit kNs{"ns", 1}, kUs{"us", 1e3}, kMs{"ms", 1e6}, kS{"s", 1e9};

// The largest unit that `magnitude` (ns) reaches.
Unit unitFor(double magnitude) {
  if (magnitude >= kS.ns) return kS;
  if (magnitude >= kMs.ns) return kMs;
  if (magnitude >= kUs.ns) return kUs;
  return kNs;
}

// The one formatter: `value` (already in `unit`) with `decimals`, `sep` between number and unit.
std::string text(double value, const char* unit, int decimals, const char* sep) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f%s%s", decimals, value, sep, unit);
  return buf;
}

std::string scaled(double ns, Unit unit, int decimals, const char* sep) {
  return text(ns / unit.ns, unit.name, decimals, sep);
}

}  // namespace

std::string usText(int64_t ns) { return scaled(static_cast<double>(ns), kUs, 3, " "); }

std::string durationText(int64_t ns) {
  const Unit unit = unitFor(std::abs(static_cast<double>(ns)));
  const double av = std::abs(static_cast<double>(ns) / unit.ns);
  const int decimals = unit.ns == 1 ? 0 : av >= 100 ? 1 : av >= 10 ? 2 : 3;
  return scaled(static_cast<double>(ns), unit, decimals, " ");
}

std::string spanDurationText(int64_t ns) {
  const Unit unit = ns >= kS.ns ? kS : ns >= kMs.ns ? kMs : kUs;
  return scaled(static_cast<double>(ns), unit, 3, " ");
}

std::string tickText(int64_t ns, int64_t step) {
  const Unit unit = unitFor(static_cast<double>(step));
  int decimals = 0;
  for (double s = static_cast<double>(step) / unit.ns; s < 0.999 && decimals < 6; s *= 10) ++decimals;
  return scaled(static_cast<double>(ns), unit, decimals, " ");
}

std::string torchTimeText(double us) {
  // From microseconds, as torch divides them (not via ns: the last digit must match torch's).
  if (us >= 1e6) return text(us / 1e6, "s", 3, "");
  if (us >= 1e3) return text(us / 1e3, "ms", 3, "");
  return text(us, "us", 3, "");
}

std::string bytesText(int64_t b) {
  const double a = std::fabs(static_cast<double>(b));
  char buf[48];
  if (a >= 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1024.0 * 1024 * 1024));
  else if (a >= 1024.0 * 1024)
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1024.0 * 1024));
  else if (a >= 1024.0)
    std::snprintf(buf, sizeof buf, "%.2f KiB", static_cast<double>(b) / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

std::string clipText(const std::string& text, size_t max) {
  if (text.size() <= max) return text;
  size_t n = max > 3 ? max - 3 : 0;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n) + "...";
}

}  // namespace attnscope
