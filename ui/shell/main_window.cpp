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
#include "ui/common/screen_fit.h"
#include "ui/common/text.h"
#include "ui/common/wheel_guard.h"
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
#include "ui/shell/pair_loader.h"
#include "ui/table/key_averages_model.h"
#include "ui/table/key_averages_proxy.h"
#include "ui/table/table_pane.h"
#include "ui/timeline/table_link.h"
#include "ui/timeline/timeline_pane.h"
#include "ui/views/views_panels.h"

namespace attnscope::ui {
using namespace main_window_detail;
namespace {

const char* kNoteStyle =
    "QLabel { background: #e8f1fb; color: #0b3d6e; border: 1px solid #a9c8ec;"
    " border-radius: 4px; padding: 5px 8px; }";
const char* kErrorStyle =
    "QFrame#errorBar { background: #fdecea; border: 1px solid #f1aeb5; border-radius: 4px; }"
    " QFrame#errorBar QLabel { color: #8a1c14; background: transparent; }";

}  // namespace

MainWindow::MainWindow(MainWindowOptions options, QWidget* parent)
    : QMainWindow(parent), opt_(options), loader_(new TraceLoader(this)) {
  setWindowTitle(QStringLiteral("attnscope"));
  setAcceptDrops(true);
  setCentralWidget(buildCentral());
  buildActions();
  buildDocks();
  buildToolbar();
  buildMenus();
  buildStatusBar();
  defaultState_ = saveState(kStateVersion);

  connect(loader_, &TraceLoader::started, this, [this](const QString& path) {
    loadingPath_ = path;
    loadBar_->start(path, loader_->progress());
    updateStatus();
  });
  connect(loader_, &TraceLoader::loaded, this, &MainWindow::showTrace);
  connect(loader_, &TraceLoader::failed, this, &MainWindow::showLoadError);
  connect(loader_, &TraceLoader::cancelled, this, [this](const QString& path) {
    loadingPath_.clear();
    loadBar_->stop();
    updateStatus();
    statusBar()->showMessage(
        trace_ ? tr("Stopped loading %1; still showing %2.").arg(QFileInfo(path).fileName(), trace_->displayName)
               : tr("Stopped loading %1.").arg(QFileInfo(path).fileName()),
        8000);
    emit loadCancelled(path);
  });
  connect(loadBar_, &LoadProgressBar::cancelRequested, loader_, &TraceLoader::cancel);

  runPanel_->setOutputDirMaker([this] {
    if (!runDir_)
      runDir_ = std::make_unique<QTemporaryDir>(QDir::temp().filePath(QStringLiteral("attnscope-runs-XXXXXX")));
    return runDir_->isValid() ? runDir_->path() : QString();
  });
  // The wheel scrolls panels; a dropdown or spin box takes it only once focused.
  guardWheel(this);
  // A laptop's size, inside the screen with the title bar and the desktop's panels (a restored
  // geometry too: the screen may be smaller now).
  fitToScreen(this, QSize(1280, 800));
  if (opt_.restoreSettings) restoreSettings();
  keepInsideScreen(this);
  updateRecentMenu();
  updateActions();
  updateStatus();
  if (opt_.probeEngine) runPanel_->runner()->probe();
}

MainWindow::~MainWindow() {
  if (opt_.saveSettings) saveSettings();
}

// ---- the central area -------------------------------------------------------

QWidget* MainWindow::buildCentral() {
  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(8, 6, 8, 4);
  layout->setSpacing(6);

  note_ = new QLabel(central);
  note_->setObjectName(QStringLiteral("sampleNote"));
  note_->setWordWrap(true);
  note_->setTextFormat(Qt::RichText);
  note_->setStyleSheet(QString::fromLatin1(kNoteStyle));
  note_->hide();
  layout->addWidget(note_);

  errorBar_ = new QFrame(central);
  errorBar_->setObjectName(QStringLiteral("errorBar"));
  errorBar_->setStyleSheet(QString::fromLatin1(kErrorStyle));
  auto* errLayout = new QHBoxLayout(errorBar_);
  errLayout->setContentsMargins(8, 4, 4, 4);
  errorText_ = new QLabel(errorBar_);
  errorText_->setObjectName(QStringLiteral("errorText"));
  errorText_->setWordWrap(true);
  errorText_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* dismiss = new QToolButton(errorBar_);
  dismiss->setText(QStringLiteral("Dismiss"));
  dismiss->setAutoRaise(true);
  connect(dismiss, &QToolButton::clicked, errorBar_, &QWidget::hide);
  errLayout->addWidget(errorText_, 1);
  errLayout->addWidget(dismiss, 0, Qt::AlignTop);
  errorBar_->hide();
  layout->addWidget(errorBar_);

  // The timeline on top, the table below; selection shared.
  auto* split = new QSplitter(Qt::Vertical, central);
  split->setObjectName(QStringLiteral("timelineSplitter"));
  timeline_ = new TimelinePane(split);
  // Under the timeline: torch's operator table and the views next to it, as tabs.
  viewTabs_ = new QTabWidget(split);
  viewTabs_->setObjectName(QStringLiteral("viewTabs"));
  viewTabs_->setDocumentMode(true);
  steps_ = new StepsView(viewTabs_);
  table_ = new TablePane(viewTabs_);
  overview_ = new OverviewPanel(viewTabs_);
  kernels_ = new KernelsPanel(viewTabs_);
  memory_ = new MemoryPanel(viewTabs_);
  modules_ = new ModulesPanel(viewTabs_);
  viewTabs_->addTab(steps_, tr("Steps"));
  viewTabs_->setTabToolTip(0, tr("Each step: what torch's table shows for it, and what it really cost"));
  viewTabs_->addTab(table_, tr("Operators"));
  viewTabs_->addTab(overview_, tr("Overview"));
  viewTabs_->addTab(kernels_, tr("Kernels"));
  viewTabs_->addTab(memory_, tr("Memory"));
  viewTabs_->addTab(modules_, tr("Modules"));
  split->addWidget(timeline_);
  split->addWidget(viewTabs_);
  // A view's charts and tables need room: opening one gives the tabs at least 55% of the height
  // (the user's own split stays when it already does). Each tab keeps its own split: back on
  // Operators, the timeline has the height it had there.
  connect(viewTabs_, &QTabWidget::currentChanged, this, [this, split](int index) {
    const QList<int> sizes = split->sizes();
    if (sizes.size() != 2) return;
    if (shownTab_ >= 0) tabSplits_[shownTab_] = sizes;
    shownTab_ = index;
    const int total = sizes[0] + sizes[1];
    const auto kept = tabSplits_.find(index);
    if (kept != tabSplits_.end() && kept->second.size() == 2 && kept->second[0] > 0) {
      // The timeline's own height, as the user left it on this tab (the tabs take what is left).
      const int top = std::min(kept->second[0], total * 9 / 10);
      split->setSizes({top, total - top});
    } else if (qobject_cast<ViewPanel*>(viewTabs_->widget(index)) && sizes[1] < total * 11 / 20) {
      split->setSizes({total * 9 / 20, total - total * 9 / 20});
    }
  });
  for (ViewPanel* p : std::initializer_list<ViewPanel*>{overview_, kernels_, memory_, modules_}) {
    connect(p, &ViewPanel::highlightRequested, this, [this](std::vector<EventId> ids) {
      TimelineView* v = timeline_->view();
      const EventId first = ids.empty() ? kNoEvent : ids.front();
      v->setHighlighted(std::move(ids));
      if (first != kNoEvent) v->selectEvent(first, true);
    });
    connect(p, &ViewPanel::timeRequested, this, [this](qint64 t) {
      TimelineView* v = timeline_->view();
      const int64_t span = v->axis().span();
      v->zoomToRange(t - span / 2, t + span / 2, 0.0);
    });
  }
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  // Proportions from the start (not the tabs' size hints): the timeline gets half.
  split->setSizes({500, 500});
  split->setChildrenCollapsible(false);
  connect(split, &QSplitter::splitterMoved, this, [this] { userSplit_ = true; });
  // A step chosen in the Steps view: its band and the work it launched on the timeline, its card in
  // the Explanation.
  connect(steps_, &StepsView::stepChosen, this, [this](int step) {
    timeline_->explainStep(step);
    showDock(QStringLiteral("explainDock"));
  });
  new TimelineTableLink(timeline_, table_->view(), table_->model(), table_->proxy(), this);
  layout->addWidget(split, 1);

  connect(table_, &TablePane::currentRowChanged, this, &MainWindow::onTableRowChanged);
  connect(table_, &TablePane::whyRequested, this, [this] {
    showDock(QStringLiteral("whyDock"));
    onTableRowChanged();
  });
  connect(table_, &TablePane::glossaryRequested, this, &MainWindow::showGlossary);
  return central;
}

// ---- actions, docks, menus, toolbar, status bar ------------------------------

void MainWindow::buildActions() {
  openAct_ = new QAction(tr("&Open…"), this);
  openAct_->setShortcut(QKeySequence::Open);
  connect(openAct_, &QAction::triggered, this, &MainWindow::chooseFile);
  sampleAct_ = new QAction(tr("Open &Bundled Sample"), this);
  sampleAct_->setStatusTip(tr("The H200 multi-head attention capture compiled into attnscope"));
  connect(sampleAct_, &QAction::triggered, this, &MainWindow::openBundledSample);
  buildJobActions();
  buildCaptureActions();
  // Starting a run takes a deliberate chord (Ctrl+Shift+R); Ctrl+R only opens the Run panel.
  runAct_ = new QAction(tr("&Start Run"), this);
  runAct_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
  runAct_->setToolTip(tr("Run the engine with the Run panel's settings (Ctrl+Shift+R)"));
  configureRunAct_ = new QAction(tr("&Run…"), this);
  configureRunAct_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
  configureRunAct_->setToolTip(tr("Choose what to run: wrapping, sync, shape, timing methods (Ctrl+R)"));
  connect(configureRunAct_, &QAction::triggered, this, [this] { showDock(QStringLiteral("runDock")); });
  cancelAct_ = new QAction(tr("&Cancel run"), this);
  cancelAct_->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F5));
  compareAct_ = new QAction(tr("Co&mpare runs"), this);
  compareAct_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
  compareAct_->setToolTip(tr("Compare the two runs selected in the Runs list (Ctrl+K)"));
  connect(compareAct_, &QAction::triggered, this, &MainWindow::compareSelected);
  exportTableAct_ = new QAction(tr("&Export Table…"), this);
  exportTableAct_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  connect(exportTableAct_, &QAction::triggered, this, &MainWindow::chooseExportTable);
  exportTraceAct_ = new QAction(tr("Export &Trace (Chrome JSON)…"), this);
  exportTraceAct_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
  connect(exportTraceAct_, &QAction::triggered, this, &MainWindow::chooseExportTrace);
  saveRunAct_ = new QAction(tr("&Save Run…"), this);
  saveRunAct_->setShortcut(QKeySequence::Save);
  connect(saveRunAct_, &QAction::triggered, this, &MainWindow::chooseSaveRun);
  sidePanelsAct_ = new QAction(tr("Side &Panels"), this);
  sidePanelsAct_->setObjectName(QStringLiteral("sidePanels"));
  sidePanelsAct_->setCheckable(true);
  sidePanelsAct_->setChecked(true);
  sidePanelsAct_->setShortcut(QKeySequence(Qt::Key_F9));
  sidePanelsAct_->setToolTip(tr("Show or collapse the panels at the right: Explanation, Event details, Why, … (F9)"));
  connect(sidePanelsAct_, &QAction::toggled, this, &MainWindow::setSidePanelsShown);
  copyAct_ = new QAction(tr("&Copy Rows"), this);
  copyAct_->setShortcut(QKeySequence::Copy);
  copyAct_->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  connect(copyAct_, &QAction::triggered, this, [this] { copySelection(); });
  table_->view()->addAction(copyAct_);
  table_->addRowMenuActions({copyAct_, exportTableAct_});
}

QDockWidget* MainWindow::dock(const QString& objectName) const {
  for (QDockWidget* d : docks_)
    if (d->objectName() == objectName) return d;
  return nullptr;
}

void MainWindow::showDock(const QString& objectName) {
  if (QDockWidget* d = dock(objectName)) {
    if (panelsCollapsed_ && !d->isFloating()) setSidePanelsShown(true);
    d->show();
    d->raise();
  }
}

void MainWindow::showGlossary(const QString& key, int family) {
  showDock(QStringLiteral("glossaryDock"));
  glossary_->lookup(key, family);
}

void MainWindow::buildDocks() {
  setDockNestingEnabled(true);
  setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks | QMainWindow::AllowNestedDocks);
  auto makeDock = [this](const QString& name, const QString& title, QWidget* content, bool scroll) {
    auto* d = new QDockWidget(title, this);
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
  runsDock_ = new RunsDock;
  QDockWidget* runsDock = makeDock(QStringLiteral("runsDock"), tr("Runs"), runsDock_, false);
  explain_ = new ExplainPanel;
  QDockWidget* explainDock = makeDock(QStringLiteral("explainDock"), tr("Explanation"), explain_, false);
  why_ = new WhyPanel;
  QDockWidget* whyDock = makeDock(QStringLiteral("whyDock"), tr("Why is this zero?"), why_, false);
  plots_ = new PlotsPanel;
  // A kernel selected in the Kernels view: its duration histogram in Plots.
  connect(kernels_, &ViewPanel::highlightRequested, plots_,
          [this](const std::vector<EventId>& ids) { plots_->showKernel(ids); });
  makeDock(QStringLiteral("plotsDock"), tr("Plots"), plots_, false);
  compare_ = new CompareView;
  QDockWidget* compareDock = makeDock(QStringLiteral("compareDock"), tr("Compare"), compare_, false);
  pairLoader_ = new PairLoader(
      [this](const QString& path) {
        const auto it = traces_.find(path);
        return it == traces_.end() ? nullptr : it->second;
      },
      this);
  connect(pairLoader_, &PairLoader::loaded, this,
          [this](std::shared_ptr<const LoadedTrace> a, std::shared_ptr<const LoadedTrace> b) {
            traces_.emplace(a->path, a);
            traces_.emplace(b->path, b);
            compare_->compare(pairLabels_[0], a->snapshot, pairLabels_[1], b->snapshot);
          });
  connect(pairLoader_, &PairLoader::failed, this, [this](const QString& message) {
    compare_->setMessage(tr("Could not load %1").arg(message));
    if (pairReportsFailure_) emit loadFailed(message);
  });
  connect(pairLoader_, &PairLoader::cancelled, this, [this] { compare_->setMessage(tr("Loading cancelled.")); });
  glossary_ = new GlossaryDock;
  QDockWidget* glossaryDock = makeDock(QStringLiteral("glossaryDock"), tr("Glossary"), glossary_, false);
  details_ = new DetailsPanel;
  makeDock(QStringLiteral("detailsDock"), tr("Event details"), details_, false);
  // A click on the timeline shows the event's details; a link there selects that event.
  connect(timeline_, &TimelinePane::eventSelected, this, [this](EventId id) {
    details_->showDetailsOf(id);
    if (id != kNoEvent) showDock(QStringLiteral("detailsDock"));
  });
  connect(details_, &DetailsPanel::eventRequested, this,
          [this](EventId id) { timeline_->view()->selectEvent(id, true); });

  connect(explain_, &ExplainPanel::glossaryRequested, this, [this](const QString& key) { showGlossary(key); });
  // A step chosen in the explanation: its overlay on the timeline, zoomed to it.
  connect(explain_, &ExplainPanel::stepChosen, this, [this](int step) { timeline_->explainStep(step); });
  // The Explanation and the Steps view follow the step shown (from either, or the timeline's selector).
  connect(timeline_, &TimelinePane::stepShown, explain_, &ExplainPanel::showStep);
  connect(timeline_, &TimelinePane::stepShown, steps_, &StepsView::selectStep);
  connect(why_, &WhyPanel::glossaryRequested, this, [this](const QString& key) { showGlossary(key); });
  // A tab behind another is "visible" to Qt; its dock says when it is really seen.
  why_->setOnScreen(false);
  connect(whyDock, &QDockWidget::visibilityChanged, why_, &WhyPanel::setOnScreen);

  connect(runPanel_, &RunPanel::runStarted, this, &MainWindow::onRunStarted);
  connect(runPanel_, &RunPanel::runFinished, this, &MainWindow::onRunFinished);
  connect(runPanel_, &RunPanel::recordStarted, this, &MainWindow::onRecordStarted);
  connect(runAct_, &QAction::triggered, this, [this] {
    showDock(QStringLiteral("runDock"));
    runPanel_->startRun();
  });
  connect(cancelAct_, &QAction::triggered, runPanel_, &RunPanel::cancelRun);

  connect(runsDock_, &RunsDock::showRequested, this, &MainWindow::showRunRow);
  connect(runsDock_, &RunsDock::compareRequested, this, &MainWindow::compareSelected);
  connect(runsDock_, &RunsDock::saveRequested, this, &MainWindow::chooseSaveRun);
  connect(runsDock_, &RunsDock::selectionChanged, this, &MainWindow::updateActions);
  connect(runsDock_, &RunsDock::useSettingsRequested, this, [this](int row) {
    const RunEntry* e = runs()->entry(row);
    if (e && e->config) {
      runPanel_->setConfig(*e->config);
      dock(QStringLiteral("runDock"))->raise();
    } else {
      statusBar()->showMessage(tr("This run has no engine settings (a torch.profiler trace)."), 5000);
    }
  });

  // Default layout: the timeline and the tables keep the whole height (a laptop's 800 px has no
  // room for docks under them); the docks sit at the right as tabs, the Explanation in front, the
  // event's details, Why, Plots and the glossary behind it, the run docks (Run, Runs, Compare)
  // hidden until the user asks to run or to compare. F9 collapses them all.
  addDockWidget(Qt::RightDockWidgetArea, explainDock);
  for (QDockWidget* d : docks_)
    if (d != explainDock) tabifyDockWidget(explainDock, d);
  for (QDockWidget* d : {runDock, runsDock, compareDock, glossaryDock}) d->hide();
  explainDock->raise();
  resizeDocks({explainDock}, {380}, Qt::Horizontal);
}

void MainWindow::setSidePanelsShown(bool shown) {
  if (shown == !panelsCollapsed_) return;
  if (!shown) {
    // Which docks were shown, where and how wide: all of it comes back on expanding.
    expandedState_ = saveState(kStateVersion);
    for (QDockWidget* d : docks_)
      if (!d->isFloating()) d->hide();
    panelsCollapsed_ = true;
  } else {
    panelsCollapsed_ = false;
    if (!expandedState_.isEmpty()) restoreState(expandedState_, kStateVersion);
  }
  const QSignalBlocker block(sidePanelsAct_);
  sidePanelsAct_->setChecked(shown);
}

void MainWindow::buildToolbar() {
  QToolBar* main = addToolBar(tr("Main"));
  main->setObjectName(QStringLiteral("mainToolBar"));
  main->setToolButtonStyle(Qt::ToolButtonTextOnly);
  main->setMovable(false);
  main->addAction(configureRunAct_);
  main->addAction(runAct_);
  main->addAction(cancelAct_);
  main->addSeparator();
  main->addAction(compareAct_);
  main->addAction(exportTableAct_);
  main->addSeparator();
  main->addAction(sidePanelsAct_);
}

void MainWindow::buildMenus() {
  QMenuBar* bar = menuBar();
  QMenu* file = bar->addMenu(tr("&File"));
  file->addAction(openAct_);
  file->addAction(openJobAct_);
  file->addAction(captureAct_);
  file->addAction(sampleAct_);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  file->addAction(tr("&Compare With…"), this, &MainWindow::chooseCompareWith)
      ->setToolTip(tr("Compare the open trace (A) with another file (B): what changed, and both timelines"));
  file->addSeparator();
  file->addAction(saveRunAct_);
  file->addAction(exportTableAct_);
  file->addAction(exportTraceAct_);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), qApp, &QApplication::quit);
  quit->setShortcut(QKeySequence::Quit);
  quit->setMenuRole(QAction::QuitRole);

  QMenu* edit = bar->addMenu(tr("&Edit"));
  edit->addAction(copyAct_);
  // Find searches where the user can see it: the Operators table comes forward first.
  QAction* find = edit->addAction(tr("&Find in Table"), this, [this] {
    viewTabs_->setCurrentWidget(table_);
    table_->focusFilter();
  });
  find->setShortcut(QKeySequence::Find);
  QAction* findGloss = edit->addAction(tr("Search the &Glossary"), this, [this] {
    showDock(QStringLiteral("glossaryDock"));
    glossary_->focusSearch();
  });
  findGloss->setShortcut(QKeySequence::HelpContents);

  QMenu* run = bar->addMenu(tr("&Run"));
  run->addAction(configureRunAct_);
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
  viewMenu_->addAction(showRanksAct_);
  viewMenu_->addSeparator();
  viewMenu_->addAction(sidePanelsAct_);
  viewMenu_->addAction(tr("&Reset Layout"), this, &MainWindow::resetLayout);

  QMenu* help = bar->addMenu(tr("&Help"));
  help->addAction(tr("&Glossary"), this, [this] { showDock(QStringLiteral("glossaryDock")); });
  QAction* keys = help->addAction(tr("&Keyboard Shortcuts"), this, [this] {
    QMessageBox box(QMessageBox::NoIcon, tr("Keyboard shortcuts"), keyboardShortcutsHtml(), QMessageBox::Close, this);
    box.setObjectName(QStringLiteral("shortcutsBox"));
    box.setTextFormat(Qt::RichText);
    box.exec();
  });
  keys->setObjectName(QStringLiteral("keyboardShortcuts"));
  keys->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Slash));
  help->addAction(tr("&Documentation"), this, [this] {
    const QString dir = docsDir();
    QMessageBox::information(
        this, tr("Documentation"),
        dir.isEmpty() ? tr("This build has no documentation beside it. In the source tree: README.md and docs/.")
                      : tr("<p>README: <a href=\"%1\">%1</a></p><p>The rest (the explain schema, timing methods, "
                           "architecture): <a href=\"%2\">%2</a></p>")
                            .arg(QUrl::fromLocalFile(QDir(dir).filePath(QStringLiteral("../README.md"))).toString(),
                                 QUrl::fromLocalFile(dir).toString()));
  });
  help->addAction(tr("&About attnscope"), this, [this] {
    QMessageBox::about(this, tr("About attnscope"),
                       tr("<b>attnscope %1</b><p>Reads torch.profiler traces, reproduces key_averages(), "
                          "and explains where CUDA time goes. Runs use %2.</p>")
                           .arg(QApplication::applicationVersion(), runPanel_->runner()->program().toHtmlEscaped()));
  });
}

QString MainWindow::keyboardShortcutsHtml() const {
  // Every menu action with a key, as the menus have them (so the list never goes stale), then the
  // keys of the tables and the timeline.
  QString rows;
  for (QAction* top : menuBar()->actions()) {
    QMenu* menu = top->menu();
    if (!menu) continue;
    for (QAction* a : menu->actions()) {
      if (a->shortcut().isEmpty()) continue;
      QStringList keys;
      for (const QKeySequence& k : a->shortcuts()) keys << k.toString(QKeySequence::NativeText);
      rows += QStringLiteral("<tr><td>%1</td><td>%2 &gt; %3</td></tr>")
                  .arg(keys.join(QStringLiteral(", ")).toHtmlEscaped(), QString(top->text()).remove(QLatin1Char('&')),
                       QString(a->text()).remove(QLatin1Char('&')));
    }
  }
  // Keys no menu carries (Copy and the glossary's F1 are in the Edit menu above).
  rows +=
      tr("<tr><td>Tab, Shift+Tab</td><td>Leave a table (the arrows move inside it)</td></tr>"
         "<tr><td>Ctrl+Shift+S</td><td>Sort a table by the current cell's column (again: the other way)</td></tr>"
         "<tr><td>Wheel, W / S</td><td>Timeline: zoom</td></tr>"
         "<tr><td>A / D, drag</td><td>Timeline: pan</td></tr>");
  return tr("<table cellspacing=\"0\" cellpadding=\"3\">%1</table><p>The timeline's Keys button lists all of its "
            "keys.</p>")
      .arg(rows);
}

QString MainWindow::docsDir() {
  const QString app = QCoreApplication::applicationDirPath();
  for (const QString& rel :
       {QStringLiteral("/../../docs"), QStringLiteral("/../docs"), QStringLiteral("/../share/doc/attnscope/docs")}) {
    const QString dir = QDir::cleanPath(app + rel);
    if (QFileInfo::exists(dir + QStringLiteral("/explain-schema.md"))) return dir;
  }
  return {};
}

void MainWindow::buildStatusBar() {
  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("summary"));
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // A long path must not widen the window: the label may be cut, its tooltip is not.
  summary_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  badEvents_ = new QLabel(this);
  badEvents_->setObjectName(QStringLiteral("badEvents"));
  engineStatus_ = new QLabel(this);
  engineStatus_->setObjectName(QStringLiteral("engineStatus"));
  loadBar_ = new LoadProgressBar(this);
  statusBar()->addWidget(summary_, 1);
  statusBar()->addPermanentWidget(loadBar_);
  statusBar()->addPermanentWidget(badEvents_);
  statusBar()->addPermanentWidget(engineStatus_);
  connect(runPanel_->runner(), &EngineRunner::progress, this,
          [this](int pct, const QString&) { engineStatus_->setText(tr("Engine run: %1%").arg(pct)); });
  connect(runPanel_->runner(), &EngineRunner::availabilityChanged, this, [this](const EngineAvailability& a) {
    engineStatus_->setText(!a.engineBuilt ? tr("Engine: unavailable")
                           : a.gpu        ? tr("Engine: GPU + CPU")
                                          : tr("Engine: CPU only"));
    engineStatus_->setToolTip(a.reason.isEmpty() ? a.program : a.reason);
    updateActions();
  });
}

}  // namespace attnscope::ui
