// The timeline: time <-> pixel mapping, ticks, hit testing, folding (every
// visible event is drawn or counted by exactly one fold box), the explain
// overlay's numbers, and selection shared with the key_averages table.
#include <QItemSelectionModel>
#include <QSignalSpy>
#include <QTableView>
#include <QtTest>
#include <memory>

#include "core/explain/explanation.h"
#include "core/store/event_store.h"
#include "ui/shell/main_window.h"
#include "ui/table/key_averages_model.h"
#include "ui/table/key_averages_proxy.h"
#include "ui/table/table_pane.h"
#include "ui/timeline/timeline_pane.h"
#include "ui/timeline/view.h"

using namespace attnscope;
using namespace attnscope::ui;

namespace {

constexpr int64_t kUs = 1000;

Event ev(EventStoreBuilder& b, uint32_t lane, const char* name, Family f, int64_t start, int64_t dur,
         int64_t corr = kNoId) {
  Event e;
  e.start = start;
  e.dur = dur;
  e.name = b.strings().intern(name);
  e.lane = lane;
  e.family = f;
  e.correlation = corr;
  return e;
}

// op A [0, 1000) us > B [100, 400) > launch C [150, 200); kernel K [500, 900) on stream 7.
std::shared_ptr<const EventStore> smallStore() {
  EventStoreBuilder b;
  const uint32_t cpu = b.lane(LaneKind::CpuThread, 1, 1);
  const uint32_t gpu = b.lane(LaneKind::GpuStream, 0, 7);
  b.addEvent(ev(b, cpu, "A", Family::CpuOp, 0, 1000 * kUs));
  b.addEvent(ev(b, cpu, "B", Family::CpuOp, 100 * kUs, 300 * kUs));
  b.addEvent(ev(b, cpu, "C", Family::CudaRuntime, 150 * kUs, 50 * kUs, 42));
  b.addEvent(ev(b, gpu, "K", Family::Kernel, 500 * kUs, 400 * kUs, 42));
  return std::make_shared<const EventStore>(std::move(b).build());
}

// n events per row on 2 CPU depths and a GPU stream, widths from 1 ns to 1 ms.
std::shared_ptr<const EventStore> manyEvents(int n, uint64_t seed) {
  EventStoreBuilder b;
  const uint32_t cpu = b.lane(LaneKind::CpuThread, 1, 1);
  const uint32_t gpu = b.lane(LaneKind::GpuStream, 0, 7);
  uint64_t r = seed;
  auto rnd = [&](int64_t lo, int64_t hi) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    return lo + static_cast<int64_t>((r >> 33) % static_cast<uint64_t>(hi - lo));
  };
  int64_t t = 0, tg = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t d = rnd(0, 4) == 0 ? rnd(100 * kUs, 1000 * kUs) : rnd(1, 3 * kUs);
    b.addEvent(ev(b, cpu, "outer", Family::CpuOp, t, d + 20));
    b.addEvent(ev(b, cpu, "inner", Family::CpuOp, t + 10, d));
    tg = std::max(tg, t) + rnd(0, 2 * kUs);
    const int64_t kd = rnd(0, 5) == 0 ? rnd(50 * kUs, 500 * kUs) : rnd(1, 2 * kUs);
    b.addEvent(ev(b, gpu, "k", Family::Kernel, tg, kd));
    tg += kd;
    t += d + 20 + rnd(0, 5 * kUs);
  }
  return std::make_shared<const EventStore>(std::move(b).build());
}

void sizeViewport(TimelineView& v, int w, int h) {
  v.setAttribute(Qt::WA_DontShowOnScreen);
  v.show();
  v.resize(w, h);
  QCoreApplication::processEvents();
  v.resize(QSize(w, h) + (v.size() - v.viewport()->size()));
  QCoreApplication::processEvents();
}

}  // namespace

class TestTimeline : public QObject {
  Q_OBJECT

 private slots:
  void timeToPixel_data() {
    QTest::addColumn<qint64>("start");
    QTest::addColumn<qint64>("span");
    QTest::addColumn<int>("width");
    QTest::addColumn<qint64>("t");
    QTest::addColumn<double>("x");
    QTest::newRow("left edge") << qint64(1000) << qint64(10000) << 1000 << qint64(1000) << 0.0;
    QTest::newRow("middle") << qint64(1000) << qint64(10000) << 1000 << qint64(6000) << 500.0;
    QTest::newRow("right edge") << qint64(0) << qint64(1000000) << 1920 << qint64(1000000) << 1920.0;
    QTest::newRow("before window") << qint64(5000) << qint64(1000) << 100 << qint64(4000) << -100.0;
    QTest::newRow("trace clock ns") << qint64(5367878830757049) << qint64(6140971) << 1600
                                    << qint64(5367878830757049 + 3070485) << 1600.0 * 3070485 / 6140971;
  }
  void timeToPixel() {
    QFETCH(qint64, start);
    QFETCH(qint64, span);
    QFETCH(int, width);
    QFETCH(qint64, t);
    QFETCH(double, x);
    TimeAxis a;
    a.setBounds(start - 10 * span, start + 10 * span);
    a.setWidth(width);
    a.setVisibleRange(start, span);
    QCOMPARE(a.start(), start);
    QCOMPARE(a.span(), span);
    QVERIFY(std::abs(a.x(t) - x) < 1e-6);
    // Back to time: within half a pixel's worth of nanoseconds.
    QVERIFY(std::abs(a.time(x) - t) <= static_cast<int64_t>(a.nsPerPixel() / 2) + 1);
  }

  void zoomKeepsAnchor_data() {
    QTest::addColumn<double>("x");
    QTest::addColumn<double>("factor");
    QTest::newRow("in at left") << 10.0 << 4.0;
    QTest::newRow("in at middle") << 500.0 << 1.5;
    QTest::newRow("out at right") << 990.0 << 0.5;
  }
  void zoomKeepsAnchor() {
    QFETCH(double, x);
    QFETCH(double, factor);
    TimeAxis a;
    a.setBounds(0, 100'000'000);
    a.setWidth(1000);
    a.setVisibleRange(20'000'000, 10'000'000);
    const int64_t before = a.time(x);
    a.zoomAt(x, factor);
    QVERIFY(std::abs(a.span() - static_cast<int64_t>(10'000'000 / factor)) <= 1);
    QVERIFY(std::abs(a.time(x) - before) <= static_cast<int64_t>(a.nsPerPixel()) + 1);
  }

  void ticks_data() {
    QTest::addColumn<qint64>("span");
    QTest::addColumn<qint64>("step");
    QTest::addColumn<QString>("unit");
    QTest::newRow("20 s") << qint64(20'000'000'000) << qint64(2'000'000'000) << "s";
    QTest::newRow("6 ms") << qint64(6'140'971) << qint64(1'000'000) << "ms";
    QTest::newRow("1.6 ms") << qint64(1'681'000) << qint64(200'000) << "us";
    QTest::newRow("100 us") << qint64(100'000) << qint64(10'000) << "us";
    QTest::newRow("500 ns") << qint64(500) << qint64(50) << "ns";
  }
  void ticks() {
    QFETCH(qint64, span);
    QFETCH(qint64, step);
    QFETCH(QString, unit);
    TimeAxis a;
    a.setBounds(0, span * 10);
    a.setWidth(1000);
    a.setVisibleRange(span, span);
    const auto ticks = axisTicks(a, 0, 100);
    std::vector<int64_t> major;
    for (const Tick& t : ticks) {
      QVERIFY(t.t >= a.start() && t.t <= a.end());
      if (t.major) {
        major.push_back(t.t);
        QVERIFY2(QString::fromStdString(t.label).endsWith(QLatin1Char(' ') + unit), t.label.c_str());
      }
    }
    QVERIFY(major.size() >= 2);
    QCOMPARE(major[1] - major[0], step);
  }

  void hitTest_data() {
    QTest::addColumn<qint64>("tUs");
    QTest::addColumn<int>("track");
    QTest::addColumn<int>("row");
    QTest::addColumn<QString>("name");
    QTest::newRow("op A") << qint64(50) << 0 << 0 << "A";
    QTest::newRow("child B") << qint64(300) << 0 << 1 << "B";
    QTest::newRow("launch C") << qint64(175) << 0 << 2 << "C";
    QTest::newRow("kernel K") << qint64(700) << 1 << 0 << "K";
    QTest::newRow("past B") << qint64(950) << 0 << 1 << "";
    QTest::newRow("before K") << qint64(300) << 1 << 0 << "";
  }
  void hitTest() {
    QFETCH(qint64, tUs);
    QFETCH(int, track);
    QFETCH(int, row);
    QFETCH(QString, name);
    TimelineView v;
    sizeViewport(v, TimelineView::kHeaderWidth + 1000, 400);
    v.setStore(smallStore());
    QCOMPARE(v.index().tracks().size(), size_t(2));
    v.zoomToRange(0, 1000 * kUs, 0);
    const QPoint p(static_cast<int>(v.xOf(tUs * kUs)),
                   v.yOf(static_cast<uint32_t>(track), static_cast<uint32_t>(row)) + 5);
    const auto hit = v.hitTest(p);
    if (name.isEmpty()) {
      QVERIFY(!hit);
      return;
    }
    QVERIFY(hit);
    QCOMPARE(hit->count, 1u);
    QCOMPARE(QString::fromUtf8(v.store()->name(v.store()->event(hit->event)).data()), name);
    // The tooltip names it, with its duration and correlation.
    const QString tip = v.toolTipFor(*hit);
    QVERIFY(tip.contains(name));
    if (name == "C" || name == "K") QVERIFY(tip.contains(QStringLiteral("correlation 42")));
  }

  void folding_data() {
    QTest::addColumn<int>("events");
    QTest::addColumn<double>("zoom");  // fraction of the trace shown
    QTest::addColumn<double>("at");    // where the window starts (fraction)
    for (int n : {1000, 50000}) {
      for (double z : {1.0, 0.3, 0.01, 0.0001}) {
        QTest::newRow(qPrintable(QStringLiteral("%1 events, %2 of the trace").arg(n).arg(z))) << n << z << 0.37;
      }
    }
  }
  void folding() {
    QFETCH(int, events);
    QFETCH(double, zoom);
    QFETCH(double, at);
    TimelineView v;
    sizeViewport(v, TimelineView::kHeaderWidth + 1200, 600);
    auto store = manyEvents(events, 99);
    v.setStore(store);
    const int64_t lo = store->minTime(), full = store->maxTime() - store->minTime();
    const auto t0 = lo + static_cast<int64_t>(at * static_cast<double>(full) * (zoom < 1 ? 1 : 0));
    v.zoomToRange(t0, t0 + static_cast<int64_t>(zoom * static_cast<double>(full)), 0);
    const Geometry& g = v.geometry();
    uint64_t counted = 0, visibleTotal = 0, folds = 0;
    for (const RowGeometry& rg : g.rows) {
      const TrackRow& row = v.index().tracks()[rg.track].rows[rg.row];
      const auto [first, last] = v.index().visible(row, v.axis().start(), v.axis().end());
      // Items cover the visible range exactly, in order, each event once.
      size_t next = first;
      for (const GeomItem& it : rg.items) {
        QCOMPARE(static_cast<size_t>(it.first), next);
        QVERIFY(it.count >= 1);
        QVERIFY(it.x1 >= it.x0);
        if (it.folded()) {
          ++folds;
        } else {
          QVERIFY(it.x1 - it.x0 >= kFoldPixels || it.x1 - it.x0 >= 0);
        }
        next += it.count;
        counted += it.count;
      }
      QCOMPARE(next, last);
      visibleTotal += last - first;
      // Brute force: the events overlapping the window are the visible range.
      uint64_t brute = 0;
      for (EventId id : row.ids) {
        const Event& e = store->event(id);
        brute += e.end() >= v.axis().start() && e.start < v.axis().end();
      }
      QVERIFY2(brute <= last - first, "an overlapping event is outside the visible range");
    }
    QCOMPARE(counted, visibleTotal);
    if (zoom >= 1.0) QCOMPARE(counted, static_cast<uint64_t>(store->events().size()));
    // Folding bounds the work: never more items than a few per pixel and row.
    QVERIFY(g.itemCount() <= g.rows.size() * static_cast<size_t>(v.axis().width()));
    if (events >= 50000 && zoom >= 1.0) QVERIFY(folds > 0);
  }

  // A ProfilerStep's overlay opens with what cost that step most: the diagnosis's largest part of it.
  void overlayOpensWithTheStepsHeadline() {
    TimelinePane panel;
    TraceLoader loader;
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    loader.load(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/kineto_tb_resnet50_nw0.pt.trace.json.gz"));
    QVERIFY(loaded.wait(60000));
    panel.setTrace(loaded.takeFirst().at(0).value<std::shared_ptr<const LoadedTrace>>());
    const Explanation& a = panel.explanation();
    QVERIFY(a.stepSource == "profiler_steps" && !a.steps.empty());
    const StepReport& st = a.steps.back();
    QVERIFY(panel.explainByName(QString::fromStdString(st.name)));
    const StepWaits* w = diagnosedStep(a.diagnosis, st.hostStartNs, st.hostEndNs);
    QVERIFY(w);
    int64_t top = 0;
    for (int64_t p : w->parts) top = std::max(top, p);
    const QString legend = panel.legendText();
    QVERIFY2(legend.startsWith(QStringLiteral("What cost %1 most: ").arg(QString::fromStdString(st.name))),
             qPrintable(legend));
    // Of the step's window in the diagnosis (from the previous step's completion to its own).
    QVERIFY2(legend.contains(QString::fromStdString(spanDurationText(top)) + " of " +
                             QString::fromStdString(spanDurationText(w->spanNs()))),
             qPrintable(legend));
  }

  // The bundler alone: arrows whose ends share a cell on one row are one arrow with their count and
  // their mean ends; on another row they are not; a thousand spread arrows come down to the budget
  // and still stand for all thousand.
  void flowBundler() {
    FlowBundler b;
    b.add({100, 10}, {300, 80});
    b.add({103, 10}, {302, 80});  // same cells (8 px: 96-104, 296-304), same rows
    b.add({103, 30}, {302, 80});  // another launch row
    std::vector<FlowArrow> out = b.take();
    QCOMPARE(out.size(), std::size_t(2));
    QCOMPARE(out[0].count, 2);
    QCOMPARE(out[0].from, QPointF(101.5, 10));
    QCOMPARE(out[0].to, QPointF(301, 80));
    QCOMPARE(out[1].count, 1);
    QCOMPARE(b.added(), 0);
    for (int i = 0; i < 1000; ++i) b.add({200.0 + i, 10}, {250.0 + 1.5 * i, 80});
    out = b.take();
    QVERIFY(!out.empty() && out.size() <= FlowBundler::kMaxArrows);
    int total = 0;
    for (const FlowArrow& a : out) total += a.count;
    QCOMPARE(total, 1000);
  }

  // A training step selected draws its launches' arrows bundled (issue 31: thousands of single
  // arrows were a solid block): at most FlowBundler::kMaxArrows arrows, standing for exactly the
  // step's own launches, as the explanation counts them (each GPU activity launched from the
  // step's thread), both with the whole trace in view and zoomed to the step.
  void selectedStepFlowsBundled() {
    TraceLoader loader;
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    loader.load(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/kineto_tb_resnet50_nw0.pt.trace.json.gz"));
    QVERIFY(loaded.wait(60000));
    const auto trace = loaded.takeFirst().at(0).value<std::shared_ptr<const LoadedTrace>>();
    TimelinePane panel;
    panel.setAttribute(Qt::WA_DontShowOnScreen);
    panel.resize(1280, 1400);  // every lane on screen
    panel.show();
    panel.setTrace(trace);
    QCoreApplication::processEvents();
    TimelineView* v = panel.view();
    const Explanation& a = panel.explanation();
    QVERIFY(a.steps.size() >= 2);
    const StepReport& st = a.steps[1];
    QVERIFY(st.event != kNoEvent);
    const EventStore& s = *v->store();
    int ownLaunches = 0;
    for (const Launch& l : st.launches)
      if (l.launch != kNoEvent && s.event(l.launch).lane == s.event(st.event).lane) ++ownLaunches;
    QVERIFY2(ownLaunches > 500, qPrintable(QString::number(ownLaunches)));
    v->selectEvent(st.event);
    for (bool zoomed : {false, true}) {
      if (zoomed)
        v->zoomToRange(st.hostStartNs, std::max(st.hostEndNs, st.gpuEndNs));
      else
        v->fitAll();
      v->viewport()->grab();  // paints
      const TimelineView::FlowStats f = v->lastFlows();
      QVERIFY2(f.links == ownLaunches,
               qPrintable(QString("%1 links drawn, %2 launches").arg(f.links).arg(ownLaunches)));
      QVERIFY2(f.arrows >= 1 && f.arrows <= static_cast<int>(FlowBundler::kMaxArrows),
               qPrintable(QString::number(f.arrows)));
    }
  }

  void overlayNumbers() {
    TimelinePane panel;
    const QString path = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_8x16x1024x64.json");
    // Load through the same loader the window uses.
    TraceLoader loader;
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    loader.load(path);
    QVERIFY(loaded.wait(30000));
    panel.setTrace(loaded.takeFirst().at(0).value<std::shared_ptr<const LoadedTrace>>());
    const Explanation& a = panel.explanation();
    const int softmax = findStepByName(a, "SOFTMAX PASS");
    QVERIFY(softmax >= 0);
    QVERIFY(panel.explainByName(QStringLiteral("SOFTMAX PASS")));
    const auto& o = panel.view()->overlay();
    QVERIFY(o);
    const StepReport& st = a.steps[static_cast<size_t>(softmax)];
    QCOMPARE(o->hostStartNs, st.hostStartNs);
    QCOMPARE(o->gpuStartNs, st.gpuStartNs);
    QCOMPARE(o->gpuAttributedNs, st.gpuAttributedNs);
    const QString legend = panel.legendText();
    QVERIFY2(legend.contains(QString::fromStdString(durationText(st.gpuStartNs - st.hostEndNs)) + " later"),
             qPrintable(legend));
    QVERIFY(legend.contains(QStringLiteral("sees only the launch")));
    // The view zoomed to it.
    QVERIFY(panel.view()->axis().start() <= o->extentStartNs && panel.view()->axis().end() >= o->extentEndNs);

    // SCALE is not annotated in this capture: its ops stand for it, with the sync wait.
    QVERIFY(panel.explainByName(QStringLiteral("SCALE")));
    const auto& sc = panel.view()->overlay();
    QVERIFY(sc && sc->syncWaits.size() == 1);
    QCOMPARE(sc->syncWaits[0].api.substr(0, 21), std::string("cudaStreamSynchronize"));
    QCOMPARE(sc->syncWaits[0].durNs, int64_t(298889));
    QVERIFY(!sc->syncWaits[0].awaited.empty());
    QVERIFY(panel.legendText().contains(QStringLiteral("298.9 us")));
    QVERIFY(!panel.explainByName(QStringLiteral("NO SUCH STEP")));
  }

  void selectionSync() {
    MainWindow w;
    QSignalSpy shown(&w, &MainWindow::traceShown);
    w.openTrace(QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_8x16x1024x64.json"));
    QVERIFY(shown.wait(30000));
    TimelineView* v = w.timelinePane()->view();
    QTableView* table = w.tablePane()->view();
    // Table row -> its events highlight.
    int divRow = -1;
    for (int r = 0; r < w.tablePane()->proxy()->rowCount(); ++r) {
      if (w.tablePane()->proxy()->index(r, 0).data().toString().contains(QStringLiteral("aten::div"))) divRow = r;
    }
    QVERIFY(divRow >= 0);
    table->selectionModel()->setCurrentIndex(w.tablePane()->proxy()->index(divRow, 0),
                                             QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    const KeyAverageRow* row = w.tablePane()->model()->rowAt(
        w.tablePane()->proxy()->mapToSource(w.tablePane()->proxy()->index(divRow, 0)).row());
    QVERIFY(row && !row->events.empty());
    std::vector<EventId> want = row->events;
    std::sort(want.begin(), want.end());
    QCOMPARE(v->highlighted(), want);
    // Event -> its row: select the softmax kernel on the timeline.
    const EventStore& s = *v->store();
    EventId kernel = kNoEvent;
    for (EventId id = 0; id < s.events().size(); ++id) {
      if (s.event(id).family == Family::Kernel && s.name(s.event(id)).find("softmax") != std::string_view::npos)
        kernel = id;
    }
    QVERIFY(kernel != kNoEvent);
    v->selectEvent(kernel, true);
    const QModelIndex cur = table->selectionModel()->currentIndex();
    QVERIFY(cur.isValid());
    const KeyAverageRow* sel = w.tablePane()->model()->rowAt(w.tablePane()->proxy()->mapToSource(cur).row());
    QVERIFY(sel);
    QVERIFY(std::find(sel->events.begin(), sel->events.end(), kernel) != sel->events.end());
    // And the row's highlight now holds that event.
    QVERIFY(std::binary_search(v->highlighted().begin(), v->highlighted().end(), kernel));
  }

  void searchNextPrevious() {
    TimelineView v;
    sizeViewport(v, 1200, 400);
    v.setStore(smallStore());
    QCOMPARE(v.setSearch(QStringLiteral("b")), 1);  // case-insensitive: "B"
    QCOMPARE(v.setSearch(QStringLiteral("")), 0);
    v.setSearch(QStringLiteral("K"));
    const EventId k = v.nextMatch(true);
    QCOMPARE(v.selectedEvent(), k);
    QCOMPARE(QString::fromUtf8(v.store()->name(v.store()->event(k)).data()), QStringLiteral("K"));
  }

  void trackReorderAndCollapse() {
    TimelineView v;
    sizeViewport(v, 1200, 400);
    v.setStore(smallStore());
    TimelineLayout& l = v.layout();
    QCOMPARE(l.order().front(), 0u);
    l.moveTrack(1, 0);
    l.setCollapsed(0, true);
    v.relayoutTracks();
    QCOMPARE(l.order().front(), 1u);
    QVERIFY(l.trackTop(1) < l.trackTop(0));
    QCOMPARE(l.trackHeight(0), TimelineLayout::kRowHeight + TimelineLayout::kTrackGap);
  }
};

QTEST_MAIN(TestTimeline)
#include "test_timeline.moc"
