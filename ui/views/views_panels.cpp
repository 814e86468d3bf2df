// The views' shared parts: GridModel (a table of rows the views fill), ViewPanel (a view computed
// off the UI thread once it is shown), the table set-up every view uses.
#include "ui/views/views_panels.h"

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include "core/explain/explanation.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/text/duration.h"
#include "ui/common/background.h"
#include "ui/common/loaded_trace.h"
#include "ui/common/text.h"
#include "ui/table/sort_header_view.h"
#include "ui/views/views_detail.h"
#ifdef ATTNSCOPE_HAVE_CHARTS
#endif

namespace attnscope::ui {

namespace views_detail {
QString bytesText(qint64 b) { return qs(attnscope::bytesText(b)); }

void setupTable(QTableView* v) {
  useSortableTable(v);
  // The model's own order until the user clicks a header.
  v->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
  v->setSortingEnabled(true);
  v->setSelectionBehavior(QAbstractItemView::SelectRows);
  v->setSelectionMode(QAbstractItemView::SingleSelection);
  v->verticalHeader()->hide();
  v->verticalHeader()->setDefaultSectionSize(v->fontMetrics().height() + 6);
  v->setWordWrap(false);
  v->horizontalHeader()->setSectionsClickable(true);
  v->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
}

QSortFilterProxyModel* sortedProxy(QObject* parent, QAbstractItemModel* source) {
  auto* p = new QSortFilterProxyModel(parent);
  p->setSourceModel(source);
  p->setSortRole(TableModelBase::SortRole);
  return p;
}

}  // namespace views_detail

using namespace views_detail;

// ---- GridModel -------------------------------------------------------------------------

void GridModel::setRows(QVector<Column> columns, QVector<QVector<QVariant>> rows, QVector<EventId> events) {
  beginResetModel();
  cols_ = std::move(columns);
  rows_ = std::move(rows);
  events_ = std::move(events);
  endResetModel();
}

int GridModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}
int GridModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(cols_.size());
}

QVariant GridModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o == Qt::Horizontal && section >= 0 && section < cols_.size()) {
    if (role == Qt::DisplayRole) return cols_[section].title;
    if (role == Qt::ToolTipRole && !cols_[section].tip.isEmpty()) return cols_[section].tip;
  }
  return TableModelBase::headerData(section, o, role);
}

QVariant GridModel::cell(int row, int col, int role) const {
  const QVariant& v = rows_[row][col];
  const Kind k = cols_[col].kind;
  if (role == SortRole) return v;
  if (role == EventRole) return row < events_.size() ? QVariant::fromValue<qulonglong>(events_[row]) : QVariant();
  if (role == Qt::TextAlignmentRole && k != Kind::Text) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && k == Kind::Text) return v;
  if (role != Qt::DisplayRole) return {};
  if (!v.isValid()) return QStringLiteral("—");
  switch (k) {
    case Kind::Time:
      return qs(durationText(v.toLongLong()));
    case Kind::Bytes:
      return bytesText(v.toLongLong());
    case Kind::Percent:
      return QString::number(v.toDouble(), 'f', 1) + QStringLiteral(" %");
    case Kind::Number:
      return QString::number(v.toDouble(), 'f', 2);
    default:
      return v;
  }
}

// ---- ViewPanel -------------------------------------------------------------------------

void ViewPanel::setTrace(std::shared_ptr<const LoadedTrace> trace) {
  trace_ = std::move(trace);
  ++generation_;
  computeIfShown();
}

void ViewPanel::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  computeIfShown();
}

void ViewPanel::computeIfShown() {
  if (!trace_ || !isVisible() || computed()) return;
  computedFor_ = trace_.get();  // once per trace, even while it runs
  compute();
}

void ViewPanel::done() {
  if (failure_) failure_->hide();
  emit ready();
}

void ViewPanel::failed(const QString& what) {
  if (!failure_) {
    failure_ = new QLabel(this);
    failure_->setObjectName(QStringLiteral("viewFailure"));
    failure_->setWordWrap(true);
    failure_->setStyleSheet(QStringLiteral("QLabel { background: #fdecea; color: #8a1c14; padding: 6px; }"));
  }
  failure_->setText(tr("This view could not be computed for this trace: %1").arg(what));
  failure_->setGeometry(0, 0, width(), failure_->heightForWidth(width()));
  failure_->raise();
  failure_->show();
  emit ready();
}

}  // namespace attnscope::ui
