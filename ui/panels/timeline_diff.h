// Two traces' timelines stacked on one time axis (A above, B below), aligned
// at a chosen pair of steps (by default the median pair), zoom and pan locked
// together, with the comparison's ranked changes beside them. Selecting a
// change lights its events in both timelines; clicking an op or kernel in one
// selects the same one (same name, same occurrence since the aligned step) in
// the other.
#pragma once

#include <QWidget>
#include <memory>
#include <vector>

#include "core/explain/compare.h"
#include "core/snapshot/trace_snapshot.h"
#include "ui/table/table_model_base.h"

class QComboBox;
class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace attnscope {
class TimelineIndex;
}

namespace attnscope::ui {

class TimelineView;

// The ranked changes: rank, kind, what, A, B, B - A (per step), noise.
class ChangesModel : public TableModelBase {
  Q_OBJECT

 public:
  enum Col { Rank, Delta, What, A, B, Kind, Noise, ColumnCount };
  using TableModelBase::TableModelBase;
  void setComparison(std::shared_ptr<const Comparison> c);
  const Change* change(int row) const;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 protected:
  QVariant cell(int row, int col, int role) const override;

 private:
  std::shared_ptr<const Comparison> cmp_;
  bool perStep_ = true;
};

class TimelineDiff : public QWidget {
  Q_OBJECT

 public:
  explicit TimelineDiff(QWidget* parent = nullptr);

  // Shows both traces (their timeline tracks are built off the UI thread); ready() follows.
  void setTraces(const QString& labelA, std::shared_ptr<const TraceSnapshot> a, const QString& labelB,
                 std::shared_ptr<const TraceSnapshot> b, std::shared_ptr<const Comparison> c);
  // Aligns step pair `pair` (index into the comparison's steps): its A start and B start at one x.
  void alignAt(int pair);
  int alignedPair() const { return pair_; }
  // B's time = A's time + offset.
  int64_t offsetNs() const { return offsetNs_; }
  // Lights a change (index into the comparison's changes) in both timelines.
  void showChange(int index);
  // Selects the change's row in the list beside the timelines (which shows it).
  void selectChange(int index);

  TimelineView* viewA() const { return viewA_; }
  TimelineView* viewB() const { return viewB_; }
  QTableView* changesView() const { return changesView_; }
  QComboBox* alignCombo() const { return align_; }

 signals:
  void ready();

 private:
  void follow(TimelineView* from, TimelineView* to, int64_t offset);
  void linkSelection(TimelineView* from, TimelineView* to, EventId id);
  int stepIndexAt(const Explanation& x, int64_t t) const;

  QLabel* labelA_;
  QLabel* labelB_;
  QComboBox* align_;
  TimelineView* viewA_;
  TimelineView* viewB_;
  ChangesModel* changes_;
  QSortFilterProxyModel* proxy_;
  QTableView* changesView_;
  std::shared_ptr<const TraceSnapshot> a_, b_;
  std::shared_ptr<const Comparison> cmp_;
  int pair_ = -1;
  int64_t offsetNs_ = 0;
  bool following_ = false;
  bool linking_ = false;
  quint64 generation_ = 0;
};

}  // namespace attnscope::ui
