// Shares the selection between the timeline and the key_averages table:
// selecting a table row highlights that row's events on the timeline;
// selecting an event selects the row that holds it.
#pragma once

#include <QObject>
#include <unordered_map>

#include "core/store/event_store.h"

class QTableView;
class QSortFilterProxyModel;

namespace attnscope::ui {

class KeyAveragesModel;
class TimelinePane;

class TimelineTableLink : public QObject {
  Q_OBJECT

 public:
  TimelineTableLink(TimelinePane* panel, QTableView* table, KeyAveragesModel* model, QSortFilterProxyModel* proxy,
                    QObject* parent = nullptr);

  // The model row holding an event, or -1.
  int sourceRowOf(EventId id);

 private:
  void onRowChanged(const QModelIndex& current);
  void onEventSelected(EventId id);

  TimelinePane* panel_;
  QTableView* table_;
  KeyAveragesModel* model_;
  QSortFilterProxyModel* proxy_;
  std::unordered_map<EventId, int> rowOf_;  // rebuilt lazily after a model reset
  bool stale_ = true;
  bool syncing_ = false;
};

}  // namespace attnscope::ui
