#include "ui/shell/trace_loader.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <exception>
#include <new>

#include "core/read/trace_reader.h"
#include "ui/common/background.h"
#include "ui/shell/bundled_sample.h"

namespace attnscope::ui {

namespace {

bool stopAt(LoadProgress* progress, LoadStage stage) {
  if (!progress) return false;
  progress->stage.store(stage, std::memory_order_relaxed);
  return progress->cancel.load(std::memory_order_relaxed);
}

// What the viewer shows; nullptr when `progress` was cancelled on the way.
std::shared_ptr<LoadedTrace> derive(std::shared_ptr<const EventStore> store, const QString& path,
                                    LoadProgress* progress = nullptr) {
  if (stopAt(progress, kStageTables)) return nullptr;
  auto t = std::make_shared<LoadedTrace>();
  t->snapshot = buildSnapshot(std::move(store));
  if (stopAt(progress, kStageTimeline)) return nullptr;
  t->timeline = std::make_shared<const TimelineIndex>(*t->snapshot->store);
  t->path = path;
  t->displayName = QFileInfo(path).fileName();
  if (progress && progress->cancel.load(std::memory_order_relaxed)) return nullptr;
  return t;
}

// Runs on a worker thread; touches no QObject.
TraceLoadOutcome load(const QString& path, LoadProgress* progress) {
  QElapsedTimer timer;
  timer.start();
  const bool bundled = path == bundledSamplePath();
  ReaderLimits limits;
  limits.progress = progress;
  LoadResult result;
  if (bundled) {
    const QByteArray json = bundledSampleJson();
    if (json.isEmpty()) return {nullptr, path + QStringLiteral(": the bundled sample is missing from this build")};
    result =
        parseTrace(std::string_view(json.constData(), static_cast<size_t>(json.size())), path.toStdString(), limits);
  } else {
    result = loadTrace(path.toStdString(), limits);
  }
  if (!result.ok()) {
    return {nullptr,
            result.error ? QString::fromStdString(result.error->what()) : path + QStringLiteral(": could not be read"),
            result.cancelled};
  }
  auto t = derive(std::make_shared<const EventStore>(std::move(*result.store)), path, progress);
  if (!t) return {nullptr, path + QStringLiteral(": loading cancelled"), true};
  t->warning = QString::fromStdString(result.warning);
  t->jsonBytes = result.jsonBytes;
  t->bundled = bundled;
  t->loadMs = timer.elapsed();
  return {std::move(t), {}};
}

}  // namespace

std::shared_ptr<const LoadedTrace> loadedTraceOf(std::shared_ptr<const EventStore> store, const QString& path) {
  return derive(std::move(store), path);
}

TraceLoadOutcome loadTraceHere(const QString& path, LoadProgress* progress) {
  try {
    return load(path, progress);
  } catch (const std::bad_alloc&) {
    return {nullptr, path + QStringLiteral(": out of memory while loading")};
  } catch (const std::exception& e) {
    return {nullptr, path + QStringLiteral(": ") + QString::fromUtf8(e.what())};
  }
}

TraceLoader::TraceLoader(QObject* parent) : QObject(parent) { qRegisterMetaType<std::shared_ptr<const LoadedTrace>>(); }

void TraceLoader::load(const QString& path) {
  const quint64 generation = ++generation_;
  ++running_;
  if (progress_) progress_->cancel = true;  // an older load still running is not wanted any more
  auto progress = std::make_shared<LoadProgress>();
  progress_ = progress;
  emit started(path);
  runInBackground(
      this, [path, progress] { return loadTraceHere(path, progress.get()); },
      [this, generation, path](TraceLoadOutcome out) {
        --running_;
        if (generation != generation_) return;  // superseded by a newer load
        if (out.trace)
          emit loaded(out.trace);
        else if (out.cancelled)
          emit cancelled(path);
        else
          emit failed(out.error.isEmpty() ? path + QStringLiteral(": could not be loaded") : out.error);
      },
      [this, generation, path](const QString& what) {  // loadTraceHere catches; this is the last resort
        --running_;
        if (generation == generation_) emit failed(path + QStringLiteral(": ") + what);
      });
}

void TraceLoader::cancel() {
  if (progress_ && running_ > 0) progress_->cancel = true;
}

}  // namespace attnscope::ui
