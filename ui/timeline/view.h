// The timeline widget: tracks of CPU threads, GPU streams, GPU annotation
// spans and profiler overhead drawn from the event store, with a ruler,
// zoom/pan, measuring, hover tooltips, selection, search highlights, flow
// arrows from launches to their GPU work, and the explain overlay.
//
// Mouse: wheel zooms at the cursor (Shift+wheel pans, wheel over the track
// names scrolls), drag pans, Shift+drag or drag on the ruler measures,
// click selects, double-click zooms to an event or a folded box. Track
// names: click the triangle to collapse, drag to reorder, right-click for
// more. Keys: W/S zoom, A/D pan, F fit all, Z zoom to selection (or to the
// measured interval, or the overlay), E explain the selection, Esc clears.
#pragma once

#include <QAbstractScrollArea>
#include <QElapsedTimer>
#include <memory>
#include <optional>
#include <vector>

#include "core/store/event_store.h"
#include "ui/timeline/axis.h"
#include "ui/timeline/flow_bundle.h"
#include "ui/timeline/geometry.h"
#include "ui/timeline/index.h"
#include "ui/timeline/layout.h"
#include "ui/timeline/overlay.h"
#include "ui/timeline/palette.h"

namespace attnscope::ui {

class TimelineView : public QAbstractScrollArea {
  Q_OBJECT

 public:
  static constexpr int kHeaderWidth = 230;  // track names column
  static constexpr int kRulerHeight = 34;   // time axis + search-match strip

  explicit TimelineView(QWidget* parent = nullptr);
  ~TimelineView() override;

  // Shows a store with its tracks (built off the UI thread by the loader;
  // nullptr clears). The view keeps both alive.
  void setTrace(std::shared_ptr<const EventStore> store, std::shared_ptr<const TimelineIndex> index);
  // The same, building the tracks here (benchmarks and tests).
  void setStore(std::shared_ptr<const EventStore> store);
  const EventStore* store() const { return store_.get(); }
  const TimelineIndex& index() const { return *index_; }
  TimelineLayout& layout() { return layout_; }
  TimeAxis& axis() { return axis_; }
  const TimeAxis& axis() const { return axis_; }

  // Visible range and zoom.
  void fitAll();
  void zoomToRange(int64_t t0, int64_t t1, double margin = 0.05);
  void zoomToSelection();
  void zoomBy(double factor);   // at the view centre
  void panBy(double fraction);  // of the view width
  void relayoutTracks();        // after changing layout() directly
  // The first GPU stream's lane on screen without scrolling (TimelineLayout::fitFirstGpu).
  void revealFirstGpuLane();

  // Selection (one event), highlights (the table's row), search matches.
  void selectEvent(EventId id, bool reveal = false);
  EventId selectedEvent() const { return selected_; }
  void setHighlighted(std::vector<EventId> ids);
  const std::vector<EventId>& highlighted() const { return highlighted_; }
  int setSearch(const QString& text);  // returns the number of matches
  const std::vector<EventId>& searchMatches() const { return matches_; }
  EventId nextMatch(bool forward);  // selects and reveals it

  // The selection's and the overlay's flow arrows in the last paint: arrows drawn, and the
  // launch -> GPU links they stand for (the grey arrows of a close zoom are not counted).
  struct FlowStats {
    int arrows = 0;
    int links = 0;
  };
  FlowStats lastFlows() const { return lastFlows_; }

  void setOverlay(std::optional<ExplainOverlay> overlay);
  const std::optional<ExplainOverlay>& overlay() const { return overlay_; }

  // The time the ruler's labels, the cursor readout and the tooltips count from: the trace's first
  // event unless set. The timelines of a job's ranks set one each, so that all read the job's aligned
  // clock (ui/ranks/rank_timelines.h).
  void setTimeOrigin(std::optional<int64_t> origin) {
    timeOrigin_ = origin;
    viewport()->update();
  }
  int64_t timeOrigin() const { return timeOrigin_ ? *timeOrigin_ : (store_ ? store_->minTime() : 0); }

  // Measuring: the ruler interval (empty when none).
  void setRuler(int64_t t0, int64_t t1);
  std::pair<int64_t, int64_t> ruler() const { return {rulerA_, rulerB_}; }

  struct Hit {
    uint32_t track = 0;
    uint32_t row = 0;
    EventId event = kNoEvent;  // the event (first one of a fold)
    uint32_t count = 0;        // events under the box (> 1: folded)
    uint32_t rowFirst = 0;     // ids[rowFirst, rowFirst + count) of the row
  };
  // What is drawn under a viewport point (nullopt: nothing).
  std::optional<Hit> hitTest(QPoint viewportPos);
  // Viewport x of a time and back.
  double xOf(int64_t t) const { return kHeaderWidth + axis_.x(t); }
  // Viewport y of a track's row box top (-1 when the track is hidden).
  int yOf(uint32_t track, uint32_t row) const;

  const Geometry& geometry();  // current frame's geometry (built or cached)
  uint64_t geometryBuilds() const { return geometryBuilds_; }
  // Paints a frame of `size` (what paintEvent shows); used by the benchmark.
  void renderFrame(QPainter& p, QSize size);
  QString toolTipFor(const Hit& h) const;
  QString detailsFor(EventId id) const;  // rich text
  // The cursor's time in the ruler, and where it is drawn (empty: the cursor is not over the events).
  QString hoverReadoutText() const;
  // Where track `track` is drawn in the viewport (its part below the ruler; empty when scrolled out).
  QRect trackRectInView(uint32_t track) const;
  QRectF hoverReadoutRect() const;
  // Where a tick label at x is drawn in the ruler.
  QRectF tickLabelRect(double x, const QString& label) const;

 signals:
  void eventSelected(attnscope::EventId id);  // kNoEvent when cleared
  void explainRequested(attnscope::EventId id);
  void rulerChanged(qint64 t0, qint64 t1);
  void visibleRangeChanged();

 protected:
  void paintEvent(QPaintEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  void contextMenuEvent(QContextMenuEvent* e) override;
  bool viewportEvent(QEvent* e) override;
  void scrollContentsBy(int dx, int dy) override;

 private:
  enum class Drag { None, Pan, Ruler, Track };
  void syncScrollBars();
  void onHorizontalScroll(int value);
  void changed();  // window or layout changed: repaint, scroll bars
  int eventAreaWidth() const;
  int contentTop() const;  // content y at the top of the track area
  int64_t timeAtX(double viewportX) const { return axis_.time(viewportX - kHeaderWidth); }
  void revealEvent(EventId id);
  void showOverlayLane();  // scrolls the overlay's GPU lane into view
  void toggleCollapsed(uint32_t track);

  // Painting (paint.cpp).
  void paintTracks(QPainter& p, QSize size);
  void paintOverlayUnder(QPainter& p, const QRect& area);
  void paintOverlayOver(QPainter& p, const QRect& area);
  void paintHighlights(QPainter& p);
  void paintFlows(QPainter& p, const QRect& area);
  void paintHeader(QPainter& p, QSize size);
  void paintRuler(QPainter& p, QSize size);
  void paintArrow(QPainter& p, QPointF from, QPointF to, const QColor& c, qreal width);
  void paintBundles(QPainter& p, FlowBundler& bundler, const QColor& c, qreal width, bool counted = true);
  QRectF eventRect(EventId id) const;  // viewport coordinates; empty when hidden

  std::shared_ptr<const EventStore> store_;
  std::shared_ptr<const TimelineIndex> index_;
  TimelineLayout layout_;
  TimeAxis axis_;
  TimelinePalette palette_;
  LabelCache labels_;
  std::optional<Geometry> geometry_;
  FlowStats lastFlows_;
  uint64_t geometryBuilds_ = 0;

  EventId selected_ = kNoEvent;
  std::vector<EventId> highlighted_;  // sorted
  std::vector<EventId> matches_;      // sorted by start time
  std::vector<bool> matchName_;       // per interned name
  std::optional<ExplainOverlay> overlay_;
  int64_t rulerA_ = 0, rulerB_ = 0;
  std::optional<int64_t> timeOrigin_;

  Drag drag_ = Drag::None;
  QPoint pressPos_;
  int64_t pressStart_ = 0;  // axis start at press (pan)
  int pressScroll_ = 0;
  bool dragMoved_ = false;
  int dragTrack_ = -1;
  int dropPosition_ = -1;
  QPoint hoverPos_{-1, -1};
  bool syncingScroll_ = false;
};

}  // namespace attnscope::ui
