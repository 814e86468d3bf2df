#include "ui/timeline/table_link.h"

#include <QItemSelectionModel>
#include <QSortFilterProxyModel>
#include <QTableView>

#include "ui/table/key_averages_model.h"
#include "ui/timeline/timeline_pane.h"

namespace attnscope::ui {

TimelineTableLink::TimelineTableLink(TimelinePane* panel, QTableView* table, KeyAveragesModel* model,
                                     QSortFilterProxyModel* proxy, QObject* parent)
    : QObject(parent), panel_(panel), table_(table), model_(model), proxy_(proxy) {
  connect(model_, &QAbstractItemModel::modelReset, this, [this] { stale_ = true; });
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { onRowChanged(current); });
  connect(panel_, &TimelinePane::eventSelected, this, &TimelineTableLink::onEventSelected);
}

int TimelineTableLink::sourceRowOf(EventId id) {
  if (stale_) {
    rowOf_.clear();
    for (int r = 0; r < model_->rowCount(); ++r) {
      if (const KeyAverageRow* row = model_->rowAt(r))
        for (EventId e : row->events) rowOf_.emplace(e, r);
    }
    stale_ = false;
  }
  const auto it = rowOf_.find(id);
  return it == rowOf_.end() ? -1 : it->second;
}

void TimelineTableLink::onRowChanged(const QModelIndex& current) {
  if (!current.isValid()) {
    panel_->view()->setHighlighted({});
    return;
  }
  const QModelIndex src = proxy_->mapToSource(current);
  const KeyAverageRow* row = model_->rowAt(src.row());
  panel_->view()->setHighlighted(row ? std::vector<EventId>(row->events) : std::vector<EventId>{});
}

void TimelineTableLink::onEventSelected(EventId id) {
  if (syncing_ || id == kNoEvent) return;
  const int r = sourceRowOf(id);
  if (r < 0) return;
  const QModelIndex idx = proxy_->mapFromSource(model_->index(r, 0));
  if (!idx.isValid()) return;  // filtered out of the table
  syncing_ = true;
  table_->selectionModel()->setCurrentIndex(idx, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  table_->scrollTo(idx);
  syncing_ = false;
}

}  // namespace attnscope::ui
