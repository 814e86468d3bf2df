#include "ui/table/key_averages_proxy.h"

#include <QRegularExpression>
#include <algorithm>
#include <vector>

#include "ui/table/key_averages_model.h"

namespace attnscope::ui {

KeyAveragesProxy::KeyAveragesProxy(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(TableModelBase::SortRole);
  setFilterKeyColumn(KeyAveragesModel::columnOf(Column::Name));
  setFilterRole(Qt::DisplayRole);
  setSortCaseSensitivity(Qt::CaseInsensitive);
  setDynamicSortFilter(true);
}

bool KeyAveragesProxy::setNameFilter(const QString& pattern, bool regex, QString* error) {
  QRegularExpression re(regex ? pattern : QRegularExpression::escape(pattern),
                        QRegularExpression::CaseInsensitiveOption);
  if (!re.isValid()) {
    if (error) {
      *error = QStringLiteral("invalid regex at offset %1: %2").arg(re.patternErrorOffset()).arg(re.errorString());
    }
    return false;
  }
  if (error) error->clear();
  setFilterRegularExpression(re);
  if (topN_ > 0) {
    recomputeTop();
    invalidateFilter();
  }
  return true;
}

void KeyAveragesProxy::setTopN(int n) {
  topN_ = std::max(0, n);
  recomputeTop();
  invalidateFilter();
}

void KeyAveragesProxy::setSourceModel(QAbstractItemModel* source) {
  if (sourceModel()) disconnect(sourceModel(), nullptr, this, nullptr);
  QSortFilterProxyModel::setSourceModel(source);
  if (!source) return;
  auto refresh = [this] {
    if (topN_ <= 0) return;
    recomputeTop();
    invalidateFilter();
  };
  connect(source, &QAbstractItemModel::modelReset, this, refresh);
  connect(source, &QAbstractItemModel::dataChanged, this, refresh);
}

void KeyAveragesProxy::sort(int column, Qt::SortOrder order) {
  QSortFilterProxyModel::sort(column, order);
  if (topN_ > 0) {
    recomputeTop();
    invalidateFilter();
  }
}

bool KeyAveragesProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
  if (!QSortFilterProxyModel::filterAcceptsRow(sourceRow, sourceParent)) return false;
  return topN_ <= 0 || top_.contains(sourceRow);
}

void KeyAveragesProxy::recomputeTop() {
  top_.clear();
  const QAbstractItemModel* src = sourceModel();
  if (!src || topN_ <= 0) return;
  const int column = sortColumn();
  std::vector<std::pair<QVariant, int>> rows;
  for (int r = 0; r < src->rowCount(); ++r) {
    if (!QSortFilterProxyModel::filterAcceptsRow(r, {})) continue;
    rows.emplace_back(column >= 0 ? src->data(src->index(r, column), sortRole()) : QVariant(r), r);
  }
  auto less = [](const QVariant& a, const QVariant& b) {
    if (a.typeId() == QMetaType::QString || b.typeId() == QMetaType::QString)
      return a.toString().compare(b.toString(), Qt::CaseInsensitive) < 0;
    return a.toDouble() < b.toDouble();
  };
  const bool desc = sortOrder() == Qt::DescendingOrder && column >= 0;
  std::stable_sort(rows.begin(), rows.end(), [&](const auto& x, const auto& y) {
    return desc ? less(y.first, x.first) : less(x.first, y.first);
  });
  for (size_t i = 0; i < rows.size() && i < static_cast<size_t>(topN_); ++i) top_.insert(rows[i].second);
}

}  // namespace attnscope::ui
