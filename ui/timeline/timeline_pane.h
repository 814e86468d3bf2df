// The timeline with its controls: the explain-overlay selector (steps from
// the analysis, or any annotation/op via "Explain selection"), the
// overlay's legend in words, search with next/previous, fit / zoom to
// selection, and a details line for the selected event.
#pragma once

#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

#include "core/explain/explanation.h"
#include "ui/timeline/view.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QToolButton;

namespace attnscope::ui {

struct LoadedTrace;

class TimelinePane : public QWidget {
  Q_OBJECT

 public:
  explicit TimelinePane(QWidget* parent = nullptr);

  void setTrace(std::shared_ptr<const LoadedTrace> trace);
  TimelineView* view() const { return view_; }
  const Explanation& explanation() const { return *explanation_; }

  // Overlay: a step of the analysis, any annotation/op, or by name (a step
  // first, then the first annotation or op so named). Zooms to it.
  void explainStep(int step);
  void explainEvent(EventId id);
  bool explainByName(const QString& name);
  void clearOverlay();
  QString legendText() const;  // plain text of the legend shown
  QStringList stepNames() const;

 signals:
  void eventSelected(attnscope::EventId id);
  // A step of the explanation got the overlay (from the step selector or explainStep).
  void stepShown(int step);

 private:
  void showOverlay(ExplainOverlay o);
  void renderLegend();
  void runSearch();

  TimelineView* view_ = nullptr;
  QComboBox* steps_ = nullptr;
  QToolButton* explainSel_ = nullptr;
  QLineEdit* search_ = nullptr;
  QLabel* matchCount_ = nullptr;
  QLabel* keys_ = nullptr;
  QWidget* legendBox_ = nullptr;
  QToolButton* legendMore_ = nullptr;
  QLabel* legend_ = nullptr;
  QString legendWords_, legendKey_;
  std::shared_ptr<const LoadedTrace> trace_;
  const EventStore* store_ = nullptr;                                                       // trace_'s
  std::shared_ptr<const Explanation> explanation_ = std::make_shared<const Explanation>();  // trace_'s
};

}  // namespace attnscope::ui
