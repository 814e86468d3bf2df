// The Steps view: the founding answer (core/snapshot/founding_answer.h) first. One row per step: its
// name, whether it is wrapped in record_function, what torch's table shows for it (its own row's
// time, or "no row", which reads as zero) and what it really cost (on a GPU, the GPU time of the work
// it launched, by correlation; on the CPU, the host time of its own ops), with both as bars side by
// side so the gap is seen before it is read. Above the rows, the answer in one paragraph; below, for
// the selected step, why torch put its time where it did. Selecting a step asks the window to show
// it: its band on the timeline with the work it launched, and its card in the Explanation.
#pragma once

#include <QWidget>
#include <memory>

#include "ui/common/loaded_trace.h"

class QLabel;
class QTableView;

namespace attnscope::ui {

class StepsAnswerModel;

class StepsView : public QWidget {
  Q_OBJECT

 public:
  enum Col { Step, Wrapped, TorchRow, Cost, Bars, ColumnCount };

  explicit StepsView(QWidget* parent = nullptr);

  void setTrace(std::shared_ptr<const LoadedTrace> trace);
  // The answer shown (null: none, e.g. a trace without an explanation).
  const FoundingAnswer* answer() const;
  QTableView* table() const { return table_; }
  QString headlineText() const;  // plain text
  QString whyText() const;       // plain text of the selected step's reasons
  // Selects the row that covers the explanation's step `step` (one of its iterations), without
  // emitting stepChosen (the timeline or the Explanation chose it).
  void selectStep(int step);
  // Selects the first step torch's table has no row for (without stepChosen: the window shows it on
  // the timeline itself), so the answer opens on a step that reads as zero and says why. Returns the
  // explanation's step to show (-1: every step has its row).
  int selectFirstUnwrapped();

 signals:
  // The user selected a row: the explanation's step to show (an engine row's iteration nearest its
  // median).
  void stepChosen(int step);

 private:
  void showWhy(int row);
  int representative(int row) const;  // the explanation's step a row shows (its median iteration)

  QLabel* headline_;
  QTableView* table_;
  StepsAnswerModel* model_;
  QLabel* why_;
  std::shared_ptr<const LoadedTrace> trace_;
  bool selecting_ = false;
};

}  // namespace attnscope::ui
