// TimelineView's painting: tracks (batched fills from the cached geometry),
// overlay, highlights, flow arrows, the track-name column and the ruler.
#include <QLocale>
#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>
#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "ui/common/text.h"
#include "ui/timeline/view.h"

namespace attnscope::ui {
namespace {

const QColor kHostShade(59, 120, 194, 46);
const QColor kHostLine(35, 90, 160);
const QColor kGpuShade(232, 103, 12, 40);
const QColor kGpuLine(196, 84, 0);
const QColor kSync(198, 40, 40);
const QColor kSelect(20, 20, 20);
const QColor kHighlight(255, 140, 0);
const QColor kMatch(250, 204, 21);
// An overlay draws its launches' arrows up to this many launches (more: a fan over the step's events).
constexpr size_t kMaxOverlayArrows = 24;

QColor trackBadge(TrackKind k) {
  switch (k) {
    case TrackKind::Cpu:
      return QColor("#3b78c2");
    case TrackKind::Python:
      return QColor("#9fae94");
    case TrackKind::Instants:
      return QColor("#00897b");
    case TrackKind::Gpu:
      return QColor("#2e8b3e");
    case TrackKind::GpuAnnotations:
      return QColor("#a58bd6");
    case TrackKind::Overhead:
      return QColor("#8c8c8c");
    case TrackKind::Other:
      return QColor("#78909c");
  }
  return Qt::gray;
}

// Text on a white rounded box so it reads over anything.
void tag(QPainter& p, QPointF at, const QString& text, const QColor& border, bool above = true) {
  const QFontMetricsF fm(p.font());
  const QRectF r(at.x(), above ? at.y() - fm.height() - 4 : at.y(), fm.horizontalAdvance(text) + 10, fm.height() + 4);
  p.setPen(QPen(border, 1));
  p.setBrush(QColor(255, 255, 255, 235));
  p.drawRoundedRect(r, 3, 3);
  p.setPen(border.darker(130));
  p.drawText(r, Qt::AlignCenter, text);
}

}  // namespace

QRectF TimelineView::eventRect(EventId id) const {
  if (!store_ || id == kNoEvent) return {};
  const uint32_t track = index_->trackOf(id);
  const int y = yOf(track, index_->rowOf(id));
  if (y < 0) return {};
  const Event& e = store_->event(id);
  const double x0 = std::clamp(xOf(e.start), kHeaderWidth - 4.0, viewport()->width() + 4.0);
  const double x1 = std::clamp(xOf(e.end()), kHeaderWidth - 4.0, viewport()->width() + 4.0);
  return QRectF(x0, y + 1, std::max(1.0, x1 - x0), TimelineLayout::kRowHeight - 2);
}

void TimelineView::renderFrame(QPainter& p, QSize size) {
  p.fillRect(QRect(QPoint(0, 0), size), Qt::white);
  if (!store_) {
    p.setPen(Qt::gray);
    p.drawText(QRect(QPoint(0, 0), size), Qt::AlignCenter, tr("No trace loaded"));
    return;
  }
  paintTracks(p, size);
  paintHeader(p, size);
  paintRuler(p, size);
}

void TimelineView::paintTracks(QPainter& p, QSize size) {
  const QRect area(kHeaderWidth, kRulerHeight, size.width() - kHeaderWidth, size.height() - kRulerHeight);
  const Geometry& g = geometry();
  p.save();
  p.setClipRect(area);
  // Track bands.
  const int top = contentTop();
  int band = 0;
  for (uint32_t t : layout_.order()) {
    const int y = layout_.trackTop(t) - top + kRulerHeight;
    const int h = layout_.trackHeight(t);
    if (y + h >= kRulerHeight && y < size.height())
      p.fillRect(QRect(area.left(), y, area.width(), h - TimelineLayout::kTrackGap),
                 band % 2 ? QColor(246, 247, 250) : QColor(252, 252, 253));
    ++band;
  }
  // Grid lines at the major ticks.
  p.setPen(QColor(228, 231, 236));
  for (const Tick& tk : axisTicks(axis_, timeOrigin())) {
    if (tk.major) p.drawLine(QPointF(xOf(tk.t), area.top()), QPointF(xOf(tk.t), area.bottom()));
  }
  // Measured interval.
  if (rulerB_ > rulerA_)
    p.fillRect(QRectF(QPointF(xOf(rulerA_), area.top()), QPointF(xOf(rulerB_), area.bottom())),
               QColor(255, 236, 150, 90));
  paintOverlayUnder(p, area);

  p.save();
  p.translate(kHeaderWidth, kRulerHeight - top);
  p.setPen(Qt::NoPen);
  for (size_t c = 0; c < g.fills.size(); ++c) {
    const auto& rects = g.fills[c];
    if (rects.empty()) continue;
    p.setBrush(palette_.fill(static_cast<uint16_t>(c)));
    p.drawRects(rects.data(), static_cast<int>(rects.size()));
  }
  int pen = -1;
  for (const GeomLabel& l : g.labels) {
    if (pen != l.colour) {
      p.setPen(palette_.text(l.colour));
      pen = l.colour;
    }
    p.drawText(l.rect, Qt::AlignLeft | Qt::AlignVCenter, l.text);
  }
  p.restore();

  paintHighlights(p);
  paintFlows(p, area);
  paintOverlayOver(p, area);
  // Hover line.
  if (hoverPos_.x() >= kHeaderWidth && drag_ == Drag::None && underMouse()) {
    p.setPen(QPen(QColor(120, 120, 120, 140), 1, Qt::DashLine));
    p.drawLine(QPointF(hoverPos_.x() + 0.5, area.top()), QPointF(hoverPos_.x() + 0.5, area.bottom()));
  }
  p.restore();
}

void TimelineView::paintHighlights(QPainter& p) {
  p.setBrush(Qt::NoBrush);
  const Geometry& g = geometry();
  // Search matches among the boxes drawn one event each.
  if (!matchName_.empty()) {
    p.setPen(QPen(kMatch.darker(115), 2));
    for (const RowGeometry& rg : g.rows) {
      const TrackRow& row = index_->tracks()[rg.track].rows[rg.row];
      const int y = rg.y - contentTop() + kRulerHeight;
      for (const GeomItem& it : rg.items) {
        bool hit = false;
        for (uint32_t k = 0; k < it.count && k < 64 && !hit; ++k)
          hit = matchName_[store_->event(row.ids[it.first + k]).name];
        if (hit) p.drawRect(QRectF(kHeaderWidth + it.x0 - 1, y, std::max(2.0f, it.x1 - it.x0 + 1), rg.h - 1));
      }
    }
  }
  // The table's row: its events in the visible range.
  if (!highlighted_.empty()) {
    p.setPen(QPen(kHighlight, 2));
    int drawn = 0;
    for (EventId id : highlighted_) {
      const Event& e = store_->event(id);
      if (e.end() < axis_.start() || e.start > axis_.end()) continue;
      const QRectF r = eventRect(id);
      if (r.isEmpty() || r.bottom() < kRulerHeight) continue;
      p.drawRect(r.adjusted(-1, -1, 1, 1));
      if (++drawn > 5000) break;
    }
  }
  if (selected_ != kNoEvent) {
    const QRectF r = eventRect(selected_);
    if (!r.isEmpty()) {
      p.setPen(QPen(kSelect, 2));
      p.drawRect(r.adjusted(-1.5, -1.5, 1.5, 1.5));
    }
  }
}

void TimelineView::paintArrow(QPainter& p, QPointF a, QPointF b, const QColor& c, qreal width) {
  QPainterPath path(a);
  const qreal dy = (b.y() - a.y()) * 0.5;
  path.cubicTo(QPointF(a.x(), a.y() + dy), QPointF(b.x(), b.y() - dy), b);
  p.setBrush(Qt::NoBrush);
  p.setPen(QPen(c, width));
  p.drawPath(path);
  const qreal dir = b.y() >= a.y() ? -1 : 1;
  QPolygonF head;
  head << b << QPointF(b.x() - 4, b.y() + dir * 7) << QPointF(b.x() + 4, b.y() + dir * 7);
  p.setBrush(c);
  p.setPen(Qt::NoPen);
  p.drawPolygon(head);
}

// Arrows drawn bundled: one per pair of few-pixel cells, thicker and counted when it stands for more.
void TimelineView::paintBundles(QPainter& p, FlowBundler& bundler, const QColor& c, qreal width, bool counted) {
  if (counted) lastFlows_.links += bundler.added();
  const std::vector<FlowArrow> arrows = bundler.take();
  if (counted) lastFlows_.arrows += static_cast<int>(arrows.size());
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  for (const FlowArrow& a : arrows) {
    const qreal w = a.count > 1 ? width + std::min(2.5, 0.6 * std::log2(static_cast<double>(a.count))) : width;
    paintArrow(p, a.from, a.to, c, w);
    if (a.count < 2) continue;
    const QString label = QStringLiteral("\u00d7%1").arg(a.count);
    p.setFont(small);
    const QFontMetrics fm(small);
    const QRectF box(a.to.x() + 5, a.to.y() + (a.to.y() >= a.from.y() ? -fm.height() - 2 : 2),
                     fm.horizontalAdvance(label) + 4, fm.height());
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(255, 255, 255, 210));
    p.drawRect(box);
    p.setPen(c.darker(130));
    p.drawText(box, Qt::AlignCenter, label);
  }
  p.setFont(font());
}

void TimelineView::paintFlows(QPainter& p, const QRect& area) {
  const EventStore& s = *store_;
  p.setRenderHint(QPainter::Antialiasing, true);
  lastFlows_ = {};
  auto arrow = [&](FlowBundler& into, EventId launch, EventId gpu) {
    const QRectF a = eventRect(launch), b = eventRect(gpu);
    if (a.isEmpty() || b.isEmpty()) return;
    const bool down = b.top() >= a.top();
    into.add(QPointF(a.left(), down ? a.bottom() : a.top()), QPointF(b.left(), down ? b.top() : b.bottom()));
  };
  auto linksOf = [&](EventId id, auto&& fn) {
    const Event& e = s.event(id);
    if (e.correlation <= 0) return;
    for (EventId o : s.byCorrelation(e.correlation)) {
      if (o == id) continue;
      const bool gpuSide = isGpuFamily(e.family);
      if (gpuSide != isGpuFamily(s.event(o).family)) gpuSide ? fn(o, id) : fn(id, o);
    }
  };
  // Everything visible when zoomed in far enough for single launches to show.
  std::unordered_set<int64_t> done;
  const Geometry& g = geometry();
  std::vector<EventId> candidates;
  for (const RowGeometry& rg : g.rows) {
    const TrackRow& row = index_->tracks()[rg.track].rows[rg.row];
    for (const GeomItem& it : rg.items) {
      if (it.folded()) continue;
      const Event& e = s.event(row.ids[it.first]);
      if (e.correlation > 0 &&
          (e.family == Family::CudaRuntime || e.family == Family::CudaDriver || isGpuFamily(e.family)))
        candidates.push_back(row.ids[it.first]);
    }
  }
  FlowBundler visible, selection;
  // With an overlay on, its own launches carry the arrows: every visible flow besides drew a fan over
  // the step's events.
  if (!overlay_ && candidates.size() <= 300) {
    for (EventId id : candidates) {
      if (!done.insert(s.event(id).correlation).second) continue;
      linksOf(id, [&](EventId l, EventId gpu) { arrow(visible, l, gpu); });
    }
  }
  paintBundles(p, visible, QColor(90, 90, 90, 150), 1.0, false);
  // The selection's flows: its own, or those of every launch under it, bundled.
  if (selected_ != kNoEvent) {
    const Event& e = s.event(selected_);
    if (e.correlation > 0) {
      linksOf(selected_, [&](EventId l, EventId gpu) { arrow(selection, l, gpu); });
      paintBundles(p, selection, kSelect, 1.8);
    } else if (isCpuFamily(e.family) && !(overlay_ && overlay_->event == selected_)) {
      // (Explained, the step's own overlay draws its launches: both made a fan over its events.)
      // Each GPU activity once: a runtime call and the driver call under it share its correlation.
      std::unordered_set<EventId> linked;
      const Lane& lane = s.lanes()[e.lane];
      for (EventId i = selected_ + 1; i < lane.end && s.event(i).start < e.end(); ++i) {
        if (s.event(i).correlation > 0)
          linksOf(i, [&](EventId l, EventId gpu) {
            if (linked.insert(gpu).second) arrow(selection, l, gpu);
          });
      }
      paintBundles(p, selection, kSelect, 1.4);
    }
  }
  p.setRenderHint(QPainter::Antialiasing, false);
  (void)area;
}

void TimelineView::paintOverlayUnder(QPainter& p, const QRect& area) {
  if (!overlay_) return;
  const ExplainOverlay& o = *overlay_;
  const int top = contentTop();
  auto shadeTrack = [&](uint32_t t, int64_t a, int64_t b, const QColor& c) {
    const int y = layout_.trackTop(t) - top + kRulerHeight;
    const QRectF r(QPointF(xOf(a), y), QPointF(xOf(b), y + layout_.trackHeight(t) - TimelineLayout::kTrackGap));
    p.fillRect(r.intersected(area), c);
  };
  for (uint32_t t = 0; t < index_->tracks().size(); ++t) {
    const Track& tr = index_->tracks()[t];
    if (tr.kind == TrackKind::Cpu && (o.hostLane == UINT32_MAX || tr.storeLane == o.hostLane))
      shadeTrack(t, o.hostStartNs, o.hostEndNs, kHostShade);
  }
  if (o.gpuStartNs >= 0) {
    std::vector<uint32_t> gpuTracks;
    for (const Launch& l : o.launches) gpuTracks.push_back(index_->trackOf(l.gpu));
    std::sort(gpuTracks.begin(), gpuTracks.end());
    gpuTracks.erase(std::unique(gpuTracks.begin(), gpuTracks.end()), gpuTracks.end());
    for (uint32_t t : gpuTracks) shadeTrack(t, o.gpuStartNs, o.gpuEndNs, kGpuShade);
  }
  // Window edges across the whole area.
  p.setPen(QPen(kHostLine, 1, Qt::DashLine));
  for (int64_t t : {o.hostStartNs, o.hostEndNs})
    p.drawLine(QPointF(xOf(t), area.top()), QPointF(xOf(t), area.bottom()));
  if (o.gpuStartNs >= 0) {
    p.setPen(QPen(kGpuLine, 1, Qt::DotLine));
    for (int64_t t : {o.gpuStartNs, o.gpuEndNs})
      p.drawLine(QPointF(xOf(t), area.top()), QPointF(xOf(t), area.bottom()));
  }
}

void TimelineView::paintOverlayOver(QPainter& p, const QRect& area) {
  if (!overlay_) return;
  const ExplainOverlay& o = *overlay_;
  const EventStore& s = *store_;
  p.setRenderHint(QPainter::Antialiasing, true);
  // The step's own box.
  if (o.event != kNoEvent) {
    const QRectF r = eventRect(o.event);
    if (!r.isEmpty()) {
      p.setPen(QPen(kHostLine, 2.5));
      p.setBrush(Qt::NoBrush);
      p.drawRect(r.adjusted(-1, -1, 1, 1));
    }
  }
  // Launches -> GPU work, bundled as the selection's flows are; a step of hundreds of launches gets
  // its work outlined and its GPU window labelled, without a fan of arrows over its events.
  FlowBundler launches;
  const bool arrows = o.launches.size() <= kMaxOverlayArrows;
  for (const Launch& l : o.launches) {
    const QRectF g = eventRect(l.gpu);
    if (!g.isEmpty()) {
      p.setPen(QPen(kGpuLine, 2));
      p.setBrush(Qt::NoBrush);
      p.drawRect(g.adjusted(-1, -1, 1, 1));
    }
    if (l.launch == kNoEvent || !arrows) continue;
    const QRectF a = eventRect(l.launch);
    if (a.isEmpty() || g.isEmpty()) continue;
    launches.add(QPointF(a.left(), a.bottom()), QPointF(g.left(), g.top()));
  }
  paintBundles(p, launches, kGpuLine, 1.6);
  // Sync waits: hatched, linked to the work they waited for.
  for (const SyncWait& w : o.syncWaits) {
    const QRectF r = eventRect(w.ev);
    if (r.isEmpty()) continue;
    p.setPen(QPen(kSync, 1.5));
    p.setBrush(QBrush(kSync, Qt::BDiagPattern));
    p.drawRect(r.adjusted(0, -2, 0, 2));
    for (const Awaited& aw : w.awaited) {
      const QRectF g = eventRect(aw.gpu);
      if (g.isEmpty()) continue;
      p.setBrush(QBrush(kSync, Qt::BDiagPattern));
      p.setPen(QPen(kSync, 1.5, Qt::DashLine));
      p.drawRect(g.adjusted(-1, -1, 1, 1));
      // From the end of the awaited work to the end of the wait: the CPU resumes when it finishes.
      const QPointF from(std::min(g.right(), area.right() + 0.0), g.center().y());
      const QPointF to(std::min(r.right(), area.right() + 0.0), r.bottom() + 2);
      p.setPen(QPen(kSync, 1.5, Qt::DashLine));
      p.setBrush(Qt::NoBrush);
      QPainterPath path(to);
      path.cubicTo(QPointF(to.x(), (to.y() + from.y()) / 2), QPointF(from.x(), (to.y() + from.y()) / 2), from);
      p.drawPath(path);
    }
    QString what;
    if (!w.awaited.empty()) what = tr(" for %1").arg(qs(s.name(s.event(w.awaited.front().gpu))).left(40));
    tag(p, QPointF(std::max<double>(r.left(), area.left() + 2), r.top() - 2),
        tr("sync wait %1%2").arg(durationQ(w.durNs), what), kSync);
  }
  // Labels of the windows and the gap.
  int hostY = -1, gpuY = -1;
  for (uint32_t t = 0; t < index_->tracks().size(); ++t) {
    const Track& tr = index_->tracks()[t];
    if (hostY < 0 && tr.kind == TrackKind::Cpu && (o.hostLane == UINT32_MAX || tr.storeLane == o.hostLane))
      hostY = layout_.trackTop(t) - contentTop() + kRulerHeight;
  }
  if (!o.launches.empty()) {
    const uint32_t gt = index_->trackOf(o.launches.front().gpu);
    gpuY = layout_.trackTop(gt) - contentTop() + kRulerHeight;
  }
  const double hx0 = std::max<double>(xOf(o.hostStartNs), area.left() + 2);
  if (hostY >= 0)
    tag(p, QPointF(hx0, hostY + TimelineLayout::kTitleHeight + 1),
        tr("%1: host window %2").arg(QString::fromStdString(o.name), durationQ(o.hostEndNs - o.hostStartNs)), kHostLine,
        false);
  if (gpuY >= 0) {
    const double gx0 = std::max<double>(xOf(o.gpuStartNs), area.left() + 2);
    const uint32_t gt = index_->trackOf(o.launches.front().gpu);
    tag(p, QPointF(gx0, gpuY + layout_.trackHeight(gt) - TimelineLayout::kTrackGap),
        tr("GPU window %1 (%2 of work)").arg(durationQ(o.gpuEndNs - o.gpuStartNs), durationQ(o.gpuAttributedNs)),
        kGpuLine, false);
    // The gap: from the step's close on the CPU to the start (or end) of its GPU work.
    const bool after = o.gpuStartNs >= o.hostEndNs;
    const int64_t gapEnd = after ? o.gpuStartNs : o.gpuEndNs;
    if (gapEnd > o.hostEndNs) {
      const double y = gpuY - 7;
      const double xa = xOf(o.hostEndNs), xb = xOf(gapEnd);
      p.setPen(QPen(QColor(60, 60, 60), 1.5));
      p.drawLine(QPointF(xa, y), QPointF(xb, y));
      p.drawLine(QPointF(xa, y - 4), QPointF(xa, y + 4));
      p.drawLine(QPointF(xb, y - 4), QPointF(xb, y + 4));
      const QString text =
          after ? tr("gap %1: GPU work starts after the step closed on the CPU").arg(durationQ(gapEnd - o.hostEndNs))
                : tr("GPU runs %1 past the step's close").arg(durationQ(gapEnd - o.hostEndNs));
      const QFontMetricsF fm(p.font());
      const double tw = fm.horizontalAdvance(text) + 10;
      double tx = (xa + xb) / 2 - tw / 2;
      tx = std::clamp(tx, area.left() + 2.0, area.right() - tw - 2.0);
      tag(p, QPointF(tx, y - 3), text, QColor(60, 60, 60));
    }
  }
  p.setRenderHint(QPainter::Antialiasing, false);
}

void TimelineView::paintHeader(QPainter& p, QSize size) {
  const QRect col(0, kRulerHeight, kHeaderWidth, size.height() - kRulerHeight);
  p.fillRect(col, QColor(240, 242, 245));
  p.setPen(QColor(205, 209, 215));
  p.drawLine(col.topRight(), col.bottomRight());
  p.save();
  p.setClipRect(col);
  QFont bold = font();
  bold.setBold(true);
  const QFontMetrics fm(bold);
  const QLocale locale;
  const int top = contentTop();
  for (uint32_t t : layout_.order()) {
    const Track& tr = index_->tracks()[t];
    const int y = layout_.trackTop(t) - top + kRulerHeight;
    if (y > size.height() || y + layout_.trackHeight(t) < kRulerHeight) continue;
    p.fillRect(QRect(4, y + 3, 4, layout_.trackHeight(t) - TimelineLayout::kTrackGap - 6), trackBadge(tr.kind));
    const bool collapsed = layout_.collapsed(t);
    const bool canCollapse = tr.rows.size() > 1;
    p.setPen(QColor(70, 70, 70));
    if (canCollapse) {
      QPolygonF tri;
      const QPointF c(16, y + TimelineLayout::kRowHeight / 2.0);
      if (collapsed)
        tri << c + QPointF(-3, -4) << c + QPointF(-3, 4) << c + QPointF(3, 0);
      else
        tri << c + QPointF(-4, -2) << c + QPointF(4, -2) << c + QPointF(0, 3);
      p.setBrush(QColor(90, 90, 90));
      p.setRenderHint(QPainter::Antialiasing, true);
      p.drawPolygon(tri);
      p.setRenderHint(QPainter::Antialiasing, false);
    }
    p.setFont(bold);
    p.setPen(QColor(30, 30, 30));
    const QRect titleRect(24, y, kHeaderWidth - 28, TimelineLayout::kRowHeight);
    p.drawText(titleRect, Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(QString::fromStdString(trackTitle(tr)), Qt::ElideRight, titleRect.width()));
    p.setFont(font());
    p.setPen(QColor(110, 110, 110));
    const QString sub = tr.rows.size() > 1 ? this->tr("%1 events · %2 rows%3")
                                                 .arg(locale.toString(tr.eventCount))
                                                 .arg(tr.rows.size())
                                                 .arg(collapsed ? this->tr(" (collapsed)") : QString())
                                           : this->tr("%1 events").arg(locale.toString(tr.eventCount));
    if (layout_.trackHeight(t) - TimelineLayout::kTrackGap >= 2 * TimelineLayout::kRowHeight)
      p.drawText(QRect(24, y + TimelineLayout::kRowHeight, kHeaderWidth - 28, TimelineLayout::kRowHeight),
                 Qt::AlignLeft | Qt::AlignVCenter, sub);
  }
  if (drag_ == Drag::Track && dropPosition_ >= 0) {
    const auto& order = layout_.order();
    const int y = dropPosition_ < static_cast<int>(order.size())
                      ? layout_.trackTop(order[static_cast<size_t>(dropPosition_)])
                      : layout_.totalHeight();
    p.fillRect(QRect(0, y - top + kRulerHeight - 2, size.width(), 3), QColor(30, 110, 220));
  }
  p.restore();
  if (drag_ == Drag::Track && dropPosition_ >= 0) {
    const auto& order = layout_.order();
    const int y = dropPosition_ < static_cast<int>(order.size())
                      ? layout_.trackTop(order[static_cast<size_t>(dropPosition_)])
                      : layout_.totalHeight();
    p.fillRect(QRect(kHeaderWidth, y - top + kRulerHeight - 2, size.width() - kHeaderWidth, 3), QColor(30, 110, 220));
  }
}

void TimelineView::paintRuler(QPainter& p, QSize size) {
  const QRect ruler(0, 0, size.width(), kRulerHeight);
  p.fillRect(ruler, QColor(236, 239, 244));
  p.setPen(QColor(190, 195, 203));
  p.drawLine(0, kRulerHeight - 1, size.width(), kRulerHeight - 1);
  // Corner: the span shown.
  p.setPen(QColor(60, 60, 60));
  p.drawText(QRect(8, 0, kHeaderWidth - 12, 20), Qt::AlignLeft | Qt::AlignVCenter,
             tr("view %1 · %2/px")
                 .arg(durationQ(axis_.span()), durationQ(static_cast<int64_t>(std::ceil(axis_.nsPerPixel())))));
  p.save();
  p.setClipRect(QRect(kHeaderWidth, 0, size.width() - kHeaderWidth, kRulerHeight));
  if (rulerB_ > rulerA_)
    p.fillRect(QRectF(QPointF(xOf(rulerA_), 0), QPointF(xOf(rulerB_), kRulerHeight)), QColor(255, 221, 87, 160));
  const QFontMetrics fm(font());
  const QRectF readout = hoverReadoutRect();
  for (const Tick& tk : axisTicks(axis_, timeOrigin())) {
    const double x = xOf(tk.t);
    p.setPen(QColor(110, 115, 125));
    p.drawLine(QPointF(x, tk.major ? 12 : 19), QPointF(x, 24));
    // A label the cursor's readout would cover is left out (they used to overlap).
    if (tk.major && !tickLabelRect(x, QString::fromStdString(tk.label)).intersects(readout)) {
      p.setPen(QColor(40, 40, 40));
      p.drawText(QPointF(x + 3, 11), QString::fromStdString(tk.label));
    }
  }
  // Search matches: one mark per pixel column holding a match start.
  if (!matches_.empty()) {
    p.setPen(kMatch.darker(140));
    auto it = matches_.begin();
    for (int x = 0; x < axis_.width() && it != matches_.end(); ++x) {
      const int64_t t1 = axis_.time(x + 1);
      it = std::lower_bound(it, matches_.end(), axis_.time(x),
                            [this](EventId id, int64_t t) { return store_->event(id).start < t; });
      if (it != matches_.end() && store_->event(*it).start < t1)
        p.drawLine(kHeaderWidth + x, 26, kHeaderWidth + x, kRulerHeight - 3);
    }
  }
  if (rulerB_ > rulerA_) {
    const QString text = tr("Δ %1").arg(durationQ(rulerB_ - rulerA_));
    const double mid = (xOf(rulerA_) + xOf(rulerB_)) / 2;
    const double w = fm.horizontalAdvance(text) + 10;
    const QRectF r(std::clamp(mid - w / 2, kHeaderWidth + 2.0, size.width() - w - 2.0), 12, w, fm.height() + 2);
    p.setPen(QColor(120, 90, 0));
    p.setBrush(QColor(255, 248, 214));
    p.drawRect(r);
    p.drawText(r, Qt::AlignCenter, text);
  }
  if (!readout.isEmpty()) {
    p.setPen(QColor(120, 125, 135));
    p.setBrush(QColor(255, 255, 255));
    p.drawRect(readout);
    p.setPen(QColor(30, 30, 30));
    p.drawText(readout, Qt::AlignCenter, hoverReadoutText());
  }
  p.restore();
}

}  // namespace attnscope::ui

namespace attnscope::ui {

QString TimelineView::hoverReadoutText() const {
  if (!store_ || hoverPos_.x() < kHeaderWidth || !underMouse()) return {};
  return QString::fromStdString(durationText(timeAtX(hoverPos_.x()) - timeOrigin()));
}

// The cursor's time, in a box in the ruler's label band next to the cursor.
QRectF TimelineView::hoverReadoutRect() const {
  const QString text = hoverReadoutText();
  if (text.isEmpty()) return {};
  const QFontMetrics fm(font());
  const double w = fm.horizontalAdvance(text) + 8;
  const double x = std::clamp(static_cast<double>(hoverPos_.x()) + 4, static_cast<double>(kHeaderWidth),
                              std::max<double>(kHeaderWidth, viewport()->width() - w - 1));
  return QRectF(x, 0, w, fm.height() + 1);
}

QRect TimelineView::trackRectInView(uint32_t track) const {
  if (track >= index_->tracks().size()) return {};
  const int y = layout_.trackTop(track) - contentTop() + kRulerHeight;
  const QRect r(0, y, viewport()->width(), layout_.trackHeight(track));
  return r.intersected(QRect(0, kRulerHeight, viewport()->width(), viewport()->height() - kRulerHeight));
}

QRectF TimelineView::tickLabelRect(double x, const QString& label) const {
  const QFontMetrics fm(font());
  return QRectF(x + 3, 11 - fm.ascent(), fm.horizontalAdvance(label), fm.height());
}

}  // namespace attnscope::ui
