#include "ui/timeline/palette.h"

#include <string_view>

namespace attnscope::ui {
namespace {

QColor foldedOf(const QColor& c) {
  // Lighter and greyer: a box that stands for many events.
  QColor h = c.toHsl();
  return QColor::fromHsl(h.hslHue(), h.hslSaturation() / 3, std::min(230, h.lightness() + 45));
}

QColor textOn(const QColor& c) {
  const double lum = 0.299 * c.redF() + 0.587 * c.greenF() + 0.114 * c.blueF();
  return lum > 0.6 ? QColor(20, 20, 20) : QColor(255, 255, 255);
}

}  // namespace

void TimelinePalette::add(Family f, std::initializer_list<const char*> colours) {
  Range& r = ranges_[static_cast<int>(f)];
  r.first = static_cast<uint16_t>(fills_.size());
  r.count = static_cast<uint16_t>(colours.size());
  for (const char* name : colours) {
    const QColor c(QString::fromLatin1(name));
    fills_.push_back(c);
    texts_.push_back(textOn(c));
    fills_.push_back(foldedOf(c));
    texts_.push_back(textOn(foldedOf(c)));
  }
}

TimelinePalette::TimelinePalette() {
  add(Family::CpuOp, {"#3b78c2", "#4a8fd6", "#2f6aa8", "#5b9bd5", "#356fb0"});
  add(Family::UserAnnotation, {"#6a4fb3"});
  add(Family::GpuUserAnnotation, {"#a58bd6"});
  add(Family::CudaRuntime, {"#d9962b", "#e0a94a"});
  add(Family::CudaDriver, {"#c98a2a"});
  add(Family::Kernel, {"#2e8b3e", "#3fa34f", "#25753a", "#4caf50", "#1f6e30"});
  add(Family::GpuMemcpy, {"#e8670c"});
  add(Family::GpuMemset, {"#8d6e63"});
  add(Family::CudaSync, {"#c62828"});
  add(Family::Overhead, {"#8c8c8c"});
  add(Family::PythonFunction, {"#9fae94", "#b3bfa9"});
  add(Family::CpuInstant, {"#00897b"});
  add(Family::Memory, {"#00695c"});
  add(Family::Other, {"#78909c"});
  sync_ = static_cast<uint16_t>(fills_.size());
  fills_.push_back(QColor("#c62828"));
  texts_.push_back(Qt::white);
  fills_.push_back(foldedOf(QColor("#c62828")));
  texts_.push_back(Qt::black);
  eventRecord_ = static_cast<uint16_t>(fills_.size());
  fills_.push_back(QColor("#ad1457"));
  texts_.push_back(Qt::white);
  fills_.push_back(foldedOf(QColor("#ad1457")));
  texts_.push_back(Qt::black);
}

uint16_t TimelinePalette::indexOf(const EventStore& s, const Event& e) const {
  if (e.family == Family::CudaRuntime || e.family == Family::CudaDriver) {
    if (namesFor_ != &s || special_.size() != s.strings().size()) {
      namesFor_ = &s;
      special_.assign(s.strings().size(), 0);
      for (uint32_t i = 0; i < s.strings().size(); ++i) {
        const std::string_view n = s.str(i);
        if (n.find("Synchronize") != std::string_view::npos)
          special_[i] = 1;
        else if (n.starts_with("cudaEventRecord") || n.starts_with("cuEventRecord"))
          special_[i] = 2;
      }
    }
    if (e.name < special_.size() && special_[e.name] == 1) return sync_;
    if (e.name < special_.size() && special_[e.name] == 2) return eventRecord_;
  }
  const Range& r = ranges_[static_cast<int>(e.family)];
  return static_cast<uint16_t>(r.first + 2 * (e.name % r.count));
}

QColor TimelinePalette::familyColour(Family f) const { return fills_[ranges_[static_cast<int>(f)].first]; }

}  // namespace attnscope::ui
