// The Ranks view's timelines: the chosen ranks one under the other on the job's aligned clock. Each
// rank is a TimelineView of its own trace (ui/timeline), loaded off the UI thread when the rank is
// first shown and dropped when it is hidden (the job itself holds summaries only). The views share
// one visible range on the aligned clock: rank k's view shows [t + offset_k, t + span + offset_k] of
// its own clock, offset_k the clock offset the analysis applied to it, and its ruler counts from the
// job's start on the aligned clock, so the same time is at the same x on every rank. Zooming or
// panning one moves all of them.
#pragma once

#include <QList>
#include <QWidget>
#include <memory>
#include <vector>

#include "core/ranks/job.h"

class QLabel;
class QMenu;
class QSplitter;
class QToolButton;

namespace attnscope::ui {

class TimelineView;

class RankTimelines : public QWidget {
  Q_OBJECT

 public:
  explicit RankTimelines(QWidget* parent = nullptr);

  // Shows the default ranks of the job: the straggler and a typical rank (the one whose waiting is the
  // median of the others), else for a hang a waiting rank and the missing one when it has a trace,
  // else the first two.
  void setReport(std::shared_ptr<const ranks::JobReport> report);
  static QList<qint64> defaultRanks(const ranks::JobReport& r);

  // The ranks shown, top to bottom; each one's trace is loaded when it is first shown.
  QList<qint64> shownRanks() const;
  void showRanks(const QList<qint64>& ranks);
  // Shows `rank` as well (in place of the last one when four are shown already).
  void addRank(qint64 rank);
  // Shows `rank` in place of the last rank shown (beside the first), unless it is shown: as many lanes
  // as before, so the panes above keep their room.
  void showInPlaceOfLast(qint64 rank);
  // Which rank's title is highlighted (the heat map's selection).
  void setSelectedRank(qint64 rank);

  TimelineView* viewOf(qint64 rank) const;  // nullptr: not shown
  bool loaded(qint64 rank) const;
  bool allLoaded() const;
  bool settled() const;                // every rank shown loaded or failed
  QString titleOf(qint64 rank) const;  // the line above a rank's timeline
  // The clock offset subtracted from `rank`'s times (0 when none was applied).
  int64_t offsetOf(qint64 rank) const;
  // The job's start and end on the aligned clock (each rank's trace, shifted by its offset).
  int64_t originNs() const { return originNs_; }
  int64_t endNs() const { return endNs_; }

  // The shared visible range, on the aligned clock.
  int64_t alignedStart() const { return start_; }
  int64_t alignedSpan() const { return span_; }
  void zoomToAligned(int64_t t0, int64_t t1, double margin = 0.05);
  // The aligned time at a viewport x of any rank's view (what its ruler reads, plus originNs()).
  int64_t alignedTimeAt(qint64 rank, double viewportX) const;

 signals:
  void rankLoaded(qint64 rank);
  // Every rank shown has its events drawn, or says why it could not load them.
  void shownRanksSettled();
  void openTraceRequested(const QString& path);

 private:
  struct Lane {
    qint64 rank = -1;
    size_t index = 0;  // into JobReport::ranks
    QWidget* box = nullptr;
    QLabel* title = nullptr;
    QLabel* status = nullptr;
    TimelineView* view = nullptr;
    bool loaded = false;
    bool failed = false;
    quint64 token = 0;
  };
  Lane* laneOf(qint64 rank);
  const Lane* laneOf(qint64 rank) const;
  void load(Lane& lane);
  void onViewMoved(qint64 rank);
  void applyRange();
  void rebuildMenu();
  QString titleText(const Lane& lane) const;

  std::shared_ptr<const ranks::JobReport> report_;
  std::vector<Lane> lanes_;
  QLabel* caption_ = nullptr;
  QToolButton* choose_ = nullptr;
  QMenu* menu_ = nullptr;
  QSplitter* split_ = nullptr;
  int64_t originNs_ = 0, endNs_ = 1;
  int64_t start_ = 0, span_ = 1;
  qint64 selectedRank_ = -1;
  quint64 tokens_ = 0;
  bool syncing_ = false;
};

}  // namespace attnscope::ui
