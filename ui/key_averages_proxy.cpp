#include "ui/key_averages_proxy.h"

#include <QRegularExpression>

#include "ui/key_averages_model.h"

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
      *error = QStringLiteral("invalid regex at offset %1: %2")
                   .arg(re.patternErrorOffset())
                   .arg(re.errorString());
    }
    return false;
  }
  if (error) error->clear();
  setFilterRegularExpression(re);
  return true;
}

}  // namespace attnscope::ui
