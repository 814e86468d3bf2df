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

class QLabel;
class QScrollArea;
class QVBoxLayout;

namespace attnscope::ui {

class ExplainPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ExplainPanel(QWidget* parent = nullptr);

  // Analyzes the store (asynchronously); analyzed() follows. A newer call
  // supersedes an older one that is still running.
  void setStore(std::shared_ptr<const EventStore> store);
  // Shows an analysis already made (the loader's); supersedes a running one.
  void setAnalysis(std::shared_ptr<const EventStore> store, std::shared_ptr<const Explanation> a);
  const Explanation* analysis() const { return analysis_.get(); }
  // The cards' text, for tests and copying.
  QString plainText() const;

  // Builds the cards synchronously (used by setStore on completion).
  void showAnalysis(std::shared_ptr<const EventStore> store, std::shared_ptr<const Explanation> a);

 signals:
  void analyzed();
  void glossaryRequested(const QString& key);

 private:
  QWidget* stepCard(const EventStore& s, const Explanation& a, const StepReport& st);
  QWidget* syncCard(const EventStore& s, const SyncWait& w, int index);
  void clearCards();

  QLabel* header_;
  QScrollArea* scroll_;
  QWidget* cards_;
  QVBoxLayout* cardsLayout_;
  std::shared_ptr<const EventStore> store_;
  std::shared_ptr<const Explanation> analysis_;
  quint64 generation_ = 0;
};

}  // namespace attnscope::ui
