// The glossary (a dock): every table column, event family and common event
// name in plain words, from resources/glossary.json plus core's glossary
// entries (which the analysis verdicts cite). Searchable; the table's
// headers and rows link into it with lookup().
#pragma once

#include <QSortFilterProxyModel>
#include <QString>
#include <QWidget>
#include <vector>

#include "core/store/event_store.h"
#include "ui/table/table_model_base.h"

class QLineEdit;
class QSplitter;
class QTableView;
class QTextBrowser;

namespace attnscope::ui {

struct GlossaryItem {
  QString key;
  QString category;
  QString text;
};

// The merged entries: the resource file's, then core's (core wins on a key).
std::vector<GlossaryItem> loadGlossary();

class GlossaryModel : public TableModelBase {
  Q_OBJECT

 public:
  enum Col { Term, Category, ColumnCount };
  static constexpr int TextRole = Qt::UserRole + 20;

  explicit GlossaryModel(QObject* parent = nullptr);
  void setItems(std::vector<GlossaryItem> items);
  const std::vector<GlossaryItem>& items() const { return items_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

  // The row for a table row name or column title: exact key (any case), the
  // longest key the name starts with (cudaLaunchKernelExC ->
  // cudaLaunchKernel, aten::bmm -> aten::), else the event family's entry.
  int find(const QString& name, int family = -1) const;

 protected:
  QVariant cell(int row, int col, int role) const override;

 private:
  std::vector<GlossaryItem> items_;
};

class GlossaryDock : public QWidget {
  Q_OBJECT

 public:
  explicit GlossaryDock(QWidget* parent = nullptr);

  // Shows the entry for `name` (see GlossaryModel::find); false if none.
  bool lookup(const QString& name, int family = -1);
  void setSearch(const QString& text);
  void focusSearch();
  GlossaryModel* model() const { return model_; }
  QSortFilterProxyModel* proxy() const { return proxy_; }
  QString currentText() const;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 signals:
  void lookedUp(const QString& key);

 private:
  void showRow(int sourceRow);

  GlossaryModel* model_;
  QSortFilterProxyModel* proxy_;
  QLineEdit* search_;
  bool userSized_ = false;  // the user dragged the splitter
  QSplitter* split_ = nullptr;
  QTableView* list_;
  QTextBrowser* text_;
};

}  // namespace attnscope::ui
