// "Why is this zero?" for the selected table row (core's whyRow over the
// snapshot's tables and index): where the row's GPU time is (its own
// kernels, its children's) or, when it has none, where the GPU work near it
// went; plus the row's glossary entry. The report is made on a worker
// thread, and only while the panel is on screen (setOnScreen: the window
// follows its dock's tab): selecting rows with it hidden costs nothing.
#pragma once

#include <QWidget>
#include <memory>
#include <optional>

#include "core/tables/key_averages.h"

class QTextBrowser;

namespace attnscope::ui {

struct LoadedTrace;

class WhyPanel : public QWidget {
  Q_OBJECT

 public:
  explicit WhyPanel(QWidget* parent = nullptr);
  void setTrace(std::shared_ptr<const LoadedTrace> trace);
  // Explains the row called `name` (empty: clears); shown() follows once the text is there.
  void showRow(const QString& name, const QString& glossaryText = {});
  // Explains that table row (grouped by input shape: that shape's row, not the name's).
  void showRow(const KeyAverageRow& row, GroupBy groupBy, const QString& glossaryText = {});
  QString plainText() const;
  // Whether the user can see the panel (a dock behind another tab cannot be seen); on: the
  // pending row is explained now.
  void setOnScreen(bool on);
  // Reports made since the panel was created (tests: selections with the panel hidden make none).
  int reportsMade() const { return reports_; }

 signals:
  void shown();
  void glossaryRequested(const QString& key);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void refresh();

  std::shared_ptr<const LoadedTrace> trace_;
  QString name_, glossary_;
  std::optional<KeyAverageRow> row_;  // the table row asked about (else: by name_)
  GroupBy groupBy_ = GroupBy::Name;
  bool stale_ = false;  // name_ changed since the text was made
  bool onScreen_ = true;
  quint64 generation_ = 0;
  int reports_ = 0;
  QTextBrowser* text_;
};

}  // namespace attnscope::ui
