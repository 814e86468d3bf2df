// The app as its users use it, driven by real input on the real widgets
// (QTest mouse and keyboard events on the main window, the menus, the dialogs):
// sort by clicking a column header and again for the other order; tick each
// wrapping box and pick each sync mode, reading the command the Run panel will
// start; press Run and find the run in the Runs list; File > Export Table
// through its dialog; select rows and read the Why and Explanation panels;
// zoom and pan the timeline with the wheel and the keys; the layout at
// 1280x800 shows the overlay's lanes. Each of the findings of the usability
// review has a test here.
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

namespace {

const QString kSoftmax = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_8x16x1024x64.json");
const QString kNone = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/none_8x16x1024x64.json");
const QString kCpuRun = QStringLiteral(ATTNSCOPE_TEST_DATA "/cpu/wrap_all_2iters.json");

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

QStringList columnTexts(const QAbstractItemModel* m, int col) {
  QStringList out;
  for (int r = 0; r < m->rowCount(); ++r) out << m->index(r, col).data(TableModelBase::SortRole).toString();
  return out;
}

// The Run panel in front, on the bundled sample.
RunPanel* showRunPanel(App& app) {
  RunPanel* panel = app.w.runPanel();
  app.w.dock(QStringLiteral("runDock"))->show();
  app.w.dock(QStringLiteral("runDock"))->raise();
  QCoreApplication::processEvents();
  return panel;
}

// Waits until the engine has said what it can do here (the Run panel probes it once).
bool waitForProbe(EngineRunner* runner) {
  if (runner->availability().probed) return true;
  QSignalSpy probed(runner, &EngineRunner::availabilityChanged);
  return probed.wait(60000);
}

bool sortedBy(const QAbstractItemModel* m, int col, Qt::SortOrder order) {
  for (int r = 1; r < m->rowCount(); ++r) {
    const double a = m->index(r - 1, col).data(TableModelBase::SortRole).toDouble();
    const double b = m->index(r, col).data(TableModelBase::SortRole).toDouble();
    if (order == Qt::AscendingOrder ? a > b : a < b) return false;
  }
  return true;
}

void clickHeader(QTableView* view, int logical) {
  QHeaderView* h = view->horizontalHeader();
  const int x = h->sectionViewportPosition(logical) + h->sectionSize(logical) / 2;
  QTest::mouseClick(h->viewport(), Qt::LeftButton, Qt::NoModifier, QPoint(x, h->height() / 2));
}

void clickRow(QTableView* view, int row) {
  view->scrollTo(view->model()->index(row, 0));
  QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier,
                    view->visualRect(view->model()->index(row, 0)).center());
}

int rowNamed(const QAbstractItemModel* m, const QString& name) {
  for (int r = 0; r < m->rowCount(); ++r)
    if (m->index(r, 0).data().toString() == name) return r;
  return -1;
}

// Clicks a widget that may sit in a scroll area: scrolled into view first.
void clickWidget(QWidget* widget) {
  for (QWidget* p = widget->parentWidget(); p; p = p->parentWidget())
    if (auto* area = qobject_cast<QScrollArea*>(p)) area->ensureWidgetVisible(widget);
  // A check box takes clicks on its box and its label only, not on the empty rest of its cell.
  const QPoint at = qobject_cast<QCheckBox*>(widget) ? QPoint(qMin(8, widget->width() / 2), widget->height() / 2)
                                                     : widget->rect().center();
  QTest::mouseClick(widget, Qt::LeftButton, Qt::NoModifier, at);
}

void pickComboItem(QComboBox* combo, int index) {
  combo->setFocus();
  while (combo->currentIndex() < index) QTest::keyClick(combo, Qt::Key_Down);
  while (combo->currentIndex() > index) QTest::keyClick(combo, Qt::Key_Up);
}

}  // namespace

class AppTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    for (const QString& f : {kSoftmax, kNone, kCpuRun}) QVERIFY2(QFile::exists(f), qPrintable("missing " + f));
    qputenv("ATTNSCOPE_CLI", ATTNSCOPE_BIN_DIR "/attnscope-cli");
  }

  // Finding 1: clicking a column header sorts the table, clicking again reverses it, and the
  // arrow points down for a descending sort.
  void headerClickSorts() {
    App app;
    QVERIFY(app.openSample());
    QTableView* view = app.w.tablePane()->view();
    auto* header = qobject_cast<TwoLineHeaderView*>(view->horizontalHeader());
    QVERIFY(header && header->sectionsClickable());
    const int selfCpu = KeyAveragesModel::columnOf(Column::SelfCpu);
    clickHeader(view, selfCpu);
    QCOMPARE(header->sortIndicatorSection(), selfCpu);
    const Qt::SortOrder first = header->sortIndicatorOrder();
    QCOMPARE(first, Qt::DescendingOrder);  // a time column: largest first on the first click
    QVERIFY(sortedBy(view->model(), selfCpu, first));
    clickHeader(view, selfCpu);
    const Qt::SortOrder second = header->sortIndicatorOrder();
    QVERIFY(second != first);
    QVERIFY(sortedBy(view->model(), selfCpu, second));
    QVERIFY(columnTexts(view->model(), selfCpu) != QStringList());
    // The arrow: down while the largest values come first.
    if (second != Qt::DescendingOrder) clickHeader(view, selfCpu);
    QCOMPARE(header->sortIndicatorOrder(), Qt::DescendingOrder);
    QCOMPARE(header->sortArrow(selfCpu), QStyleOptionHeader::SortDown);
    clickHeader(view, selfCpu);
    QCOMPARE(header->sortArrow(selfCpu), QStyleOptionHeader::SortUp);
  }

  // Finding 2: at 1280x800 with an overlay on, the timeline shows the CPU thread and the GPU
  // stream lanes; the legend is one line until asked; nothing is drawn over the timeline; the
  // Run dock stays away until the user asks to run.
  void layoutAt1280x800() {
    App app;
    QVERIFY(app.openSample());
    QCoreApplication::processEvents();
    TimelinePane* pane = app.w.timelinePane();
    QVERIFY(pane->explainByName(QStringLiteral("SOFTMAX PASS")));
    QCoreApplication::processEvents();
    TimelineView* v = pane->view();
    const auto& tracks = v->index().tracks();
    int cpu = -1, gpu = -1;
    for (size_t t = 0; t < tracks.size(); ++t) {
      if (tracks[t].kind == TrackKind::Cpu && cpu < 0) cpu = static_cast<int>(t);
      if (tracks[t].kind == TrackKind::Gpu && gpu < 0) gpu = static_cast<int>(t);
    }
    QVERIFY(cpu >= 0 && gpu >= 0);
    const QRect cpuRect = v->trackRectInView(static_cast<uint32_t>(cpu));
    const QRect gpuRect = v->trackRectInView(static_cast<uint32_t>(gpu));
    QVERIFY2(cpuRect.height() >= 40, "the CPU thread's track is on screen");
    QVERIFY2(gpuRect.height() >= 15,
             qPrintable(QString("the GPU stream's track is on screen (%1 px of it in a %2 px view)")
                            .arg(gpuRect.height())
                            .arg(v->viewport()->height())));
    auto* legend = pane->findChild<QLabel*>(QStringLiteral("overlayLegend"));
    QVERIFY(legend && legend->isVisible());
    QVERIFY2(legend->height() <= 3 * legend->fontMetrics().lineSpacing() + 12, "the legend is short");
    auto* more = pane->findChild<QToolButton*>(QStringLiteral("overlayLegendMore"));
    QVERIFY(more && more->isVisible());
    const QString shortText = legend->text();
    clickWidget(more);
    QVERIFY(legend->text().size() > shortText.size());
    QVERIFY(!pane->findChild<QLabel*>(QStringLiteral("eventDetails")));  // the label that overlapped is gone
    QVERIFY(!app.w.dock(QStringLiteral("runDock"))->isVisible());
    QVERIFY(app.w.dock(QStringLiteral("explainDock"))->isVisible());
    // The user asks to run: the Run dock comes forward.
    QAction* runAct = nullptr;
    for (QAction* a : app.w.menuBar()->actions())
      if (a->text().remove('&') == QLatin1String("Run")) runAct = a;
    QVERIFY(runAct && runAct->menu());
    runAct->menu()->actions().front()->trigger();  // "Run…"
    QVERIFY(app.w.dock(QStringLiteral("runDock"))->isVisible());
  }

  // Finding 3: for the attention workload the Explanation opens with the answer: the four
  // steps' CUDA time by every method, then the four questions, in the user's words.
  void answersFirst() {
    App app;
    QVERIFY(app.openSample());
    const QString text = app.w.explainPanel()->plainText();
    const qsizetype answer = text.indexOf(QStringLiteral("The answer"));
    QVERIFY2(answer >= 0, qPrintable(text.left(400)));
    for (const char* q :
         {"Why does a step's CUDA time change when I wrap another step?", "Are the unwrapped steps really zero?",
          "How do I get every step's CUDA time?", "What do the events mean?"})
      QVERIFY2(text.indexOf(QString::fromUtf8(q)) > answer, q);
    QVERIFY(text.indexOf(QStringLiteral("Findings")) > text.indexOf(QStringLiteral("What do the events mean?")));
    for (const char* step : {"QK MATMUL", "SCALE", "SOFTMAX PASS", "AV MATMUL"}) QVERIFY(text.contains(step));
    QVERIFY(text.contains(QStringLiteral("540.410 us")));  // QK MATMUL's GEMM, unwrapped
    for (const char* internal : {"gpu_attributed_ns", "table --attribution", "step_source", "top_level_ops"})
      QVERIFY2(!text.contains(QString::fromUtf8(internal)), internal);
    // A number in the answer takes the user to that step on the timeline.
    QSignalSpy chosen(app.w.explainPanel(), &ExplainPanel::stepChosen);
    auto* details = app.w.explainPanel()->findChild<QTextBrowser*>(QStringLiteral("explainDetails"));
    QVERIFY(details);
    emit details->anchorClicked(QUrl(QStringLiteral("step:1")));
    QCOMPARE(chosen.size(), 1);
    QCOMPARE(app.w.timelinePane()->view()->overlay()->name, std::string("SCALE"));
  }

  // The Explanation dock opens with the diagnosis's headline, and its steps table says what cost each
  // step most: the largest part of that step (argmax over the parts, taken here from the parts).
  // A click on the column's header sorts the steps by it, largest first on the second click.
  void explanationOpensWithTheDiagnosis() {
    App app;
    QVERIFY(app.open(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/kineto_tb_resnet50_nw0.pt.trace.json.gz")));
    const Explanation& x = *app.w.trace()->snapshot->explanation;
    QVERIFY(!x.diagnosis.headline.empty());
    auto* header = app.w.explainPanel()->findChild<QLabel*>(QStringLiteral("explainHeader"));
    QVERIFY(header);
    QVERIFY2(header->text().startsWith(QStringLiteral("<b>What costs the most: ")), qPrintable(header->text()));
    QTableView* steps = app.w.explainPanel()->stepsView();
    const QAbstractItemModel* m = steps->model();
    int col = -1;
    for (int c = 0; c < m->columnCount(); ++c)
      if (m->headerData(c, Qt::Horizontal).toString() == QStringLiteral("Cost it most")) col = c;
    QVERIFY(col >= 0);
    QCOMPARE(m->rowCount(), static_cast<int>(x.diagnosis.steps.size()));
    for (int r = 0; r < m->rowCount(); ++r) {
      const StepWaits& st = x.diagnosis.steps[static_cast<size_t>(r)];
      int top = 0;
      for (int c = 1; c < kCauseCount; ++c)
        if (st.parts[c] > st.parts[top]) top = c;
      QCOMPARE(m->index(r, col).data().toString(),
               QString::fromStdString(causeLabel(static_cast<Cause>(top)) + " " + spanDurationText(st.parts[top])));
    }
    clickHeader(steps, col);
    clickHeader(steps, col);
    QVERIFY(sortedBy(m, col, Qt::DescendingOrder) || sortedBy(m, col, Qt::AscendingOrder));
  }

  // The Overview's bars are the diagnosis's split: one bar per step whose parts add up to the step's
  // wall time, a legend entry per cause that holds time; opened with a click on its tab.
  void overviewBarsAreTheDiagnosis() {
#if __has_include(<QtCharts/QChartView>)
    App app;
    QVERIFY(app.open(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/kineto_tb_resnet50_nw0.pt.trace.json.gz")));
    QTabWidget* tabs = app.w.viewTabs();
    ViewPanel* overview = qobject_cast<ViewPanel*>(tabs->widget(1));
    QVERIFY(overview);
    QSignalSpy ready(overview, &ViewPanel::ready);
    QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, Qt::NoModifier, tabs->tabBar()->tabRect(1).center());
    QVERIFY(ready.size() > 0 || ready.wait(30000));
    auto* view = overview->findChild<QChartView*>(QStringLiteral("overviewChart"));
    QVERIFY(view);
    auto* bars = qobject_cast<QHorizontalStackedBarSeries*>(view->chart()->series().value(0));
    QVERIFY(bars);
    const Diagnosis& d = app.w.trace()->snapshot->explanation->diagnosis;
    const int n = static_cast<int>(d.steps.size());
    QVERIFY(n > 1);
    QStringList labels;
    for (QBarSet* set : bars->barSets()) {
      QCOMPARE(set->count(), n);
      labels << set->label();
    }
    for (int i = 0; i < n; ++i) {  // bottom-up on the axis: the last step first
      double sum = 0;
      for (QBarSet* set : bars->barSets()) sum += set->at(i);
      const StepWaits& st = d.steps[static_cast<size_t>(n - 1 - i)];
      QVERIFY2(std::abs(sum - static_cast<double>(st.spanNs()) / 1e6) < 1e-6, qPrintable(QString::number(sum)));
    }
    for (int c = 0; c < kCauseCount; ++c) {
      int64_t total = 0;
      for (const StepWaits& st : d.steps) total += st.parts[c];
      QCOMPARE(labels.contains(QString::fromStdString(causeLabel(static_cast<Cause>(c)))), total > 0);
    }
#else
    QSKIP("built without Qt Charts");
#endif
  }

  // Tab leaves a table (the arrows move in it): from a cell of the Operators table, Tab takes the
  // focus out of the table, and Shift+Tab back into it.
  void tabLeavesTheTable() {
    App app;
    QVERIFY(app.openSample());
    QVERIFY(QTest::qWaitForWindowExposed(&app.w));
    QTableView* view = app.w.tablePane()->view();
    view->setFocus();
    view->setCurrentIndex(view->model()->index(0, 0));
    QTRY_VERIFY(view->hasFocus());
    QTest::keyClick(view, Qt::Key_Right);
    QCOMPARE(view->currentIndex().column(), 1);  // the arrows move inside
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
    QWidget* after = QApplication::focusWidget();
    QVERIFY(after);
    QVERIFY2(after != view && !view->isAncestorOf(after), qPrintable(after->objectName()));
    QTest::keyClick(after, Qt::Key_Backtab);
    QCOMPARE(QApplication::focusWidget(), static_cast<QWidget*>(view));
  }

  // Ctrl+F searches where the user can see it: from the Overview tab it brings the Operators table
  // forward and types into its filter. Help > Keyboard Shortcuts (Ctrl+/) lists the menus' keys.
  void findFromAnyTabAndShortcutsListed() {
    App app;
    QVERIFY(app.openSample());
    QVERIFY(QTest::qWaitForWindowExposed(&app.w));
    QTabWidget* tabs = app.w.viewTabs();
    QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, Qt::NoModifier, tabs->tabBar()->tabRect(1).center());
    QCOMPARE(tabs->currentIndex(), 1);
    QTest::keyClick(&app.w, Qt::Key_F, Qt::ControlModifier);
    QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(app.w.tablePane()));
    auto* filter = qobject_cast<QLineEdit*>(QApplication::focusWidget());
    QVERIFY2(filter && app.w.tablePane()->isAncestorOf(filter) && filter->isVisible(),
             qPrintable(QApplication::focusWidget() ? QApplication::focusWidget()->objectName() : QString("none")));
    QTest::keyClicks(filter, QStringLiteral("softmax"));
    QTRY_VERIFY(app.w.tablePane()->proxy()->rowCount() > 0);
    for (int r = 0; r < app.w.tablePane()->proxy()->rowCount(); ++r)
      QVERIFY(app.w.tablePane()->proxy()->index(r, 0).data().toString().contains(QStringLiteral("softmax"),
                                                                                 Qt::CaseInsensitive));
    QString listed;
    QTimer::singleShot(0, [&listed] {
      auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
      if (!box) return;
      listed = box->text();
      box->close();
    });
    QTest::keyClick(&app.w, Qt::Key_Slash, Qt::ControlModifier);
    QTRY_VERIFY(!listed.isEmpty());
    for (const char* key : {"Ctrl+F", "F5", "Ctrl+K", "Ctrl+Shift+S", "Tab"})
      QVERIFY2(listed.contains(QString::fromLatin1(key)), key);
  }

  // At 1280x800 the window never grows past its size, whatever the user opens: every view tab, the
  // Compare dock with a comparison in it, the Run panel.
  void windowStaysInside1280x800() {
    App app;
    QVERIFY(app.open(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/kineto_tb_resnet50_nw0.pt.trace.json.gz")));
    QVERIFY(QTest::qWaitForWindowExposed(&app.w));
    const QSize start = app.w.size();
    QCOMPARE(start, QSize(1280, 800));
    QTabWidget* tabs = app.w.viewTabs();
    QStringList grew;
    auto within = [&](const QString& what) {
      QCoreApplication::processEvents();
      if (app.w.width() > start.width() || app.w.height() > start.height())
        grew << QString("%1: %2x%3").arg(what).arg(app.w.width()).arg(app.w.height());
    };
    for (int t = 0; t < tabs->count(); ++t) {
      // Operators is the table itself; every other tab is a view that fills itself, then says ready.
      auto* panel = qobject_cast<ViewPanel*>(tabs->widget(t));
      std::optional<QSignalSpy> ready;
      if (panel) ready.emplace(panel, &ViewPanel::ready);
      QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, Qt::NoModifier, tabs->tabBar()->tabRect(t).center());
      if (ready) QVERIFY(ready->size() > 0 || ready->wait(30000));
      within(tabs->tabText(t));
    }
    QSignalSpy compared(app.w.compareView(), &CompareView::compared);
    app.w.compareFiles(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_trace_diff_control.json.gz"),
                       QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_trace_diff_test_v100.json.gz"), false);
    QVERIFY(compared.wait(60000));
    within("Compare");
    // Its tables keep the names to a fixed width (the whole name on pointing): the figures stay in view.
    auto* changes = app.w.compareView()->findChild<QTableView*>(QStringLiteral("compareChanges"));
    QVERIFY(changes && changes->model()->rowCount() > 0);
    for (int c = 0; c < changes->model()->columnCount(); ++c)
      QVERIFY2(changes->columnWidth(c) <= 400, qPrintable(changes->model()->headerData(c, Qt::Horizontal).toString()));
    app.w.dock(QStringLiteral("runDock"))->show();
    app.w.dock(QStringLiteral("runDock"))->raise();
    within("Run");
    QVERIFY2(grew.isEmpty(), qPrintable(grew.join(QStringLiteral("; "))));
    // The status bar keeps its figures in view, even in a narrower window (960 px): "loaded in … ms"
    // fits the label, which cuts only the path after it.
    app.w.resize(960, 800);
    QCoreApplication::processEvents();
    auto* summary = app.w.statusBar()->findChild<QLabel*>(QStringLiteral("summary"));
    QVERIFY(summary);
    const QString text = summary->text();
    const qsizetype loaded = text.indexOf(QStringLiteral(" ms"), text.indexOf(QStringLiteral("loaded in")));
    QVERIFY2(loaded > 0, qPrintable(text));
    QVERIFY2(summary->fontMetrics().horizontalAdvance(text.left(loaded + 3)) <= summary->width(),
             qPrintable(QString("%1 px of text in a %2 px label: %3")
                            .arg(summary->fontMetrics().horizontalAdvance(text.left(loaded + 3)))
                            .arg(summary->width())
                            .arg(text)));
  }

  // Finding 4: Compare speaks one sign, B - A, in its summary and its tables.
  void compareOneSign() {
    App app;
    QVERIFY(app.open(kSoftmax));
    QVERIFY(app.open(kNone));
    QSignalSpy compared(app.w.compareView(), &CompareView::compared);
    QString err;
    QVERIFY2(app.w.compareRows(0, 1, &err), qPrintable(err));  // A: softmax, B: none
    QVERIFY(compared.wait(30000));
    const QString summary = app.w.compareView()->perturbationText();
    QVERIFY2(summary.contains(QStringLiteral("298.889 us in A vs 211.845 us in B (-87.044 us, B - A)")),
             qPrintable(summary));
    // The Steps tab: SCALE's host time delta has the same sign (B - A: shorter in B).
    CompareModel* steps = app.w.compareView()->stepsModel();
    int scale = -1;
    for (int r = 0; r < steps->rowCount(); ++r)
      if (steps->index(r, 0).data().toString().startsWith(QStringLiteral("SCALE"))) scale = r;
    QVERIFY(scale >= 0);
    const double a = steps->index(scale, 1).data(TableModelBase::SortRole).toDouble();
    const double b = steps->index(scale, 2).data(TableModelBase::SortRole).toDouble();
    const double d = steps->index(scale, 3).data(TableModelBase::SortRole).toDouble();
    QCOMPARE(d, b - a);
    QVERIFY(app.w.compareView()->findChild<QLabel*>()->text().size() > 0);
  }

  // Finding 5: a CPU run shows nothing of CUDA: no CUDA-event time, no "events" bars, and a
  // share of a zero GPU total is a dash, not NaN.
  void cpuRunShowsNoCuda() {
    App app;
    QVERIFY(app.open(kCpuRun));
    const QString explain = app.w.explainPanel()->plainText();
    QVERIFY(!explain.contains(QStringLiteral("CUDA-event time")));
    // The answer: host time only, said so; no CUPTI or CUDA-event column of zeros.
    QVERIFY2(explain.contains(QStringLiteral("This run was on the CPU")), qPrintable(explain.left(300)));
    QVERIFY(!explain.contains(QStringLiteral("CUPTI (its kernels")));
    QVERIFY(!explain.contains(QStringLiteral("CUDA events around it")));
    if (PlotsPanel::chartsAvailable()) QVERIFY(!app.w.plotsPanel()->stepSeries().contains(QStringLiteral("events")));
    const QAbstractItemModel* m = app.w.tablePane()->view()->model();
    const int pct = KeyAveragesModel::columnOf(Column::SelfDevicePct);
    for (int r = 0; r < m->rowCount(); ++r) {
      const QString cell = m->index(r, pct).data().toString();
      QVERIFY2(!cell.contains(QStringLiteral("NaN")), qPrintable(cell));
      QCOMPARE(cell, QStringLiteral("—"));
    }
  }

  // A trace recorded without input shapes (record_shapes=False) cannot be grouped by them: the
  // choice is greyed out and says why; a trace with shapes offers it again.
  void groupByShapeNeedsShapes() {
    App app;
    QVERIFY(app.open(QStringLiteral(ATTNSCOPE_TEST_DATA "/ext/hta_cp_alexnet.json.gz")));
    auto* group = app.w.tablePane()->findChild<QComboBox*>(QStringLiteral("groupBy"));
    QVERIFY(group);
    const int shapeItem = group->findData(static_cast<int>(GroupBy::InputShape));
    QVERIFY(group->itemText(shapeItem).contains(QStringLiteral("none recorded")));
    QVERIFY(group->itemData(shapeItem, Qt::ToolTipRole).toString().contains(QStringLiteral("record_shapes=True")));
    group->setFocus();
    QTest::keyClick(group, Qt::Key_Down);
    QCOMPARE(app.w.tablePane()->groupBy(), GroupBy::Name);
    QVERIFY(app.open(kSoftmax));
    QCOMPARE(group->itemText(shapeItem), QStringLiteral("Input shape"));
    group->setFocus();
    QTest::keyClick(group, Qt::Key_Down);
    QCOMPARE(app.w.tablePane()->groupBy(), GroupBy::InputShape);
  }

  // Finding 6: Why answers for the row selected (grouped by shape: that shape's row) and says
  // why torch's total and the GPU work its ops launched differ.
  void whyForTheSelectedRow() {
    App app;
    QVERIFY(app.openSample());
    app.w.dock(QStringLiteral("whyDock"))->raise();
    auto* group = app.w.tablePane()->findChild<QComboBox*>(QStringLiteral("groupBy"));
    pickComboItem(group, 1);  // Input shape
    QCOMPARE(app.w.tablePane()->groupBy(), GroupBy::InputShape);
    QTableView* view = app.w.tablePane()->view();
    // The QK GEMM's aten::bmm row: one call, shapes [[8, 16, 1024, 64], [8, 16, 64, 1024]].
    int row = -1;
    const int shapes = KeyAveragesModel::columnOf(Column::InputShapes);
    for (int r = 0; r < view->model()->rowCount(); ++r)
      if (view->model()->index(r, 0).data().toString() == QLatin1String("aten::bmm") &&
          view->model()->index(r, shapes).data().toString().contains(
              QStringLiteral("[[128, 1024, 64], [128, 64, 1024]]")))
        row = r;
    QVERIFY(row >= 0);
    QSignalSpy why(app.w.whyPanel(), &WhyPanel::shown);
    clickRow(view, row);
    QVERIFY(why.wait(30000));
    const QString t = app.w.whyPanel()->plainText();
    QVERIFY2(t.contains(QStringLiteral("1 call,")), qPrintable(t));
    QVERIFY2(!t.contains(QStringLiteral("2 calls")), qPrintable(t));
    QVERIFY2(t.contains(QStringLiteral("counted twice")) && t.contains(QStringLiteral("Activity Buffer Request")),
             qPrintable(t));
  }

  // Finding 7: a cut trace says so where the explanation is read.
  // A load shows where it is in the status bar (the file's bytes, events, time
  // left) and its Cancel button stops it: the trace shown before stays, with
  // everything it had. The file: 4 GiB of blanks between two events in a
  // 4 MB .gz (inflating it takes seconds; nothing of it is kept).
  void loadProgressAndCancel() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("slow.json.gz"));
    const std::string a = R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1})";
    const std::string gz = inflatesTo("{\"traceEvents\": [" + a + ",", ' ', 4096, a + "]}");
    QFile out(file);
    QVERIFY(out.open(QIODevice::WriteOnly) && out.write(gz.data(), static_cast<qint64>(gz.size())) > 0);
    out.close();
    App app;
    QVERIFY(app.openSample());
    const QString title = app.w.windowTitle();
    const int rows = app.w.tablePane()->shownRowCount();
    auto* bar = app.w.findChild<LoadProgressBar*>(QStringLiteral("loadProgress"));
    auto* cancel = app.w.findChild<QPushButton*>(QStringLiteral("cancelLoad"));
    QVERIFY(bar && cancel);
    QVERIFY(!bar->isVisible());
    QSignalSpy stopped(&app.w, &MainWindow::loadCancelled);
    app.w.openTrace(file);
    QTRY_VERIFY_WITH_TIMEOUT(bar->isVisible() && bar->text().contains(QStringLiteral(" of ")), 10000);
    QVERIFY2(bar->text().startsWith(QStringLiteral("Reading slow.json.gz")), qPrintable(bar->text()));
    QVERIFY2(bar->text().contains(QStringLiteral("events")), qPrintable(bar->text()));
    QTest::mouseClick(cancel, Qt::LeftButton);
    QVERIFY(stopped.wait(60000));
    QVERIFY(!bar->isVisible());
    QCOMPARE(app.w.windowTitle(), title);
    QCOMPARE(app.w.tablePane()->shownRowCount(), rows);
    QVERIFY2(app.w.statusBar()->currentMessage().contains(QStringLiteral("Stopped loading slow.json.gz")),
             qPrintable(app.w.statusBar()->currentMessage()));
    // Esc cancels too.
    app.w.openTrace(file);
    QTRY_VERIFY_WITH_TIMEOUT(bar->isVisible(), 10000);
    QTest::keyClick(&app.w, Qt::Key_Escape);
    QVERIFY(stopped.wait(60000));
    QCOMPARE(app.w.windowTitle(), title);
  }

  void cutTraceSaysSo() {
    QTemporaryDir dir;
    QFile f(kSoftmax);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray all = f.readAll();
    const QString cut = dir.filePath(QStringLiteral("cut.json"));
    QFile out(cut);
    QVERIFY(out.open(QIODevice::WriteOnly) && out.write(all.left(all.size() * 2 / 3)) > 0);
    out.close();
    App app;
    QVERIFY(app.open(cut));
    const QString text = app.w.explainPanel()->plainText();
    QVERIFY2(text.contains(QStringLiteral("This trace was cut")), qPrintable(text.left(600)));
  }

  // What an engine run says about its own recording (CUPTI APIs left out,
  // input shapes not recorded) is in the Explanation the user reads, after
  // its heading, as the trace's metadata has it.
  void explanationSaysWhatTheRunRecorded() {
    const QString trace = QStringLiteral(ATTNSCOPE_TEST_DATA "/h200/softmax_none_iters3_1x8x64x64.json");
    QFile f(trace);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonArray notes = QJsonDocument::fromJson(f.readAll()).object()["attnscope"].toObject()["notes"].toArray();
    QVERIFY(!notes.isEmpty());
    App app;
    QVERIFY(app.open(trace));
    const QString text = app.w.explainPanel()->plainText();
    const qsizetype heading = text.indexOf(QStringLiteral("What the run recorded:"));
    QVERIFY2(heading >= 0, qPrintable(text.left(600)));
    for (const auto& n : notes) QVERIFY2(text.indexOf(n.toString(), heading) > heading, qPrintable(n.toString()));
  }

  // Finding 8: the small ones. The Keys button shows the keys; the cursor's time readout
  // never covers a tick label; the glossary's definition gets the dock's height; --help
  // needs no display.
  void smallOnes() {
    App app;
    QVERIFY(app.openSample());
    TimelinePane* pane = app.w.timelinePane();
    auto* keys = pane->findChild<QToolButton*>(QStringLiteral("timelineKeys"));
    auto* help = pane->findChild<QLabel*>(QStringLiteral("timelineKeysHelp"));
    QVERIFY(keys && help && !help->isVisible());
    clickWidget(keys);
    QVERIFY(help->isVisible());
    QVERIFY(help->text().contains(QStringLiteral("zoom")));
    clickWidget(keys);
    QVERIFY(!help->isVisible());

    TimelineView* v = pane->view();
    for (int x = 250; x < v->viewport()->width() - 20; x += 37) {
      QTest::mouseMove(v->viewport(), QPoint(x, 100));
      const QRectF readout = v->hoverReadoutRect();
      if (readout.isEmpty()) continue;  // no hover under this platform
      QVERIFY(readout.top() >= 0 && readout.bottom() <= TimelineView::kRulerHeight);
      QVERIFY(readout.left() >= TimelineView::kHeaderWidth);
    }

    QDockWidget* gloss = app.w.dock(QStringLiteral("glossaryDock"));
    gloss->raise();
    QCoreApplication::processEvents();
    QVERIFY(app.w.glossary()->lookup(QStringLiteral("Self CUDA %")));
    auto* def = app.w.glossary()->findChild<QTextBrowser*>(QStringLiteral("glossaryText"));
    QVERIFY(def);
    QVERIFY2(def->height() >= gloss->height() * 6 / 10,
             qPrintable(QString("definition %1 px in a %2 px dock").arg(def->height()).arg(gloss->height())));

    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(ATTNSCOPE_GUI_EXE), {QStringLiteral("--help")});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 0);
    QVERIFY(p.readAllStandardOutput().contains("--screenshot"));
  }

  // With no engine where the CLI looks for it, the Run panel names that path and the one command that
  // builds it, and Run is off (the CLI honours ATTNSCOPE_ENGINE_EXE for where it looks).
  void runPanelSaysWhereTheEngineIsMissing() {
    const QByteArray missing = "/opt/nowhere/attnscope-engine";
    qputenv("ATTNSCOPE_ENGINE_EXE", missing);
    EngineRunner probe;
    probe.setProgram(QStringLiteral(ATTNSCOPE_BIN_DIR "/attnscope-cli"));
    QSignalSpy probed(&probe, &EngineRunner::availabilityChanged);
    probe.probe();
    const bool answered = probed.wait(30000) || !probed.isEmpty();
    qunsetenv("ATTNSCOPE_ENGINE_EXE");
    QVERIFY(answered);
    QVERIFY(!probe.availability().engineBuilt);
    const QString reason = probe.availability().reason;
    QVERIFY2(reason.contains(QString::fromLatin1(missing)), qPrintable(reason));
    QVERIFY2(reason.contains(QStringLiteral("scripts/run")), qPrintable(reason));
  }

  // The command the Run panel shows when it first appears is the one its boxes ask for: once the
  // engine has said what it can do here (no GPU: the GPU-only boxes are unticked), the preview's
  // --timing list names exactly the ticked methods, before any box is touched.
  void runPreviewMatchesBoxesAtFirstShow() {
    App app;
    QVERIFY(app.openSample());
    RunPanel* panel = showRunPanel(app);
    QVERIFY(waitForProbe(panel->runner()));
    QCoreApplication::processEvents();
    auto* preview = panel->findChild<QPlainTextEdit*>(QStringLiteral("commandPreview"));
    QVERIFY(preview);
    const QRegularExpressionMatch m =
        QRegularExpression(QStringLiteral("--timing (\\S+)")).match(preview->toPlainText());
    QVERIFY2(m.hasMatch(), qPrintable(preview->toPlainText()));
    const QStringList shown = m.captured(1).split(QLatin1Char(','));
    QStringList ticked;
    for (QCheckBox* box : panel->findChildren<QCheckBox*>()) {
      if (!box->objectName().startsWith(QStringLiteral("timing_"))) continue;
      if (box->isChecked()) ticked << box->objectName().mid(7);
    }
    QVERIFY(!ticked.isEmpty());
    ticked.sort();
    QStringList sortedShown = shown;
    sortedShown.sort();
    QCOMPARE(sortedShown, ticked);
  }

  // Every action of the "used by" line, through the widgets: wrapping boxes and sync modes
  // change the command the Run panel will start; Run (CPU) ends in the Runs list.
  void runPanelByInput() {
    App app;
    QVERIFY(app.openSample());
    RunPanel* panel = showRunPanel(app);
    auto* preview = panel->findChild<QPlainTextEdit*>(QStringLiteral("commandPreview"));
    QVERIFY(preview);
    for (const char* key : {"qk", "scale", "softmax", "av"}) {
      auto* box = panel->findChild<QCheckBox*>(QStringLiteral("wrap_") + key);
      QVERIFY(box);
      const bool before = box->isChecked();
      clickWidget(box);
      QCOMPARE(box->isChecked(), !before);
      QCOMPARE(preview->toPlainText().contains(QStringLiteral("--wrap")) &&
                   preview->toPlainText().contains(QString::fromLatin1(key)),
               box->isChecked());
      clickWidget(box);
      QCOMPARE(box->isChecked(), before);
    }
    auto* sync = panel->findChild<QComboBox*>(QStringLiteral("sync"));
    QVERIFY(sync);
    const char* modes[] = {"--sync none", "--sync end", "--sync step", "--sync blocking"};
    for (int i = 0; i < sync->count(); ++i) {
      pickComboItem(sync, i);
      QVERIFY2(preview->toPlainText().contains(QString::fromLatin1(modes[i])), qPrintable(preview->toPlainText()));
    }
    pickComboItem(sync, 0);
    // Run on the CPU: the run ends in the Runs list, and its trace is shown.
    EngineRunner* runner = panel->runner();
    QVERIFY(waitForProbe(runner));
    // The timing boxes follow the device: a CPU run cannot time CUDA events or sync a GPU.
    auto* device = panel->findChild<QComboBox*>(QStringLiteral("device"));
    pickComboItem(device, device->findData(static_cast<int>(RunDevice::Cpu)));
    for (const char* gpuOnly : {"events", "host-sync", "op-events"}) {
      auto* box = panel->findChild<QCheckBox*>(QStringLiteral("timing_") + QLatin1String(gpuOnly));
      QVERIFY2(box, gpuOnly);
      QVERIFY2(!box->isChecked() && !box->isEnabled(), gpuOnly);
      clickWidget(box);
      QVERIFY2(!box->isChecked(), gpuOnly);
    }
    QVERIFY2(!preview->toPlainText().contains(QStringLiteral("events")), qPrintable(preview->toPlainText()));
    QVERIFY2(!preview->toPlainText().contains(QStringLiteral("host-sync")), qPrintable(preview->toPlainText()));
    // The host clock needs no GPU: its box stays live and follows a click.
    auto* host = panel->findChild<QCheckBox*>(QStringLiteral("timing_host"));
    QVERIFY(host && host->isEnabled());
    const bool hostWas = host->isChecked();
    clickWidget(host);
    QCOMPARE(host->isChecked(), !hostWas);
    QCOMPARE(preview->toPlainText().contains(QStringLiteral("host")), !hostWas);
    clickWidget(host);
    QCOMPARE(host->isChecked(), hostWas);
    if (!runner->availability().engineBuilt) QSKIP("attnscope-cli was built without the engine: Run cannot start");
    // All four steps wrapped, through the boxes.
    for (const char* key : {"qk", "scale", "softmax", "av"}) {
      auto* box = panel->findChild<QCheckBox*>(QStringLiteral("wrap_") + key);
      if (!box->isChecked()) clickWidget(box);
      QVERIFY(box->isChecked());
    }
    QVERIFY2(preview->toPlainText().contains(QStringLiteral("qk,scale,softmax,av")),
             qPrintable(preview->toPlainText()));
    // Input shapes are off by default (they lengthen the steps); the box asks for them.
    auto* shapes = panel->findChild<QCheckBox*>(QStringLiteral("recordShapes"));
    QVERIFY(shapes && !shapes->isChecked());
    QVERIFY(!preview->toPlainText().contains(QStringLiteral("--record-shapes")));
    clickWidget(shapes);
    QVERIFY(shapes->isChecked());
    QVERIFY2(preview->toPlainText().contains(QStringLiteral("--record-shapes")), qPrintable(preview->toPlainText()));
    QSignalSpy finished(panel, &RunPanel::runFinished);
    const int runsBefore = app.w.runs()->rowCount();
    clickWidget(panel->findChild<QPushButton*>(QStringLiteral("run")));
    QVERIFY(finished.wait(180000));
    QCOMPARE(app.w.runs()->rowCount(), runsBefore + 1);
    const RunEntry* e = app.w.runs()->entry(app.w.runs()->rowCount() - 1);
    QVERIFY2(e && e->status == RunStatus::Done, e ? qPrintable(e->message + e->stderrText) : "no entry");
    QVERIFY(app.shown.wait(30000) || app.w.trace()->path == e->path);
    // The run recorded what the box asked for: its ops carry their input shapes.
    const EventStore& store = *app.w.trace()->snapshot->store;
    QVERIFY(store.meta().recordShapes);
    size_t withShapes = 0;
    for (const Event& ev : store.events())
      if (const EventArgs* a = store.argsOf(ev); a && a->inputDims) ++withShapes;
    QVERIFY2(withShapes > 0, "no op of the run has input shapes");
  }

  // File > Export Table, through the menu and its dialog.
  void exportThroughTheMenu() {
    App app;
    QVERIFY(app.openSample());
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("table.csv"));
    bool typed = false;
    QTimer::singleShot(0, [&] {
      // The dialog is modal: type the name into it once it is up.
      for (int i = 0; i < 100 && !qobject_cast<QFileDialog*>(QApplication::activeModalWidget()); ++i) QTest::qWait(50);
      auto* dlg = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
      if (!dlg) return;
      auto* name = dlg->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"));
      if (!name) return;
      // Keys reach the dialog only once its window is exposed.
      if (!QTest::qWaitForWindowExposed(dlg)) return;
      name->selectAll();
      QTest::keyClicks(name, path);
      QTest::qWait(100);  // let the dialog's completer settle
      QTest::keyClick(name, Qt::Key_Return);
      typed = true;
    });
    QMenu* file = nullptr;
    for (QAction* a : app.w.menuBar()->actions())
      if (a->text().remove('&') == QLatin1String("File")) file = a->menu();
    QVERIFY(file);
    QAction* exportAct = nullptr;
    for (QAction* a : file->actions())
      if (a->text().remove('&').startsWith(QLatin1String("Export Table"))) exportAct = a;
    QVERIFY(exportAct && exportAct->isEnabled());
    exportAct->trigger();
    QVERIFY(typed);
    QFile csv(path);
    QVERIFY2(csv.open(QIODevice::ReadOnly), qPrintable(path));
    const QList<QByteArray> lines = csv.readAll().split('\n');
    QVERIFY(lines.size() > 10);
    QVERIFY(lines[0].startsWith("name,"));
  }

  // Selecting rows answers in the Why panel (on screen) and the Explanation panel; clicking an
  // event shows its details and its links.
  void selectionAnswers() {
    App app;
    QVERIFY(app.openSample());
    app.w.dock(QStringLiteral("whyDock"))->raise();
    QTableView* view = app.w.tablePane()->view();
    const int row = rowNamed(view->model(), QStringLiteral("SOFTMAX PASS"));
    QVERIFY(row >= 0);
    QSignalSpy why(app.w.whyPanel(), &WhyPanel::shown);
    clickRow(view, row);
    QVERIFY(why.wait(30000));
    QVERIFY(app.w.whyPanel()->plainText().startsWith(QStringLiteral("SOFTMAX PASS")));
    // The explanation's steps table: a click shows the step's card and its overlay.
    QTableView* steps = app.w.explainPanel()->stepsView();
    clickRow(steps, 2);
    QVERIFY(app.w.explainPanel()->plainText().contains(QStringLiteral("record_function")));
    QVERIFY(app.w.timelinePane()->view()->overlay().has_value());
    // An event on the timeline: its details, with the call that launched it.
    TimelineView* v = app.w.timelinePane()->view();
    EventId kernel = kNoEvent;
    for (EventId id = 0; id < v->store()->events().size(); ++id)
      if (v->store()->event(id).family == Family::Kernel) kernel = id;
    QVERIFY(kernel != kNoEvent);
    v->selectEvent(kernel, true);
    QVERIFY(app.w.dock(QStringLiteral("detailsDock"))->isVisible());
    const QString details = app.w.detailsPanel()->plainText();
    QVERIFY2(details.contains(QStringLiteral("Launched by cudaLaunchKernel")), qPrintable(details));
    QSignalSpy requested(app.w.detailsPanel(), &DetailsPanel::eventRequested);
    auto* text = app.w.detailsPanel()->findChild<QTextBrowser*>(QStringLiteral("detailsText"));
    const EventId launch = v->store()->callOfCorrelation(v->store()->event(kernel).correlation);
    emit text->anchorClicked(QUrl(QStringLiteral("event:%1").arg(launch)));
    QCOMPARE(requested.size(), 1);
    QCOMPARE(v->selectedEvent(), launch);
  }

  // The timeline by wheel and keys: zoom in at the cursor, pan, fit.
  void timelineWheelAndKeys() {
    App app;
    QVERIFY(app.openSample());
    TimelineView* v = app.w.timelinePane()->view();
    v->setFocus();
    const int64_t span0 = v->axis().span();
    const QPoint at(v->viewport()->width() / 2, 120);
    QWheelEvent wheel(at, v->viewport()->mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(v->viewport(), &wheel);
    QVERIFY2(v->axis().span() < span0, "the wheel zooms in");
    const int64_t span1 = v->axis().span();
    QTest::keyClick(v, Qt::Key_W);
    QVERIFY(v->axis().span() < span1);
    const int64_t start = v->axis().start();
    QTest::keyClick(v, Qt::Key_D);
    QVERIFY(v->axis().start() > start);
    QTest::keyClick(v, Qt::Key_A);
    QTest::keyClick(v, Qt::Key_A);
    QVERIFY(v->axis().start() < start);
    QTest::keyClick(v, Qt::Key_F);
    QCOMPARE(v->axis().span(), span0);
  }

  // Issue 20: two real runs of one model side by side. The button opens both timelines on one
  // axis, aligned at the median step; the wheel on one zooms both; a click on a change lights
  // its events in both; choosing another step in the box aligns there.
  void timelinesSideBySide() {
    App app;
    const QString a = QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_trace_diff_control.json.gz");
    const QString b = QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_trace_diff_test_v100.json.gz");
    QVERIFY(app.open(a));
    CompareView* cv = app.w.compareView();
    QSignalSpy compared(cv, &CompareView::compared);
    app.w.compareFiles(a, b, false);
    QVERIFY(compared.wait(60000));
    QVERIFY(cv->comparison() && cv->comparison()->stepPairing == "order");
    auto* open = cv->findChild<QPushButton*>(QStringLiteral("openTimelineDiff"));
    QVERIFY(open && open->isEnabled());
    QSignalSpy ready(cv, &CompareView::timelinesReady);
    app.w.dock(QStringLiteral("compareDock"))->raise();
    QCoreApplication::processEvents();
    clickWidget(open);
    QVERIFY(ready.size() > 0 || ready.wait(30000));
    TimelineDiff* diff = cv->timelines();
    QVERIFY(diff && diff->isVisible());
    QVERIFY(QTest::qWaitForWindowExposed(diff));
    TimelineView* va = diff->viewA();
    TimelineView* vb = diff->viewB();
    // Aligned at the median of the 6 pairs: ProfilerStep#1012, its start at one x in both.
    QCOMPARE(diff->alignedPair(), 3);
    const auto& pair = cv->comparison()->steps[3];
    QCOMPARE(diff->offsetNs(), pair.b->hostStartNs - pair.a->hostStartNs);
    QCOMPARE(va->xOf(pair.a->hostStartNs), vb->xOf(pair.b->hostStartNs));
    QCOMPARE(va->axis().span(), vb->axis().span());
    // The wheel over A zooms both.
    const int64_t span0 = va->axis().span();
    const QPoint at(va->viewport()->width() / 2, 120);
    QWheelEvent wheel(at, va->viewport()->mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(va->viewport(), &wheel);
    QVERIFY(va->axis().span() < span0);
    QCOMPARE(vb->axis().span(), va->axis().span());
    QCOMPARE(vb->axis().start(), va->axis().start() + diff->offsetNs());
    // Keys on B pan both.
    vb->setFocus();
    QTest::keyClick(vb, Qt::Key_D);
    QCOMPARE(va->axis().start() + diff->offsetNs(), vb->axis().start());
    // The top change (cudaMemcpyAsync, Self CPU) clicked: its calls lit in both timelines.
    QTableView* list = diff->changesView();
    clickRow(list, 0);
    const Change& top = cv->comparison()->changes[0];
    auto sorted = [](std::vector<EventId> v) {
      std::sort(v.begin(), v.end());
      return v;
    };
    QCOMPARE(sorted(va->highlighted()), sorted(top.evidenceA));
    QCOMPARE(sorted(vb->highlighted()), sorted(top.evidenceB));
    QVERIFY(!va->highlighted().empty() && !vb->highlighted().empty());
    QCOMPARE(va->store()->name(va->store()->event(va->selectedEvent())), std::string_view("cudaMemcpyAsync"));
    QCOMPARE(vb->store()->name(vb->store()->event(vb->selectedEvent())), std::string_view("cudaMemcpyAsync"));
    // Another step chosen in the box, by keyboard: aligned there.
    pickComboItem(diff->alignCombo(), 0);
    QCOMPARE(diff->alignedPair(), 0);
    const auto& first = cv->comparison()->steps[0];
    QCOMPARE(diff->offsetNs(), first.b->hostStartNs - first.a->hostStartNs);
    QCOMPARE(va->xOf(first.a->hostStartNs), vb->xOf(first.b->hostStartNs));
    // A click on an op in A selects the same op (same name, same occurrence in the step) in B.
    EventId op = kNoEvent;
    for (EventId id = 0; id < va->store()->events().size() && op == kNoEvent; ++id)
      if (va->store()->name(va->store()->event(id)) == "## backward ##" &&
          va->store()->event(id).start >= first.a->hostStartNs)
        op = id;
    QVERIFY(op != kNoEvent);
    va->selectEvent(op, false);
    QVERIFY(vb->selectedEvent() != kNoEvent);
    QCOMPARE(vb->store()->name(vb->store()->event(vb->selectedEvent())), std::string_view("## backward ##"));
    QVERIFY(vb->store()->event(vb->selectedEvent()).start >= first.b->hostStartNs &&
            vb->store()->event(vb->selectedEvent()).start < first.b->hostEndNs);
  }

  // Issue 16: the views as tabs, by real input. Clicking the Kernels tab computes it; a click on the
  // Total header sorts; a selected kernel lights its calls on the timeline; the Memory curve clicked
  // moves the timeline; the Modules tree of a with_stack trace sorts by its header.
  void viewsByInput() {
    App app;
    QVERIFY(app.open(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_spmd_dhen_rank1.json.gz")));
    QTabWidget* tabs = app.w.viewTabs();
    QCOMPARE(tabs->count(), 5);
    KernelsPanel* k = app.w.kernelsPanel();
    QSignalSpy kready(k, &ViewPanel::ready);
    QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, Qt::NoModifier, tabs->tabBar()->tabRect(2).center());
    QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(k));
    QVERIFY(kready.size() > 0 || kready.wait(30000));
    QTableView* kt = k->table();
    QVERIFY(kt->model()->rowCount() > 10);
    // The Total column: a click sorts largest first (as profilers do), its arrow pointing down the way
    // the values go, as in the Operators table; a second click reverses.
    int total = -1;
    for (int c = 0; c < kt->model()->columnCount(); ++c)
      if (kt->model()->headerData(c, Qt::Horizontal).toString() == QLatin1String("Total")) total = c;
    QVERIFY(total >= 0);
    const auto headerX = [&](int c) { return kt->horizontalHeader()->sectionViewportPosition(c) + 5; };
    const auto sortValue = [&](int r) {
      return kt->model()->index(r, total).data(TableModelBase::SortRole).toLongLong();
    };
    auto* kh = qobject_cast<SortHeaderView*>(kt->horizontalHeader());
    QVERIFY(kh);
    QTest::mouseClick(kt->horizontalHeader()->viewport(), Qt::LeftButton, Qt::NoModifier, QPoint(headerX(total), 5));
    QCOMPARE(kt->horizontalHeader()->sortIndicatorSection(), total);
    QCOMPARE(kh->sortArrow(total), QStyleOptionHeader::SortDown);
    for (int r = 1; r < kt->model()->rowCount(); ++r) QVERIFY(sortValue(r - 1) >= sortValue(r));
    QTest::mouseClick(kt->horizontalHeader()->viewport(), Qt::LeftButton, Qt::NoModifier, QPoint(headerX(total), 5));
    QCOMPARE(kh->sortArrow(total), QStyleOptionHeader::SortUp);
    for (int r = 1; r < kt->model()->rowCount(); ++r) QVERIFY(sortValue(r - 1) <= sortValue(r));
    // Ctrl+Shift+S on a cell of the column sorts the other way again: largest first.
    kt->setFocus();
    kt->setCurrentIndex(kt->model()->index(0, total));
    QTest::keyClick(kt, Qt::Key_S, Qt::ControlModifier | Qt::ShiftModifier);
    QCOMPARE(kh->sortArrow(total), QStyleOptionHeader::SortDown);
    for (int r = 1; r < kt->model()->rowCount(); ++r) QVERIFY(sortValue(r - 1) >= sortValue(r));
    clickRow(kt, 0);
    const auto& lit = app.w.timelinePane()->view()->highlighted();
    QVERIFY(!lit.empty());
    QCOMPARE(static_cast<qulonglong>(lit.size()),
             kt->model()->index(0, 0).siblingAtColumn(2).data(TableModelBase::SortRole).toULongLong());
    // Grouped by the launching op, chosen with the keyboard in the Group box.
    QSignalSpy regrouped(k, &ViewPanel::ready);
    pickComboItem(k->grouping(), 1);
    QVERIFY(regrouped.size() > 0 || regrouped.wait(30000));
    QCOMPARE(kt->model()->headerData(2, Qt::Horizontal).toString(), QStringLiteral("Launched by"));
    // Memory: the curve clicked moves the timeline to that time.
    MemoryPanel* m = app.w.memoryPanel();
    QSignalSpy mready(m, &ViewPanel::ready);
    QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, Qt::NoModifier, tabs->tabBar()->tabRect(3).center());
    QVERIFY(mready.size() > 0 || mready.wait(30000));
    QVERIFY(m->view() && !m->view()->devices.empty());
    QCOMPARE(m->view()->devices.front().label, std::string("GPU 1"));
    QWidget* chart = m->findChild<QWidget*>(QStringLiteral("memoryChart"));
    QVERIFY(chart);
    QCoreApplication::processEvents();
    auto* area = qobject_cast<QAbstractScrollArea*>(chart);
    QVERIFY(area);
    const QPoint at(area->viewport()->width() / 2, area->viewport()->height() / 2);
    const qint64 t = m->timeAtChartPoint(at);
    QVERIFY(t > 0);
    QTest::mouseClick(area->viewport(), Qt::LeftButton, Qt::NoModifier, at);
    const auto& ax = app.w.timelinePane()->view()->axis();
    QVERIFY2(std::llabs(ax.start() + ax.span() / 2 - t) <= ax.span() / 50 + 1000,
             "the timeline is centred on the click");
    // Modules: none in this trace, and it says how to get them.
    ModulesPanel* mod = app.w.modulesPanel();
    QSignalSpy modReady(mod, &ViewPanel::ready);
    QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, Qt::NoModifier, tabs->tabBar()->tabRect(4).center());
    QVERIFY(modReady.size() > 0 || modReady.wait(30000));
    QVERIFY(!mod->view()->present);
    // Overview: the parts of each step add up to its span in the table too.
    OverviewPanel* ov = app.w.overviewPanel();
    QSignalSpy oready(ov, &ViewPanel::ready);
    QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, Qt::NoModifier, tabs->tabBar()->tabRect(1).center());
    QVERIFY(oready.size() > 0 || oready.wait(30000));
    QAbstractItemModel* om = ov->table()->model();
    QCOMPARE(om->rowCount(), 6);  // five steps and all of them
    for (int r = 0; r < om->rowCount(); ++r) {
      qlonglong parts = 0;
      for (int c = 2; c < 2 + kOverviewParts; ++c) parts += om->index(r, c).data(TableModelBase::SortRole).toLongLong();
      QCOMPARE(parts, om->index(r, 1).data(TableModelBase::SortRole).toLongLong());
    }
  }

  void modulesTreeSortsByHeader() {
    App app;
    QVERIFY(app.open(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/tl_h100_owlv2.json.gz")));
    QTabWidget* tabs = app.w.viewTabs();
    ModulesPanel* mod = app.w.modulesPanel();
    QSignalSpy ready(mod, &ViewPanel::ready);
    QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, Qt::NoModifier, tabs->tabBar()->tabRect(4).center());
    QVERIFY(ready.size() > 0 || ready.wait(30000));
    QVERIFY(mod->view()->present);
    QTreeView* tree = mod->tree();
    QVERIFY(tree->model()->rowCount() >= 1);
    // GPU time launched (column 4): clicked twice, descending among the top-level rows' children.
    const int x = tree->header()->sectionViewportPosition(4) + 5;
    QTest::mouseClick(tree->header()->viewport(), Qt::LeftButton, Qt::NoModifier, QPoint(x, 5));
    QTest::mouseClick(tree->header()->viewport(), Qt::LeftButton, Qt::NoModifier, QPoint(x, 5));
    QCOMPARE(tree->header()->sortIndicatorSection(), 4);
    const QModelIndex root = tree->model()->index(0, 0);
    const int n = tree->model()->rowCount(root);
    QVERIFY(n >= 2);
    for (int r = 1; r < n; ++r)
      QVERIFY(tree->model()->index(r - 1, 4, root).data(TableModelBase::SortRole).toLongLong() >=
              tree->model()->index(r, 4, root).data(TableModelBase::SortRole).toLongLong());
    // A module selected lights its calls.
    tree->setCurrentIndex(tree->model()->index(0, 0, root));
    QVERIFY(!app.w.timelinePane()->view()->highlighted().empty());
  }
};

QTEST_MAIN(AppTest)
#include "test_app.moc"
