// "Why is this zero?" for the selected table row (core's whyRow): where the
// row's GPU time is (its own kernels, its children's) or, when it has none,
// where the GPU work near it went; plus the row's glossary entry.
#pragma once

#include <QWidget>
#include <memory>

#include "core/store/event_store.h"

class QTextBrowser;

namespace attnscope::ui {

class WhyPanel : public QWidget {
  Q_OBJECT

 public:
  explicit WhyPanel(QWidget* parent = nullptr);
  void setStore(std::shared_ptr<const EventStore> store);
  // Explains the row called `name` (empty: clears).
  void showRow(const QString& name, const QString& glossaryText = {});
  QString plainText() const;

 signals:
  void glossaryRequested(const QString& key);

 private:
  std::shared_ptr<const EventStore> store_;
  QTextBrowser* text_;
};

}  // namespace attnscope::ui
