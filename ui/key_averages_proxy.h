// Sorting and filtering in front of KeyAveragesModel: sorts on SortRole
// (numbers numerically), filters the Name column by text or regex.
#pragma once

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
};

}  // namespace attnscope::ui
