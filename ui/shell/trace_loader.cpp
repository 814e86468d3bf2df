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

std::shared_ptr<LoadedTrace> derive(std::shared_ptr<const EventStore> store, const QString& path) {
  auto t = std::make_shared<LoadedTrace>();
  t->timeline = std::make_shared<const TimelineIndex>(*store);
  t->snapshot = buildSnapshot(std::move(store));
  t->path = path;
  t->displayName = QFileInfo(path).fileName();
  return t;
}

// Runs on a worker thread; touches no QObject.
TraceLoadOutcome load(const QString& path) {
  QElapsedTimer timer;
  timer.start();
  const bool bundled = path == bundledSamplePath();
  LoadResult result;
  if (bundled) {
    const QByteArray json = bundledSampleJson();
    if (json.isEmpty()) return {nullptr, path + QStringLiteral(": the bundled sample is missing from this build")};
    result = parseTrace(std::string_view(json.constData(), static_cast<size_t>(json.size())), path.toStdString());
  } else {
    result = loadTrace(path.toStdString());
  }
  if (!result.ok()) {
    return {nullptr,
            result.error ? QString::fromStdString(result.error->what()) : path + QStringLiteral(": could not be read")};
  }
  auto t = derive(std::make_shared<const EventStore>(std::move(*result.store)), path);
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

TraceLoadOutcome loadTraceHere(const QString& path) {
  try {
    return load(path);
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
  emit started(path);
  runInBackground(
      this, [path] { return loadTraceHere(path); },
      [this, generation, path](TraceLoadOutcome out) {
        --running_;
        if (generation != generation_) return;  // superseded by a newer load
        if (out.trace)
          emit loaded(out.trace);
        else
          emit failed(out.error.isEmpty() ? path + QStringLiteral(": could not be loaded") : out.error);
      });
}

}  // namespace attnscope::ui
