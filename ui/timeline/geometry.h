// What one frame of the timeline draws, computed from the index for a
// visible time range, width and vertical band, and cached by the view
// until one of those changes. Each row becomes a list of items sorted by
// x: an event box, or a fold (a run of events narrower than kFoldPixels,
// drawn as one box that counts them). Fills are grouped by palette colour
// so a frame paints one batch per colour.
#pragma once

#include <QLocale>
#include <QRectF>
#include <QString>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ui/timeline/axis.h"
#include "ui/timeline/index.h"
#include "ui/timeline/layout.h"
#include "ui/timeline/palette.h"

class QFontMetricsF;

namespace attnscope::ui {

struct GeomItem {
  float x0 = 0, x1 = 0;  // event-area pixels
  uint32_t first = 0;    // index into the row's ids
  uint32_t count = 1;    // events it stands for: ids[first, first + count)
  uint16_t colour = 0;   // palette index
  bool folded() const { return count > 1; }
};

struct RowGeometry {
  uint32_t track = 0;
  uint32_t row = 0;
  int y = 0;  // content coordinates
  int h = 0;
  std::vector<GeomItem> items;  // sorted by x0
};

struct GeomLabel {
  QRectF rect;  // content coordinates (x in event-area pixels)
  QString text;
  uint16_t colour = 0;
};

struct GeometryKey {
  int64_t start = 0, span = 0;
  int width = 0, yTop = 0, yBottom = 0;
  uint64_t layoutVersion = 0;
  bool operator==(const GeometryKey&) const = default;
};

struct Geometry {
  GeometryKey key;
  std::vector<RowGeometry> rows;
  std::vector<std::vector<QRectF>> fills;  // by palette index
  std::vector<GeomLabel> labels;
  size_t itemCount() const;
};

// Caches name widths so labels elide only names that do not fit.
class LabelCache {
 public:
  QString label(const EventStore& s, uint32_t name, double width, const QFontMetricsF& fm);
  // A fold's count in the room it has: "12,345 events", else "12k", else "".
  // Widths come from cached per-character advances (a fold label's few
  // characters; measuring each text was most of a fit-all frame).
  QString foldLabel(uint32_t count, double room, const QFontMetricsF& fm, const QLocale& locale);

 private:
  double width(const QString& text, const QFontMetricsF& fm);
  struct Entry {
    QString text;
    double width = 0;
  };
  std::unordered_map<uint32_t, Entry> names_;
  std::unordered_map<char16_t, double> advances_;  // as names_: for the font of the view that owns the cache
};

inline constexpr double kFoldPixels = 3.0;     // narrower runs fold
inline constexpr float kMaxRunPixels = 48.0f;  // a fold box spans at most about this
inline constexpr double kLabelPixels = 28.0;   // narrower boxes get no name

// Geometry of the rows whose slots intersect content y [yTop, yBottom).
Geometry buildGeometry(const TimelineIndex& index, const TimeAxis& axis, const TimelineLayout& layout, int yTop,
                       int yBottom, const TimelinePalette& palette, LabelCache* labels, const QFontMetricsF* fm);

// The item under event-area x in a row (nearest within `slop` pixels), or nullptr.
const GeomItem* hitItem(const RowGeometry& row, double x, double slop = 2.0);

}  // namespace attnscope::ui
