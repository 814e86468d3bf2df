#include "ui/timeline/geometry.h"

#include <QFontMetricsF>
#include <QLocale>
#include <algorithm>
#include <cmath>

namespace attnscope::ui {

size_t Geometry::itemCount() const {
  size_t n = 0;
  for (const RowGeometry& r : rows) n += r.items.size();
  return n;
}

QString LabelCache::label(const EventStore& s, uint32_t name, double width, const QFontMetricsF& fm) {
  auto it = names_.find(name);
  if (it == names_.end()) {
    const std::string_view n = s.str(name);
    Entry e;
    e.text = QString::fromUtf8(n.data(), static_cast<qsizetype>(n.size()));
    e.width = fm.horizontalAdvance(e.text);
    it = names_.emplace(name, std::move(e)).first;
  }
  if (it->second.width <= width) return it->second.text;
  return fm.elidedText(it->second.text, Qt::ElideRight, width);
}

double LabelCache::width(const QString& text, const QFontMetricsF& fm) {
  double w = 0;
  for (const QChar c : text) {
    auto it = advances_.find(c.unicode());
    if (it == advances_.end()) it = advances_.emplace(c.unicode(), fm.horizontalAdvance(c)).first;
    w += it->second;
  }
  return w + 1.0;  // kerning is not summed: a pixel of margin
}

QString LabelCache::foldLabel(uint32_t count, double room, const QFontMetricsF& fm, const QLocale& locale) {
  QString text = QStringLiteral("%1 events").arg(locale.toString(count));
  if (width(text, fm) <= room) return text;
  text = count >= 1'000'000 ? QStringLiteral("%1M").arg(count / 1'000'000)
         : count >= 1'000   ? QStringLiteral("%1k").arg(count / 1'000)
                            : QString::number(count);
  return width(text, fm) <= room ? text : QString();
}

namespace {

// Pixel x of a time, clamped to just outside the area so huge zooms stay finite.
float px(const TimeAxis& axis, int64_t t) {
  const double x = axis.x(t);
  return static_cast<float>(std::clamp(x, -2.0, static_cast<double>(axis.width()) + 2.0));
}

void buildRow(const TimelineIndex& index, const TimeAxis& axis, const TrackRow& row, const TimelinePalette& palette,
              RowGeometry& out) {
  const EventStore& s = *index.store();
  auto [i, last] = index.visible(row, axis.start(), axis.end());
  while (i < last) {
    const Event& e = s.event(row.ids[i]);
    const float x0 = px(axis, e.start);
    const float x1 = px(axis, e.end());
    if (x1 - x0 >= kFoldPixels) {
      out.items.push_back({x0, x1, static_cast<uint32_t>(i), 1, palette.indexOf(s, e)});
      ++i;
      continue;
    }
    // A run of narrow events: jump bucket by bucket (one binary search per
    // kFoldPixels) while the next event is narrow and starts within a pixel.
    const size_t runBegin = i;
    float runEnd = std::max(x1, x0 + 1.0f);
    size_t j = i + 1;
    size_t perBucket = 1;  // events in the last bucket: where the next one likely ends
    while (true) {
      const int64_t bucketEnd = axis.time(static_cast<double>(x0 > runEnd ? x0 : runEnd) + kFoldPixels);
      size_t k = index.firstStartingAt(row, j, last, bucketEnd, j + perBucket);
      perBucket = std::max<size_t>(1, k - j);
      // Only the last event of a bucket can reach past it (rows rarely overlap):
      // a wide one is drawn as its own box.
      if (k > j) {
        const Event& lastEv = s.event(row.ids[k - 1]);
        if (px(axis, lastEv.end()) - px(axis, lastEv.start) >= kFoldPixels) --k;
      }
      if (k > j) runEnd = std::max(runEnd, px(axis, s.event(row.ids[k - 1]).end()));
      j = std::max(j, k);
      if (j >= last) break;
      const Event& next = s.event(row.ids[j]);
      const float nx0 = px(axis, next.start);
      const float nx1 = px(axis, next.end());
      if (nx1 - nx0 >= kFoldPixels || nx0 > runEnd + 1.0f) break;
      // Long runs are cut into boxes of about kMaxRunPixels so density still shows.
      if (nx0 - x0 >= kMaxRunPixels) break;
      runEnd = std::max(runEnd, std::max(nx1, nx0 + 1.0f));
      ++j;
    }
    const auto count = static_cast<uint32_t>(j - runBegin);
    const uint16_t c = palette.indexOf(s, e);
    out.items.push_back({x0, std::max(runEnd, x0 + 1.0f), static_cast<uint32_t>(runBegin), count,
                         count > 1 ? TimelinePalette::foldedIndex(c) : c});
    i = j;
  }
}

}  // namespace

Geometry buildGeometry(const TimelineIndex& index, const TimeAxis& axis, const TimelineLayout& layout, int yTop,
                       int yBottom, const TimelinePalette& palette, LabelCache* labels, const QFontMetricsF* fm) {
  Geometry g;
  g.key = {axis.start(), axis.span(), axis.width(), yTop, yBottom, layout.version()};
  g.fills.resize(palette.size());
  const EventStore& s = *index.store();
  const QLocale locale;
  for (const RowSlot& slot : layout.rowSlots()) {
    if (slot.y + slot.h <= yTop || slot.y >= yBottom) continue;
    RowGeometry rg;
    rg.track = slot.track;
    rg.row = slot.row;
    rg.y = slot.y;
    rg.h = slot.h;
    const TrackRow& row = index.tracks()[slot.track].rows[slot.row];
    buildRow(index, axis, row, palette, rg);
    const float top = static_cast<float>(slot.y + 1);
    const float h = static_cast<float>(slot.h - 2);
    for (const GeomItem& it : rg.items) {
      const float w = it.x1 - it.x0;
      // A one-pixel gap between neighbouring boxes once they are wide enough.
      const float drawW = w > 5 ? w - 1 : std::max(w, 1.0f);
      g.fills[it.colour].emplace_back(it.x0, top, drawW, h);
      if (!labels || !fm || w < kLabelPixels) continue;
      const double room =
          std::min<double>(w, axis.width() + 2.0 - it.x0) - 6.0 - std::max(0.0, -static_cast<double>(it.x0));
      if (room < 12) continue;
      const double lx = std::max(0.0, static_cast<double>(it.x0)) + 3.0;
      QString text = it.folded() ? labels->foldLabel(it.count, room, *fm, locale)
                                 : labels->label(s, s.event(row.ids[it.first]).name, room, *fm);
      if (text.isEmpty() || text == QStringLiteral("…")) continue;
      g.labels.push_back({QRectF(lx, top, room, h), std::move(text), it.colour});
    }
    g.rows.push_back(std::move(rg));
  }
  return g;
}

const GeomItem* hitItem(const RowGeometry& row, double x, double slop) {
  const auto& items = row.items;
  // Last item starting at or before x + slop; boxes of a row rarely overlap,
  // so the answer is it or one just before it.
  auto it =
      std::upper_bound(items.begin(), items.end(), x + slop, [](double v, const GeomItem& g) { return v < g.x0; });
  const GeomItem* best = nullptr;
  double bestDist = slop + 1;
  for (int k = 0; k < 4 && it != items.begin(); ++k) {
    --it;
    const double d = x < it->x0 ? it->x0 - x : x > it->x1 ? x - it->x1 : 0.0;
    if (d < bestDist || (d == 0 && bestDist == 0 && it->x1 - it->x0 < best->x1 - best->x0)) {
      best = &*it;
      bestDist = d;
    }
  }
  return bestDist <= slop ? best : nullptr;
}

}  // namespace attnscope::ui
