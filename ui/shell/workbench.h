// Everything around the main window's central area: the docks
// (run panel, runs list, explanation, "why is this zero?", plots, compare,
// glossary), the File menu's recent files / Save run / Export table /
// Export trace, the Edit, Run, View and Help menus, the toolbars, the table
// options (attribution, time unit, top-N, columns, copy), and the settings
// that persist (dock layout, recent files, run options). The central
// widget stays MainWindow's.
#pragma once

#include <QObject>
#include <QPointer>
#include <QStringList>
#include <QTemporaryDir>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "core/tables/table_format.h"
#include "ui/run/engine_runner.h"
#include "ui/shell/trace_loader.h"

class QAction;
class QComboBox;
class QDockWidget;
class QLabel;
class QMenu;
class QSpinBox;
class QTableView;
class QToolBar;

namespace attnscope::ui {

class MainWindow;
class RunPanel;
class RunsModel;
class ExplainPanel;
class WhyPanel;
class PlotsPanel;
class CompareView;
class GlossaryDock;

struct WorkbenchOptions {
  bool restoreSettings = true;  // false: the default layout (screenshots, tests)
  bool saveSettings = true;
  bool probeEngine = true;
};

class Workbench : public QObject {
  Q_OBJECT

 public:
  Workbench(MainWindow* window, WorkbenchOptions options = {});
  ~Workbench() override;

  RunPanel* runPanel() const { return runPanel_; }
  RunsModel* runs() const { return runs_; }
  QTableView* runsView() const { return runsView_; }
  ExplainPanel* explainPanel() const { return explain_; }
  WhyPanel* whyPanel() const { return why_; }
  PlotsPanel* plotsPanel() const { return plots_; }
  CompareView* compareView() const { return compare_; }
  GlossaryDock* glossary() const { return glossary_; }
  QDockWidget* dock(const QString& objectName) const;

  // The table export the File menu does, without the dialog: the rows the
  // table shows (filter, sort, top-N) in the format the name asks for.
  bool exportTable(const QString& path, QString* error, std::optional<TableFormat> format = {});
  bool exportTrace(const QString& path, QString* error);
  // Saves the trace of the run shown (or of runs row `row`) to `path`.
  bool saveRun(const QString& path, QString* error, int row = -1);
  // Compares two rows of the runs list (asynchronous: compareView()->compared()).
  bool compareRows(int rowA, int rowB, QString* error = nullptr);
  QString copySelection();
  QStringList recentFiles() const { return recent_; }
  void setTimeUnit(int unit);
  void setTopN(int n);

  void saveSettings();

 private:
  void buildDocks();
  void buildMenus();
  void buildToolbars();
  void restoreSettings();
  void resetLayout();
  void onTraceShown();
  void onRunStarted(const RunConfig& cfg, const QString& outPath);
  void onRunFinished(const RunConfig& cfg, const RunOutcome& o);
  void showRunRow(int row);
  void onTableSelection();
  void showTableMenu(const QPoint& pos);
  void addRecent(const QString& path);
  void updateRecentMenu();
  void updateActions();
  void chooseExportTable();
  void chooseExportTrace();
  void chooseSaveRun();
  void compareSelected();
  void showError(const QString& title, const QString& message);
  void loadStore(const QString& path, std::function<void(std::shared_ptr<const EventStore>, QString)> done);

  MainWindow* w_;
  WorkbenchOptions opt_;
  QTemporaryDir runDir_;
  RunPanel* runPanel_ = nullptr;
  RunsModel* runs_ = nullptr;
  QTableView* runsView_ = nullptr;
  ExplainPanel* explain_ = nullptr;
  WhyPanel* why_ = nullptr;
  PlotsPanel* plots_ = nullptr;
  CompareView* compare_ = nullptr;
  GlossaryDock* glossary_ = nullptr;
  QList<QDockWidget*> docks_;
  QByteArray defaultState_;
  QMenu* recentMenu_ = nullptr;
  QMenu* viewMenu_ = nullptr;
  QAction* saveRunAct_ = nullptr;
  QAction* exportTableAct_ = nullptr;
  QAction* exportTraceAct_ = nullptr;
  QAction* runAct_ = nullptr;
  QAction* cancelAct_ = nullptr;
  QAction* compareAct_ = nullptr;
  QComboBox* attribution_ = nullptr;
  QComboBox* timeUnit_ = nullptr;
  QSpinBox* topN_ = nullptr;
  QLabel* engineStatus_ = nullptr;
  QStringList recent_;
  int runningId_ = 0;
  int pendingShowRow_ = -1;
  std::map<QString, std::shared_ptr<const EventStore>> stores_;  // path -> loaded store
};

}  // namespace attnscope::ui
