// Base for the read-only tables of the viewer: one virtual cell() per
// (row, column, role), plus SortRole, the value proxies sort on.
#pragma once

#include <QAbstractTableModel>

namespace attnscope::ui {

class TableModelBase : public QAbstractTableModel {
  Q_OBJECT

 public:
  // Numbers (double / qlonglong) for numeric columns, the string for text
  // columns: what QSortFilterProxyModel::sortRole should be set to.
  static constexpr int SortRole = Qt::UserRole + 1;

  using QAbstractTableModel::QAbstractTableModel;

  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const final;
  Qt::ItemFlags flags(const QModelIndex& index) const override;

 protected:
  // Called only for valid indexes inside rowCount() x columnCount().
  virtual QVariant cell(int row, int col, int role) const = 0;
};

}  // namespace attnscope::ui
