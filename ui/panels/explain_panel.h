// The explanation (a dock): what the trace's steps did, from the snapshot's
// explanation. At the top, one sortable row per step (host time, GPU work it
// launched, GPU busy share and idle time, sync wait, communication, spill);
// below, the ranked findings, the sync waits grouped by cause and the
// ledger, or, when a step is selected, that step's card: its numbers, the
// work it launched, its sync waits with what they awaited, its regions and
// its findings. Selecting a step asks the window to show it on the timeline.
#pragma once

#include <QWidget>
#include <memory>

#include "core/explain/explanation.h"
#include "ui/common/loaded_trace.h"

class QLabel;
class QSortFilterProxyModel;
class QTableView;
class QSplitter;
class QTextBrowser;

namespace attnscope::ui {

class StepsModel;

class ExplainPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ExplainPanel(QWidget* parent = nullptr);

  // Shows the trace's explanation (the loader made it off the UI thread);
  // explained() follows once it is on screen.
  void setTrace(std::shared_ptr<const LoadedTrace> trace);
  const Explanation* explanation() const { return trace_ ? trace_->snapshot->explanation.get() : nullptr; }
  // Shows step `step`'s card (-1: the whole trace's findings) and selects its row.
  void showStep(int step);
  int shownStep() const { return shown_; }
  QTableView* stepsView() const { return view_; }
  // Everything shown, as plain text (tests, copying).
  QString plainText() const;

 signals:
  void explained();
  void glossaryRequested(const QString& key);
  // The user selected step `step` in the table: the window shows it on the timeline.
  void stepChosen(int step);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void fitStepColumns();
  QString overviewHtml() const;
  // For the attention block (our engine's runs, the bundled capture): the four steps' CUDA time
  // by every method the trace has, and the four questions users ask, answered with its numbers.
  QString answerHtml() const;
  QString diagnosisHtml() const;
  QString stepHtml(int step) const;

  QLabel* header_;
  QTableView* view_;
  StepsModel* model_;
  QSortFilterProxyModel* proxy_;
  QTextBrowser* details_;
  QSplitter* split_;
  std::shared_ptr<const LoadedTrace> trace_;
  int shown_ = -1;
  bool selecting_ = false;
};

}  // namespace attnscope::ui
