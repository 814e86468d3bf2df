// The selected event's details (a dock), like the panel users know from
// Perfetto: its name, kind, thread or stream, start and duration, every
// argument the trace gave it, and its links, each one clickable: the call
// that launched it and the op around that call, the GPU work it launched,
// the ops it runs inside, its flows, and the sync wait it was waited for in
// (or, for a sync call, the GPU work it waited for).
#pragma once

#include <QWidget>
#include <memory>

#include "core/store/event_store.h"

class QTextBrowser;

namespace attnscope::ui {

struct LoadedTrace;

class DetailsPanel : public QWidget {
  Q_OBJECT

 public:
  explicit DetailsPanel(QWidget* parent = nullptr);
  void setTrace(std::shared_ptr<const LoadedTrace> trace);
  void showDetailsOf(EventId id);  // kNoEvent: clears
  EventId shownEvent() const { return shown_; }
  QString plainText() const;

 signals:
  // The user clicked a linked event: the window selects it on the timeline.
  void eventRequested(attnscope::EventId id);

 private:
  QString html(EventId id) const;

  std::shared_ptr<const LoadedTrace> trace_;
  EventId shown_ = kNoEvent;
  QTextBrowser* text_;
};

}  // namespace attnscope::ui
