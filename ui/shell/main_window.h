// The window: menus, toolbar, docks, status bar, settings and the file
// actions (open, recent, export, save run). Its central area holds the
// panes, each with its own options: the timeline pane above the table pane.
// Docks are self-contained widgets: the window hands each the loaded trace
// and does what they ask for (show a glossary entry, a run, a comparison).
#pragma once

#include <QMainWindow>
#include <QStringList>
#include <QTemporaryDir>
#include <map>
#include <memory>
#include <optional>

#include "core/run/run_config.h"
#include "core/tables/table_format.h"
#include "ui/run/engine_runner.h"
#include "ui/shell/trace_loader.h"

class QAction;
class QDockWidget;
class QFrame;
class QLabel;
class QMenu;
class QTableView;

class QTabWidget;

namespace attnscope::ui {

class CompareView;
class PairLoader;
class RanksView;
class DetailsPanel;
class LoadProgressBar;
class ExplainPanel;
class GlossaryDock;
class PlotsPanel;
class RunPanel;
class RunsDock;
class RunsModel;
class StepsView;
class TablePane;
class OverviewPanel;
class KernelsPanel;
class MemoryPanel;
class ModulesPanel;
class TimelinePane;
class WhyPanel;

struct MainWindowOptions {
  bool restoreSettings = true;  // false: the default layout (screenshots, tests)
  bool saveSettings = true;
  bool probeEngine = true;
};

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(MainWindowOptions options = {}, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Starts an asynchronous load; traceShown() or loadFailed() follows. A
  // failed load keeps the trace shown before it.
  void openTrace(const QString& path);
  void openBundledSample();
  // Opens a distributed job (a folder, or one trace per rank) in the Ranks window: the analysis runs
  // off the UI thread (ui/ranks/ranks_view.h); the window says when it fails.
  void openJob(const QStringList& paths);
  // The Ranks window (nullptr until a job was opened).
  RanksView* ranksView() const { return ranks_; }

  const std::shared_ptr<const LoadedTrace>& trace() const { return trace_; }

  TablePane* tablePane() const { return table_; }
  // The Steps tab (the founding answer): the first tab, in front for traces with steps.
  StepsView* stepsView() const { return steps_; }
  TimelinePane* timelinePane() const { return timeline_; }
  RunPanel* runPanel() const { return runPanel_; }
  RunsModel* runs() const;
  QTableView* runsView() const;
  ExplainPanel* explainPanel() const { return explain_; }
  WhyPanel* whyPanel() const { return why_; }
  PlotsPanel* plotsPanel() const { return plots_; }
  CompareView* compareView() const { return compare_; }
  QTabWidget* viewTabs() const { return viewTabs_; }
  OverviewPanel* overviewPanel() const { return overview_; }
  KernelsPanel* kernelsPanel() const { return kernels_; }
  MemoryPanel* memoryPanel() const { return memory_; }
  ModulesPanel* modulesPanel() const { return modules_; }
  GlossaryDock* glossary() const { return glossary_; }
  DetailsPanel* detailsPanel() const { return details_; }
  QDockWidget* dock(const QString& objectName) const;
  // The side panels (the docks at the right) collapse to give the timeline and the tables the whole
  // width, and come back as they were (which were shown, their sizes); View > Side Panels, F9.
  void setSidePanelsShown(bool shown);
  bool sidePanelsShown() const { return !panelsCollapsed_; }
  QAction* sidePanelsAction() const { return sidePanelsAct_; }

  // File > Export Table without the dialog: the rows the table shows
  // (filter, sort, top-N) in the format the name asks for.
  bool exportTable(const QString& path, QString* error, std::optional<TableFormat> format = {});
  bool exportTrace(const QString& path, QString* error);
  // Saves the trace of the run shown (or of runs row `row`) to `path`.
  bool saveRun(const QString& path, QString* error, int row = -1);
  // Compares two rows of the runs list (asynchronous: compareView()->compared()).
  bool compareRows(int rowA, int rowB, QString* error = nullptr);
  // Compares two trace files (A, B); with `timelines`, opens them side by side once compared.
  void compareFiles(const QString& pathA, const QString& pathB, bool timelines);
  // Help > Keyboard Shortcuts: every menu action's keys, then the tables' and the timeline's.
  QString keyboardShortcutsHtml() const;
  // The bundled docs (docs/ beside the build or the install), or "".
  static QString docsDir();
  // Copies the table's selected rows to the clipboard; returns the text.
  QString copySelection();
  QStringList recentFiles() const { return recent_; }

  void saveSettings();

 signals:
  void traceShown();
  void loadFailed(const QString& message);
  void loadCancelled(const QString& path);

 protected:
  void showEvent(QShowEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  QWidget* buildCentral();
  void buildActions();
  void buildDocks();
  void buildMenus();
  void buildToolbar();
  void buildStatusBar();
  void restoreSettings();
  void resetLayout();
  void showTrace(std::shared_ptr<const LoadedTrace> trace);
  void showLoadError(const QString& message);
  // Until the user drags the splitter: the timeline down to the shown trace's first GPU stream when
  // that fits in 62% of the centre (at least 45%), else 45% (the table keeps a screenful of rows).
  void fitTimelineToTrace();
  void recordShownTrace();
  void updateStatus();
  void updateActions();
  void onRunStarted(const RunConfig& cfg, const QString& outPath);
  void onRunFinished(const RunConfig& cfg, const RunOutcome& o);
  void onRecordStarted(const QString& summary, const QString& outPath);
  void showRunRow(int row);
  void onTableRowChanged();
  void showDock(const QString& objectName);
  void showGlossary(const QString& key, int family = -1);
  void addRecent(const QString& path);
  void updateRecentMenu();
  void chooseFile();
  // File > Open Job…: a folder (the dialog's "Open Whole Folder") or several files (main_window_job.cpp).
  void chooseJob();
  void buildJobActions();
  // File > Capture Running Job…: a running torch job captured now (main_window_capture.cpp).
  void buildCaptureActions();
  void chooseCapture();
  void chooseExportTable();
  void chooseCompareWith();
  void chooseExportTrace();
  void chooseSaveRun();
  void compareSelected();
  void showError(const QString& title, const QString& message);
  // The loaded trace of `path` (cached), then `done` on the UI thread.
  // Loads A and B for Compare (both at once, the latest pair winning), then compares them.
  void comparePaths(const QString& pathA, const QString& labelA, const QString& pathB, const QString& labelB,
                    bool reportFailure);

  MainWindowOptions opt_;
  TraceLoader* loader_;
  std::shared_ptr<const LoadedTrace> trace_;
  QString loadingPath_;
  QString lastDir_;
  // The runs' traces, made when the first run starts (a launch that runs nothing leaves no folder).
  std::unique_ptr<QTemporaryDir> runDir_;
  std::map<QString, std::shared_ptr<const LoadedTrace>> traces_;  // path -> loaded, for Compare

  TablePane* table_ = nullptr;
  StepsView* steps_ = nullptr;
  QTabWidget* viewTabs_ = nullptr;  // Steps, Operators (the table), Overview, Kernels, Memory, Modules
  OverviewPanel* overview_ = nullptr;
  KernelsPanel* kernels_ = nullptr;
  MemoryPanel* memory_ = nullptr;
  ModulesPanel* modules_ = nullptr;
  TimelinePane* timeline_ = nullptr;
  QLabel* note_ = nullptr;
  QFrame* errorBar_ = nullptr;
  QLabel* errorText_ = nullptr;

  RunPanel* runPanel_ = nullptr;
  RunsDock* runsDock_ = nullptr;
  ExplainPanel* explain_ = nullptr;
  WhyPanel* why_ = nullptr;
  PlotsPanel* plots_ = nullptr;
  CompareView* compare_ = nullptr;
  PairLoader* pairLoader_ = nullptr;
  RanksView* ranks_ = nullptr;  // the Ranks window, made on the first job
  QString pairLabels_[2];
  bool pairReportsFailure_ = false;
  GlossaryDock* glossary_ = nullptr;
  DetailsPanel* details_ = nullptr;
  QList<QDockWidget*> docks_;
  QByteArray defaultState_;
  bool sized_ = false;                   // the default layout got its proportions on the first show
  bool restoredState_ = false;           // the user's saved layout was restored
  int shownTab_ = 0;                     // the tab under the timeline now
  bool userSplit_ = false;               // the user dragged the timeline/tabs splitter
  std::map<int, QList<int>> tabSplits_;  // each tab's timeline/tabs split, as the user left it

  QMenu* recentMenu_ = nullptr;
  QMenu* viewMenu_ = nullptr;
  QAction* openAct_ = nullptr;
  QAction* sampleAct_ = nullptr;
  QAction* openJobAct_ = nullptr;
  QAction* captureAct_ = nullptr;
  QAction* showRanksAct_ = nullptr;
  QAction* saveRunAct_ = nullptr;
  QAction* exportTableAct_ = nullptr;
  QAction* exportTraceAct_ = nullptr;
  QAction* copyAct_ = nullptr;
  QAction* runAct_ = nullptr;
  QAction* configureRunAct_ = nullptr;
  QAction* cancelAct_ = nullptr;
  QAction* compareAct_ = nullptr;
  QAction* sidePanelsAct_ = nullptr;
  QByteArray expandedState_;  // the docks as they were before the side panels collapsed
  bool panelsCollapsed_ = false;

  QLabel* summary_ = nullptr;
  LoadProgressBar* loadBar_ = nullptr;
  QLabel* badEvents_ = nullptr;
  QLabel* engineStatus_ = nullptr;

  QStringList recent_;
  int runningId_ = 0;
};

}  // namespace attnscope::ui
