// The Ranks view's table of collectives: every collective matched across the ranks with its arrival
// skew on the aligned clock (first and last arrival from the job's start, who came last, how late
// after the others' median, how far apart the ends are), then the ones that could not be matched and
// why. Sorted through a proxy on TableModelBase::SortRole (ui/table/sort_header_view.h).
#pragma once

#include <memory>
#include <utility>

#include "core/ranks/job.h"
#include "ui/table/table_model_base.h"

namespace attnscope::ui {

class CollectivesModel : public TableModelBase {
  Q_OBJECT

 public:
  enum Column {
    Group,
    Index,
    Name,
    Step,
    FirstArrival,
    LastArrival,
    Skew,
    LastRank,
    LateBy,
    EndSpread,
    Status,
    kColumns
  };

  using TableModelBase::TableModelBase;
  // `originNs`: the job's start on the aligned clock (arrivals are shown from it).
  void setReport(std::shared_ptr<const ranks::JobReport> report, int64_t originNs);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kColumns; }
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

  bool isMatched(int row) const { return report_ && row < static_cast<int>(report_->matched.size()); }
  // A row's span on the aligned clock: from the first issue or arrival to the last end on any rank.
  std::pair<int64_t, int64_t> alignedRange(int row) const;
  // The step the row's collective was issued in ("" none).
  QString stepOf(int row) const;

 protected:
  QVariant cell(int row, int col, int role) const override;

 private:
  std::shared_ptr<const ranks::JobReport> report_;
  int64_t originNs_ = 0;
};

}  // namespace attnscope::ui
