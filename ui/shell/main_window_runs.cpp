// MainWindow: the runs (started, finished, shown, saved) and Compare (two runs, two files).
#include "ui/shell/main_window.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include "core/store/trace_info.h"
#include "ui/common/background.h"
#include "ui/common/export.h"
#include "ui/common/text.h"
#include "ui/panels/compare_view.h"
#include "ui/panels/details_panel.h"
#include "ui/panels/explain_panel.h"
#include "ui/panels/glossary_dock.h"
#include "ui/panels/plots_panel.h"
#include "ui/panels/why_panel.h"
#include "ui/run/run_panel.h"
#include "ui/run/runs_dock.h"
#include "ui/run/runs_model.h"
#include "ui/shell/bundled_sample.h"
#include "ui/shell/load_progress_bar.h"
#include "ui/shell/main_window_detail.h"
#include "ui/shell/pair_loader.h"
#include "ui/table/key_averages_model.h"
#include "ui/table/key_averages_proxy.h"
#include "ui/table/table_pane.h"
#include "ui/timeline/table_link.h"
#include "ui/timeline/timeline_pane.h"
#include "ui/views/views_panels.h"

namespace attnscope::ui {

using namespace main_window_detail;

// ---- runs ------------------------------------------------------------------------

RunsModel* MainWindow::runs() const { return runsDock_->model(); }
QTableView* MainWindow::runsView() const { return runsDock_->view(); }

void MainWindow::onRunStarted(const RunConfig& cfg, const QString& outPath) {
  RunEntry e;
  e.engine = true;
  e.config = cfg;
  e.summary = RunsModel::configSummary(cfg);
  e.status = RunStatus::Running;
  e.message = tr("Writing %1").arg(outPath);
  runningId_ = runs()->addRun(std::move(e));
  runsView()->scrollToBottom();
  updateActions();
}

void MainWindow::onRecordStarted(const QString& summary, const QString& outPath) {
  RunEntry e;
  e.engine = true;
  e.summary = tr("Your script: %1").arg(summary);
  e.status = RunStatus::Running;
  e.message = tr("Writing %1").arg(outPath);
  runningId_ = runs()->addRun(std::move(e));
  runsView()->scrollToBottom();
  updateActions();
}

void MainWindow::onRunFinished(const RunConfig&, const RunOutcome& o) {
  runs()->finishRun(runningId_, o);
  const int row = runs()->rowOfId(runningId_);
  runningId_ = 0;
  engineStatus_->setText(tr("Engine run: %1").arg(runStatusText(o.status)));
  if (o.status == RunStatus::Done || !o.outPath.isEmpty()) {  // a script's partial trace is shown too
    statusBar()->showMessage(o.message, o.status == RunStatus::Done ? 8000 : 15000);
    showRunRow(row);
  } else {
    statusBar()->showMessage(o.message, 15000);
    dock(QStringLiteral("runDock"))->raise();
  }
  updateActions();
}

void MainWindow::showRunRow(int row) {
  const RunEntry* e = runs()->entry(row);
  if (!e) return;
  if (e->path.isEmpty()) {
    statusBar()->showMessage(
        tr("Run %1 has no trace: %2").arg(e->id).arg(e->message.isEmpty() ? runStatusText(e->status) : e->message),
        8000);
    return;
  }
  if (e->bundled)
    openBundledSample();
  else
    openTrace(e->path);
}

bool MainWindow::saveRun(const QString& path, QString* error, int row) {
  const RunEntry* e = runs()->entry(row >= 0 ? row : runs()->rowOfPath(trace_ ? trace_->path : QString()));
  QByteArray bytes;
  if (e && !e->bundled && !e->path.isEmpty()) {
    QFile f(e->path);
    if (!f.open(QIODevice::ReadOnly)) {
      if (error) *error = tr("%1: %2").arg(e->path, f.errorString());
      return false;
    }
    bytes = f.readAll();
  } else if (e && e->bundled) {
    bytes = bundledSampleJson();
  } else {
    if (error) *error = tr("no run to save");
    return false;
  }
  if (!writeFileAtomically(path, bytes, error)) return false;
  runs()->markSaved(e->id, path);
  addRecent(path);
  return true;
}

void MainWindow::comparePaths(const QString& pathA, const QString& labelA, const QString& pathB, const QString& labelB,
                              bool reportFailure) {
  showDock(QStringLiteral("compareDock"));
  // A and B side by side need more than the side panels' usual width: 45% of the window.
  if (QDockWidget* d = dock(QStringLiteral("compareDock")); d && !d->isFloating() && d->width() < width() * 45 / 100)
    resizeDocks({d}, {width() * 45 / 100}, Qt::Horizontal);
  compare_->setMessage(tr("Loading A and B…"));
  pairLabels_[0] = labelA;
  pairLabels_[1] = labelB;
  pairReportsFailure_ = reportFailure;
  pairLoader_->load(pathA, pathB);
}

bool MainWindow::compareRows(int rowA, int rowB, QString* error) {
  const RunEntry* a = runs()->entry(rowA);
  const RunEntry* b = runs()->entry(rowB);
  if (!a || !b || a->path.isEmpty() || b->path.isEmpty()) {
    if (error) *error = tr("both runs need a trace (finished runs or opened files)");
    return false;
  }
  comparePaths(a->path, tr("#%1 %2").arg(a->id).arg(a->summary), b->path, tr("#%1 %2").arg(b->id).arg(b->summary),
               false);
  return true;
}

void MainWindow::compareFiles(const QString& pathA, const QString& pathB, bool timelines) {
  if (timelines)
    // The largest change shown in both timelines from the start.
    connect(
        compare_, &CompareView::compared, this, [this] { compare_->openTimelines(0); }, Qt::SingleShotConnection);
  comparePaths(pathA, QFileInfo(pathA).fileName(), pathB, QFileInfo(pathB).fileName(), true);
}

void MainWindow::chooseCompareWith() {
  if (!trace_ || trace_->bundled) {
    showError(tr("Compare with"), tr("Open a trace file first (File > Open); it becomes A."));
    return;
  }
  const QString path = QFileDialog::getOpenFileName(this, tr("Compare %1 with").arg(trace_->displayName), lastDir_,
                                                    tr("Traces (*.json *.json.gz);;All files (*)"));
  if (path.isEmpty()) return;
  compareFiles(trace_->path, path, true);
}

void MainWindow::compareSelected() {
  const QList<int> rows = runsDock_->selectedRows();
  if (rows.size() != 2) {
    showDock(QStringLiteral("runsDock"));
    statusBar()->showMessage(tr("Select exactly two runs in the Runs list (Ctrl+click) to compare them."), 6000);
    return;
  }
  QString err;
  if (!compareRows(rows[0], rows[1], &err)) statusBar()->showMessage(err, 6000);
}

}  // namespace attnscope::ui
