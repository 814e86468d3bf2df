// Loads a trace off the UI thread (runInBackground) and hands over one
// immutable LoadedTrace: core's snapshot (store, tables, explanation,
// engine metadata, activity index) plus the timeline's tracks, all built on
// the worker thread. Only the latest load reports: starting a new one drops
// the result of an older load that is still running.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QString>
#include <functional>
#include <memory>

#include "core/read/trace_reader.h"
#include "core/snapshot/trace_snapshot.h"
#include "ui/common/loaded_trace.h"
#include "ui/timeline/index.h"

namespace attnscope::ui {

// Builds what the viewer shows from a store already in memory (tests, benchmarks).
std::shared_ptr<const LoadedTrace> loadedTraceOf(std::shared_ptr<const EventStore> store, const QString& path = {});

struct TraceLoadOutcome {
  std::shared_ptr<const LoadedTrace> trace;
  QString error;  // names the file and the reason
  bool cancelled = false;
};

// Where a load is, past the reader's own stages (LoadProgress::stage); 2, 4 and 5 are core/cache's
// (open_trace.h: the snapshot, writing and mapping the columnar cache).
enum LoadStage : int {
  kStageReading = 0,
  kStageBuilding = 1,
  kStageTables = 2,
  kStageTimeline = 3,
  kStageWritingCache = 4,
  kStageReadingCache = 5
};

// One load, on the calling thread (a worker's): a file, or the bundled sample when `path` is its
// resource path. Never throws: failures, out of memory included, come back as the error.
// `progress` (may be null) is updated as it goes; its cancel flag stops it between steps.
TraceLoadOutcome loadTraceHere(const QString& path, LoadProgress* progress = nullptr);

class TraceLoader : public QObject {
  Q_OBJECT

 public:
  explicit TraceLoader(QObject* parent = nullptr);

  // Reads a .json / .json.gz file, or the bundled sample (bundledSamplePath()).
  void load(const QString& path);

  bool isBusy() const { return running_ > 0; }

  // The latest load's progress (null before the first load); read it from the UI thread.
  std::shared_ptr<const LoadProgress> progress() const { return progress_; }
  // Stops the latest load soon; it then reports cancelled() instead of loaded().
  void cancel();

 signals:
  void started(const QString& path);
  void loaded(std::shared_ptr<const attnscope::ui::LoadedTrace> trace);
  void failed(const QString& message);  // names the file and the reason
  void cancelled(const QString& path);

 private:
  quint64 generation_ = 0;
  int running_ = 0;
  std::shared_ptr<LoadProgress> progress_;
};

}  // namespace attnscope::ui

Q_DECLARE_METATYPE(std::shared_ptr<const attnscope::ui::LoadedTrace>)
