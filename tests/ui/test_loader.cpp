// The loader and what a load costs: the window shows a trace from one
// snapshot made on the loader's thread (the engine metadata parsed once,
// each of the four tables computed once, one explanation, one activity
// index), and then selecting rows, switching the table's grouping and
// attribution, or opening the docks computes none of them again. Driven
// through the real widgets with mouse and keyboard events.
#include <QComboBox>
#include <QDockWidget>
#include <QHeaderView>
#include <QSignalSpy>
#include <QTableView>
#include <QtTest>
#include <map>
#include <stdexcept>

#include "ui/common/background.h"
#include "ui/shell/pair_loader.h"

#include "core/store/work_counters.h"
#include "ui/panels/why_panel.h"
#include "ui/shell/main_window.h"
#include "ui/shell/trace_loader.h"
#include "ui/table/key_averages_proxy.h"
#include "ui/table/table_pane.h"

using namespace attnscope;
using namespace attnscope::ui;

namespace {

const QString kEngineTrace = QStringLiteral(ATTNSCOPE_TEST_DATA "/h200/softmax_none_8x16x1024x64.json");
const QString kTorchTrace = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_8x16x1024x64.json");

struct Counts {
  uint64_t metadata, tables, explanations, indexes;
  static Counts now() {
    const WorkCounters& c = workCounters();
    return {c.engineMetadataParses.load(), c.keyAverageTables.load(), c.explanations.load(), c.activityIndexes.load()};
  }
  Counts operator-(const Counts& o) const {
    return {metadata - o.metadata, tables - o.tables, explanations - o.explanations, indexes - o.indexes};
  }
};

// Clicks the middle of table row `row` (a view row) with the mouse.
void clickRow(QTableView* view, int row) {
  const QRect r = view->visualRect(view->model()->index(row, 0));
  QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier, r.center());
}

}  // namespace

class LoaderTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    for (const QString& f : {kEngineTrace, kTorchTrace}) QVERIFY2(QFile::exists(f), qPrintable("missing " + f));
  }

  void oneSnapshotPerLoadAndNothingPerSelection() {
    MainWindow w({false, false, false});
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy shown(&w, &MainWindow::traceShown);

    const Counts before = Counts::now();
    w.openTrace(kEngineTrace);
    QVERIFY(shown.wait(30000));
    const Counts load = Counts::now() - before;
    QCOMPARE(load.metadata, uint64_t{1});
    QCOMPARE(load.tables, uint64_t{4});
    QCOMPARE(load.explanations, uint64_t{1});
    QCOMPARE(load.indexes, uint64_t{1});

    // 100 row selections by mouse and keyboard, the Why dock hidden (the default layout).
    w.viewTabs()->setCurrentWidget(w.tablePane());
    QCoreApplication::processEvents();
    QTableView* view = w.tablePane()->view();
    const int rows = view->model()->rowCount();
    QVERIFY(rows > 10);
    view->scrollToTop();
    const Counts sel = Counts::now();
    int visible = 0;
    while (visible < rows && view->visualRect(view->model()->index(visible, 0)).bottom() < view->viewport()->height())
      ++visible;
    QVERIFY(visible >= 3);
    for (int i = 0; i < 50; ++i) {
      clickRow(view, i % visible);
      QCOMPARE(view->currentIndex().row(), i % visible);
    }
    view->setFocus();
    for (int i = 0; i < 50; ++i) QTest::keyClick(view, i % 10 < 5 ? Qt::Key_Down : Qt::Key_Up);
    QCoreApplication::processEvents();
    const Counts d = Counts::now() - sel;
    QCOMPARE(d.tables, uint64_t{0});
    QCOMPARE(d.explanations, uint64_t{0});
    QCOMPARE(d.indexes, uint64_t{0});
    QCOMPARE(d.metadata, uint64_t{0});
    QCOMPARE(w.whyPanel()->reportsMade(), 0);  // hidden: no report made

    // Grouping and attribution read the snapshot's other tables.
    auto* group = w.tablePane()->findChild<QComboBox*>(QStringLiteral("groupBy"));
    auto* attribution = w.tablePane()->findChild<QComboBox*>(QStringLiteral("attribution"));
    QVERIFY(group && attribution);
    group->setFocus();
    QTest::keyClick(group, Qt::Key_Down);  // Input shape
    QCOMPARE(w.tablePane()->groupBy(), GroupBy::InputShape);
    attribution->setFocus();
    QTest::keyClick(attribution, Qt::Key_Down);  // corrected
    QCOMPARE(w.tablePane()->attribution(), Attribution::Corrected);
    QCOMPARE(w.tablePane()->model()->averages().get(),
             w.trace()->snapshot->table(Attribution::Corrected, GroupBy::InputShape).get());

    // With the Why dock on screen each new row gets one report, made off the UI thread; still no table.
    // (The new grouping left no current row: the panel says so at once.)
    QSignalSpy why(w.whyPanel(), &WhyPanel::shown);
    w.dock(QStringLiteral("whyDock"))->raise();
    QTRY_COMPARE(why.size(), 1);
    QCOMPARE(w.whyPanel()->reportsMade(), 0);
    clickRow(view, 2);
    QVERIFY(why.wait(30000));
    QCOMPARE(w.whyPanel()->reportsMade(), 1);
    QVERIFY(w.whyPanel()->plainText().startsWith(view->model()->index(2, 0).data().toString().left(20)));
    const Counts after = Counts::now() - sel;
    QCOMPARE(after.tables, uint64_t{0});
    QCOMPARE(after.explanations, uint64_t{0});
    QCOMPARE(after.indexes, uint64_t{0});
  }

  // A torch.profiler trace has no engine object: nothing to parse.
  void torchTraceParsesNoMetadata() {
    TraceLoader loader;
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    const Counts before = Counts::now();
    loader.load(kTorchTrace);
    QVERIFY(loaded.wait(30000));
    const Counts d = Counts::now() - before;
    QCOMPARE(d.metadata, uint64_t{0});
    QCOMPARE(d.tables, uint64_t{4});
    const auto t = loaded.front().front().value<std::shared_ptr<const LoadedTrace>>();
    QVERIFY(t && t->timeline && !t->snapshot->engine);
    QCOMPARE(t->timeline->store(), t->snapshot->store.get());
  }

  // Two loads in a row: only the second reports; a missing file names itself.
  // A background task that throws reaches its failure handler on the UI thread with the
  // exception's words (issue 33: a throwing task delivered nothing, and a view stayed blank).
  void backgroundFailureReachesTheUser() {
    QObject context;
    bool done = false;
    QString failure;
    runInBackground(
        &context, []() -> int { throw std::runtime_error("the view's computation failed"); }, [&](int) { done = true; },
        [&](const QString& what) { failure = what; });
    QTRY_VERIFY_WITH_TIMEOUT(!failure.isEmpty() || done, 10000);
    QVERIFY(!done);
    QCOMPARE(failure, QStringLiteral("the view's computation failed"));
    int value = 0;
    runInBackground(
        &context, [] { return 42; }, [&](int v) { value = v; }, [&](const QString& what) { failure = what; });
    QTRY_COMPARE_WITH_TIMEOUT(value, 42, 10000);
  }

  // Compare's loads: A and B at once, each by its own loader; the latest pair wins; a failure says
  // which side and which file; a trace in the cache is not read again.
  void pairLoadsBothAndTheLatestWins() {
    const QString a = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/none_8x16x1024x64.json");
    const QString b = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_8x16x1024x64.json");
    const QString broken = QStringLiteral(ATTNSCOPE_TEST_DATA "/malformed/not_json.json");
    std::map<QString, std::shared_ptr<const LoadedTrace>> cache;
    PairLoader pair([&](const QString& path) {
      const auto it = cache.find(path);
      return it == cache.end() ? nullptr : it->second;
    });
    QSignalSpy loaded(&pair, &PairLoader::loaded);
    QSignalSpy failed(&pair, &PairLoader::failed);
    pair.load(b, a);  // superseded at once
    pair.load(a, b);
    QVERIFY(pair.loaderA()->isBusy() && pair.loaderB()->isBusy());  // both at once
    QVERIFY(loaded.wait(60000));
    QTest::qWait(200);  // the superseded pair reports nothing
    QCOMPARE(loaded.size(), 1);
    const auto ta = loaded.front().at(0).value<std::shared_ptr<const LoadedTrace>>();
    const auto tb = loaded.front().at(1).value<std::shared_ptr<const LoadedTrace>>();
    QCOMPARE(ta->path, a);
    QCOMPARE(tb->path, b);
    QVERIFY(failed.isEmpty());
    pair.load(a, broken);
    QVERIFY(failed.wait(60000));
    QVERIFY2(failed.front().front().toString().startsWith(QStringLiteral("B: ")) &&
                 failed.front().front().toString().contains(QStringLiteral("not_json.json")),
             qPrintable(failed.front().front().toString()));
    cache[a] = ta;
    cache[b] = tb;
    const auto progressA = pair.loaderA()->progress(), progressB = pair.loaderB()->progress();
    pair.load(a, b);  // both cached: no read (neither loader starts one), answered at once
    QCOMPARE(pair.loaderA()->progress(), progressA);
    QCOMPARE(pair.loaderB()->progress(), progressB);
    QCOMPARE(loaded.size(), 2);
    QCOMPARE(loaded.back().at(0).value<std::shared_ptr<const LoadedTrace>>(), ta);
  }

  void latestLoadWins() {
    TraceLoader loader;
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    QSignalSpy failed(&loader, &TraceLoader::failed);
    loader.load(kTorchTrace);
    loader.load(kEngineTrace);
    QVERIFY(loaded.wait(30000));
    QTest::qWait(200);
    QCOMPARE(loaded.size(), 1);
    QCOMPARE(loaded.front().front().value<std::shared_ptr<const LoadedTrace>>()->path, kEngineTrace);
    const QString missing = QStringLiteral("/nonexistent/attnscope/trace.json");
    loader.load(missing);
    QVERIFY(failed.wait(30000));
    QVERIFY(failed.front().front().toString().contains(missing));
  }
};

QTEST_MAIN(LoaderTest)
#include "test_loader.moc"
