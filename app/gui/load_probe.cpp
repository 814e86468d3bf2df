#include "load_probe.h"

#include <QCoreApplication>
#include <QImage>
#include <QLabel>
#include <QPushButton>
#include <QTimer>
#include <algorithm>
#include <cstdio>

#include "ui/shell/main_window.h"
#include "ui/shell/trace_loader.h"

LoadProbe::LoadProbe(attnscope::ui::MainWindow* window, QString trace, double cancelAfterS, double shootAtS,
                     QString shotPath)
    : QObject(window),
      window_(window),
      trace_(std::move(trace)),
      shotPath_(std::move(shotPath)),
      cancelAfterS_(cancelAfterS),
      shootAtS_(shootAtS),
      timer_(new QTimer(this)) {
  timer_->setTimerType(Qt::PreciseTimer);
  timer_->setInterval(10);
  connect(timer_, &QTimer::timeout, this, &LoadProbe::tick);
  // First the bundled sample (what "returns to the previous trace" returns to), then TRACE.
  connect(
      window_, &attnscope::ui::MainWindow::traceShown, this,
      [this] { QTimer::singleShot(200, this, [this] { startLoad(); }); }, Qt::SingleShotConnection);
}

void LoadProbe::startLoad() {
  loading_ = true;
  connect(window_, &attnscope::ui::MainWindow::traceShown, this, [this] {
    // Until the trace's first frame has been painted.
    QTimer::singleShot(0, this, [this] { finish("loaded"); });
  });
  connect(window_, &attnscope::ui::MainWindow::loadFailed, this, [this] { finish("failed"); });
  connect(window_, &attnscope::ui::MainWindow::loadCancelled, this, [this] { finish("cancelled"); });
  clock_.start();
  sinceTick_.start();
  timer_->start();
  window_->openTrace(trace_);
}

void LoadProbe::tick() {
  const double gapMs = static_cast<double>(sinceTick_.nsecsElapsed()) / 1e6;
  sinceTick_.start();
  const double stall = std::max(0.0, gapMs - 10.0);
  stallsMs_.push_back(stall);
  const double t = static_cast<double>(clock_.nsecsElapsed()) / 1e9;
  if (auto* label = window_->findChild<QLabel*>(QStringLiteral("loadProgressText")); label && label->isVisible())
    progressText_ = label->text();
  if (!shot_ && shootAtS_ > 0 && t >= shootAtS_) {
    shot_ = true;
    const QImage image = window_->grab().toImage();
    if (!image.save(shotPath_, "PNG")) std::fprintf(stderr, "load-probe: cannot write %s\n", qPrintable(shotPath_));
  }
  if (!cancelClicked_ && cancelAfterS_ > 0 && t >= cancelAfterS_) {
    cancelClicked_ = true;
    if (auto* b = window_->findChild<QPushButton*>(QStringLiteral("cancelLoad")); b && b->isVisible()) b->click();
  }
}

void LoadProbe::finish(const char* outcome) {
  if (!loading_) return;
  loading_ = false;
  timer_->stop();
  std::vector<double> s = stallsMs_;
  std::sort(s.begin(), s.end());
  auto pct = [&](double p) { return s.empty() ? 0.0 : s[static_cast<size_t>(p * static_cast<double>(s.size() - 1))]; };
  std::printf(
      "outcome=%s load_s=%.2f ticks=%zu stall_ms_p50=%.1f stall_ms_p99=%.1f stall_ms_max=%.1f stalls_over_50ms=%zu "
      "window_title=\"%s\" last_progress=\"%s\"\n",
      outcome, static_cast<double>(clock_.nsecsElapsed()) / 1e9, s.size(), pct(0.5), pct(0.99),
      s.empty() ? 0.0 : s.back(),
      static_cast<size_t>(std::count_if(s.begin(), s.end(), [](double x) { return x > 50; })),
      qPrintable(window_->windowTitle()), qPrintable(progressText_));
  std::fflush(stdout);
  QCoreApplication::exit(0);
}
