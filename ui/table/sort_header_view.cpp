#include "ui/table/sort_header_view.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QTableView>

#include "ui/table/table_model_base.h"

namespace attnscope::ui {

SortHeaderView::SortHeaderView(QWidget* parent) : QHeaderView(Qt::Horizontal, parent) {
  // A header made by hand is not clickable by default (QTableView makes its own one so):
  // clicking a title must sort by it, clicking again the other way.
  setSectionsClickable(true);
  setSortIndicatorShown(true);
  setHighlightSections(true);
}

bool SortHeaderView::numeric(int section) const {
  const QAbstractItemModel* m = model();
  if (!m) return false;
  for (int r = 0; r < m->rowCount() && r < 50; ++r) {
    const QVariant v = m->index(r, section).data(TableModelBase::SortRole);
    if (!v.isValid()) continue;
    const auto t = v.typeId();
    return t == QMetaType::Int || t == QMetaType::LongLong || t == QMetaType::Double || t == QMetaType::UInt ||
           t == QMetaType::ULongLong || t == QMetaType::Float;
  }
  return false;
}

void SortHeaderView::sortBy(int section) {
  if (section < 0) return;
  Qt::SortOrder order;
  if (section == sortIndicatorSection())
    order = sortIndicatorOrder() == Qt::AscendingOrder ? Qt::DescendingOrder : Qt::AscendingOrder;
  else
    order = numeric(section) ? Qt::DescendingOrder : Qt::AscendingOrder;
  setSortIndicator(section, order);  // the view sorts on sortIndicatorChanged
}

void SortHeaderView::mouseReleaseEvent(QMouseEvent* e) {
  // QHeaderView flips the sort on a click (ascending first on a new section); a column of figures
  // then turns to largest first.
  const int before = sortIndicatorSection();
  QHeaderView::mouseReleaseEvent(e);
  const int after = sortIndicatorSection();
  if (after >= 0 && after != before && sortIndicatorOrder() == Qt::AscendingOrder && numeric(after))
    setSortIndicator(after, Qt::DescendingOrder);
}

void SortHeaderView::initStyleOptionForIndex(QStyleOptionHeader* option, int logicalIndex) const {
  QHeaderView::initStyleOptionForIndex(option, logicalIndex);
  // Qt draws its arrow pointing up for a descending sort (QHeaderView maps DescendingOrder to
  // SortUp): the arrow points the way the values go down the column instead.
  if (option->sortIndicator != QStyleOptionHeader::None)
    option->sortIndicator =
        sortIndicatorOrder() == Qt::DescendingOrder ? QStyleOptionHeader::SortDown : QStyleOptionHeader::SortUp;
}

QStyleOptionHeader::SortIndicator SortHeaderView::sortArrow(int logicalIndex) const {
  QStyleOptionHeader opt;
  initStyleOptionForIndex(&opt, logicalIndex);
  return opt.sortIndicator;
}

namespace {

// Ctrl+Shift+S on a table: sort by the current cell's column, as a click on its title would.
class TableKeys : public QObject {
 public:
  using QObject::QObject;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() != QEvent::KeyPress) return false;
    auto* view = qobject_cast<QTableView*>(watched);
    const auto* key = static_cast<QKeyEvent*>(event);
    if (!view || key->key() != Qt::Key_S || key->modifiers() != (Qt::ControlModifier | Qt::ShiftModifier)) return false;
    auto* header = qobject_cast<SortHeaderView*>(view->horizontalHeader());
    const int column = view->currentIndex().isValid() ? view->currentIndex().column() : 0;
    if (!header || !view->isSortingEnabled()) return false;
    header->sortBy(column);
    return true;
  }
};

}  // namespace

void useSortableTable(QTableView* view) {
  view->setTabKeyNavigation(false);
  if (!qobject_cast<SortHeaderView*>(view->horizontalHeader())) {
    const bool sorting = view->isSortingEnabled();
    auto* header = new SortHeaderView(view);
    view->setHorizontalHeader(header);
    header->setSortIndicator(-1, Qt::AscendingOrder);
    view->setSortingEnabled(sorting);
  }
  view->installEventFilter(new TableKeys(view));
}

}  // namespace attnscope::ui
