// What the QTest suites of the app share: a main window at a laptop's size with a trace opened as
// the user opens one, and clicks, keys and waits on the real widgets.
#pragma once

#include <QAbstractItemModel>
#include <QAbstractScrollArea>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTimer>
#include <QToolButton>
#include <QTreeView>
#include <QtTest>
#include <optional>
#if __has_include(<QtCharts/QChartView>)
#include <QtCharts/QBarSet>
#include <QtCharts/QChartView>
#include <QtCharts/QHorizontalStackedBarSeries>
#endif
#include "core/explain/compare.h"
#include "gzip_util.h"
#include "ui/panels/compare_view.h"
#include "ui/panels/details_panel.h"
#include "ui/panels/explain_panel.h"
#include "ui/panels/glossary_dock.h"
#include "ui/panels/plots_panel.h"
#include "ui/panels/timeline_diff.h"
#include "ui/panels/why_panel.h"
#include "ui/run/engine_runner.h"
#include "ui/run/run_panel.h"
#include "ui/run/runs_model.h"
#include "ui/shell/load_progress_bar.h"
#include "ui/shell/main_window.h"
#include "ui/table/key_averages_model.h"
#include "ui/table/key_averages_proxy.h"
#include "ui/table/sort_header_view.h"
#include "ui/table/table_pane.h"
#include "ui/table/two_line_header_view.h"
#include "ui/timeline/timeline_pane.h"
#include "ui/views/views_panels.h"

using namespace attnscope;
using namespace attnscope::ui;

namespace apptest {

inline const QString kSoftmax = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_8x16x1024x64.json");
inline const QString kNone = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/none_8x16x1024x64.json");
inline const QString kCpuRun = QStringLiteral(ATTNSCOPE_TEST_DATA "/cpu/wrap_all_2iters.json");

struct App {
  MainWindow w{MainWindowOptions{false, false, true}};
  QSignalSpy shown{&w, &MainWindow::traceShown};
  explicit App(QSize size = {1280, 800}) {
    w.resize(size);
    w.show();
  }
  bool open(const QString& path) {
    const qsizetype before = shown.size();
    w.openTrace(path);
    return shown.size() > before || shown.wait(30000);
  }
  bool openSample() {
    const qsizetype before = shown.size();
    w.openBundledSample();
    return shown.size() > before || shown.wait(30000);
  }
};

inline QStringList columnTexts(const QAbstractItemModel* m, int col) {
  QStringList out;
  for (int r = 0; r < m->rowCount(); ++r) out << m->index(r, col).data(TableModelBase::SortRole).toString();
  return out;
}

// The Run panel in front, on the bundled sample.
inline RunPanel* showRunPanel(App& app) {
  RunPanel* panel = app.w.runPanel();
  app.w.dock(QStringLiteral("runDock"))->show();
  app.w.dock(QStringLiteral("runDock"))->raise();
  QCoreApplication::processEvents();
  return panel;
}

// Waits until the engine has said what it can do here (the Run panel probes it once).
inline bool waitForProbe(EngineRunner* runner) {
  if (runner->availability().probed) return true;
  QSignalSpy probed(runner, &EngineRunner::availabilityChanged);
  return probed.wait(60000);
}

inline bool sortedBy(const QAbstractItemModel* m, int col, Qt::SortOrder order) {
  for (int r = 1; r < m->rowCount(); ++r) {
    const double a = m->index(r - 1, col).data(TableModelBase::SortRole).toDouble();
    const double b = m->index(r, col).data(TableModelBase::SortRole).toDouble();
    if (order == Qt::AscendingOrder ? a > b : a < b) return false;
  }
  return true;
}

inline void clickHeader(QTableView* view, int logical) {
  QHeaderView* h = view->horizontalHeader();
  const int x = h->sectionViewportPosition(logical) + h->sectionSize(logical) / 2;
  QTest::mouseClick(h->viewport(), Qt::LeftButton, Qt::NoModifier, QPoint(x, h->height() / 2));
}

inline void clickRow(QTableView* view, int row) {
  view->scrollTo(view->model()->index(row, 0));
  QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier,
                    view->visualRect(view->model()->index(row, 0)).center());
}

inline int rowNamed(const QAbstractItemModel* m, const QString& name) {
  for (int r = 0; r < m->rowCount(); ++r)
    if (m->index(r, 0).data().toString() == name) return r;
  return -1;
}

// Clicks a widget that may sit in a scroll area: scrolled into view first.
inline void clickWidget(QWidget* widget) {
  for (QWidget* p = widget->parentWidget(); p; p = p->parentWidget())
    if (auto* area = qobject_cast<QScrollArea*>(p)) area->ensureWidgetVisible(widget);
  // A check box takes clicks on its box and its label only, not on the empty rest of its cell.
  const QPoint at = qobject_cast<QCheckBox*>(widget) ? QPoint(qMin(8, widget->width() / 2), widget->height() / 2)
                                                     : widget->rect().center();
  QTest::mouseClick(widget, Qt::LeftButton, Qt::NoModifier, at);
}

// Clicks the tab of `page` under the timeline (Steps, Operators, Overview, Kernels, Memory, Modules).
inline void clickTabOf(MainWindow& w, QWidget* page) {
  QTabWidget* tabs = w.viewTabs();
  QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, Qt::NoModifier,
                    tabs->tabBar()->tabRect(tabs->indexOf(page)).center());
  QCoreApplication::processEvents();
}
// torch's operator table in front (a trace with steps opens on the Steps tab).
inline void showOperators(MainWindow& w) { clickTabOf(w, w.tablePane()); }

inline void pickComboItem(QComboBox* combo, int index) {
  combo->setFocus();
  while (combo->currentIndex() < index) QTest::keyClick(combo, Qt::Key_Down);
  while (combo->currentIndex() > index) QTest::keyClick(combo, Qt::Key_Up);
}

// Each suite's initTestCase: the fixtures are there and the app finds the CLI it runs.
inline void initSuite() {
  for (const QString& f : {kSoftmax, kNone, kCpuRun}) QVERIFY2(QFile::exists(f), qPrintable("missing " + f));
  qputenv("ATTNSCOPE_CLI", ATTNSCOPE_BIN_DIR "/attnscope-cli");
}

}  // namespace apptest
