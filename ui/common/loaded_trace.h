// One trace as the viewer shows it: core's immutable snapshot (store, tables, explanation, engine
// run record, activity index) and the timeline's tracks, built together off the UI thread by the
// loader (ui/shell/trace_loader.h). Every pane reads it; it lives here, below the panes, so a pane
// needs nothing of the shell.
#pragma once

#include <QString>
#include <QtGlobal>
#include <memory>

#include "core/snapshot/trace_snapshot.h"

namespace attnscope::ui {

class TimelineIndex;

struct LoadedTrace {
  std::shared_ptr<const TraceSnapshot> snapshot;
  std::shared_ptr<const TimelineIndex> timeline;
  QString path;         // the file, or the resource path of the bundled sample
  QString displayName;  // file name for titles
  QString warning;      // non-fatal reader warning ("JSON ends early ...")
  quint64 jsonBytes = 0;
  qint64 loadMs = 0;  // read + parse + snapshot + timeline index, wall clock
  bool bundled = false;

  const EventStore& store() const { return *snapshot->store; }
  const Explanation& explanation() const { return *snapshot->explanation; }
};

}  // namespace attnscope::ui
