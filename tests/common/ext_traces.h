// The real traces other projects wrote: the copy in tests/data/ext when there is one, else the one
// in ../shared/traces/ext; and a snapshot of one, built as the app builds it.
#pragma once

#include <QFile>
#include <QString>
#include <memory>

#include "core/read/trace_reader.h"
#include "core/snapshot/trace_snapshot.h"

namespace attnscope::testutil {

inline QString extTracePath(const QString& file) {
  const QString local = QStringLiteral(ATTNSCOPE_TEST_DATA "/ext/") + file;
  return QFile::exists(local) ? local : QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/") + file;
}

// A snapshot of the trace at `path` (nullptr when it does not load).
inline std::shared_ptr<const TraceSnapshot> snapshotAt(const QString& path) {
  LoadResult lr = loadTrace(path.toStdString());
  if (!lr.ok()) return nullptr;
  return buildSnapshot(std::make_shared<const EventStore>(std::move(*lr.store)));
}

}  // namespace attnscope::testutil
