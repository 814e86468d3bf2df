// The explanation's steps as a table: one row per step with its host time, what cost it most (the
// diagnosis's largest part of that step, where the diagnosis has the same window),
// the GPU work it launched, GPU busy share and idle time in its window, sync
// wait, communication and spill. Sortable by every column (numeric SortRole).
#pragma once

#include <memory>
#include <vector>

#include "core/explain/explanation.h"
#include "ui/table/table_model_base.h"

namespace attnscope::ui {

class StepsModel : public TableModelBase {
  Q_OBJECT

 public:
  enum Col { Step, Host, CostMost, Gpu, Busy, Idle, SyncWait, Communication, SpillOut, SpillIn, ColumnCount };
  static constexpr int StepIndexRole = Qt::UserRole + 20;  // int: index into Explanation::steps

  using TableModelBase::TableModelBase;
  void setExplanation(std::shared_ptr<const Explanation> explanation);
  // Every step's "Cost it most" is the same CPU only (a run on the CPU) or none: the column says nothing.
  bool costMostSaysNothing() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 protected:
  QVariant cell(int row, int col, int role) const override;

 private:
  std::shared_ptr<const Explanation> explanation_;
  std::vector<const StepWaits*> waits_;  // per row: its step in explanation_->diagnosis, or null
};

}  // namespace attnscope::ui
