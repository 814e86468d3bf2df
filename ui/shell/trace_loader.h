// Loads a trace off the UI thread (QtConcurrent) and hands over an
// immutable snapshot: the event store and torch's key_averages grouped by
// name and by input shape. Only the latest load reports: starting a new one
// drops the result of an older load that is still running.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QString>
#include <functional>
#include <memory>

#include "core/explain/explanation.h"
#include "core/store/event_store.h"
#include "core/tables/key_averages.h"

namespace attnscope::ui {

struct TraceLoadOutcome;  // trace_loader.cpp

struct TraceSnapshot {
  std::shared_ptr<const EventStore> store;
  std::shared_ptr<const KeyAverages> byName;
  std::shared_ptr<const KeyAverages> byInputShape;
  // The same with Attribution::Corrected (each GPU activity owned by the op that launched it).
  std::shared_ptr<const KeyAverages> correctedByName;
  std::shared_ptr<const KeyAverages> correctedByInputShape;
  // Steps, sync waits, verdicts (core's explainTrace), computed with the rest
  // off the UI thread and shared by the timeline and the explanation panel.
  std::shared_ptr<const Explanation> analysis;
  QString path;         // the file, or the resource path of the bundled sample
  QString displayName;  // file name for titles
  QString warning;      // non-fatal reader warning ("JSON ends early ...")
  quint64 jsonBytes = 0;
  qint64 loadMs = 0;  // read + parse + key_averages, wall clock
  bool bundled = false;
};

class TraceLoader : public QObject {
  Q_OBJECT

 public:
  explicit TraceLoader(QObject* parent = nullptr);

  // Reads a .json / .json.gz file.
  void loadFile(const QString& path);
  // Parses JSON already in memory (the bundled sample); `name` is used in
  // messages and as the snapshot's path.
  void loadBytes(const QByteArray& json, const QString& name, bool bundled);

  bool isBusy() const { return running_ > 0; }

 signals:
  void started(const QString& path);
  void loaded(std::shared_ptr<const attnscope::ui::TraceSnapshot> snapshot);
  void failed(const QString& message);  // names the file and the reason

 private:
  void start(const QString& path, std::function<TraceLoadOutcome()> work);

  quint64 generation_ = 0;
  int running_ = 0;
};

}  // namespace attnscope::ui

Q_DECLARE_METATYPE(std::shared_ptr<const attnscope::ui::TraceSnapshot>)
