// Sorting and filtering in front of KeyAveragesModel: sorts on SortRole
// (numbers numerically), filters the Name column by text or regex.
#pragma once

#include <QSet>
#include <QSortFilterProxyModel>

namespace attnscope::ui {

class KeyAveragesProxy : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  explicit KeyAveragesProxy(QObject* parent = nullptr);

  // Plain text: case-insensitive substring. Regex: QRegularExpression syntax,
  // case-insensitive. Returns false (and leaves the filter unchanged) when
  // the pattern is not a valid regex; *error then says why.
  bool setNameFilter(const QString& pattern, bool regex, QString* error = nullptr);

  // Top-N: only the first N rows by the current sort (after the name
  // filter); 0 shows every row.
  void setTopN(int n);
  int topN() const { return topN_; }

  void setSourceModel(QAbstractItemModel* source) override;
  void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

 private:
  void recomputeTop();

  int topN_ = 0;
  QSet<int> top_;
};

}  // namespace attnscope::ui
