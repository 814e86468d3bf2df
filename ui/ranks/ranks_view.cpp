#include "ui/ranks/ranks_view.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>
#include <stdexcept>

#include "core/read/trace_reader.h"
#include "ui/common/background.h"
#include "ui/common/text.h"
#include "ui/ranks/collectives_model.h"
#include "ui/ranks/job_findings.h"
#include "ui/ranks/job_heat_map.h"
#include "ui/ranks/rank_timelines.h"
#include "ui/table/sort_header_view.h"

namespace attnscope::ui {

namespace {

struct JobOutcome {
  std::shared_ptr<const ranks::JobReport> report;
  QStringList warnings;
};

const char* kErrorStyle =
    "QLabel { background: #fdecea; color: #8a1c14; border: 1px solid #f1aeb5; border-radius: 4px; padding: 5px 8px; }";

QString ms(int64_t ns) { return qs(spanDurationText(ns)); }

}  // namespace

RanksView::RanksView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("ranksView"));
  setWindowTitle(tr("Ranks — attnscope"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 6, 8, 6);
  layout->setSpacing(4);

  headline_ = new QLabel(this);
  headline_->setObjectName(QStringLiteral("jobHeadline"));
  headline_->setWordWrap(true);
  headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont big = headline_->font();
  big.setBold(true);
  big.setPointSizeF(big.pointSizeF() * 1.15);
  headline_->setFont(big);
  headline_->setText(
      tr("No job open. File > Open Job… reads a folder of traces, one per rank, or several trace files; "
         "dropping a folder or several traces on the main window does the same."));
  subtitle_ = new QLabel(this);
  subtitle_->setObjectName(QStringLiteral("jobSubtitle"));
  subtitle_->setWordWrap(true);
  subtitle_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(headline_);
  layout->addWidget(subtitle_);

  busyRow_ = new QWidget(this);
  auto* busy = new QHBoxLayout(busyRow_);
  busy->setContentsMargins(0, 0, 0, 0);
  busyText_ = new QLabel(busyRow_);
  progressBar_ = new QProgressBar(busyRow_);
  progressBar_->setRange(0, 1000);
  progressBar_->setMaximumWidth(260);
  progressBar_->setTextVisible(false);
  cancelButton_ = new QPushButton(tr("Cancel"), busyRow_);
  connect(cancelButton_, &QPushButton::clicked, this, &RanksView::cancel);
  busy->addWidget(busyText_, 1);
  busy->addWidget(progressBar_);
  busy->addWidget(cancelButton_);
  busyRow_->hide();
  layout->addWidget(busyRow_);

  error_ = new QLabel(this);
  error_->setObjectName(QStringLiteral("jobError"));
  error_->setWordWrap(true);
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->setStyleSheet(QString::fromLatin1(kErrorStyle));
  error_->hide();
  layout->addWidget(error_);

  auto* main = split_ = new QSplitter(Qt::Vertical, this);
  main->setObjectName(QStringLiteral("ranksSplitter"));
  main->setChildrenCollapsible(false);
  auto* top = new QSplitter(Qt::Horizontal, main);
  // Left: the heat map (scrolls when a job has many ranks or steps) and the selected cell in words.
  auto* left = new QWidget(top);
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(0, 0, 0, 0);
  leftLayout->setSpacing(2);
  heatMap_ = new JobHeatMap;
  auto* area = new QScrollArea(left);
  area->setWidgetResizable(true);
  area->setFrameShape(QFrame::StyledPanel);
  area->setWidget(heatMap_);
  selection_ = new QLabel(left);
  selection_->setObjectName(QStringLiteral("jobSelection"));
  selection_->setWordWrap(true);
  selection_->setText(tr("Click a cell to show that rank's timeline at that step."));
  // Two lines always: a longer selection must not take rows from the map above it.
  selection_->setMinimumHeight(2 * selection_->fontMetrics().lineSpacing() + 4);
  leftLayout->addWidget(area, 1);
  leftLayout->addWidget(selection_);
  // Right: the findings in words and the collectives, as tabs.
  side_ = new QTabWidget(top);
  side_->setDocumentMode(true);
  findings_ = new QTextBrowser(side_);
  findings_->setObjectName(QStringLiteral("jobFindings"));
  findings_->setOpenLinks(false);
  table_ = new QTableView(side_);
  table_->setObjectName(QStringLiteral("collectivesTable"));
  model_ = new CollectivesModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(TableModelBase::SortRole);
  table_->setModel(proxy_);
  useSortableTable(table_);
  table_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);  // the model's order until a click
  table_->setSortingEnabled(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->setWordWrap(false);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &RanksView::onCollectiveChosen);
  side_->addTab(findings_, tr("Findings"));
  side_->addTab(table_, tr("Collectives"));
  top->addWidget(left);
  top->addWidget(side_);
  top->setStretchFactor(0, 11);
  top->setStretchFactor(1, 9);
  timelines_ = new RankTimelines(main);
  main->addWidget(top);
  main->addWidget(timelines_);
  main->setStretchFactor(0, 4);
  main->setStretchFactor(1, 5);
  layout->addWidget(main, 1);

  connect(heatMap_, &JobHeatMap::cellSelected, this, &RanksView::onCellSelected);
  connect(timelines_, &RankTimelines::openTraceRequested, this, &RanksView::openTraceRequested);
  poll_ = new QTimer(this);
  poll_->setInterval(100);
  connect(poll_, &QTimer::timeout, this, &RanksView::pollProgress);
  resize(1280, 800);
}

RanksView::~RanksView() { cancel(); }

void RanksView::openJob(const QStringList& paths) {
  std::vector<std::string> given;
  for (const QString& p : paths) given.push_back(p.toStdString());
  std::string error;
  const std::vector<std::string> files = ranks::jobFiles(given, &error);
  if (!error.empty()) {
    showError(qs(error));
    return;
  }
  if (progress_) progress_->cancel = true;  // an older job still being read is not wanted any more
  const quint64 generation = ++generation_;
  auto progress = std::make_shared<LoadProgress>();
  progress_ = progress;
  busy_ = true;
  startedMs_ = QDateTime::currentMSecsSinceEpoch();
  totalBytes_ = doneBytes_ = lastBytes_ = lastTotal_ = 0;
  files_ = static_cast<int>(files.size());
  fileNow_ = 0;
  for (const std::string& f : files) totalBytes_ += static_cast<quint64>(QFileInfo(qs(f)).size());
  QString name = paths.size() == 1 ? QFileInfo(paths.front()).fileName() : tr("%1 files").arg(paths.size());
  setWindowTitle(tr("Ranks: %1 — attnscope").arg(name));
  busyText_->setText(tr("Reading %1 trace(s) of %2 and matching their collectives…").arg(files.size()).arg(name));
  progressBar_->setValue(0);
  error_->hide();
  poll_->start();
  runInBackground(
      this,
      [files, progress]() {
        ReaderLimits limits;
        limits.progress = progress.get();
        std::string err;
        std::vector<std::string> warnings;
        ranks::JobReport r = ranks::openJob(files, limits, &err, &warnings);
        if (!err.empty()) throw std::runtime_error(err);
        JobOutcome out;
        out.report = std::make_shared<const ranks::JobReport>(std::move(r));
        for (const std::string& w : warnings) out.warnings << qs(w);
        return out;
      },
      [this, generation](JobOutcome out) {
        if (generation != generation_) return;  // cancelled, or another job asked for meanwhile
        busy_ = false;
        poll_->stop();
        busyRow_->hide();
        showReport(std::move(out.report), out.warnings);
      },
      [this, generation](const QString& what) {
        if (generation != generation_) return;
        busy_ = false;
        poll_->stop();
        busyRow_->hide();
        showError(tr("Could not open the job: %1").arg(what));
      });
}

void RanksView::cancel() {
  if (!busy_) return;
  if (progress_) progress_->cancel = true;
  ++generation_;
  busy_ = false;
  poll_->stop();
  busyRow_->hide();
  subtitle_->setText(report_ ? tr("Stopped reading the new job; still showing the one before.")
                             : tr("Stopped reading the job."));
  emit jobCancelled();
}

void RanksView::pollProgress() {
  if (!progress_ || !busy_) return;
  // Only a long read shows its progress.
  if (QDateTime::currentMSecsSinceEpoch() - startedMs_ < 300) return;
  const quint64 done = progress_->bytesDone.load(std::memory_order_relaxed);
  const quint64 total = progress_->bytesTotal.load(std::memory_order_relaxed);
  // The files are read one after the other: a new one starts from zero.
  if (total != lastTotal_ || done < lastBytes_) {
    if (lastTotal_ > 0) {
      doneBytes_ += lastTotal_;
      ++fileNow_;
    }
    lastTotal_ = total;
  }
  lastBytes_ = done;
  const double share =
      totalBytes_ > 0 ? std::min(1.0, static_cast<double>(doneBytes_ + done) / static_cast<double>(totalBytes_)) : 0;
  progressBar_->setValue(static_cast<int>(share * 1000));
  busyText_->setText(tr("Reading rank file %1 of %2 (one at a time), then matching the collectives…")
                         .arg(std::min(fileNow_ + 1, files_))
                         .arg(files_));
  busyRow_->show();
}

void RanksView::showError(const QString& message) {
  error_->setText(report_ ? message + tr(" — still showing the job before.") : message);
  error_->show();
  emit jobFailed(message);
}

void RanksView::showReport(std::shared_ptr<const ranks::JobReport> report, const QStringList& warnings) {
  report_ = std::move(report);
  const ranks::JobReport& r = *report_;
  headline_->setText(r.headline.empty() ? tr("The job: nothing stands out.") : qs(r.headline));
  subtitle_->setText(jobSubtitle(r));
  if (!warnings.isEmpty()) {
    error_->setText(tr("Read with warnings: %1").arg(warnings.join(QStringLiteral("; "))));
    error_->show();
  } else {
    error_->hide();
  }
  findings_->setHtml(jobFindingsHtml(r));
  heatMap_->setReport(report_);
  // The heat map as wide as its cells want (a job of one step needs little), the words the rest.
  if (auto* top = qobject_cast<QSplitter*>(side_->parentWidget())) {
    const int total = std::max(600, top->width());
    const int left = std::clamp(heatMap_->sizeHint().width() + 24, 440, total * 3 / 5);
    top->setSizes({left, total - left});
  }
  timelines_->setReport(report_);
  fitSplit();
  QTimer::singleShot(0, this, &RanksView::fitSplit);  // again once the new report's layout has settled
  model_->setReport(report_, timelines_->originNs());
  table_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
  proxy_->sort(-1);
  table_->resizeColumnsToContents();
  for (int c = 0; c < model_->columnCount(); ++c) table_->setColumnWidth(c, std::min(table_->columnWidth(c), 220));
  side_->setTabText(1, tr("Collectives (%1 matched, %2 unmatched)").arg(r.matched.size()).arg(r.unmatched.size()));
  selectedRank_ = -1;
  selectedStep_.clear();
  selection_->setText(tr("Click a cell to show that rank's timeline at that step; hover it for its figures."));
  emit jobShown();
}

// The map and the words above get what the map needs (at most 45% of the height), the ranks' timelines the
// rest: the splitter's first layout went by size hints and left each rank's lanes 30 px at 1280x800.
void RanksView::fitSplit() {
  const QList<int> sizes = split_->sizes();
  if (sizes.size() != 2) return;
  const int total = sizes[0] + sizes[1];
  if (total <= 0) return;
  QWidget* top = split_->widget(0);
  const int need = heatMap_->sizeHint().height() + selection_->sizeHint().height() + 16;
  const int first = std::max(top->minimumSizeHint().height(), std::min(need, total * 45 / 100));
  if (first >= total) return;
  split_->setSizes({first, total - first});
}

void RanksView::onCellSelected(qint64 rank, const QString& step) {
  if (!report_) return;
  selectedRank_ = rank;
  selectedStep_ = step;
  const int row = heatMap_->rowOfRank(rank);
  const ranks::StepFigures* f = heatMap_->figures(row, heatMap_->columnOf(step));
  selection_->setText(
      f ? tr("Selected: rank %1 · %2 · waited %3 for the last rank · step %4 · its top cause: %5")
              .arg(rank)
              .arg(step, ms(f->waitForLastNs), ms(f->stepNs),
                   f->causeLabel.empty() ? tr("none") : qs(f->causeLabel) + QStringLiteral(" (") + ms(f->causeNs) + ")")
        : tr("Selected: rank %1 · %2 (this rank has no such step)").arg(rank).arg(step));
  // That rank's timeline (in place of the last one shown, if it was not shown), zoomed to the step on
  // every rank; the map keeps its room (a lane added below would push it up to a couple of rows).
  const QList<int> sizes = split_->sizes();
  timelines_->showInPlaceOfLast(rank);
  split_->setSizes(sizes);
  timelines_->setSelectedRank(rank);
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const auto& fs : report_->figures)
    for (const ranks::StepFigures& sf : fs)
      if (qs(sf.step) == step) {
        lo = std::min(lo, sf.startNs);
        hi = std::max(hi, sf.startNs + sf.stepNs);
      }
  if (lo < hi) timelines_->zoomToAligned(lo, hi, 0.03);
}

void RanksView::onCollectiveChosen() {
  const QModelIndex at = proxy_->mapToSource(table_->currentIndex());
  if (!at.isValid()) return;
  const auto [t0, t1] = model_->alignedRange(at.row());
  if (t1 <= t0) return;
  // The collective with as much again on each side: what came before it on each rank.
  timelines_->zoomToAligned(t0, t1, 0.5);
}

QString RanksView::headlineText() const { return headline_->text(); }
QString RanksView::findingsText() const { return findings_->toPlainText(); }
QString RanksView::errorText() const { return error_->isVisibleTo(this) ? error_->text() : QString(); }
QString RanksView::selectionText() const { return selection_->text(); }

}  // namespace attnscope::ui
