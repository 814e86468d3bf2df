// The explanation (a dock): one card per step with its numbers (host
// window, the GPU work it launched and when that ran, GPU busy time in
// its window, CUDA events) and the verdicts about it in plain words; every
// sync wait with its op chain and the GPU work it waited for; the
// accounting ledger and the trace-wide verdicts. Explanation runs off the UI
// thread (core's explainTrace, with the engine's step windows when the
// trace has them).
#pragma once

#include <QWidget>
#include <memory>

#include "core/explain/explanation.h"
#include "core/store/event_store.h"
#include "ui/shell/trace_loader.h"

class QLabel;
class QScrollArea;
class QVBoxLayout;

namespace attnscope::ui {

class ExplainPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ExplainPanel(QWidget* parent = nullptr);

  // Shows the trace's explanation (the loader made it off the UI thread);
  // explained() follows once the cards are built.
  void setTrace(std::shared_ptr<const LoadedTrace> trace);
  const Explanation* explanation() const { return trace_ ? trace_->snapshot->explanation.get() : nullptr; }
  // The cards' text, for tests and copying.
  QString plainText() const;

 signals:
  void explained();
  void glossaryRequested(const QString& key);

 private:
  QWidget* stepCard(const EventStore& s, const Explanation& a, const StepReport& st);
  QWidget* syncCard(const EventStore& s, const SyncWait& w, int index);
  void clearCards();

  QLabel* header_;
  QScrollArea* scroll_;
  QWidget* cards_;
  QVBoxLayout* cardsLayout_;
  std::shared_ptr<const LoadedTrace> trace_;
};

}  // namespace attnscope::ui
