#include "startup_probe.h"

#include <QApplication>
#include <QEvent>
#include <QTimer>
#include <QWidget>
#include <cstdio>
#include <ctime>

#include "ui/shell/main_window.h"
#include "ui/timeline/timeline_pane.h"

long long monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

StartupProbe::StartupProbe(attnscope::ui::MainWindow* window, long long mainNs)
    : QObject(window), window_(window), mainNs_(mainNs) {
  qApp->installEventFilter(this);
  connect(window, &attnscope::ui::MainWindow::traceShown, this, [this] {
    traceShown_ = true;
    traceShownNs_ = monotonicNs();
  });
  connect(window, &attnscope::ui::MainWindow::loadFailed, this, [](const QString& message) {
    std::fprintf(stderr, "attnscope: %s\n", qPrintable(message));
    QCoreApplication::exit(2);
  });
}

bool StartupProbe::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() != QEvent::Paint || pending_ || !watched->isWidgetType()) return false;
  auto* w = static_cast<QWidget*>(watched);
  if (w->window() != window_) return false;
  const bool timeline = traceShown_ && window_->timelinePane()->isAncestorOf(w);
  if (firstFrameNs_ && !timeline) return false;
  // Time it once this paint (and the rest of the frame) has been handled.
  pending_ = true;
  QTimer::singleShot(0, this, [this, timeline] {
    pending_ = false;
    const long long now = monotonicNs();
    if (!firstFrameNs_) firstFrameNs_ = now;
    if (timeline) {
      traceFrameNs_ = now;
      finish();
    }
  });
  return false;
}

void StartupProbe::finish() {
  std::printf("main_ns=%lld first_frame_ns=%lld trace_shown_ns=%lld trace_frame_ns=%lld\n", mainNs_, firstFrameNs_,
              traceShownNs_, traceFrameNs_);
  std::fflush(stdout);
  QCoreApplication::exit(0);
}
