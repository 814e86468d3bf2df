// What the view panels' source files share: the table set-up and the sorted proxy every view's
// table uses, and byte counts in the user's units.
#pragma once

#include <QString>

class QAbstractItemModel;
class QObject;
class QSortFilterProxyModel;
class QTableView;

namespace attnscope::ui::views_detail {

QString bytesText(qint64 b);
void setupTable(QTableView* v);
QSortFilterProxyModel* sortedProxy(QObject* parent, QAbstractItemModel* source);

}  // namespace attnscope::ui::views_detail
