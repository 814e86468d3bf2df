#include "ui/timeline/view.h"
#include "ui/common/text.h"

#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLocale>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace attnscope::ui {
namespace {

constexpr int kScrollUnits = 100000;  // horizontal scroll bar resolution over the whole trace

}  // namespace

TimelineView::TimelineView(QWidget* parent)
    : QAbstractScrollArea(parent), index_(std::make_shared<const TimelineIndex>()) {
  setObjectName(QStringLiteral("timeline"));
  setFocusPolicy(Qt::StrongFocus);
  viewport()->setMouseTracking(true);
  viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
  setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  horizontalScrollBar()->setRange(0, 0);
  connect(horizontalScrollBar(), &QScrollBar::valueChanged, this, &TimelineView::onHorizontalScroll);
  setMinimumHeight(160);
}

TimelineView::~TimelineView() = default;

void TimelineView::setStore(std::shared_ptr<const EventStore> store) {
  auto index = store ? std::make_shared<const TimelineIndex>(*store) : nullptr;
  setTrace(std::move(store), std::move(index));
}

void TimelineView::setTrace(std::shared_ptr<const EventStore> store, std::shared_ptr<const TimelineIndex> index) {
  store_ = std::move(store);
  index_ = store_ && index ? std::move(index) : std::make_shared<const TimelineIndex>();
  labels_ = LabelCache();
  layout_.reset(*index_);
  selected_ = kNoEvent;
  highlighted_.clear();
  matches_.clear();
  matchName_.clear();
  overlay_.reset();
  rulerA_ = rulerB_ = 0;
  geometry_.reset();
  axis_.setWidth(eventAreaWidth());
  if (store_ && !store_->events().empty())
    axis_.setBounds(store_->minTime(), store_->maxTime());
  else
    axis_.setBounds(0, 1000);
  axis_.fitAll();
  verticalScrollBar()->setValue(0);
  changed();
}

int TimelineView::eventAreaWidth() const { return std::max(1, viewport()->width() - kHeaderWidth); }

int TimelineView::contentTop() const { return verticalScrollBar()->value(); }

int TimelineView::yOf(uint32_t track, uint32_t row) const {
  const int y = layout_.rowY(track, row);
  return y < 0 ? -1 : y - contentTop() + kRulerHeight;
}

void TimelineView::changed() {
  syncScrollBars();
  viewport()->update();
  emit visibleRangeChanged();
}

void TimelineView::syncScrollBars() {
  syncingScroll_ = true;
  const int visibleH = std::max(0, viewport()->height() - kRulerHeight);
  verticalScrollBar()->setRange(0, std::max(0, layout_.totalHeight() - visibleH));
  verticalScrollBar()->setPageStep(visibleH);
  verticalScrollBar()->setSingleStep(TimelineLayout::kRowHeight);
  const double full = static_cast<double>(axis_.boundsHi() - axis_.boundsLo());
  const int page = static_cast<int>(std::clamp(axis_.span() / full, 0.0, 1.0) * kScrollUnits);
  QScrollBar* h = horizontalScrollBar();
  h->setRange(0, std::max(0, kScrollUnits - page));
  h->setPageStep(std::max(1, page));
  h->setSingleStep(std::max(1, page / 10));
  h->setValue(static_cast<int>((axis_.start() - axis_.boundsLo()) / full * kScrollUnits));
  syncingScroll_ = false;
}

void TimelineView::onHorizontalScroll(int value) {
  if (syncingScroll_) return;
  const double full = static_cast<double>(axis_.boundsHi() - axis_.boundsLo());
  axis_.setVisibleRange(axis_.boundsLo() + static_cast<int64_t>(value * full / kScrollUnits), axis_.span());
  viewport()->update();
  emit visibleRangeChanged();
}

void TimelineView::scrollContentsBy(int, int) { viewport()->update(); }

void TimelineView::resizeEvent(QResizeEvent* e) {
  QAbstractScrollArea::resizeEvent(e);
  axis_.setWidth(eventAreaWidth());
  changed();
  showOverlayLane();
}

void TimelineView::fitAll() {
  axis_.fitAll();
  changed();
}

void TimelineView::zoomToRange(int64_t t0, int64_t t1, double margin) {
  if (t1 < t0) std::swap(t0, t1);
  const int64_t span = std::max<int64_t>(t1 - t0, TimeAxis::kMinSpanNs);
  const auto pad = static_cast<int64_t>(static_cast<double>(span) * margin);
  axis_.setVisibleRange(t0 - pad, span + 2 * pad);
  changed();
}

void TimelineView::zoomToSelection() {
  if (rulerB_ > rulerA_)
    zoomToRange(rulerA_, rulerB_, 0.02);
  else if (selected_ != kNoEvent)
    zoomToRange(store_->event(selected_).start, store_->event(selected_).end(), 0.15);
  else if (overlay_)
    zoomToRange(overlay_->extentStartNs, overlay_->extentEndNs, 0.06);
}

void TimelineView::zoomBy(double factor) {
  axis_.zoomAt(axis_.width() / 2.0, factor);
  changed();
}

void TimelineView::panBy(double fraction) {
  axis_.panPixels(fraction * axis_.width());
  changed();
}

void TimelineView::relayoutTracks() {
  layout_.relayout(*index_);
  changed();
}

void TimelineView::revealFirstGpuLane() {
  if (!index_) return;
  if (layout_.fitFirstGpu(*index_, viewport()->height() - kRulerHeight)) changed();
}

void TimelineView::toggleCollapsed(uint32_t track) {
  layout_.setCollapsed(track, !layout_.collapsed(track));
  relayoutTracks();
}

void TimelineView::selectEvent(EventId id, bool reveal) {
  if (id != kNoEvent && (!store_ || id >= store_->events().size())) return;
  const bool same = id == selected_;
  selected_ = id;
  if (reveal && id != kNoEvent) revealEvent(id);
  viewport()->update();
  if (!same) emit eventSelected(id);
}

void TimelineView::revealEvent(EventId id) {
  const Event& e = store_->event(id);
  const uint32_t track = index_->trackOf(id);
  if (layout_.collapsed(track) && index_->rowOf(id) > 0) {
    layout_.setCollapsed(track, false);
    layout_.relayout(*index_);
  }
  // Wide enough to see (a third of the view at most), centred.
  const double w = axis_.x(e.end()) - axis_.x(e.start);
  if (w < 8 || axis_.span() < e.dur) {
    const int64_t span = std::max<int64_t>(e.dur * 3, 2000);
    axis_.setVisibleRange(e.start + e.dur / 2 - span / 2, span);
  } else if (e.end() < axis_.start() || e.start > axis_.end()) {
    axis_.setVisibleRange(e.start + e.dur / 2 - axis_.span() / 2, axis_.span());
  }
  const int y = layout_.rowY(track, index_->rowOf(id));
  const int visibleH = viewport()->height() - kRulerHeight;
  if (y < contentTop() || y + TimelineLayout::kRowHeight > contentTop() + visibleH) {
    syncScrollBars();
    verticalScrollBar()->setValue(std::max(0, y - visibleH / 3));
  }
  changed();
}

void TimelineView::setHighlighted(std::vector<EventId> ids) {
  std::sort(ids.begin(), ids.end());
  highlighted_ = std::move(ids);
  viewport()->update();
}

int TimelineView::setSearch(const QString& text) {
  matches_.clear();
  matchName_.clear();
  if (store_ && !text.trimmed().isEmpty()) {
    const QString needle = text.trimmed();
    const StringTable& st = store_->strings();
    matchName_.assign(st.size(), false);
    bool any = false;
    for (uint32_t i = 1; i < st.size(); ++i) {
      if (qs(st.view(i)).contains(needle, Qt::CaseInsensitive)) matchName_[i] = any = true;
    }
    if (any) {
      for (EventId id = 0; id < store_->events().size(); ++id)
        if (matchName_[store_->event(id).name]) matches_.push_back(id);
      std::stable_sort(matches_.begin(), matches_.end(),
                       [this](EventId a, EventId b) { return store_->event(a).start < store_->event(b).start; });
    }
  }
  viewport()->update();
  return static_cast<int>(matches_.size());
}

EventId TimelineView::nextMatch(bool forward) {
  if (matches_.empty()) return kNoEvent;
  auto pos = std::find(matches_.begin(), matches_.end(), selected_);
  EventId next;
  if (pos == matches_.end()) {
    // From the view's centre.
    const int64_t mid = axis_.start() + axis_.span() / 2;
    auto it = std::lower_bound(matches_.begin(), matches_.end(), mid,
                               [this](EventId id, int64_t t) { return store_->event(id).start < t; });
    if (forward)
      next = it == matches_.end() ? matches_.front() : *it;
    else
      next = it == matches_.begin() ? matches_.back() : *(it - 1);
  } else if (forward) {
    next = pos + 1 == matches_.end() ? matches_.front() : *(pos + 1);
  } else {
    next = pos == matches_.begin() ? matches_.back() : *(pos - 1);
  }
  selectEvent(next, true);
  return next;
}

void TimelineView::setOverlay(std::optional<ExplainOverlay> overlay) {
  overlay_ = std::move(overlay);
  showOverlayLane();
  viewport()->update();
}

void TimelineView::showOverlayLane() {
  // The overlay draws on the GPU lane of the step's work: when that lane is below the view (a short
  // timeline under a tall CPU thread), scroll just enough to show its first row.
  if (!overlay_ || !index_ || !store_ || overlay_->launches.empty() || overlay_->launches.front().gpu == kNoEvent)
    return;
  const EventId gpu = overlay_->launches.front().gpu;
  const int y = layout_.rowY(index_->trackOf(gpu), index_->rowOf(gpu));
  const int visible = std::max(0, viewport()->height() - kRulerHeight);
  if (y < 0 || visible <= 0) return;
  int want = y + TimelineLayout::kRowHeight + 6 - visible;
  // Never past the step's own row: the step stays in view (it scrolled out under the GPU lane).
  if (overlay_->event != kNoEvent && overlay_->event < store_->events().size()) {
    const int hostY = layout_.rowY(index_->trackOf(overlay_->event), index_->rowOf(overlay_->event));
    if (hostY >= 0) want = std::min(want, std::max(0, hostY - 4));
  }
  if (want > verticalScrollBar()->value())
    verticalScrollBar()->setValue(std::min(want, verticalScrollBar()->maximum()));
}

void TimelineView::setRuler(int64_t t0, int64_t t1) {
  rulerA_ = std::min(t0, t1);
  rulerB_ = std::max(t0, t1);
  viewport()->update();
  emit rulerChanged(rulerA_, rulerB_);
}

const Geometry& TimelineView::geometry() {
  axis_.setWidth(eventAreaWidth());
  const int top = contentTop();
  const int bottom = top + std::max(0, viewport()->height() - kRulerHeight);
  const GeometryKey key{axis_.start(), axis_.span(), axis_.width(), top, bottom, layout_.version()};
  if (!geometry_ || !(geometry_->key == key)) {
    const QFontMetricsF fm(font());
    geometry_ = buildGeometry(*index_, axis_, layout_, top, bottom, palette_, &labels_, &fm);
    ++geometryBuilds_;
  }
  return *geometry_;
}

std::optional<TimelineView::Hit> TimelineView::hitTest(QPoint pos) {
  if (!store_ || pos.x() < kHeaderWidth || pos.y() < kRulerHeight) return std::nullopt;
  const int cy = pos.y() - kRulerHeight + contentTop();
  const RowSlot* slot = layout_.slotAt(cy);
  if (!slot) return std::nullopt;
  const Geometry& g = geometry();
  for (const RowGeometry& rg : g.rows) {
    if (rg.track != slot->track || rg.row != slot->row) continue;
    const GeomItem* it = hitItem(rg, pos.x() - kHeaderWidth);
    if (!it) return std::nullopt;
    const TrackRow& row = index_->tracks()[rg.track].rows[rg.row];
    return Hit{rg.track, rg.row, row.ids[it->first], it->count, it->first};
  }
  return std::nullopt;
}

QString TimelineView::toolTipFor(const Hit& h) const {
  const EventStore& s = *store_;
  const TrackRow& row = index_->tracks()[h.track].rows[h.row];
  if (h.count > 1) {
    const Event& a = s.event(row.ids[h.rowFirst]);
    int64_t end = a.end(), busy = 0;
    for (uint32_t i = 0; i < h.count && i < 100000; ++i) {
      const Event& e = s.event(row.ids[h.rowFirst + i]);
      end = std::max(end, e.end());
      busy += e.dur;
    }
    return tr("<b>%1 events</b> folded (each narrower than %2 px at this zoom)<br>"
              "from %3 over %4, %5 of event time<br>first: %6<br><i>double-click to zoom in</i>")
        .arg(QLocale().toString(h.count))
        .arg(kFoldPixels)
        .arg(durationQ(a.start - timeOrigin()), durationQ(end - a.start), durationQ(busy),
             qs(s.name(a)).toHtmlEscaped());
  }
  return detailsFor(h.event);
}

QString TimelineView::detailsFor(EventId id) const {
  if (!store_ || id == kNoEvent) return {};
  const EventStore& s = *store_;
  const Event& e = s.event(id);
  QStringList lines;
  lines << QStringLiteral("<b>%1</b>").arg(qs(s.name(e)).toHtmlEscaped());
  lines << tr("%1 · duration %2 · starts at %3")
               .arg(qs(familyName(e.family)), durationQ(e.dur), durationQ(e.start - timeOrigin()));
  lines << tr("%1").arg(qs(s.lanes()[e.lane].label).toHtmlEscaped());
  if (const auto a = s.argsOf(e)) {
    if (a->inputDims) lines << tr("shapes %1").arg(qs(s.str(a->inputDims)).toHtmlEscaped());
    if (a->stream >= 0) lines << tr("device %1 · stream %2").arg(a->device).arg(a->stream);
    if (a->grid[0]) {
      lines << tr("grid [%1, %2, %3] · block [%4, %5, %6]")
                   .arg(a->grid[0])
                   .arg(a->grid[1])
                   .arg(a->grid[2])
                   .arg(a->block[0])
                   .arg(a->block[1])
                   .arg(a->block[2]);
    }
    if (a->bytes && (e.family == Family::GpuMemcpy || e.family == Family::GpuMemset || e.family == Family::Memory))
      lines << tr("%1 bytes").arg(QLocale().toString(static_cast<qlonglong>(a->bytes)));
  }
  QStringList ids;
  if (e.correlation != kNoId) ids << tr("correlation %1").arg(e.correlation);
  if (e.externalId != kNoId) ids << tr("external id %1").arg(e.externalId);
  if (!ids.isEmpty()) lines << ids.join(QStringLiteral(" · "));
  if (e.correlation > 0) {
    for (EventId o : s.byCorrelation(e.correlation)) {
      if (o == id) continue;
      const Event& oe = s.event(o);
      const int64_t lag = isGpuFamily(e.family) ? e.start - oe.start : oe.start - e.start;
      lines << (isGpuFamily(e.family) ? tr("launched by %1, %2 before it started")
                                      : tr("queues %1, which started %2 later"))
                   .arg(qs(s.name(oe)).toHtmlEscaped(), durationQ(lag));
    }
  }
  if (e.parent != kNoEvent) lines << tr("inside %1").arg(qs(s.name(s.event(e.parent))).toHtmlEscaped());
  return lines.join(QStringLiteral("<br>"));
}

bool TimelineView::viewportEvent(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* he = static_cast<QHelpEvent*>(e);
    if (he->pos().y() < kRulerHeight && rulerB_ > rulerA_) {
      QToolTip::showText(he->globalPos(), tr("Measured: %1").arg(durationQ(rulerB_ - rulerA_)), viewport());
      return true;
    }
    // A track's name: all of it (the header cuts long ones), its kind and size.
    if (he->pos().x() < kHeaderWidth && he->pos().y() >= kRulerHeight && index_) {
      const int t = layout_.trackAt(he->pos().y() - kRulerHeight + contentTop());
      if (t >= 0) {
        const Track& track = index_->tracks()[static_cast<size_t>(t)];
        QToolTip::showText(he->globalPos(),
                           tr("<b>%1</b><br>%2 events in %3 rows · %4")
                               .arg(QString::fromStdString(track.label).toHtmlEscaped())
                               .arg(track.eventCount)
                               .arg(track.rows.size())
                               .arg(QString::fromLatin1(trackKindName(track.kind))),
                           viewport());
        return true;
      }
    }
    const auto hit = hitTest(he->pos());
    if (hit)
      QToolTip::showText(he->globalPos(), toolTipFor(*hit), viewport());
    else
      QToolTip::hideText();
    return true;
  }
  return QAbstractScrollArea::viewportEvent(e);
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(viewport());
  renderFrame(p, viewport()->size());
}

void TimelineView::wheelEvent(QWheelEvent* e) {
  const QPointF pos = e->position();
  const QPoint d = e->angleDelta();
  if (pos.x() < kHeaderWidth && !(e->modifiers() & Qt::ShiftModifier)) {
    QAbstractScrollArea::wheelEvent(e);  // scroll the tracks
    return;
  }
  if (e->modifiers() & Qt::ShiftModifier || std::abs(d.x()) > std::abs(d.y())) {
    const int delta = std::abs(d.x()) > std::abs(d.y()) ? d.x() : d.y();
    axis_.panPixels(-delta / 120.0 * axis_.width() * 0.1);
  } else {
    axis_.zoomAt(pos.x() - kHeaderWidth, std::pow(1.25, d.y() / 120.0));
  }
  changed();
  e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
  setFocus();
  pressPos_ = e->position().toPoint();
  pressStart_ = axis_.start();
  pressScroll_ = verticalScrollBar()->value();
  dragMoved_ = false;
  drag_ = Drag::None;
  if (e->button() != Qt::LeftButton) return;
  if (pressPos_.x() < kHeaderWidth && pressPos_.y() >= kRulerHeight) {
    const int t = layout_.trackAt(pressPos_.y() - kRulerHeight + contentTop());
    if (t < 0) return;
    const int titleY = layout_.trackTop(static_cast<uint32_t>(t)) - contentTop() + kRulerHeight;
    if (pressPos_.x() < 22 && pressPos_.y() < titleY + TimelineLayout::kRowHeight) {
      toggleCollapsed(static_cast<uint32_t>(t));
      return;
    }
    drag_ = Drag::Track;
    dragTrack_ = t;
    dropPosition_ = -1;
    return;
  }
  drag_ = (e->modifiers() & Qt::ShiftModifier) || pressPos_.y() < kRulerHeight ? Drag::Ruler : Drag::Pan;
  if (drag_ == Drag::Ruler) setRuler(timeAtX(pressPos_.x()), timeAtX(pressPos_.x()));
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
  const QPoint pos = e->position().toPoint();
  hoverPos_ = pos;
  if (drag_ != Drag::None && (pos - pressPos_).manhattanLength() > 3) dragMoved_ = true;
  switch (drag_) {
    case Drag::Pan:
      if (dragMoved_) {
        axis_.setVisibleRange(pressStart_, axis_.span());
        axis_.panPixels(pressPos_.x() - pos.x());
        verticalScrollBar()->setValue(pressScroll_ + pressPos_.y() - pos.y());
        changed();
        setCursor(Qt::ClosedHandCursor);
      }
      break;
    case Drag::Ruler:
      setRuler(timeAtX(pressPos_.x()), timeAtX(std::max(pos.x(), kHeaderWidth)));
      break;
    case Drag::Track: {
      if (!dragMoved_) break;
      const int cy = pos.y() - kRulerHeight + contentTop();
      int position = static_cast<int>(layout_.order().size());
      for (size_t i = 0; i < layout_.order().size(); ++i) {
        const uint32_t t = layout_.order()[i];
        if (cy < layout_.trackTop(t) + layout_.trackHeight(t) / 2) {
          position = static_cast<int>(i);
          break;
        }
      }
      dropPosition_ = position;
      setCursor(Qt::SizeVerCursor);
      break;
    }
    case Drag::None:
      break;
  }
  viewport()->update();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* e) {
  const Drag d = drag_;
  drag_ = Drag::None;
  unsetCursor();
  if (d == Drag::Track && dragMoved_ && dropPosition_ >= 0) {
    const int from = layout_.positionOf(static_cast<uint32_t>(dragTrack_));
    layout_.moveTrack(static_cast<uint32_t>(dragTrack_), dropPosition_ > from ? dropPosition_ - 1 : dropPosition_);
    dropPosition_ = -1;
    relayoutTracks();
    return;
  }
  if (d == Drag::Ruler && !dragMoved_) setRuler(0, 0);
  if (d == Drag::Pan && !dragMoved_ && e->button() == Qt::LeftButton) {
    const auto hit = hitTest(e->position().toPoint());
    selectEvent(hit && hit->count == 1 ? hit->event : kNoEvent);
  }
  viewport()->update();
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* e) {
  const QPoint pos = e->position().toPoint();
  if (pos.x() < kHeaderWidth) {
    const int t = layout_.trackAt(pos.y() - kRulerHeight + contentTop());
    if (t >= 0) toggleCollapsed(static_cast<uint32_t>(t));
    return;
  }
  const auto hit = hitTest(pos);
  if (!hit) return;
  const TrackRow& row = index_->tracks()[hit->track].rows[hit->row];
  int64_t t0 = store_->event(row.ids[hit->rowFirst]).start, t1 = t0;
  for (uint32_t i = 0; i < hit->count; ++i) t1 = std::max(t1, store_->event(row.ids[hit->rowFirst + i]).end());
  zoomToRange(t0, t1, 0.1);
}

void TimelineView::keyPressEvent(QKeyEvent* e) {
  const double zoomX = hoverPos_.x() >= kHeaderWidth && hoverPos_.x() < viewport()->width()
                           ? hoverPos_.x() - kHeaderWidth
                           : axis_.width() / 2.0;
  switch (e->key()) {
    case Qt::Key_W:
      axis_.zoomAt(zoomX, 1.5);
      changed();
      break;
    case Qt::Key_S:
      axis_.zoomAt(zoomX, 1 / 1.5);
      changed();
      break;
    case Qt::Key_A:
      panBy(-0.15);
      break;
    case Qt::Key_D:
      panBy(0.15);
      break;
    case Qt::Key_F:
    case Qt::Key_Home:
      fitAll();
      break;
    case Qt::Key_Z:
      zoomToSelection();
      break;
    case Qt::Key_E:
      if (selected_ != kNoEvent) emit explainRequested(selected_);
      break;
    case Qt::Key_Escape:
      setRuler(0, 0);
      selectEvent(kNoEvent);
      break;
    default:
      QAbstractScrollArea::keyPressEvent(e);
      return;
  }
  e->accept();
}

void TimelineView::contextMenuEvent(QContextMenuEvent* e) {
  if (!store_) return;
  QMenu menu(this);
  const QPoint pos = e->pos();
  if (pos.x() < kHeaderWidth) {
    const int t = layout_.trackAt(pos.y() - kRulerHeight + contentTop());
    if (t >= 0) {
      const auto track = static_cast<uint32_t>(t);
      menu.addAction(layout_.collapsed(track) ? tr("Expand") : tr("Collapse"), this,
                     [this, track] { toggleCollapsed(track); });
      menu.addAction(tr("Move up"), this, [this, track] {
        layout_.moveTrack(track, layout_.positionOf(track) - 1);
        relayoutTracks();
      });
      menu.addAction(tr("Move down"), this, [this, track] {
        layout_.moveTrack(track, layout_.positionOf(track) + 1);
        relayoutTracks();
      });
      menu.addAction(tr("Move to top"), this, [this, track] {
        layout_.moveTrack(track, 0);
        relayoutTracks();
      });
      menu.addSeparator();
    }
    menu.addAction(tr("Collapse all"), this, [this] {
      for (uint32_t t2 = 0; t2 < index_->tracks().size(); ++t2) layout_.setCollapsed(t2, true);
      relayoutTracks();
    });
    menu.addAction(tr("Expand all"), this, [this] {
      for (uint32_t t2 = 0; t2 < index_->tracks().size(); ++t2) layout_.setCollapsed(t2, false);
      relayoutTracks();
    });
  } else {
    const auto hit = hitTest(pos);
    if (hit && hit->count == 1) {
      const EventId id = hit->event;
      selectEvent(id);
      const Family f = store_->event(id).family;
      QAction* ex = menu.addAction(tr("Explain this (overlay)"), this, [this, id] { emit explainRequested(id); });
      ex->setEnabled(f == Family::UserAnnotation || f == Family::CpuOp);
      menu.addAction(tr("Zoom to event"), this, [this] { zoomToSelection(); });
    }
    if (rulerB_ > rulerA_)
      menu.addAction(tr("Zoom to measured interval"), this, [this] { zoomToRange(rulerA_, rulerB_, 0.02); });
    menu.addAction(tr("Fit all"), this, [this] { fitAll(); });
  }
  menu.exec(e->globalPos());
}

}  // namespace attnscope::ui
