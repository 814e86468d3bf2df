// MainWindow: settings, opening traces (dialogs, drops, recent files), the shown trace and the
// status bar, the table's selection, and writing files (export, save run).
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
#include <QSignalBlocker>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include "core/ranks/rank_summary.h"
#include "core/store/trace_info.h"
#include "ui/common/background.h"
#include "ui/common/export.h"
#include "ui/common/screen_fit.h"
#include "ui/common/text.h"
#include "ui/panels/compare_view.h"
#include "ui/panels/details_panel.h"
#include "ui/panels/explain_panel.h"
#include "ui/panels/glossary_dock.h"
#include "ui/panels/plots_panel.h"
#include "ui/panels/steps_view.h"
#include "ui/panels/why_panel.h"
#include "ui/run/run_panel.h"
#include "ui/run/runs_dock.h"
#include "ui/run/runs_model.h"
#include "ui/shell/bundled_sample.h"
#include "ui/shell/load_progress_bar.h"
#include "ui/shell/main_window_detail.h"
#include "ui/table/key_averages_model.h"
#include "ui/table/key_averages_proxy.h"
#include "ui/table/table_pane.h"
#include "ui/timeline/table_link.h"
#include "ui/timeline/timeline_pane.h"
#include "ui/timeline/view.h"
#include "ui/views/views_panels.h"

namespace attnscope::ui {

using namespace main_window_detail;

namespace {

QString exportFilter() {
  return QObject::tr("CSV (*.csv);;JSON (*.json);;Markdown (*.md);;Text, torch's layout (*.txt)");
}

}  // namespace

// ---- settings -----------------------------------------------------------------

void MainWindow::resetLayout() { restoreState(defaultState_, kStateVersion); }

// The default layout grows with the screen: the side panels get 30% of the width (at 1280 px about
// 380 px), the timeline its share of the height (fitTimelineToTrace), the tabs under it the rest.
void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  if (sized_) return;
  sized_ = true;
  if (restoredState_) return;  // what the user arranged stays
  resizeDocks({dock(QStringLiteral("explainDock"))}, {std::max(300, width() * 3 / 10)}, Qt::Horizontal);
  // Once the window has its size: the timeline its share of the centre, the tabs the rest.
  QTimer::singleShot(0, this, [this] {
    auto* split = findChild<QSplitter*>(QStringLiteral("timelineSplitter"));
    if (!split || userSplit_) return;
    const QList<int> sizes = split->sizes();
    if (sizes.size() != 2) return;
    const int total = sizes[0] + sizes[1];
    const int share = height() < 1000 ? 50 : 58;
    split->setSizes({total * share / 100, total - total * share / 100});
    if (trace_) fitTimelineToTrace();  // a trace shown before the window had its size
  });
}

void MainWindow::restoreSettings() {
  QSettings s;
  const QByteArray geo = s.value(QStringLiteral("window/geometry")).toByteArray();
  if (!geo.isEmpty() && restoreGeometry(geo)) fitToScreen(this, size());
  const QByteArray state = s.value(QStringLiteral("window/state")).toByteArray();
  if (!state.isEmpty()) restoredState_ = restoreState(state, kStateVersion);
  // The side panels as the user left them: collapsed (their expanded layout kept for F9), their sizes.
  if (restoredState_ && s.value(QStringLiteral("window/sidePanelsCollapsed")).toBool()) setSidePanelsShown(false);
  if (auto* split = findChild<QSplitter*>(QStringLiteral("timelineSplitter"))) {
    const QByteArray central = s.value(QStringLiteral("window/timelineSplit")).toByteArray();
    if (!central.isEmpty() && split->restoreState(central)) userSplit_ = true;
  }
  recent_ = s.value(QStringLiteral("recentFiles")).toStringList();
  const QString args = s.value(QStringLiteral("run/args")).toString();
  if (!args.isEmpty()) {
    std::vector<std::string> v;
    for (const QString& a : args.split(QLatin1Char(' '), Qt::SkipEmptyParts)) v.push_back(a.toStdString());
    RunConfig c;
    if (!parseRunArgs(v, &c)) runPanel_->setConfig(c);
  }
  // "Your script": its record arguments as a list (paths and arguments may hold spaces).
  const QStringList recordArgs = s.value(QStringLiteral("record/args")).toStringList();
  if (!recordArgs.isEmpty()) {
    std::vector<std::string> v;
    for (const QString& a : recordArgs) v.push_back(a.toStdString());
    RecordConfig c;
    if (!parseRecordArgs(v, &c)) runPanel_->scriptForm()->setConfig(c);
  }
  runPanel_->setScriptWorkload(s.value(QStringLiteral("run/workload")).toString() == QLatin1String("script"));
  table_->setTimeUnit(static_cast<KeyAveragesModel::TimeUnit>(s.value(QStringLiteral("table/timeUnit"), 0).toInt()));
}

void MainWindow::saveSettings() {
  QSettings s;
  s.setValue(QStringLiteral("window/geometry"), saveGeometry());
  // Collapsed: the docks' expanded layout, so they come back as they were on the next launch too.
  s.setValue(QStringLiteral("window/state"),
             panelsCollapsed_ && !expandedState_.isEmpty() ? expandedState_ : saveState(kStateVersion));
  s.setValue(QStringLiteral("window/sidePanelsCollapsed"), panelsCollapsed_);
  if (auto* split = findChild<QSplitter*>(QStringLiteral("timelineSplitter")); split && userSplit_)
    s.setValue(QStringLiteral("window/timelineSplit"), split->saveState());
  s.setValue(QStringLiteral("recentFiles"), recent_);
  QStringList args;
  for (const std::string& a : toRunArgs(runPanel_->config())) args << QString::fromStdString(a);
  s.setValue(QStringLiteral("run/args"), args.join(QLatin1Char(' ')));
  const RecordConfig rc = runPanel_->recordConfig();
  QStringList recordArgs;
  if (!rc.script.empty() || !rc.module.empty())
    for (const std::string& a : toRecordArgs(rc)) recordArgs << QString::fromStdString(a);
  s.setValue(QStringLiteral("record/args"), recordArgs);
  s.setValue(QStringLiteral("run/workload"),
             runPanel_->scriptWorkload() ? QStringLiteral("script") : QStringLiteral("engine"));
  s.setValue(QStringLiteral("table/timeUnit"), static_cast<int>(table_->timeUnit()));
}

void MainWindow::addRecent(const QString& path) {
  if (path.startsWith(QLatin1Char(':'))) return;
  const QString abs = QFileInfo(path).absoluteFilePath();
  recent_.removeAll(abs);
  recent_.prepend(abs);
  while (recent_.size() > kMaxRecent) recent_.removeLast();
  updateRecentMenu();
  if (opt_.saveSettings) QSettings().setValue(QStringLiteral("recentFiles"), recent_);
}

void MainWindow::updateRecentMenu() {
  recentMenu_->clear();
  int n = 0;
  for (const QString& p : recent_) {
    ++n;
    QAction* a = recentMenu_->addAction(QStringLiteral("&%1 %2").arg(n % 10).arg(QFileInfo(p).fileName()), this,
                                        [this, p] { openTrace(p); });
    a->setToolTip(p);
    a->setStatusTip(p);
  }
  if (recent_.isEmpty()) recentMenu_->addAction(tr("(none yet)"))->setEnabled(false);
  recentMenu_->addSeparator();
  recentMenu_->addAction(tr("&Clear List"), this, [this] {
    recent_.clear();
    updateRecentMenu();
  });
}

void MainWindow::updateActions() {
  const bool have = trace_ != nullptr;
  exportTableAct_->setEnabled(have);
  exportTraceAct_->setEnabled(have);
  saveRunAct_->setEnabled(have);
  const bool running = runPanel_->runner()->isRunning();
  const EngineAvailability& a = runPanel_->runner()->availability();
  runAct_->setEnabled(!running && (!a.probed || a.engineBuilt));
  runAct_->setToolTip(a.probed && !a.engineBuilt ? a.reason
                                                 : tr("Run the engine with the Run panel's settings (Ctrl+Shift+R)"));
  cancelAct_->setEnabled(running);
  compareAct_->setEnabled(runsDock_->selectedRows().size() == 2);
}

// ---- opening traces -----------------------------------------------------------

void MainWindow::openTrace(const QString& path) {
  lastDir_ = QFileInfo(path).absolutePath();
  loader_->load(path);
}

void MainWindow::openBundledSample() { loader_->load(bundledSamplePath()); }

void MainWindow::chooseFile() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open trace"), lastDir_,
                                                    tr("Traces (*.json *.json.gz *.gz);;All files (*)"));
  if (!path.isEmpty()) openTrace(path);
}

namespace {

// Local files or folders: one file opens, two are compared (A the first, B the second) unless their
// names say they are two ranks of one job (rank-0, rank-1); a folder, or three files or more, open as
// a job in the Ranks window.
bool droppable(const QMimeData* mime) {
  if (!mime->hasUrls()) return false;
  const auto urls = mime->urls();
  return !urls.isEmpty() && std::all_of(urls.begin(), urls.end(), [](const QUrl& u) { return u.isLocalFile(); });
}

bool dropIsJob(const QList<QUrl>& urls) {
  for (const QUrl& u : urls)
    if (QFileInfo(u.toLocalFile()).isDir()) return true;
  if (urls.size() != 2) return urls.size() > 2;
  const int64_t a = ranks::rankFromFileName(urls[0].toLocalFile().toStdString());
  const int64_t b = ranks::rankFromFileName(urls[1].toLocalFile().toStdString());
  return a >= 0 && b >= 0 && a != b;
}

}  // namespace

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (droppable(event->mimeData())) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  if (!droppable(event->mimeData())) return;
  const auto urls = event->mimeData()->urls();
  if (dropIsJob(urls)) {
    QStringList paths;
    for (const QUrl& u : urls) paths << u.toLocalFile();
    openJob(paths);
  } else if (urls.size() == 1) {
    openTrace(urls.front().toLocalFile());
  } else {
    compareFiles(urls[0].toLocalFile(), urls[1].toLocalFile(), false);
  }
  event->acceptProposedAction();
}

void MainWindow::showTrace(std::shared_ptr<const LoadedTrace> trace) {
  loadingPath_.clear();
  loadBar_->stop();
  trace_ = std::move(trace);
  errorBar_->hide();
  if (trace_->bundled) {
    const QString note = bundledSampleNote();
    const QString prefix = QStringLiteral("Bundled sample:");
    QString html = note.toHtmlEscaped();
    if (note.startsWith(prefix)) {
      html = QStringLiteral("<b>%1</b>%2").arg(prefix.toHtmlEscaped(), note.mid(prefix.size()).toHtmlEscaped());
    }
    note_->setText(html);
    note_->show();
  } else {
    note_->hide();
  }
  if (!trace_->warning.isEmpty()) {
    errorText_->setText(tr("Loaded with a warning: %1").arg(trace_->warning));
    errorBar_->show();
  }
  setWindowTitle(tr("%1 — attnscope").arg(trace_->displayName));
  timeline_->setTrace(trace_);
  table_->setTrace(trace_);
  for (ViewPanel* p : std::initializer_list<ViewPanel*>{overview_, kernels_, memory_, modules_}) p->setTrace(trace_);
  steps_->setTrace(trace_);
  explain_->setTrace(trace_);
  why_->setTrace(trace_);
  details_->setTrace(trace_);
  plots_->setTrace(trace_);
  recordShownTrace();
  updateStatus();
  updateActions();
  onTableRowChanged();
  // The founding answer first: the Steps tab in front for a trace with steps (the bundled capture,
  // an engine run, a recorded script's, a ProfilerStep#N schedule), else torch's table.
  const Explanation* x = trace_->snapshot->explanation.get();
  const bool hasSteps = x && !x->steps.empty() && x->stepSource != "whole_trace" && x->stepSource != "none";
  viewTabs_->setCurrentWidget(hasSteps ? static_cast<QWidget*>(steps_) : static_cast<QWidget*>(table_));
  // On a step that reads as zero: why, in the Steps view; its band and the work it launched on the
  // timeline. The Explanation keeps its overview until the user picks a step.
  if (const int step = hasSteps ? steps_->selectFirstUnwrapped() : -1; step >= 0) {
    const QSignalBlocker quiet(timeline_);
    timeline_->explainStep(step);
  }
  fitTimelineToTrace();
  emit traceShown();
}

void MainWindow::fitTimelineToTrace() {
  auto* split = findChild<QSplitter*>(QStringLiteral("timelineSplitter"));
  if (!split || !trace_ || !sized_ || userSplit_ || qobject_cast<ViewPanel*>(viewTabs_->currentWidget())) return;
  const QList<int> sizes = split->sizes();
  if (sizes.size() != 2 || sizes[0] + sizes[1] <= 0) return;
  const int total = sizes[0] + sizes[1];
  TimelineView* v = timeline_->view();
  // Down to the first GPU stream's lane (the story: the thread that launched, the stream that ran),
  // with the pane's own bars and the ruler; every lane when there is no GPU stream.
  int lanesBottom = v->layout().totalHeight();
  const auto& tracks = v->index().tracks();
  for (uint32_t t = 0; t < tracks.size(); ++t)
    if (tracks[t].kind == TrackKind::Gpu) {
      lanesBottom = v->layout().trackTop(t) + v->layout().trackHeight(t);
      break;
    }
  const int wanted = sizes[0] - v->viewport()->height() + TimelineView::kRulerHeight + lanesBottom + 16;
  // At least 41% of the window's height (and of the centre) for the timeline, up to 62% when that
  // shows its lanes down to the first stream; the tabs keep the rest (the table a screenful of rows).
  const int least = std::min(total * 62 / 100, std::max(total * 45 / 100, height() * 41 / 100));
  const int top = std::clamp(wanted, least, std::max(least, total * 62 / 100));
  split->setSizes({top, total - top});
  // A stream still below the fold (many threads, deep nesting): the lanes above it fold up.
  QTimer::singleShot(0, this, [this] { timeline_->view()->revealFirstGpuLane(); });
}

void MainWindow::showLoadError(const QString& message) {
  loadingPath_.clear();
  loadBar_->stop();
  QString text = tr("Could not open %1").arg(message);
  if (trace_) text += tr(" — still showing %1.").arg(trace_->displayName);
  errorText_->setText(text);
  errorBar_->show();
  updateStatus();
  statusBar()->showMessage(tr("Could not open: %1").arg(message), 8000);
  emit loadFailed(message);
}

// The shown trace in the runs list (an opened file gets a row), the recent
// files, and the cache Compare reads.
void MainWindow::recordShownTrace() {
  traces_[trace_->path] = trace_;
  for (auto it = traces_.begin(); it != traces_.end() && traces_.size() > kMaxCachedTraces;)
    it = it->first == trace_->path ? std::next(it) : traces_.erase(it);
  const std::optional<EngineRun>& meta = trace_->snapshot->engine;
  int row = runs()->rowOfPath(trace_->path);
  if (row < 0) {
    RunEntry e;
    e.status = RunStatus::Opened;
    e.path = trace_->path;
    e.bundled = trace_->bundled;
    if (meta && meta->config) {
      e.config = meta->config;
      e.summary = tr("%1 (engine trace %2)").arg(RunsModel::configSummary(*meta->config), trace_->displayName);
    } else {
      e.summary = trace_->bundled ? tr("bundled sample %1").arg(trace_->displayName) : trace_->displayName;
    }
    e.message = tr("Opened %1").arg(trace_->path);
    runs()->addRun(std::move(e));
    row = runs()->rowCount() - 1;
  }
  if (const RunEntry* e = runs()->entry(row); e && e->engine && e->status == RunStatus::Done && e->missing.isEmpty()) {
    // A run that finished without some collection (CUPTI on a CPU run, or
    // refused on the GPU) says so where the run is reported.
    const QString missing = meta ? qs(missingCollection(*meta)) : QString();
    if (!missing.isEmpty()) {
      runs()->setMissing(e->id, missing);
      runPanel_->noteMissingCollection(missing);
      statusBar()->showMessage(missing, 15000);
    }
  }
  runsDock_->selectQuietly(row);
  addRecent(trace_->path);
}

void MainWindow::updateStatus() {
  QString text;
  if (trace_) {
    const EventStore& store = trace_->store();
    QStringList gpus;
    for (const DeviceProperties& d : store.meta().devices) gpus << QString::fromStdString(d.name);
    gpus.removeDuplicates();
    // The figures first, the path last: a narrow window cuts the path, never the figures.
    text = tr("%2%3 · loaded in %4 ms — %1")
               .arg(trace_->bundled ? tr("bundled sample %1").arg(trace_->displayName) : trace_->path,
                    qs(traceSummaryLine(store)),
                    gpus.isEmpty() ? QString() : QStringLiteral(" · ") + gpus.join(QStringLiteral(", ")))
               .arg(trace_->loadMs);
    const uint64_t bad = store.badTotal();  // errors only; notes are listed in the tooltip
    QString errors;
    QString notes;
    for (int k = 0; k < kBadKindCount; ++k) {
      const auto kind = static_cast<BadKind>(k);
      const BadCount& b = store.bad(kind);
      if (b.count == 0) continue;
      (EventStore::isError(kind) ? errors : notes) +=
          tr("\n  %1: %2 (first at byte %3%4)")
              .arg(qs(badKindName(kind)))
              .arg(b.count)
              .arg(b.firstOffset)
              .arg(b.firstDetail.empty() ? QString() : QStringLiteral(": ") + QString::fromStdString(b.firstDetail));
    }
    QString tip = bad == 0 ? tr("No event was rejected.") : tr("Events that could not be loaded:") + errors;
    if (!notes.isEmpty()) tip += tr("\nNotes (not errors):") + notes;
    badEvents_->setText(tr("Bad events: %1").arg(QLocale().toString(static_cast<qulonglong>(bad))));
    badEvents_->setToolTip(tip);
    badEvents_->setStyleSheet(bad > 0 ? QStringLiteral("QLabel { color: #b26a00; font-weight: bold; }") : QString());
  } else {
    text = tr("No trace loaded. Open one with File > Open.");
    badEvents_->clear();
  }
  // While a load runs, the progress bar beside says what is loading.
  summary_->setText(text);
  summary_->setToolTip(text);
}

// ---- the table's selection -------------------------------------------------------

void MainWindow::onTableRowChanged() {
  const KeyAverageRow* r = table_->currentRow();
  if (!r) {
    why_->showRow({});
    return;
  }
  const QString name = qs(r->name);
  const int grow = glossary_->model()->find(name, static_cast<int>(r->family));
  const QString gloss = grow >= 0 ? glossary_->model()->items()[static_cast<size_t>(grow)].text : QString();
  why_->showRow(*r, table_->groupBy(), gloss);
}

QString MainWindow::copySelection() {
  const QString text = table_->selectionText();
  if (!text.isEmpty()) {
    QApplication::clipboard()->setText(text);
    statusBar()->showMessage(tr("Copied %1 row(s)").arg(text.count(QLatin1Char('\n')) - 1), 3000);
  }
  return text;
}

// ---- writing files -----------------------------------------------------------------

bool MainWindow::exportTable(const QString& path, QString* error, std::optional<TableFormat> format) {
  return table_->exportRows(path, error, format);
}

bool MainWindow::exportTrace(const QString& path, QString* error) {
  if (!trace_) {
    if (error) *error = tr("no trace to export");
    return false;
  }
  return writeFileAtomically(path, traceJson(trace_->store()), error);
}

void MainWindow::showError(const QString& title, const QString& message) {
  statusBar()->showMessage(message, 15000);
  QMessageBox::critical(this, title, message);
}

void MainWindow::chooseExportTable() {
  if (viewTabs_->currentWidget() == kernels_) {
    // The Kernels tab is the table on screen: export it.
    const QString path = QFileDialog::getSaveFileName(this, tr("Export kernels"), QDir::homePath() + "/kernels.csv",
                                                      tr("CSV (*.csv);;JSON (*.json)"));
    if (path.isEmpty()) return;
    QString err;
    if (!kernels_->exportTo(path, &err))
      showError(tr("Export failed"), tr("The kernels were not exported: %1").arg(err));
    else
      statusBar()->showMessage(tr("Exported the kernels to %1").arg(path), 6000);
    return;
  }
  QString selected;
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export table"), QDir::homePath() + QStringLiteral("/table.csv"), exportFilter(), &selected);
  if (path.isEmpty()) return;
  QString file = path;
  std::optional<TableFormat> fmt = formatForPath(file);
  if (!fmt) {
    // No known extension: take the chosen filter's.
    if (selected.startsWith(QLatin1String("JSON")))
      fmt = TableFormat::Json, file += QStringLiteral(".json");
    else if (selected.startsWith(QLatin1String("Markdown")))
      fmt = TableFormat::Markdown, file += QStringLiteral(".md");
    else if (selected.startsWith(QLatin1String("Text")))
      fmt = TableFormat::Text, file += QStringLiteral(".txt");
    else
      fmt = TableFormat::Csv, file += QStringLiteral(".csv");
  }
  QString err;
  if (!exportTable(file, &err, fmt))
    showError(tr("Export failed"), tr("The table was not exported: %1").arg(err));
  else
    statusBar()->showMessage(tr("Exported %1 rows to %2").arg(table_->shownRowCount()).arg(file), 6000);
}

void MainWindow::chooseExportTrace() {
  if (!trace_) return;
  QString base = trace_->displayName;
  if (base.endsWith(QLatin1String(".gz"))) base.chop(3);
  if (base.endsWith(QLatin1String(".json"))) base.chop(5);
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export trace as Chrome JSON"),
      QDir::homePath() + QLatin1Char('/') + base + QStringLiteral(".export.json"), tr("Chrome trace JSON (*.json)"));
  if (path.isEmpty()) return;
  QString err;
  if (!exportTrace(path, &err))
    showError(tr("Export failed"), tr("The trace was not exported: %1").arg(err));
  else
    statusBar()->showMessage(tr("Exported the trace to %1").arg(path), 6000);
}

void MainWindow::chooseSaveRun() {
  int row = runsDock_->currentRow();
  if (!runs()->entry(row) || runs()->entry(row)->path.isEmpty())
    row = runs()->rowOfPath(trace_ ? trace_->path : QString());
  const RunEntry* e = runs()->entry(row);
  if (!e || e->path.isEmpty()) {
    showError(tr("Save run"), tr("Select a run that has a trace to save."));
    return;
  }
  const QString suggestion =
      QDir::homePath() + QLatin1Char('/') +
      (e->engine ? QStringLiteral("attnscope-run-%1.json").arg(e->id) : QFileInfo(e->path).fileName());
  const QString path = QFileDialog::getSaveFileName(this, tr("Save run"), suggestion, tr("Trace (*.json)"));
  if (path.isEmpty()) return;
  QString err;
  if (!saveRun(path, &err, row))
    showError(tr("Save failed"), tr("The run was not saved: %1").arg(err));
  else
    statusBar()->showMessage(tr("Saved to %1; reopen it with File > Open.").arg(path), 6000);
}

}  // namespace attnscope::ui
