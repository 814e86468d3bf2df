// Issue 41 through the real window on a 1280x800 screen (the offscreen platform configured so,
// tests/ui/screen_1280x800.json): the founding answer in view at first launch and after CPU runs,
// each figure against the raw events (tests/common/founding_oracle.h); room at 1280x800 (the windows
// inside the screen with a title bar, the timeline's share, the first GPU lane, the table's rows, the
// side panels collapsing and keeping their sizes); and each defect the issue lists, through real
// mouse, wheel and keys.
#include <zlib.h>
#include <QHelpEvent>
#include <QScreen>
#include <QScrollBar>
#include <QSpinBox>
#include <QToolTip>
#include <QWheelEvent>
#if __has_include(<QtCharts/QBarCategoryAxis>)
#include <QtCharts/QBarCategoryAxis>
#endif

#include "app_harness.h"
#include "founding_oracle.h"
#include "test_json.h"
#include "ui/common/screen_fit.h"
#include "ui/panels/steps_model.h"
#include "ui/panels/steps_view.h"
#include "ui/ranks/ranks_view.h"
#include "ui/timeline/index.h"

using namespace apptest;

namespace {

const QString kBundled = QStringLiteral(ATTNSCOPE_SOURCE_DIR "/resources/softmax_8x16x1024x64.json");
const QString kResnet = QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/kineto_tb_resnet50_nw0.pt.trace.json.gz");
const QString kDiffA = QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_trace_diff_control.json.gz");
const QString kDiffB = QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_trace_diff_test_v100.json.gz");

// The window as it opens, sized by itself (no resize by the test).
struct Window {
  MainWindow w;
  QSignalSpy shown{&w, &MainWindow::traceShown};
  explicit Window(MainWindowOptions o = MainWindowOptions{false, false, true}) : w(o) { w.show(); }
  bool wait(qsizetype before) { return shown.size() > before || shown.wait(60000); }
  bool open(const QString& path) {
    const qsizetype before = shown.size();
    w.openTrace(path);
    return wait(before);
  }
  bool openSample() {
    const qsizetype before = shown.size();
    w.openBundledSample();
    return wait(before);
  }
  // The first show's proportions are set once the window has its size: until the timeline settles.
  void settle() {
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    int h = -1;
    for (int i = 0; i < 50 && h != w.timelinePane()->height(); ++i) {
      h = w.timelinePane()->height();
      QTest::qWait(60);
    }
  }
};

// "540.410 us", "12.345 ms": the app's figures, formatted here by hand.
QString byHand(qint64 ns) {
  if (ns < 1'000'000) return QString::number(ns / 1000.0, 'f', 3) + " us";
  if (ns < 1'000'000'000) return QString::number(ns / 1e6, 'f', 3) + " ms";
  return QString::number(ns / 1e9, 'f', 3) + " s";
}

// The window with the frame a window manager adds (the title bar) lies inside the screen's
// available geometry.
bool insideScreen(QWidget* w, QString* why) {
  const QRect avail = w->screen()->availableGeometry();
  const QMargins m = windowFrame(w);
  const QRect outer = w->geometry().marginsAdded(m);
  *why = QString("%1: %2x%3 at (%4,%5) with its frame in %6x%7 at (%8,%9)")
             .arg(w->objectName())
             .arg(outer.width())
             .arg(outer.height())
             .arg(outer.x())
             .arg(outer.y())
             .arg(avail.width())
             .arg(avail.height())
             .arg(avail.x())
             .arg(avail.y());
  return avail.contains(outer) && m.top() >= 20;
}

// A row of a table is inside what its viewport shows, and the viewport inside the window.
bool rowInView(QTableView* t, int row, QWidget* window) {
  const QRect r = t->visualRect(t->model()->index(row, 0));
  const QRect vp = t->viewport()->rect();
  const QRect inWindow(t->viewport()->mapTo(window, QPoint(0, 0)), t->viewport()->size());
  return t->isVisible() && vp.contains(r) && window->rect().contains(inWindow);
}

int rowOfStep(QTableView* t, const QString& name) {
  for (int r = 0; r < t->model()->rowCount(); ++r)
    if (t->model()->index(r, StepsView::Step).data().toString() == name) return r;
  return -1;
}

// The Steps view shows each step of `truth` in view: its name, "no row" exactly where it is not
// wrapped (else torch's figure `torchNs(step)`), and what it really cost `cost(step)`.
template <class Torch, class Cost>
void checkStepsInView(MainWindow& w, const QVector<oracle::OracleStep>& truth, Torch torchNs, Cost cost) {
  QCOMPARE(w.viewTabs()->currentWidget(), static_cast<QWidget*>(w.stepsView()));
  QTableView* t = w.stepsView()->table();
  QCOMPARE(t->model()->rowCount(), truth.size());
  for (const oracle::OracleStep& o : truth) {
    const int r = rowOfStep(t, o.name);
    QVERIFY2(r >= 0, qPrintable(o.name));
    QVERIFY2(rowInView(t, r, &w), qPrintable(o.name + " is outside the visible table"));
    const QString torchCell = t->model()->index(r, StepsView::TorchRow).data().toString();
    const QString costCell = t->model()->index(r, StepsView::Cost).data().toString();
    if (!o.wrapped) {
      QCOMPARE(torchCell, QStringLiteral("no row"));
    } else {
      QVERIFY2(torchCell.startsWith(byHand(torchNs(o))), qPrintable(o.name + ": " + torchCell));
    }
    QCOMPARE(t->model()->index(r, StepsView::Cost).data(TableModelBase::SortRole).toLongLong(), cost(o));
    QVERIFY2(costCell.startsWith(byHand(cost(o))), qPrintable(o.name + ": " + costCell + " vs " + byHand(cost(o))));
    QCOMPARE(t->model()->index(r, StepsView::Wrapped).data().toString(), o.wrapped ? QString("yes") : QString("no"));
  }
}

// torch's own key_averages output for the bundled capture: SOFTMAX PASS's CUDA total.
qint64 torchSoftmaxRow() {
  QFile f(QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_8x16x1024x64.keyavg.json"));
  if (!f.open(QIODevice::ReadOnly)) return -1;
  for (const QJsonValue& v : QJsonDocument::fromJson(f.readAll()).object().value("by_name").toArray())
    if (v["key"].toString() == "SOFTMAX PASS") return std::llround(v["device_total_us"].toDouble() * 1000.0);
  return -1;
}

// The steps' host time (ProfilerStep#N durations), their median, as numpy's.
qint64 medianStepNs(const QString& gz) {
  QVector<qint64> d;
  for (const QJsonValue& v : QJsonDocument::fromJson(gunzip(gz)).object().value("traceEvents").toArray())
    if (v["ph"].toString() == "X" && v["name"].toString().startsWith("ProfilerStep#"))
      d << std::llround(v["dur"].toDouble() * 1000.0);
  return oracle::median(d);
}

bool engineWithCpu(EngineRunner* runner) { return waitForProbe(runner) && runner->availability().engineBuilt; }

}  // namespace

class FoundingUiTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    initSuite();
    QCOMPARE(QGuiApplication::primaryScreen()->availableGeometry().size(), QSize(1280, 800));
  }

  // First launch, the bundled H200 capture: the Steps view opens first, every step's row in view
  // with its real GPU time (the oracle's, by correlation over the raw events) and "no row" for the
  // three unwrapped steps; the window inside the screen with its title bar; the timeline 40% of the
  // height or more with the GPU stream's lane on screen.
  void firstLaunchShowsTheAnswer() {
    Window a;
    QVERIFY(a.openSample());
    a.settle();
    QString why;
    QVERIFY2(insideScreen(&a.w, &why), qPrintable(why));
    const QVector<oracle::OracleStep> truth = oracle::attentionSteps(kBundled);
    QCOMPARE(truth.size(), 4);
    const qint64 softmax = torchSoftmaxRow();
    checkStepsInView(
        a.w, truth, [&](const oracle::OracleStep&) { return softmax; },
        [](const oracle::OracleStep& o) { return oracle::median(o.gpu); });
    // The hand-checked figures of the issue: 540, 398, 259, 419 us.
    QTableView* t = a.w.stepsView()->table();
    for (auto [name, text] : {std::pair{"QK MATMUL", "540.410 us"},
                              {"SCALE", "397.628 us"},
                              {"SOFTMAX PASS", "259.261 us"},
                              {"AV MATMUL", "418.749 us"}})
      QCOMPARE(t->model()->index(rowOfStep(t, name), StepsView::Cost).data().toString(), QString(text));
    // The answer in words above the rows, and why the step in front reads as zero.
    const QString head = a.w.stepsView()->headlineText();
    QVERIFY2(head.contains("no row") && head.contains("QK MATMUL, SCALE and AV MATMUL"), qPrintable(head));
    QVERIFY2(a.w.stepsView()->whyText().contains("no row for it"), qPrintable(a.w.stepsView()->whyText()));
    // Room: the timeline's share and its first GPU stream.
    QVERIFY2(a.w.timelinePane()->height() * 10 >= a.w.height() * 4,
             qPrintable(QString("timeline %1 px of %2").arg(a.w.timelinePane()->height()).arg(a.w.height())));
    TimelineView* v = a.w.timelinePane()->view();
    for (uint32_t k = 0; k < v->index().tracks().size(); ++k)
      if (v->index().tracks()[k].kind == TrackKind::Gpu) {
        const QRect r = v->trackRectInView(k);
        QVERIFY2(r.height() >= 15 && r.bottom() <= v->viewport()->height(), "the first GPU stream is on screen");
        break;
      }
    QVERIFY(!a.w.dock(QStringLiteral("detailsDock"))->isVisible() ||
            a.w.dock(QStringLiteral("explainDock"))->isVisible());
  }

  // The Run panel on the CPU: Ctrl+R only opens it (a run takes Ctrl+Shift+R); SOFTMAX PASS wrapped,
  // then nothing wrapped; each time the Steps view in front with every row in view, "no row" exactly
  // for the unwrapped steps, SOFTMAX PASS's CPU total and each step's own ops' host time as the oracle
  // reads the run's trace; the headline says which steps have a row, never "CPU only".
  void cpuRunsShowTheAnswer() {
    Window a;
    QVERIFY(a.openSample());
    a.settle();
    RunPanel* panel = a.w.runPanel();
    if (!engineWithCpu(panel->runner())) QSKIP("attnscope-cli was built without the engine");
    QTest::keyClick(&a.w, Qt::Key_R, Qt::ControlModifier);
    QTRY_VERIFY(a.w.dock(QStringLiteral("runDock"))->isVisible());
    QVERIFY2(!panel->runner()->isRunning(), "Ctrl+R started a run");
    QTest::keyClick(&a.w, Qt::Key_F5);
    QVERIFY2(!panel->runner()->isRunning(), "F5 started a run");
    pickComboItem(panel->findChild<QComboBox*>("device"), 2);  // cpu
    for (auto [name, value] :
         {std::pair{"shape_B", 1}, {"shape_H", 4}, {"shape_S", 32}, {"shape_D", 32}, {"iters", 9}}) {
      auto* box = panel->findChild<QSpinBox*>(name);
      box->setFocus();
      box->selectAll();
      QTest::keyClicks(box, QString::number(value));
      QTest::keyClick(box, Qt::Key_Tab);
      QCOMPARE(box->value(), value);
    }
    auto setWrapped = [&](const QStringList& keys) {
      for (const char* k : {"qk", "scale", "softmax", "av", "full"}) {
        auto* box = panel->findChild<QCheckBox*>(QString("wrap_") + k);
        if (box->isChecked() != keys.contains(k)) clickWidget(box);
        QCOMPARE(box->isChecked(), keys.contains(k));
      }
    };
    for (const QStringList& wrap : {QStringList{"softmax"}, QStringList{}}) {
      setWrapped(wrap);
      QSignalSpy finished(panel, &RunPanel::runFinished);
      const qsizetype before = a.shown.size();
      QTest::keyClick(&a.w, Qt::Key_R, Qt::ControlModifier | Qt::ShiftModifier);
      QVERIFY(finished.wait(180000));
      const RunOutcome o = finished.front().at(1).value<RunOutcome>();
      QVERIFY2(o.status == RunStatus::Done, qPrintable(o.message + o.stderrText));
      QVERIFY(a.wait(before));
      QCoreApplication::processEvents();
      const QVector<oracle::OracleStep> truth = oracle::attentionSteps(o.outPath);
      QCOMPARE(truth.size(), 4);
      for (const oracle::OracleStep& s : truth) {
        QCOMPARE(s.wrapped, wrap.contains(s.name == "SOFTMAX PASS" ? "softmax" : "-"));
        QCOMPARE(s.ownOps.size(), 9);
      }
      checkStepsInView(
          a.w, truth, [](const oracle::OracleStep& s) { return oracle::median(s.scope); },
          [](const oracle::OracleStep& s) { return oracle::median(s.ownOps); });
      const QString head = a.w.stepsView()->headlineText();
      QVERIFY2(!head.contains("CPU only"), qPrintable(head));
      QVERIFY2(head.contains(wrap.isEmpty() ? "No step is wrapped" : "Only SOFTMAX PASS is wrapped"), qPrintable(head));
      QVERIFY2(!a.w.explainPanel()->plainText().section('\n', 0, 0).contains("CPU only"),
               qPrintable(a.w.explainPanel()->plainText().section('\n', 0, 0)));
      // The Explanation's steps table drops "Cost it most", which read "CPU only" on every row.
      QVERIFY(a.w.explainPanel()->stepsView()->isColumnHidden(StepsModel::CostMost));
      QString why;
      QVERIFY2(insideScreen(&a.w, &why), qPrintable(why));
    }
  }

  // resnet50: the Operators table shows 8 rows or more, the timeline 40% of the height with the GPU
  // stream's lane on screen; F9 collapses the side panels (the timeline gets the width) and brings
  // them back at the width they had; a width the user dragged, and the collapse, survive a restart.
  void roomAndSidePanels() {
    QTemporaryDir config;
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, config.path());
    QSettings::setDefaultFormat(QSettings::IniFormat);
    int dragged = 0;
    {
      Window a(MainWindowOptions{true, true, true});
      QVERIFY(a.open(kResnet));
      a.settle();
      QTabWidget* tabs = a.w.viewTabs();
      QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, Qt::NoModifier, tabs->tabBar()->tabRect(1).center());
      QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(a.w.tablePane()));
      QCoreApplication::processEvents();
      QTableView* ops = a.w.tablePane()->view();
      const int rows = ops->viewport()->height() / ops->verticalHeader()->defaultSectionSize();
      QVERIFY2(rows >= 8, qPrintable(QString("%1 rows in %2 px").arg(rows).arg(ops->viewport()->height())));
      QVERIFY2(a.w.timelinePane()->height() * 10 >= a.w.height() * 4,
               qPrintable(QString("timeline %1 px of %2").arg(a.w.timelinePane()->height()).arg(a.w.height())));
      TimelineView* v = a.w.timelinePane()->view();
      bool gpuSeen = false;
      for (uint32_t k = 0; k < v->index().tracks().size() && !gpuSeen; ++k)
        if (v->index().tracks()[k].kind == TrackKind::Gpu) {
          const QRect r = v->trackRectInView(k);
          QVERIFY2(
              r.height() >= 15 && r.top() >= TimelineView::kRulerHeight && r.bottom() <= v->viewport()->height(),
              qPrintable(
                  QString("GPU lane at %1-%2 in %3 px").arg(r.top()).arg(r.bottom()).arg(v->viewport()->height())));
          gpuSeen = true;
        }
      QVERIFY(gpuSeen);
      // The user drags the side panels' edge 80 px to the right (the centre is at its narrowest already).
      QDockWidget* explain = a.w.dock(QStringLiteral("explainDock"));
      const int before = explain->width();
      // The separator: between the centre's right edge and the dock's left one.
      const int gapLeft = a.w.centralWidget()->geometry().right() + 1, gapRight = explain->geometry().left();
      const QPoint edge((gapLeft + gapRight) / 2, explain->geometry().center().y());
      // Through the window, as the window system delivers it (QMainWindow finds its separator there).
      QWindow* win = a.w.windowHandle();
      QTest::mouseMove(win, edge);
      QTest::mousePress(win, Qt::LeftButton, Qt::NoModifier, edge);
      for (int dx = 10; dx <= 80; dx += 10) QTest::mouseMove(win, edge + QPoint(dx, 0));
      QTest::mouseRelease(win, Qt::LeftButton, Qt::NoModifier, edge + QPoint(80, 0));
      (void)QTest::qWaitFor([&] { return explain->width() <= before - 60; }, 3000);  // docks animate
      dragged = explain->width();
      QVERIFY2(dragged <= before - 60, qPrintable(QString("%1 -> %2 px").arg(before).arg(dragged)));
      // F9: collapsed, the timeline has the width; F9 again: back at the dragged width.
      const int timelineWidth = a.w.timelinePane()->width();
      QTest::keyClick(&a.w, Qt::Key_F9);
      QTRY_VERIFY(!explain->isVisible());
      QTRY_VERIFY(a.w.timelinePane()->width() >= timelineWidth + dragged - 10);  // the side panels' width back
      QTest::keyClick(&a.w, Qt::Key_F9);
      QTRY_VERIFY(explain->isVisible());
      QTRY_VERIFY2(std::abs(explain->width() - dragged) <= 2,
                   qPrintable(QString("%1 px after F9 twice, %2 before").arg(explain->width()).arg(dragged)));
      QTest::keyClick(&a.w, Qt::Key_F9);  // closed collapsed
      QTRY_VERIFY(!explain->isVisible());
    }
    {
      Window b(MainWindowOptions{true, true, true});
      QVERIFY(QTest::qWaitForWindowExposed(&b.w));
      QDockWidget* explain = b.w.dock(QStringLiteral("explainDock"));
      QVERIFY2(!explain->isVisible(), "the side panels stay collapsed on the next launch");
      QTest::keyClick(&b.w, Qt::Key_F9);
      QTRY_VERIFY(explain->isVisible());
      QTRY_VERIFY2(std::abs(explain->width() - dragged) <= 2,
                   qPrintable(QString("%1 px on the next launch, %2 before").arg(explain->width()).arg(dragged)));
    }
  }

  // The main window, Compare's timelines window and the Ranks window all open inside a 1280x800
  // screen, their title bars included.
  void windowsFitTheScreen() {
    Window a;
    QVERIFY(a.open(kDiffA));
    a.settle();
    QString why;
    QVERIFY2(insideScreen(&a.w, &why), qPrintable(why));
    QSignalSpy ready(a.w.compareView(), &CompareView::timelinesReady);
    a.w.compareFiles(kDiffA, kDiffB, true);
    QVERIFY(ready.wait(120000));
    auto* diff = a.w.compareView()->findChild<TimelineDiff*>();
    QVERIFY(diff && diff->isVisible());
    QVERIFY2(insideScreen(diff, &why), qPrintable(why));
    a.w.openJob({QStringLiteral(ATTNSCOPE_SHARED_TRACES "/multirank/gloo_ddp4_clean")});
    QTRY_VERIFY(a.w.ranksView() && a.w.ranksView()->isVisible());
    QVERIFY2(insideScreen(a.w.ranksView(), &why), qPrintable(why));
  }

  // The wheel over an unfocused dropdown or spin box scrolls the panel around it and changes
  // nothing (the Run panel's Sync turned from "none" to "after each step" while scrolling); once the
  // user clicks into the control, the wheel is its own.
  void wheelNeverChangesAnUnfocusedControl() {
    Window a;
    QVERIFY(a.openSample());
    a.settle();
    QDockWidget* runDock = a.w.dock(QStringLiteral("runDock"));
    runDock->show();
    runDock->raise();
    QCoreApplication::processEvents();
    auto* area = qobject_cast<QScrollArea*>(runDock->widget());
    QVERIFY(area);
    auto* sync = a.w.runPanel()->findChild<QComboBox*>(QStringLiteral("sync"));
    QVERIFY(sync && sync->isVisible());
    area->ensureWidgetVisible(sync);
    a.w.timelinePane()->view()->setFocus();
    QVERIFY(!sync->hasFocus());
    auto wheelOver = [](QWidget* w, int dy) {
      const QPoint at = w->rect().center();
      QWheelEvent e(at, w->mapToGlobal(at), QPoint(), QPoint(0, dy), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase,
                    false);
      QApplication::sendEvent(w, &e);
    };
    const int index = sync->currentIndex();
    const int scroll = area->verticalScrollBar()->value();
    wheelOver(sync, -120);
    wheelOver(sync, -120);
    QCOMPARE(sync->currentIndex(), index);
    if (area->verticalScrollBar()->maximum() > scroll)
      QVERIFY2(area->verticalScrollBar()->value() > scroll, "the panel scrolls instead");
    // The table's top-N spin box and its attribution dropdown alike.
    showOperators(a.w);
    auto* top = a.w.tablePane()->findChild<QSpinBox*>(QStringLiteral("topN"));
    auto* attribution = a.w.tablePane()->findChild<QComboBox*>(QStringLiteral("attribution"));
    const int n = top->value(), att = attribution->currentIndex();
    wheelOver(top, 120);
    wheelOver(attribution, -120);
    QCOMPARE(top->value(), n);
    QCOMPARE(attribution->currentIndex(), att);
    // Clicked into, the control takes the wheel.
    QTest::mouseClick(top, Qt::LeftButton, Qt::NoModifier, QPoint(8, top->height() / 2));
    QTRY_VERIFY(top->hasFocus());
    wheelOver(top, 120);
    QVERIFY(top->value() != n);
  }

  // Lane names are distinct as drawn (cut to the header's width) and whole in their tooltips.
  void laneLabelsDistinctWithTooltips() {
    Window a;
    QVERIFY(a.open(kResnet));
    a.settle();
    TimelineView* v = a.w.timelinePane()->view();
    QFont bold = v->font();
    bold.setBold(true);
    const QFontMetrics fm(bold);
    QStringList drawn;
    const auto& tracks = v->index().tracks();
    for (const Track& t : tracks)
      drawn << fm.elidedText(QString::fromStdString(trackTitle(t)), Qt::ElideRight, TimelineView::kHeaderWidth - 28);
    QCOMPARE(QSet<QString>(drawn.begin(), drawn.end()).size(), drawn.size());
    int tipped = 0;
    for (uint32_t k = 0; k < tracks.size(); ++k) {
      const QRect r = v->trackRectInView(k);
      if (r.height() < 10 || r.top() < TimelineView::kRulerHeight) continue;
      const QPoint at(60, r.top() + 6);
      QHelpEvent help(QEvent::ToolTip, at, v->viewport()->mapToGlobal(at));
      QApplication::sendEvent(v->viewport(), &help);
      QTRY_VERIFY(QToolTip::isVisible());
      QVERIFY2(QToolTip::text().contains(QString::fromStdString(tracks[k].label).toHtmlEscaped()),
               qPrintable(QToolTip::text()));
      ++tipped;
    }
    QVERIFY(tipped >= 3);
  }

  // The Explanation follows the step the user picks, in the Steps view or in the timeline's selector,
  // and the Steps view follows the timeline's.
  void explanationFollowsTheSelection() {
    Window a;
    QVERIFY(a.openSample());
    a.settle();
    QTableView* t = a.w.stepsView()->table();
    const Explanation& x = a.w.trace()->explanation();
    auto stepIndex = [&](const char* name) {
      for (size_t i = 0; i < x.steps.size(); ++i)
        if (x.steps[i].name == name) return static_cast<int>(i);
      return -1;
    };
    clickRow(t, rowOfStep(t, QStringLiteral("SCALE")));
    QTRY_COMPARE(a.w.explainPanel()->shownStep(), stepIndex("SCALE"));
    QVERIFY(a.w.dock(QStringLiteral("explainDock"))->isVisible());
    QCOMPARE(QString::fromStdString(a.w.timelinePane()->view()->overlay()->name), QStringLiteral("SCALE"));
    auto* selector = a.w.timelinePane()->findChild<QComboBox*>(QStringLiteral("overlayStep"));
    pickComboItem(selector, selector->findData(stepIndex("AV MATMUL")));
    QTRY_COMPARE(a.w.explainPanel()->shownStep(), stepIndex("AV MATMUL"));
    QCOMPARE(t->currentIndex().row(), rowOfStep(t, QStringLiteral("AV MATMUL")));
    QVERIFY(a.w.stepsView()->whyText().contains(QStringLiteral("AV MATMUL")));
  }

  // E on a step of hundreds of launches keeps the step in view and draws no fan of arrows over it.
  void overlayKeepsTheStepInView() {
    Window a;
    QVERIFY(a.open(kResnet));
    a.settle();
    TimelineView* v = a.w.timelinePane()->view();
    QTest::keyClick(v, Qt::Key_F);
    const StepReport& st = a.w.trace()->explanation().steps[1];
    QVERIFY(st.event != kNoEvent && st.launches.size() > 100);
    const uint32_t track = v->index().trackOf(st.event), row = v->index().rowOf(st.event);
    const int64_t mid = (st.hostStartNs + st.hostEndNs) / 2;
    QTest::mouseClick(v->viewport(), Qt::LeftButton, Qt::NoModifier,
                      QPoint(static_cast<int>(v->xOf(mid)), v->yOf(track, row) + 6));
    QCOMPARE(v->selectedEvent(), st.event);
    QTest::keyClick(v, Qt::Key_E);
    QVERIFY(v->overlay() && v->overlay()->event == st.event);
    v->grab();  // a frame painted
    QCOMPARE(v->lastFlows().arrows, 0);
    const int y = v->yOf(track, row);
    QVERIFY2(y >= TimelineView::kRulerHeight && y + 18 <= v->viewport()->height(),
             qPrintable(QString("the step's row at %1 px in a %2 px view").arg(y).arg(v->viewport()->height())));
    QVERIFY(v->xOf(st.hostEndNs) > TimelineView::kHeaderWidth && v->xOf(st.hostStartNs) < v->viewport()->width());
  }

  // Overview's bars are labelled: each with its step and its wall time, the bar's own length.
  void overviewBarsLabelled() {
#if !__has_include(<QtCharts/QChartView>)
    QSKIP("built without Qt Charts");
#else
    Window a;
    QVERIFY(a.open(kResnet));
    a.settle();
    OverviewPanel* ov = a.w.overviewPanel();
    QSignalSpy ready(ov, &ViewPanel::ready);
    clickTabOf(a.w, ov);
    QVERIFY(ready.size() > 0 || ready.wait(30000));
    auto* cv = ov->findChild<QChartView*>(QStringLiteral("overviewChart"));
    QVERIFY(cv);
    auto* bars = qobject_cast<QHorizontalStackedBarSeries*>(cv->chart()->series().value(0));
    auto* axis = qobject_cast<QBarCategoryAxis*>(cv->chart()->axes(Qt::Vertical).value(0));
    QVERIFY(bars && axis && axis->labelsVisible());
    const QStringList cats = axis->categories();
    QCOMPARE(cats.size(), 6);
    const QRegularExpression figure(QStringLiteral("^#(\\d+)\\s+([0-9.]+) (us|ms|s)"));
    for (int i = 0; i < cats.size(); ++i) {
      double sumMs = 0;
      for (QBarSet* set : bars->barSets()) sumMs += set->at(i);
      const auto m = figure.match(cats[i]);
      QVERIFY2(m.hasMatch(), qPrintable(cats[i]));
      const double unit = m.captured(3) == "us" ? 1e-3 : m.captured(3) == "ms" ? 1.0 : 1e3;
      const double labelMs = m.captured(2).toDouble() * unit;
      QVERIFY2(std::abs(labelMs - sumMs) <= sumMs * 1e-3 + 0.05, qPrintable(cats[i] + " vs " + QString::number(sumMs)));
    }
    // Room for every label (QtCharts cuts one to "..." when its bar is too thin).
    cv->grab();  // laid out and drawn
    const double perBar = cv->chart()->plotArea().height() / cats.size();
    QVERIFY2(perBar >= QFontMetrics(axis->labelsFont()).height() * 1.5,
             qPrintable(QString("%1 px a bar, labels %2 px tall, chart %3 px")
                            .arg(perBar)
                            .arg(QFontMetrics(axis->labelsFont()).height())
                            .arg(cv->height())));
#endif
  }

  // Compare opens on its headline, B's step against A's, with both columns of figures in view.
  void compareOpensOnItsHeadline() {
    Window a;
    QVERIFY(a.open(kDiffA));
    a.settle();
    QSignalSpy compared(a.w.compareView(), &CompareView::compared);
    a.w.compareFiles(kDiffA, kDiffB, false);
    QVERIFY(compared.wait(120000));
    QCoreApplication::processEvents();
    const qint64 medA = medianStepNs(kDiffA), medB = medianStepNs(kDiffB);
    QVERIFY(medA > 0 && medB > medA);
    const QString head = a.w.compareView()->headlineText();
    QVERIFY2(head.startsWith("B is +" + byHand(medB - medA) + " a step"), qPrintable(head));
    QVERIFY2(head.contains("A " + byHand(medA)) && head.contains("B " + byHand(medB)), qPrintable(head));
    QDockWidget* dock = a.w.dock(QStringLiteral("compareDock"));
    QVERIFY(dock->isVisible());
    for (const char* name : {"compareHeadline", "perturbation"}) {
      auto* label = a.w.compareView()->findChild<QLabel*>(QString::fromLatin1(name));
      QVERIFY2(label && label->isVisible(), name);
      const QRect inDock(label->mapTo(dock, QPoint(0, 0)), label->size());
      QVERIFY2(dock->rect().contains(inDock), name);
      QVERIFY2(label->minimumSizeHint().width() <= label->width(), name);  // nothing cut at the right
    }
    const QString summary = a.w.compareView()->perturbationText();
    QVERIFY(summary.contains(byHand(medA)) && summary.contains(byHand(medB)));
  }

  // Every dropdown, spin box and text field has a label that names it (and takes its mnemonic).
  void everyControlHasALabel() {
    Window a;
    QVERIFY(a.openSample());
    a.settle();
    QSet<QWidget*> labelled;
    for (QLabel* l : a.w.findChildren<QLabel*>())
      if (l->buddy()) labelled.insert(l->buddy());
    QStringList missing;
    QList<QWidget*> controls;
    for (QComboBox* c : a.w.findChildren<QComboBox*>()) controls << c;
    for (QAbstractSpinBox* c : a.w.findChildren<QAbstractSpinBox*>()) controls << c;
    for (QLineEdit* c : a.w.findChildren<QLineEdit*>()) controls << c;
    for (QWidget* c : controls) {
      // A combo box's or spin box's own line edit is part of it.
      if (qobject_cast<QComboBox*>(c->parentWidget()) || qobject_cast<QAbstractSpinBox*>(c->parentWidget())) continue;
      if (!labelled.contains(c))
        missing << QString("%1 %2 in %3")
                       .arg(QString::fromLatin1(c->metaObject()->className()), c->objectName(),
                            c->parentWidget() ? c->parentWidget()->objectName() : QString());
    }
    QVERIFY2(missing.isEmpty(), qPrintable(missing.join("; ")));
  }

  // A launch leaves no folder in the temporary directory: not when it shoots and exits, not when it is
  // killed, not after a run (its traces' folder goes when the app quits, on SIGTERM too).
  void noTemporaryFolderLeft() {
    QTemporaryDir tmp, runtime, home, out;
    QFile::setPermissions(runtime.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("TMPDIR", tmp.path());
    env.insert("XDG_RUNTIME_DIR", runtime.path());
    env.insert("XDG_CONFIG_HOME", home.path());
    env.insert("QT_QPA_PLATFORM", "offscreen");
    env.insert("ATTNSCOPE_CLI", ATTNSCOPE_BIN_DIR "/attnscope-cli");
    auto left = [&] { return QDir(tmp.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden); };
    {
      QProcess p;
      p.setProcessEnvironment(env);
      p.start(ATTNSCOPE_GUI_EXE, {"--screenshot", out.filePath("shot.png")});
      QVERIFY(p.waitForFinished(60000));
      QCOMPARE(p.exitCode(), 0);
      QVERIFY2(left().isEmpty(), qPrintable(left().join(", ")));
    }
    {
      QProcess p;
      p.setProcessEnvironment(env);
      p.start(ATTNSCOPE_GUI_EXE, {});
      QVERIFY(p.waitForStarted());
      QTest::qWait(1500);
      p.terminate();
      QVERIFY(p.waitForFinished(30000));
      QVERIFY2(left().isEmpty(), qPrintable(left().join(", ")));
    }
    {
      // A run (the engine on the CPU), then SIGTERM: its folder goes with the app.
      QProcess p;
      p.setProcessEnvironment(env);
      p.start(ATTNSCOPE_GUI_EXE, {"--run"});
      QVERIFY(p.waitForStarted());
      QString said;
      QDeadlineTimer deadline(180000);
      while (!said.contains("run: ") && !deadline.hasExpired() && p.state() == QProcess::Running) {
        p.waitForReadyRead(500);
        said += QString::fromUtf8(p.readAllStandardOutput()) + QString::fromUtf8(p.readAllStandardError());
      }
      if (said.contains("--run: cannot run")) {
        p.kill();
        p.waitForFinished();
        QSKIP("attnscope-cli was built without the engine");
      }
      QVERIFY2(said.contains("run: " + tmp.path()), qPrintable(said));
      p.terminate();
      QVERIFY(p.waitForFinished(30000));
      QVERIFY2(left().isEmpty(), qPrintable(left().join(", ")));
    }
  }
};

QTEST_MAIN(FoundingUiTest)
#include "test_founding_ui.moc"
