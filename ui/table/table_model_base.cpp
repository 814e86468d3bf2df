#include "ui/table/table_model_base.h"

namespace attnscope::ui {

QVariant TableModelBase::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.model() != this || index.parent().isValid()) return {};
  if (index.row() >= rowCount() || index.column() >= columnCount()) return {};
  return cell(index.row(), index.column(), role);
}

Qt::ItemFlags TableModelBase::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
}

}  // namespace attnscope::ui
