// The table pane: torch's key_averages table of the loaded trace with every
// control that shapes it (group by, attribution, time unit, top N, columns,
// name filter) in one row above it, the header's column chooser, copy and
// export of the rows shown. It reads the tables the snapshot already holds:
// changing a control or the selection computes no table.
#pragma once

#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

#include "core/tables/key_averages.h"
#include "core/tables/table_format.h"
#include "ui/table/key_averages_model.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QMenu;
class QSpinBox;
class QTableView;

namespace attnscope::ui {

class KeyAveragesProxy;
struct LoadedTrace;

class TablePane : public QWidget {
  Q_OBJECT

 public:
  explicit TablePane(QWidget* parent = nullptr);

  void setTrace(std::shared_ptr<const LoadedTrace> trace);

  void setGroupBy(GroupBy g);
  GroupBy groupBy() const;
  // torch's key_averages or the corrected attribution (attribution.h).
  void setAttribution(Attribution a);
  Attribution attribution() const;
  void setNameFilter(const QString& text, bool regex);
  void setTimeUnit(KeyAveragesModel::TimeUnit unit);
  KeyAveragesModel::TimeUnit timeUnit() const;
  void setTopN(int n);
  // Puts the keyboard focus in the name filter (Edit > Find).
  void focusFilter();

  // The rows shown (filter, sort, top-N) in `format` (or the one the file
  // name asks for), written atomically; false and *error on failure.
  bool exportRows(const QString& path, QString* error, std::optional<TableFormat> format = {}) const;
  int shownRowCount() const;
  // The selected rows as tab-separated text with a header line.
  QString selectionText() const;
  // The row under the table's current index, or null.
  const KeyAverageRow* currentRow() const;

  QTableView* view() const { return view_; }
  KeyAveragesModel* model() const { return model_; }
  KeyAveragesProxy* proxy() const { return proxy_; }
  // Actions the row context menu ends with (copy, export: the window's).
  void addRowMenuActions(const QList<QAction*>& actions) { rowMenuActions_ = actions; }

 signals:
  // The current row changed (null: none), or the table was replaced.
  void currentRowChanged(const attnscope::KeyAverageRow* row);
  void whyRequested();
  void glossaryRequested(const QString& key, int family);  // family -1: a column title

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  QWidget* buildControls();
  void applyTable();
  void applyFilter();
  void updateRowCount();
  void updateColumnVisibility();
  void fitColumns();
  void fitFlexibleColumns();
  void showHeaderMenu(const QPoint& pos);
  void showRowMenu(const QPoint& pos);

  std::shared_ptr<const LoadedTrace> trace_;
  KeyAveragesModel* model_ = nullptr;
  KeyAveragesProxy* proxy_ = nullptr;
  QTableView* view_ = nullptr;
  QComboBox* groupBy_ = nullptr;
  QComboBox* attribution_ = nullptr;
  QComboBox* timeUnit_ = nullptr;
  QSpinBox* topN_ = nullptr;
  QLineEdit* filter_ = nullptr;
  QCheckBox* regex_ = nullptr;
  QLabel* rowCount_ = nullptr;
  QList<QAction*> rowMenuActions_;
  int nameWant_ = 0;  // contents width of Name / Input Shapes at the last fit
  int shapesWant_ = 0;
  // Per column: -1 automatic, 0 hidden, 1 shown (set through the header menu).
  std::vector<int> columnChoice_;
};

}  // namespace attnscope::ui
