#include "ui/shell/workbench.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "core/read/trace_reader.h"
#include "ui/panels/compare_view.h"
#include "ui/panels/explain_panel.h"
#include "ui/panels/glossary_dock.h"
#include "ui/panels/plots_panel.h"
#include "ui/panels/why_panel.h"
#include "ui/run/engine_meta.h"
#include "ui/run/run_panel.h"
#include "ui/run/runs_model.h"
#include "ui/shell/bundled_sample.h"
#include "ui/shell/export.h"
#include "ui/shell/main_window.h"
#include "ui/table/key_averages_model.h"
#include "ui/table/key_averages_proxy.h"

namespace attnscope::ui {
namespace {

constexpr int kMaxRecent = 10;
constexpr int kStateVersion = 1;

QString exportFilter() {
  return QObject::tr("CSV (*.csv);;JSON (*.json);;Markdown (*.md);;Text, torch's layout (*.txt)");
}

}  // namespace

Workbench::Workbench(MainWindow* window, WorkbenchOptions options) : QObject(window), w_(window), opt_(options) {
  runDir_.setAutoRemove(true);
  w_->setDockNestingEnabled(true);
  w_->setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks | QMainWindow::AllowNestedDocks);
  buildDocks();
  buildToolbars();
  buildMenus();
  defaultState_ = w_->saveState(kStateVersion);

  engineStatus_ = new QLabel(w_);
  engineStatus_->setObjectName(QStringLiteral("engineStatus"));
  w_->statusBar()->addPermanentWidget(engineStatus_);

  connect(w_, &MainWindow::traceShown, this, &Workbench::onTraceShown);
  connect(w_, &MainWindow::loadFailed, this, [this](const QString& m) {
    w_->statusBar()->showMessage(tr("Could not open: %1").arg(m), 8000);
    pendingShowRow_ = -1;
  });
  connect(w_->tableView()->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &Workbench::onTableSelection);
  connect(w_->proxy(), &QAbstractItemModel::modelReset, this, &Workbench::onTableSelection);
  w_->tableView()->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(w_->tableView(), &QWidget::customContextMenuRequested, this, &Workbench::showTableMenu);
  connect(w_, &MainWindow::headerMenuAboutToShow, this, [this](QMenu* menu, int column) {
    if (column < 0) return;
    const QString title = w_->model()->headerData(column, Qt::Horizontal).toString();
    menu->insertSeparator(menu->actions().value(0));
    QAction* look = new QAction(tr("Look up \"%1\" in the glossary").arg(title), menu);
    connect(look, &QAction::triggered, this, [this, title] {
      dock(QStringLiteral("glossaryDock"))->show();
      dock(QStringLiteral("glossaryDock"))->raise();
      glossary_->lookup(title);
    });
    menu->insertAction(menu->actions().value(0), look);
  });

  connect(runPanel_, &RunPanel::runStarted, this, &Workbench::onRunStarted);
  connect(runPanel_, &RunPanel::runFinished, this, &Workbench::onRunFinished);
  connect(runPanel_->runner(), &EngineRunner::progress, this,
          [this](int pct, const QString&) { engineStatus_->setText(tr("Engine run: %1%").arg(pct)); });
  connect(runPanel_->runner(), &EngineRunner::availabilityChanged, this, [this](const EngineAvailability& a) {
    engineStatus_->setText(!a.engineBuilt ? tr("Engine: unavailable")
                           : a.gpu        ? tr("Engine: GPU + CPU")
                                          : tr("Engine: CPU only"));
    engineStatus_->setToolTip(a.reason.isEmpty() ? a.program : a.reason);
    updateActions();
  });
  if (runDir_.isValid()) runPanel_->setOutputDir(runDir_.path());

  if (opt_.restoreSettings) restoreSettings();
  updateRecentMenu();
  updateActions();
  if (opt_.probeEngine) runPanel_->runner()->probe();
}

Workbench::~Workbench() {
  if (opt_.saveSettings) saveSettings();
}

QDockWidget* Workbench::dock(const QString& objectName) const {
  for (QDockWidget* d : docks_)
    if (d->objectName() == objectName) return d;
  return nullptr;
}

void Workbench::buildDocks() {
  auto makeDock = [this](const QString& name, const QString& title, QWidget* content, bool scroll) {
    auto* d = new QDockWidget(title, w_);
    d->setObjectName(name);
    d->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    if (scroll) {
      auto* area = new QScrollArea(d);
      area->setWidgetResizable(true);
      area->setFrameShape(QFrame::NoFrame);
      area->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
      area->setWidget(content);
      d->setWidget(area);
    } else {
      d->setWidget(content);
    }
    docks_ << d;
    return d;
  };

  runPanel_ = new RunPanel;
  QDockWidget* runDock = makeDock(QStringLiteral("runDock"), tr("Run"), runPanel_, true);

  runs_ = new RunsModel(this);
  auto* runsBox = new QWidget;
  auto* rl = new QVBoxLayout(runsBox);
  rl->setContentsMargins(6, 6, 6, 6);
  runsView_ = new QTableView(runsBox);
  runsView_->setObjectName(QStringLiteral("runsView"));
  runsView_->setModel(runs_);
  runsView_->setSelectionBehavior(QAbstractItemView::SelectRows);
  runsView_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  runsView_->verticalHeader()->hide();
  runsView_->verticalHeader()->setDefaultSectionSize(runsView_->fontMetrics().height() + 6);
  runsView_->setWordWrap(false);
  runsView_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  runsView_->horizontalHeader()->setSectionResizeMode(RunsModel::Summary, QHeaderView::Stretch);
  rl->addWidget(runsView_, 1);
  auto* rb = new QHBoxLayout;
  auto* show = new QPushButton(tr("Show"), runsBox);
  auto* cmp = new QPushButton(tr("Compare"), runsBox);
  cmp->setObjectName(QStringLiteral("compareRuns"));
  cmp->setToolTip(tr("Select two runs (Ctrl+click) and compare them"));
  auto* save = new QPushButton(tr("Save…"), runsBox);
  auto* reuse = new QPushButton(tr("Use settings"), runsBox);
  reuse->setToolTip(tr("Put this run's options into the Run panel"));
  for (auto* b : {show, cmp, save, reuse}) rb->addWidget(b);
  rb->addStretch(1);
  rl->addLayout(rb);
  connect(show, &QPushButton::clicked, this, [this] { showRunRow(runsView_->currentIndex().row()); });
  connect(runsView_, &QTableView::activated, this, [this](const QModelIndex& i) { showRunRow(i.row()); });
  connect(cmp, &QPushButton::clicked, this, &Workbench::compareSelected);
  connect(save, &QPushButton::clicked, this, &Workbench::chooseSaveRun);
  connect(reuse, &QPushButton::clicked, this, [this] {
    const RunEntry* e = runs_->entry(runsView_->currentIndex().row());
    if (e && e->config) {
      runPanel_->setConfig(*e->config);
      dock(QStringLiteral("runDock"))->raise();
    } else {
      w_->statusBar()->showMessage(tr("This run has no engine settings (a torch.profiler trace)."), 5000);
    }
  });
  connect(runsView_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &Workbench::updateActions);
  QDockWidget* runsDock = makeDock(QStringLiteral("runsDock"), tr("Runs"), runsBox, false);

  explain_ = new ExplainPanel;
  QDockWidget* explainDock = makeDock(QStringLiteral("explainDock"), tr("Explanation"), explain_, false);
  why_ = new WhyPanel;
  QDockWidget* whyDock = makeDock(QStringLiteral("whyDock"), tr("Why is this zero?"), why_, false);
  plots_ = new PlotsPanel;
  QDockWidget* plotsDock = makeDock(QStringLiteral("plotsDock"), tr("Plots"), plots_, false);
  compare_ = new CompareView;
  QDockWidget* compareDock = makeDock(QStringLiteral("compareDock"), tr("Compare"), compare_, false);
  glossary_ = new GlossaryDock;
  QDockWidget* glossaryDock = makeDock(QStringLiteral("glossaryDock"), tr("Glossary"), glossary_, false);

  auto toGlossary = [this](const QString& key) {
    dock(QStringLiteral("glossaryDock"))->show();
    dock(QStringLiteral("glossaryDock"))->raise();
    glossary_->lookup(key);
  };
  connect(explain_, &ExplainPanel::glossaryRequested, this, toGlossary);
  connect(why_, &WhyPanel::glossaryRequested, this, toGlossary);

  // Default layout: every dock in the bottom area, in two tab groups (the
  // run side and the explanation side), so that the central area keeps the
  // window's full width at 1280x800.
  w_->setCorner(Qt::BottomLeftCorner, Qt::BottomDockWidgetArea);
  w_->setCorner(Qt::BottomRightCorner, Qt::BottomDockWidgetArea);
  w_->addDockWidget(Qt::BottomDockWidgetArea, runDock);
  w_->addDockWidget(Qt::BottomDockWidgetArea, explainDock);
  w_->splitDockWidget(runDock, explainDock, Qt::Horizontal);
  w_->tabifyDockWidget(runDock, runsDock);
  w_->tabifyDockWidget(runsDock, compareDock);
  for (QDockWidget* d : {whyDock, plotsDock, glossaryDock}) w_->tabifyDockWidget(explainDock, d);
  runDock->raise();
  explainDock->raise();
  w_->resizeDocks({runDock, explainDock}, {800, 480}, Qt::Horizontal);
  w_->resizeDocks({runDock}, {250}, Qt::Vertical);  // leaves the table ~6 rows at 1280x800
}

void Workbench::buildToolbars() {
  QToolBar* main = w_->addToolBar(tr("Main"));
  main->setObjectName(QStringLiteral("mainToolBar"));
  main->setToolButtonStyle(Qt::ToolButtonTextOnly);
  main->setMovable(false);

  runAct_ = new QAction(tr("&Run"), this);
  runAct_->setShortcuts({QKeySequence(Qt::Key_F5), QKeySequence(Qt::CTRL | Qt::Key_R)});
  runAct_->setToolTip(tr("Run the engine with the Run panel's settings (F5)"));
  connect(runAct_, &QAction::triggered, this, [this] {
    dock(QStringLiteral("runDock"))->show();
    runPanel_->startRun();
  });
  cancelAct_ = new QAction(tr("&Cancel run"), this);
  cancelAct_->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F5));
  connect(cancelAct_, &QAction::triggered, runPanel_, &RunPanel::cancelRun);
  compareAct_ = new QAction(tr("Co&mpare runs"), this);
  compareAct_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
  compareAct_->setToolTip(tr("Compare the two runs selected in the Runs list (Ctrl+K)"));
  connect(compareAct_, &QAction::triggered, this, &Workbench::compareSelected);
  exportTableAct_ = new QAction(tr("&Export Table…"), this);
  exportTableAct_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  connect(exportTableAct_, &QAction::triggered, this, &Workbench::chooseExportTable);
  exportTraceAct_ = new QAction(tr("Export &Trace (Chrome JSON)…"), this);
  exportTraceAct_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
  connect(exportTraceAct_, &QAction::triggered, this, &Workbench::chooseExportTrace);
  saveRunAct_ = new QAction(tr("&Save Run…"), this);
  saveRunAct_->setShortcut(QKeySequence::Save);
  connect(saveRunAct_, &QAction::triggered, this, &Workbench::chooseSaveRun);

  main->addAction(runAct_);
  main->addAction(cancelAct_);
  main->addSeparator();
  main->addAction(compareAct_);
  main->addAction(exportTableAct_);

  QToolBar* table = w_->addToolBar(tr("Table"));
  table->setObjectName(QStringLiteral("tableToolBar"));
  table->setMovable(false);
  attribution_ = new QComboBox(table);
  attribution_->setObjectName(QStringLiteral("attribution"));
  attribution_->addItem(tr("torch attribution"), static_cast<int>(Attribution::Torch));
  attribution_->addItem(tr("corrected attribution"), static_cast<int>(Attribution::Corrected));
  attribution_->setToolTip(
      tr("torch: exactly torch's key_averages(). corrected: every kernel is Self CUDA of "
         "the op that launched it; no double counting"));
  connect(attribution_, &QComboBox::currentIndexChanged, this,
          [this] { w_->setAttribution(static_cast<Attribution>(attribution_->currentData().toInt())); });
  timeUnit_ = new QComboBox(table);
  timeUnit_->setObjectName(QStringLiteral("timeUnit"));
  timeUnit_->addItem(tr("auto (torch)"), static_cast<int>(KeyAveragesModel::TimeUnit::Auto));
  timeUnit_->addItem(QStringLiteral("µs"), static_cast<int>(KeyAveragesModel::TimeUnit::Us));
  timeUnit_->addItem(QStringLiteral("ms"), static_cast<int>(KeyAveragesModel::TimeUnit::Ms));
  timeUnit_->addItem(QStringLiteral("s"), static_cast<int>(KeyAveragesModel::TimeUnit::S));
  timeUnit_->setToolTip(tr("Unit of the time columns"));
  connect(timeUnit_, &QComboBox::currentIndexChanged, this, [this] {
    w_->model()->setTimeUnit(static_cast<KeyAveragesModel::TimeUnit>(timeUnit_->currentData().toInt()));
    for (int c = 0; c < w_->model()->columnCount(); ++c)
      if (KeyAveragesModel::isTime(KeyAveragesModel::columnAt(c))) w_->tableView()->resizeColumnToContents(c);
  });
  topN_ = new QSpinBox(table);
  topN_->setObjectName(QStringLiteral("topN"));
  topN_->setRange(0, 100000);
  topN_->setSpecialValueText(tr("all rows"));
  topN_->setPrefix(tr("top "));
  topN_->setToolTip(tr("Show only the first N rows by the current sort (0: all)"));
  connect(topN_, &QSpinBox::valueChanged, this, [this](int n) { w_->proxy()->setTopN(n); });
  auto* columns = new QAction(tr("Columns"), this);
  columns->setToolTip(tr("Choose the table's columns (also: right-click a column header)"));
  connect(columns, &QAction::triggered, this, [this] {
    // The header's own menu is the column chooser.
    auto* header = w_->tableView()->horizontalHeader();
    emit header->customContextMenuRequested(QPoint(header->sectionViewportPosition(0) + 4, header->height() / 2));
  });
  table->addWidget(new QLabel(tr(" Attribution: "), table));
  table->addWidget(attribution_);
  table->addWidget(new QLabel(tr("  Time: "), table));
  table->addWidget(timeUnit_);
  table->addWidget(new QLabel(tr("  Rows: "), table));
  table->addWidget(topN_);
  table->addSeparator();
  table->addAction(columns);
}

void Workbench::buildMenus() {
  QMenuBar* bar = w_->menuBar();
  QMenu* file = bar->actions().isEmpty() ? bar->addMenu(tr("&File")) : bar->actions().front()->menu();
  // Insert before Quit (the last action and its separator).
  QAction* before = nullptr;
  for (QAction* a : file->actions())
    if (a->menuRole() == QAction::QuitRole) before = a;
  recentMenu_ = new QMenu(tr("Open &Recent"), file);
  file->insertMenu(before, recentMenu_);
  file->insertSeparator(before);
  file->insertAction(before, saveRunAct_);
  file->insertAction(before, exportTableAct_);
  file->insertAction(before, exportTraceAct_);
  file->insertSeparator(before);

  QMenu* edit = bar->addMenu(tr("&Edit"));
  QAction* copy = edit->addAction(tr("&Copy Rows"), this, [this] { copySelection(); });
  copy->setShortcut(QKeySequence::Copy);
  copy->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  w_->tableView()->addAction(copy);
  QAction* find = edit->addAction(tr("&Find in Table"), this, [this] {
    if (auto* f = w_->findChild<QLineEdit*>(QStringLiteral("filter"))) {
      f->setFocus();
      f->selectAll();
    }
  });
  find->setShortcut(QKeySequence::Find);
  QAction* findGloss = edit->addAction(tr("Search the &Glossary"), this, [this] {
    dock(QStringLiteral("glossaryDock"))->show();
    dock(QStringLiteral("glossaryDock"))->raise();
    if (auto* s = glossary_->findChild<QLineEdit*>(QStringLiteral("glossarySearch"))) s->setFocus();
  });
  findGloss->setShortcut(QKeySequence::HelpContents);

  QMenu* run = bar->addMenu(tr("&Run"));
  run->addAction(runAct_);
  run->addAction(cancelAct_);
  run->addSeparator();
  QMenu* presets = run->addMenu(tr("&Presets"));
  presets->addAction(tr("Only &SOFTMAX PASS wrapped, no sync"), this,
                     [this] { runPanel_->applyPreset(RunPreset::WrapSoftmaxOnly); });
  presets->addAction(tr("&Nothing wrapped, sync at the end"), this,
                     [this] { runPanel_->applyPreset(RunPreset::SyncAtEnd); });
  presets->addAction(tr("&Everything wrapped"), this, [this] { runPanel_->applyPreset(RunPreset::WrapEveryStep); });
  run->addSeparator();
  run->addAction(compareAct_);

  viewMenu_ = bar->addMenu(tr("&View"));
  for (QDockWidget* d : docks_) viewMenu_->addAction(d->toggleViewAction());
  viewMenu_->addSeparator();
  viewMenu_->addAction(tr("&Reset Layout"), this, &Workbench::resetLayout);

  QMenu* help = bar->addMenu(tr("&Help"));
  help->addAction(tr("&Glossary"), this, [this] {
    dock(QStringLiteral("glossaryDock"))->show();
    dock(QStringLiteral("glossaryDock"))->raise();
  });
  help->addAction(tr("&About attnscope"), this, [this] {
    QMessageBox::about(w_, tr("About attnscope"),
                       tr("<b>attnscope %1</b><p>Reads torch.profiler traces, reproduces key_averages(), "
                          "and explains where CUDA time goes. Runs use %2.</p>")
                           .arg(QApplication::applicationVersion(), runPanel_->runner()->program().toHtmlEscaped()));
  });
}

void Workbench::resetLayout() {
  w_->restoreState(defaultState_, kStateVersion);
  for (QDockWidget* d : docks_) d->show();
  dock(QStringLiteral("runDock"))->raise();
  dock(QStringLiteral("explainDock"))->raise();
}

void Workbench::restoreSettings() {
  QSettings s;
  const QByteArray geo = s.value(QStringLiteral("window/geometry")).toByteArray();
  if (!geo.isEmpty()) w_->restoreGeometry(geo);
  const QByteArray state = s.value(QStringLiteral("window/state")).toByteArray();
  if (!state.isEmpty()) w_->restoreState(state, kStateVersion);
  recent_ = s.value(QStringLiteral("recentFiles")).toStringList();
  const QString args = s.value(QStringLiteral("run/args")).toString();
  if (!args.isEmpty()) {
    std::vector<std::string> v;
    for (const QString& a : args.split(QLatin1Char(' '), Qt::SkipEmptyParts)) v.push_back(a.toStdString());
    RunConfig c;
    if (!parseRunArgs(v, &c)) runPanel_->setConfig(c);
  }
  const int unit = timeUnit_->findData(s.value(QStringLiteral("table/timeUnit"), 0).toInt());
  if (unit >= 0) timeUnit_->setCurrentIndex(unit);
}

void Workbench::saveSettings() {
  QSettings s;
  s.setValue(QStringLiteral("window/geometry"), w_->saveGeometry());
  s.setValue(QStringLiteral("window/state"), w_->saveState(kStateVersion));
  s.setValue(QStringLiteral("recentFiles"), recent_);
  QStringList args;
  for (const std::string& a : toRunArgs(runPanel_->config())) args << QString::fromStdString(a);
  s.setValue(QStringLiteral("run/args"), args.join(QLatin1Char(' ')));
  s.setValue(QStringLiteral("table/timeUnit"), timeUnit_->currentData());
}

void Workbench::addRecent(const QString& path) {
  if (path.startsWith(QLatin1Char(':'))) return;
  const QString abs = QFileInfo(path).absoluteFilePath();
  recent_.removeAll(abs);
  recent_.prepend(abs);
  while (recent_.size() > kMaxRecent) recent_.removeLast();
  updateRecentMenu();
  if (opt_.saveSettings) QSettings().setValue(QStringLiteral("recentFiles"), recent_);
}

void Workbench::updateRecentMenu() {
  recentMenu_->clear();
  int n = 0;
  for (const QString& p : recent_) {
    ++n;
    QAction* a = recentMenu_->addAction(QStringLiteral("&%1 %2").arg(n % 10).arg(QFileInfo(p).fileName()), this,
                                        [this, p] { w_->openTrace(p); });
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

void Workbench::updateActions() {
  const bool have = w_->snapshot() != nullptr;
  exportTableAct_->setEnabled(have);
  exportTraceAct_->setEnabled(have);
  saveRunAct_->setEnabled(have);
  const bool running = runPanel_->runner()->isRunning();
  const EngineAvailability& a = runPanel_->runner()->availability();
  runAct_->setEnabled(!running && (!a.probed || a.engineBuilt));
  runAct_->setToolTip(a.probed && !a.engineBuilt ? a.reason : tr("Run the engine with the Run panel's settings (F5)"));
  cancelAct_->setEnabled(running);
  compareAct_->setEnabled(runsView_->selectionModel()->selectedRows().size() == 2);
}

void Workbench::onTraceShown() {
  const auto& snap = w_->snapshot();
  if (!snap) return;
  stores_[snap->path] = snap->store;
  if (stores_.size() > 8) {
    // Keep the cache small: drop entries that are not the one shown.
    for (auto it = stores_.begin(); it != stores_.end() && stores_.size() > 8;)
      it = it->first == snap->path ? std::next(it) : stores_.erase(it);
  }
  int row = runs_->rowOfPath(snap->path);
  if (row < 0) {
    RunEntry e;
    e.status = RunStatus::Opened;
    e.path = snap->path;
    e.bundled = snap->bundled;
    const auto meta = parseEngineMeta(snap->store->meta().attnscopeJson);
    if (meta && meta->config) {
      e.config = meta->config;
      e.summary = tr("%1 (engine trace %2)").arg(RunsModel::configSummary(*meta->config), snap->displayName);
    } else {
      e.summary = snap->bundled ? tr("bundled sample %1").arg(snap->displayName) : snap->displayName;
    }
    e.message = tr("Opened %1").arg(snap->path);
    runs_->addRun(std::move(e));
    row = runs_->rowCount() - 1;
  }
  if (const RunEntry* e = runs_->entry(row); e && e->engine && e->status == RunStatus::Done && e->missing.isEmpty()) {
    // A run that finished without some collection (CUPTI on a CPU run, or
    // refused on the GPU) says so where the run is reported.
    const auto meta = parseEngineMeta(snap->store->meta().attnscopeJson);
    const QString missing = meta ? missingCollection(*meta) : QString();
    if (!missing.isEmpty()) {
      runs_->setMissing(e->id, missing);
      runPanel_->noteMissingCollection(missing);
      w_->statusBar()->showMessage(missing, 15000);
    }
  }
  {
    const QSignalBlocker block(runsView_->selectionModel());
    runsView_->selectRow(row);
  }
  pendingShowRow_ = -1;
  addRecent(snap->path);
  if (snap->analysis)
    explain_->setAnalysis(snap->store, snap->analysis);
  else
    explain_->setStore(snap->store);
  why_->setStore(snap->store);
  plots_->setStore(snap->store);
  updateActions();
  onTableSelection();
}

void Workbench::onRunStarted(const RunConfig& cfg, const QString& outPath) {
  RunEntry e;
  e.engine = true;
  e.config = cfg;
  e.summary = RunsModel::configSummary(cfg);
  e.status = RunStatus::Running;
  e.message = tr("Writing %1").arg(outPath);
  runningId_ = runs_->addRun(std::move(e));
  runsView_->scrollToBottom();
  updateActions();
}

void Workbench::onRunFinished(const RunConfig&, const RunOutcome& o) {
  runs_->finishRun(runningId_, o);
  const int row = runs_->rowOfId(runningId_);
  runningId_ = 0;
  engineStatus_->setText(tr("Engine run: %1").arg(runStatusText(o.status)));
  if (o.status == RunStatus::Done) {
    w_->statusBar()->showMessage(o.message, 8000);
    showRunRow(row);
  } else {
    w_->statusBar()->showMessage(o.message, 15000);
    dock(QStringLiteral("runDock"))->raise();
  }
  updateActions();
}

void Workbench::showRunRow(int row) {
  const RunEntry* e = runs_->entry(row);
  if (!e) return;
  if (e->path.isEmpty()) {
    w_->statusBar()->showMessage(
        tr("Run %1 has no trace: %2").arg(e->id).arg(e->message.isEmpty() ? runStatusText(e->status) : e->message),
        8000);
    return;
  }
  pendingShowRow_ = row;
  if (e->bundled)
    w_->openBundledSample();
  else
    w_->openTrace(e->path);
}

void Workbench::onTableSelection() {
  const QModelIndex cur = w_->tableView()->currentIndex();
  if (!cur.isValid()) {
    why_->showRow({});
    return;
  }
  const QModelIndex src = w_->proxy()->mapToSource(cur);
  const KeyAverageRow* r = w_->model()->rowAt(src.row());
  if (!r) return;
  const QString name = QString::fromStdString(r->name);
  const int grow = glossary_->model()->find(name, static_cast<int>(r->family));
  const QString gloss = grow >= 0 ? glossary_->model()->items()[static_cast<size_t>(grow)].text : QString();
  why_->showRow(name, gloss);
}

void Workbench::showTableMenu(const QPoint& pos) {
  const QModelIndex idx = w_->tableView()->indexAt(pos);
  QMenu menu(w_);
  const KeyAverageRow* r = idx.isValid() ? w_->model()->rowAt(w_->proxy()->mapToSource(idx).row()) : nullptr;
  if (r) {
    const QString name = QString::fromStdString(r->name);
    const int family = static_cast<int>(r->family);
    menu.addAction(tr("Why is this zero? (%1)").arg(name.left(40)), this, [this] {
      dock(QStringLiteral("whyDock"))->show();
      dock(QStringLiteral("whyDock"))->raise();
      onTableSelection();
    });
    menu.addAction(tr("Look up in the glossary"), this, [this, name, family] {
      dock(QStringLiteral("glossaryDock"))->show();
      dock(QStringLiteral("glossaryDock"))->raise();
      glossary_->lookup(name, family);
    });
    menu.addSeparator();
  }
  menu.addAction(tr("Copy rows"), this, [this] { copySelection(); });
  menu.addAction(exportTableAct_);
  menu.exec(w_->tableView()->viewport()->mapToGlobal(pos));
}

QString Workbench::copySelection() {
  const QString text = selectionAsTsv(*w_->tableView());
  if (!text.isEmpty()) {
    QApplication::clipboard()->setText(text);
    w_->statusBar()->showMessage(tr("Copied %1 row(s)").arg(text.count(QLatin1Char('\n')) - 1), 3000);
  }
  return text;
}

void Workbench::setTimeUnit(int unit) { timeUnit_->setCurrentIndex(timeUnit_->findData(unit)); }
void Workbench::setTopN(int n) { topN_->setValue(n); }

bool Workbench::exportTable(const QString& path, QString* error, std::optional<TableFormat> format) {
  const auto& ka = w_->model()->averages();
  if (!ka) {
    if (error) *error = tr("no table to export");
    return false;
  }
  const auto fmt = format ? format : formatForPath(path);
  if (!fmt) {
    if (error) *error = tr("%1: unknown table format (use .csv, .json, .md or .txt)").arg(path);
    return false;
  }
  std::vector<const KeyAverageRow*> rows;
  for (int r = 0; r < w_->proxy()->rowCount(); ++r) {
    const KeyAverageRow* row = w_->model()->rowAt(w_->proxy()->mapToSource(w_->proxy()->index(r, 0)).row());
    if (row) rows.push_back(row);
  }
  const int sortCol = w_->proxy()->sortColumn();
  const Column by = sortCol >= 0 ? KeyAveragesModel::columnAt(sortCol) : Column::SelfDevice;
  const QByteArray data = renderRows(*ka, rows, *fmt, by, w_->proxy()->sortOrder() == Qt::AscendingOrder);
  return writeFileAtomically(path, data, error);
}

bool Workbench::exportTrace(const QString& path, QString* error) {
  const auto& snap = w_->snapshot();
  if (!snap) {
    if (error) *error = tr("no trace to export");
    return false;
  }
  return writeFileAtomically(path, traceJson(*snap->store), error);
}

bool Workbench::saveRun(const QString& path, QString* error, int row) {
  const RunEntry* e =
      runs_->entry(row >= 0 ? row : runs_->rowOfPath(w_->snapshot() ? w_->snapshot()->path : QString()));
  QByteArray data;
  if (e && !e->bundled && !e->path.isEmpty()) {
    QFile f(e->path);
    if (!f.open(QIODevice::ReadOnly)) {
      if (error) *error = tr("%1: %2").arg(e->path, f.errorString());
      return false;
    }
    data = f.readAll();
  } else if (e && e->bundled) {
    data = bundledSampleJson();
  } else {
    if (error) *error = tr("no run to save");
    return false;
  }
  if (!writeFileAtomically(path, data, error)) return false;
  runs_->markSaved(e->id, path);
  addRecent(path);
  return true;
}

void Workbench::showError(const QString& title, const QString& message) {
  w_->statusBar()->showMessage(message, 15000);
  QMessageBox::critical(w_, title, message);
}

void Workbench::chooseExportTable() {
  QString selected;
  const QString path = QFileDialog::getSaveFileName(
      w_, tr("Export table"), QDir::homePath() + QStringLiteral("/table.csv"), exportFilter(), &selected);
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
    w_->statusBar()->showMessage(tr("Exported %1 rows to %2").arg(w_->proxy()->rowCount()).arg(file), 6000);
}

void Workbench::chooseExportTrace() {
  const auto& snap = w_->snapshot();
  if (!snap) return;
  QString base = snap->displayName;
  if (base.endsWith(QLatin1String(".gz"))) base.chop(3);
  if (base.endsWith(QLatin1String(".json"))) base.chop(5);
  const QString path = QFileDialog::getSaveFileName(
      w_, tr("Export trace as Chrome JSON"),
      QDir::homePath() + QLatin1Char('/') + base + QStringLiteral(".export.json"), tr("Chrome trace JSON (*.json)"));
  if (path.isEmpty()) return;
  QString err;
  if (!exportTrace(path, &err))
    showError(tr("Export failed"), tr("The trace was not exported: %1").arg(err));
  else
    w_->statusBar()->showMessage(tr("Exported the trace to %1").arg(path), 6000);
}

void Workbench::chooseSaveRun() {
  int row = runsView_->currentIndex().row();
  if (!runs_->entry(row) || runs_->entry(row)->path.isEmpty())
    row = runs_->rowOfPath(w_->snapshot() ? w_->snapshot()->path : QString());
  const RunEntry* e = runs_->entry(row);
  if (!e || e->path.isEmpty()) {
    showError(tr("Save run"), tr("Select a run that has a trace to save."));
    return;
  }
  const QString suggestion =
      QDir::homePath() + QLatin1Char('/') +
      (e->engine ? QStringLiteral("attnscope-run-%1.json").arg(e->id) : QFileInfo(e->path).fileName());
  const QString path = QFileDialog::getSaveFileName(w_, tr("Save run"), suggestion, tr("Trace (*.json)"));
  if (path.isEmpty()) return;
  QString err;
  if (!saveRun(path, &err, row))
    showError(tr("Save failed"), tr("The run was not saved: %1").arg(err));
  else
    w_->statusBar()->showMessage(tr("Saved to %1; reopen it with File > Open.").arg(path), 6000);
}

void Workbench::loadStore(const QString& path, std::function<void(std::shared_ptr<const EventStore>, QString)> done) {
  auto it = stores_.find(path);
  if (it != stores_.end()) {
    done(it->second, {});
    return;
  }
  using Result = std::pair<std::shared_ptr<const EventStore>, QString>;
  auto* watcher = new QFutureWatcher<Result>(this);
  connect(watcher, &QFutureWatcher<Result>::finished, this, [this, watcher, path, done] {
    Result r = watcher->result();
    watcher->deleteLater();
    if (r.first) stores_[path] = r.first;
    done(r.first, r.second);
  });
  const QByteArray bundled = path == bundledSamplePath() ? bundledSampleJson() : QByteArray();
  watcher->setFuture(QtConcurrent::run([path, bundled]() -> Result {
    try {
      LoadResult lr = bundled.isEmpty()
                          ? loadTrace(path.toStdString())
                          : parseTrace(std::string_view(bundled.constData(), static_cast<size_t>(bundled.size())),
                                       path.toStdString());
      if (!lr.ok()) return {nullptr, lr.error ? QString::fromStdString(lr.error->what()) : path};
      return {std::make_shared<const EventStore>(std::move(*lr.store)), {}};
    } catch (const std::exception& e) {
      return {nullptr, path + QStringLiteral(": ") + QString::fromUtf8(e.what())};
    }
  }));
}

bool Workbench::compareRows(int rowA, int rowB, QString* error) {
  const RunEntry* a = runs_->entry(rowA);
  const RunEntry* b = runs_->entry(rowB);
  if (!a || !b || a->path.isEmpty() || b->path.isEmpty()) {
    if (error) *error = tr("both runs need a trace (finished runs or opened files)");
    return false;
  }
  const QString la = tr("#%1 %2").arg(a->id).arg(a->summary), lb = tr("#%1 %2").arg(b->id).arg(b->summary);
  const QString pa = a->path, pb = b->path;
  dock(QStringLiteral("compareDock"))->show();
  dock(QStringLiteral("compareDock"))->raise();
  compare_->setMessage(tr("Loading…"));
  loadStore(pa, [this, la, lb, pb](std::shared_ptr<const EventStore> sa, QString ea) {
    if (!sa) {
      compare_->setMessage(tr("Could not load A: %1").arg(ea));
      return;
    }
    loadStore(pb, [this, la, lb, sa](std::shared_ptr<const EventStore> sb, QString eb) {
      if (!sb) {
        compare_->setMessage(tr("Could not load B: %1").arg(eb));
        return;
      }
      compare_->compare(la, sa, lb, sb);
    });
  });
  return true;
}

void Workbench::compareSelected() {
  QModelIndexList rows = runsView_->selectionModel()->selectedRows();
  if (rows.size() != 2) {
    dock(QStringLiteral("runsDock"))->show();
    dock(QStringLiteral("runsDock"))->raise();
    w_->statusBar()->showMessage(tr("Select exactly two runs in the Runs list (Ctrl+click) to compare them."), 6000);
    return;
  }
  std::sort(rows.begin(), rows.end(), [](const QModelIndex& x, const QModelIndex& y) { return x.row() < y.row(); });
  QString err;
  if (!compareRows(rows[0].row(), rows[1].row(), &err)) w_->statusBar()->showMessage(err, 6000);
}

}  // namespace attnscope::ui
