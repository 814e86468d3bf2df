#include "ui/shell/trace_loader.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>
#include <new>

#include "core/read/trace_reader.h"

namespace attnscope::ui {

struct TraceLoadOutcome {
  std::shared_ptr<const TraceSnapshot> snapshot;
  QString error;
};

namespace {

// Runs on a worker thread; touches no QObject.
TraceLoadOutcome finish(LoadResult result, const QString& path, bool bundled, const QElapsedTimer& timer) {
  TraceLoadOutcome out;
  if (!result.ok()) {
    out.error =
        result.error ? QString::fromStdString(result.error->what()) : path + QStringLiteral(": could not be read");
    return out;
  }
  auto store = std::make_shared<const EventStore>(std::move(*result.store));
  auto snap = std::make_shared<TraceSnapshot>();
  // Each attribution once, both groupings from it.
  KeyAveragesBothGroupings torch = computeKeyAveragesBothGroupings(*store, Attribution::Torch);
  KeyAveragesBothGroupings corrected = computeKeyAveragesBothGroupings(*store, Attribution::Corrected);
  snap->byName = std::make_shared<const KeyAverages>(std::move(torch.byName));
  snap->byInputShape = std::make_shared<const KeyAverages>(std::move(torch.byInputShape));
  snap->correctedByName = std::make_shared<const KeyAverages>(std::move(corrected.byName));
  snap->correctedByInputShape = std::make_shared<const KeyAverages>(std::move(corrected.byInputShape));
  snap->analysis = std::make_shared<const Explanation>(explainTrace(*store));
  snap->store = std::move(store);
  snap->path = path;
  snap->displayName = QFileInfo(path).fileName();
  snap->warning = QString::fromStdString(result.warning);
  snap->jsonBytes = result.jsonBytes;
  snap->loadMs = timer.elapsed();
  snap->bundled = bundled;
  out.snapshot = std::move(snap);
  return out;
}

}  // namespace

TraceLoader::TraceLoader(QObject* parent) : QObject(parent) {
  qRegisterMetaType<std::shared_ptr<const TraceSnapshot>>();
}

void TraceLoader::start(const QString& path, std::function<TraceLoadOutcome()> work) {
  const quint64 generation = ++generation_;
  ++running_;
  emit started(path);
  auto* watcher = new QFutureWatcher<TraceLoadOutcome>(this);
  connect(watcher, &QFutureWatcher<TraceLoadOutcome>::finished, this, [this, watcher, generation, path] {
    --running_;
    const TraceLoadOutcome out = watcher->result();
    watcher->deleteLater();
    if (generation != generation_) return;  // superseded by a newer load
    if (out.snapshot) {
      emit loaded(out.snapshot);
    } else {
      emit failed(out.error.isEmpty() ? path + QStringLiteral(": could not be loaded") : out.error);
    }
  });
  watcher->setFuture(QtConcurrent::run([work = std::move(work), path]() -> TraceLoadOutcome {
    try {
      return work();
    } catch (const std::bad_alloc&) {
      return {nullptr, path + QStringLiteral(": out of memory while loading")};
    } catch (const std::exception& e) {
      return {nullptr, path + QStringLiteral(": ") + QString::fromUtf8(e.what())};
    }
  }));
}

void TraceLoader::loadFile(const QString& path) {
  start(path, [path]() -> TraceLoadOutcome {
    QElapsedTimer timer;
    timer.start();
    return finish(loadTrace(path.toStdString()), path, false, timer);
  });
}

void TraceLoader::loadBytes(const QByteArray& json, const QString& name, bool bundled) {
  start(name, [json, name, bundled]() -> TraceLoadOutcome {
    QElapsedTimer timer;
    timer.start();
    const std::string_view text(json.constData(), static_cast<size_t>(json.size()));
    return finish(parseTrace(text, name.toStdString()), name, bundled, timer);
  });
}

}  // namespace attnscope::ui
