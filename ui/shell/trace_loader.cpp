#include "ui/shell/trace_loader.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <exception>
#include <new>

#include "core/cache/open_trace.h"
#include "core/read/trace_reader.h"
#include "core/store/spill.h"
#include "ui/common/background.h"
#include "ui/shell/bundled_sample.h"

namespace attnscope::ui {

static_assert(kStageTables == cache::kStageSnapshot && kStageWritingCache == cache::kStageWriteCache &&
              kStageReadingCache == cache::kStageReadCache);

namespace {

bool stopAt(LoadProgress* progress, LoadStage stage) {
  if (!progress) return false;
  progress->stage.store(stage, std::memory_order_relaxed);
  return progress->cancel.load(std::memory_order_relaxed);
}

// The timeline's tracks of a snapshot; a store larger than the memory budget keeps them in files
// (spill.h), as the reader kept its arrays.
std::shared_ptr<const TimelineIndex> timelineOf(const EventStore& s) {
  const size_t budget = spill::budgetFromEnv(size_t{1} << 30);
  // 16 bytes an event: past a quarter of the budget, in files.
  const bool spill = s.size() * 16 > budget / 4 && !spill::spilling();
  if (spill) spill::setSpilling(true, spill::Settings{{}, budget});
  auto t = std::make_shared<const TimelineIndex>(s);
  if (spill) spill::setSpilling(false);
  return t;
}

// What the viewer shows from a snapshot; nullptr when `progress` was cancelled on the way.
std::shared_ptr<LoadedTrace> withTimeline(std::shared_ptr<const TraceSnapshot> snap, const QString& path,
                                          LoadProgress* progress) {
  if (stopAt(progress, kStageTimeline)) return nullptr;
  auto t = std::make_shared<LoadedTrace>();
  t->snapshot = std::move(snap);
  t->timeline = timelineOf(*t->snapshot->store);
  t->path = path;
  t->displayName = QFileInfo(path).fileName();
  if (progress && progress->cancel.load(std::memory_order_relaxed)) return nullptr;
  return t;
}

// What the viewer shows; nullptr when `progress` was cancelled on the way.
std::shared_ptr<LoadedTrace> derive(std::shared_ptr<const EventStore> store, const QString& path,
                                    LoadProgress* progress = nullptr) {
  if (stopAt(progress, kStageTables)) return nullptr;
  auto t = std::make_shared<LoadedTrace>();
  t->snapshot = buildSnapshot(std::move(store));
  if (stopAt(progress, kStageTimeline)) return nullptr;
  t->timeline = timelineOf(*t->snapshot->store);
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
  if (!bundled) {
    // A file: from its columnar cache when it has one, else read (and its cache written).
    cache::OpenOptions options;
    options.limits = limits;
    cache::OpenedTrace opened = cache::openTrace(path.toStdString(), options);
    if (!opened.ok()) {
      return {
          nullptr,
          opened.error ? QString::fromStdString(opened.error->what()) : path + QStringLiteral(": could not be read"),
          opened.cancelled};
    }
    auto t = withTimeline(std::move(opened.snapshot), path, progress);
    if (!t) return {nullptr, path + QStringLiteral(": loading cancelled"), true};
    t->warning = QString::fromStdString(opened.warning);
    t->jsonBytes = opened.jsonBytes;
    t->loadMs = timer.elapsed();
    return {std::move(t), {}};
  }
  LoadResult result;
  {
    const QByteArray json = bundledSampleJson();
    if (json.isEmpty()) return {nullptr, path + QStringLiteral(": the bundled sample is missing from this build")};
    result =
        parseTrace(std::string_view(json.constData(), static_cast<size_t>(json.size())), path.toStdString(), limits);
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
