#include "ui/shell/load_progress_bar.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QTimer>
#include <algorithm>

#include "ui/shell/trace_loader.h"

namespace attnscope::ui {

namespace {

QString gb(double bytes) {
  if (bytes >= 1e9) return QString::number(bytes / 1e9, 'f', 1) + QStringLiteral(" GB");
  return QString::number(bytes / 1e6, 'f', 0) + QStringLiteral(" MB");
}

QString minutes(qint64 s) { return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0')); }

}  // namespace

LoadProgressBar::LoadProgressBar(QWidget* parent)
    : QWidget(parent),
      label_(new QLabel(this)),
      bar_(new QProgressBar(this)),
      cancel_(new QPushButton(tr("Cancel"), this)),
      timer_(new QTimer(this)) {
  setObjectName(QStringLiteral("loadProgress"));
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  label_->setObjectName(QStringLiteral("loadProgressText"));
  bar_->setRange(0, 1000);
  bar_->setTextVisible(false);
  bar_->setFixedWidth(160);
  cancel_->setObjectName(QStringLiteral("cancelLoad"));
  cancel_->setToolTip(tr("Stop loading and keep what is shown (Esc)"));
  cancel_->setShortcut(QKeySequence(Qt::Key_Escape));
  row->addWidget(label_);
  row->addWidget(bar_);
  row->addWidget(cancel_);
  connect(cancel_, &QPushButton::clicked, this, [this] {
    label_->setText(tr("Cancelling…"));
    cancel_->setEnabled(false);
    emit cancelRequested();
  });
  timer_->setInterval(100);
  connect(timer_, &QTimer::timeout, this, &LoadProgressBar::refresh);
  hide();
}

void LoadProgressBar::start(const QString& path, std::shared_ptr<const LoadProgress> progress) {
  progress_ = std::move(progress);
  name_ = QFileInfo(path).fileName();
  clock_.start();
  cancel_->setEnabled(true);
  refresh();
  show();
  timer_->start();
}

void LoadProgressBar::stop() {
  timer_->stop();
  progress_.reset();
  hide();
}

QString LoadProgressBar::text() const { return label_->text(); }

void LoadProgressBar::refresh() {
  if (!progress_ || !cancel_->isEnabled()) return;
  const double done = static_cast<double>(progress_->bytesDone.load(std::memory_order_relaxed));
  const double total = static_cast<double>(progress_->bytesTotal.load(std::memory_order_relaxed));
  const auto events = progress_->events.load(std::memory_order_relaxed);
  const int stage = progress_->stage.load(std::memory_order_relaxed);
  const qint64 ms = clock_.elapsed();
  const QString count = QLocale().toString(static_cast<double>(events) / 1e6, 'f', 1) + tr(" M events");
  QString line;
  if (stage == kStageReading) {
    line = tr("Reading %1").arg(name_);
    if (total > 0) {
      bar_->setRange(0, 1000);
      bar_->setValue(static_cast<int>(1000.0 * std::min(done / total, 1.0)));
      line += tr(": %1 of %2 · %3").arg(gb(done), gb(total), count);
      if (done > 0 && ms > 1000)
        line += tr(" · about %1 left to read").arg(minutes(static_cast<qint64>(ms / 1000.0 * (total - done) / done)));
    } else {
      bar_->setRange(0, 0);
    }
  } else {
    bar_->setRange(0, 0);  // no measure of how far: a busy bar
    line = stage == kStageBuilding       ? tr("Sorting %1 into lanes…").arg(count)
           : stage == kStageTables       ? tr("Computing the tables…")
           : stage == kStageWritingCache ? tr("Saving it for quick reopening…")
           : stage == kStageReadingCache ? tr("Opening its saved copy…")
                                         : tr("Building the timeline…");
    line = name_ + QStringLiteral(": ") + line;
  }
  label_->setText(line + tr(" (%1)").arg(minutes(ms / 1000)));
}

}  // namespace attnscope::ui
