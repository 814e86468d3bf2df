// The Ranks window driven as a user drives it: a job opened by dropping its folder on the main window
// and through File > Open Job… with the dialog answered; the heat map's figures and straggler marks
// against `attnscope-cli ranks --format json` of the same folder (the CLI, not the widget, computes
// the expectation), a cell hovered and clicked, the collectives sorted by a header click, the chosen
// ranks' timelines on the aligned clock (rank 1 of gloo_ddp4_skewed_r1 drawn shifted back by its
// applied offset, from the raw trace's ts), and a job that cannot be read said in the window.
#include <zlib.h>

#include <QToolTip>
#include <cmath>

#include <QScrollArea>
#include <QSplitter>

#include "app_harness.h"
#include "job_gen.h"
#include "test_json.h"
#include "ui/common/text.h"
#include "ui/ranks/collectives_model.h"
#include "ui/ranks/job_heat_map.h"
#include "ui/ranks/rank_timelines.h"
#include "ui/ranks/ranks_view.h"
#include "ui/timeline/view.h"

using namespace apptest;

namespace {

const QString kSets = QStringLiteral(ATTNSCOPE_SHARED_TRACES "/multirank");

QJsonObject cliJob(const QString& folder) {
  QProcess p;
  p.start(QStringLiteral(ATTNSCOPE_BIN_DIR "/attnscope-cli"),
          {QStringLiteral("ranks"), folder, QStringLiteral("--format"), QStringLiteral("json"),
           QStringLiteral("--no-cache")});
  if (!p.waitForFinished(120000) || p.exitCode() != 0) return {};
  return QJsonDocument::fromJson(p.readAllStandardOutput()).object();
}

bool drop(QWidget* w, const QStringList& paths) {
  QMimeData mime;
  QList<QUrl> urls;
  for (const QString& p : paths) urls << QUrl::fromLocalFile(p);
  mime.setUrls(urls);
  QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(w, &enter);
  if (!enter.isAccepted()) return false;
  QDropEvent dropEv(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(w, &dropEv);
  return dropEv.isAccepted();
}

bool waitFor(const std::function<bool()>& ok, int ms = 60000) {
  for (int waited = 0; !ok() && waited < ms; waited += 20) QTest::qWait(20);
  return ok();
}

QAction* fileAction(MainWindow& w, const QString& startsWith) {
  for (QAction* a : w.menuBar()->actions())
    if (a->text().remove('&') == QLatin1String("File"))
      for (QAction* f : a->menu()->actions())
        if (f->text().remove('&').startsWith(startsWith)) return f;
  return nullptr;
}

}  // namespace

class RanksUiTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    initSuite();
    QVERIFY2(QFileInfo(kSets + "/gloo_ddp4_straggler").isDir(), qPrintable(kSets));
  }

  // The straggler's folder dropped on the main window: the Ranks window shows the CLI's figures, marks
  // rank 2 on ProfilerStep#5 and #7, and a click selects a rank and step.
  void droppedFolderShowsTheStraggler() {
    const QString folder = kSets + "/gloo_ddp4_straggler";
    const QJsonObject cli = cliJob(folder);
    QVERIFY2(!cli.isEmpty(), "attnscope-cli ranks failed");
    App app;
    QVERIFY(drop(&app.w, {folder}));
    RanksView* view = app.w.ranksView();
    QVERIFY(view);
    QVERIFY(waitFor([view] { return view->report() != nullptr; }));
    QCOMPARE(view->headlineText(), cli[QStringLiteral("headline")].toString());
    // Every cell against the CLI's wait_for_last_ns.
    JobHeatMap* map = view->heatMap();
    const QJsonArray ranks = cli[QStringLiteral("ranks")].toArray();
    QCOMPARE(qsizetype(map->rows()), ranks.size());
    int cells = 0;
    for (const QJsonValue& rv : ranks) {
      const int row = map->rowOfRank(rv[QStringLiteral("rank")].toInteger());
      QVERIFY(row >= 0);
      for (const QJsonValue& sv : rv[QStringLiteral("steps")].toArray()) {
        const int col = map->columnOf(sv[QStringLiteral("name")].toString());
        QVERIFY(col >= 0);
        const ranks::StepFigures* f = map->figures(row, col);
        QVERIFY(f);
        QCOMPARE(qint64(f->waitForLastNs), sv[QStringLiteral("wait_for_last_ns")].toInteger());
        ++cells;
      }
    }
    QVERIFY(cells >= 4 * 6);
    // The straggler the CLI names (rank 2, steps 5 and 7) is outlined there and nowhere else.
    const QJsonObject s = cli[QStringLiteral("stragglers")].toArray().first().toObject();
    QCOMPARE(s[QStringLiteral("rank")].toInteger(), qint64(2));
    QStringList steps;
    for (const QJsonValue& v : s[QStringLiteral("steps")].toArray()) steps << v.toString();
    QCOMPARE(steps, QStringList({QStringLiteral("ProfilerStep#5"), QStringLiteral("ProfilerStep#7")}));
    const int row2 = map->rowOfRank(2);
    for (int r = 0; r < map->rows(); ++r)
      for (int c = 0; c < map->columns(); ++c) QCOMPARE(map->marked(r, c), r == row2 && steps.contains(map->stepAt(c)));
    QVERIFY2(map->stragglerTitle().contains(QStringLiteral("rank 2")) &&
                 map->stragglerTitle().contains(QStringLiteral("ProfilerStep#5, #7")),
             qPrintable(map->stragglerTitle()));
    QVERIFY(view->findingsText().contains(s[QStringLiteral("text")].toString()));

    // Hover rank 0's cell on step 5 (it waited there for rank 2): the tooltip says rank, step, wait, cause.
    const int row0 = map->rowOfRank(0), col5 = map->columnOf(QStringLiteral("ProfilerStep#5"));
    const QPoint at = map->cellRect(row0, col5).center();
    QTest::mouseMove(map, at);
    QHelpEvent help(QEvent::ToolTip, at, map->mapToGlobal(at));
    QCoreApplication::sendEvent(map, &help);
    const QString tip = QToolTip::text();
    const ranks::StepFigures* f05 = map->figures(row0, col5);
    QVERIFY2(tip.contains(QStringLiteral("rank 0 · ProfilerStep#5")) &&
                 tip.contains(qs(spanDurationText(f05->waitForLastNs))) &&
                 tip.contains(qs(spanDurationText(f05->stepNs))) && tip.contains(qs(f05->causeLabel)),
             qPrintable(tip));

    // The default timelines: the straggler and a typical rank, both loaded.
    RankTimelines* lines = view->timelines();
    QCOMPARE(lines->shownRanks().size(), 2);
    QCOMPARE(lines->shownRanks().front(), qint64(2));
    QVERIFY(waitFor([lines] { return lines->allLoaded(); }));

    // Click rank 2's cell on step 7: selected, and every timeline zoomed to that step.
    const int col7 = map->columnOf(QStringLiteral("ProfilerStep#7"));
    QTest::mouseClick(map, Qt::LeftButton, Qt::NoModifier, map->cellRect(row2, col7).center());
    QCOMPARE(map->selected(), std::make_pair(row2, col7));
    QCOMPARE(view->selectedRank(), qint64(2));
    QCOMPARE(view->selectedStep(), QStringLiteral("ProfilerStep#7"));
    QVERIFY2(view->selectionText().contains(QStringLiteral("rank 2 · ProfilerStep#7")),
             qPrintable(view->selectionText()));
    const ranks::StepFigures* f27 = map->figures(row2, col7);
    QVERIFY(lines->alignedStart() <= f27->startNs);
    QVERIFY(lines->alignedStart() + lines->alignedSpan() >= f27->startNs + f27->stepNs);
    QVERIFY(lines->alignedSpan() < 3 * f27->stepNs);

    // The collectives: as many rows as the CLI matched and did not; a click on "Late by" sorts the
    // latest first, and the latest is the straggler's.
    QTabWidget* tabs = view->sideTabs();
    QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, Qt::NoModifier, tabs->tabBar()->tabRect(1).center());
    QCOMPARE(tabs->currentWidget(), view->collectivesView());
    const QJsonObject colls = cli[QStringLiteral("collectives")].toObject();
    QCOMPARE(qsizetype(view->collectivesProxy()->rowCount()),
             colls[QStringLiteral("matched")].toArray().size() + colls[QStringLiteral("unmatched")].toArray().size());
    clickHeader(view->collectivesView(), CollectivesModel::LateBy);
    QVERIFY(sortedBy(view->collectivesProxy(), CollectivesModel::LateBy, Qt::DescendingOrder));
    qint64 latest = -1, latestRank = -1;
    for (const QJsonValue& m : colls[QStringLiteral("matched")].toArray())
      if (m[QStringLiteral("late_ns")].toInteger() > latest) {
        latest = m[QStringLiteral("late_ns")].toInteger();
        latestRank = m[QStringLiteral("last_rank")].toInteger();
      }
    QCOMPARE(latestRank, qint64(2));
    QCOMPARE(view->collectivesProxy()->index(0, CollectivesModel::LateBy).data(TableModelBase::SortRole).toLongLong(),
             latest);
    QCOMPARE(view->collectivesProxy()->index(0, CollectivesModel::LastRank).data().toString(),
             QStringLiteral("rank 2"));
    // A click on that row: the timelines show that collective.
    clickRow(view->collectivesView(), 0);
    const auto [t0, t1] = view->collectives()->alignedRange(
        view->collectivesProxy()->mapToSource(view->collectivesView()->currentIndex()).row());
    QVERIFY(t1 > t0);
    QVERIFY(lines->alignedStart() <= t0 && lines->alignedStart() + lines->alignedSpan() >= t1);
    QVERIFY(lines->alignedSpan() <= 3 * (t1 - t0));
  }

  // File > Open Job… with the dialog answered ("Open Whole Folder" on gloo_ddp4_skewed_r1): rank 1's
  // clock is 20 ms ahead; its events are drawn shifted back by the applied offset.
  void openJobActionAlignsTheClocks() {
    const QString folder = kSets + "/gloo_ddp4_skewed_r1";
    const QJsonObject cli = cliJob(folder);
    QVERIFY(!cli.isEmpty());
    const qint64 off1 = cli[QStringLiteral("clock")][QStringLiteral("offsets_ns")][QStringLiteral("1")].toInteger(0);
    const qint64 off0 = cli[QStringLiteral("clock")][QStringLiteral("offsets_ns")][QStringLiteral("0")].toInteger(0);
    QVERIFY2(std::llabs(off1 - 20'000'000) < 2'000'000, qPrintable(QString::number(off1)));
    App app;
    bool answered = false;
    QTimer::singleShot(0, [&] {
      for (int i = 0; i < 100 && !qobject_cast<QFileDialog*>(QApplication::activeModalWidget()); ++i) QTest::qWait(50);
      auto* dlg = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
      if (!dlg || !QTest::qWaitForWindowExposed(dlg)) return;
      dlg->setDirectory(folder);
      auto* button = dlg->findChild<QPushButton*>(QStringLiteral("openWholeFolder"));
      if (!button) return;
      QTest::mouseClick(button, Qt::LeftButton);
      answered = true;
    });
    QAction* open = fileAction(app.w, QStringLiteral("Open Job"));
    QVERIFY(open && open->isEnabled());
    open->trigger();
    QVERIFY(answered);
    RanksView* view = app.w.ranksView();
    QVERIFY(view);
    QVERIFY(waitFor([view] { return view->report() != nullptr; }));
    RankTimelines* lines = view->timelines();
    if (!lines->shownRanks().contains(1)) lines->addRank(1);
    if (!lines->shownRanks().contains(0)) lines->addRank(0);
    QVERIFY(waitFor([lines] { return lines->loaded(0) && lines->loaded(1); }));
    QCOMPARE(qint64(lines->offsetOf(1)), off1);
    QVERIFY2(lines->titleOf(1).contains(QStringLiteral("applied")), qPrintable(lines->titleOf(1)));

    // Rank 1's first c10d::allreduce_, from the raw trace.
    const QJsonArray events = QJsonDocument::fromJson(gunzip(folder + "/rank-1.pt.trace.json.gz"))
                                  .object()[QStringLiteral("traceEvents")]
                                  .toArray();
    double rawTs = -1;
    for (const QJsonValue& e : events)
      if (e[QStringLiteral("name")].toString() == QLatin1String("c10d::allreduce_") &&
          (rawTs < 0 || e[QStringLiteral("ts")].toDouble() < rawTs))
        rawTs = e[QStringLiteral("ts")].toDouble();
    QVERIFY(rawTs > 0);
    const qint64 rawNs = std::llround(rawTs * 1000);
    const qint64 aligned = rawNs - off1;
    // Zoom every rank to 2 ms around it on the aligned clock.
    lines->zoomToAligned(aligned - 1'000'000, aligned + 1'000'000, 0.0);
    TimelineView* v0 = lines->viewOf(0);
    TimelineView* v1 = lines->viewOf(1);
    QVERIFY(v0 && v1);
    // The op in rank 1's store starts at the trace's ts; selecting it scrolls its lane into view (a pan
    // there moves rank 0 alike).
    const EventStore& s1 = *v1->store();
    EventId id = kNoEvent;
    for (EventId i = 0; i < s1.events().size(); ++i)
      if (qint64(s1.events()[i].start) == rawNs && s1.name(s1.events()[i]) == "c10d::allreduce_") id = i;
    QVERIFY2(id != kNoEvent, "the store's start is the trace's ts");
    v1->selectEvent(id, true);
    QCoreApplication::processEvents();
    // Drawn where its raw ts minus the offset is on the shared aligned axis: at the same x as that
    // aligned time on rank 0's view, and both rulers read that aligned time there.
    const double x1 = v1->xOf(rawNs);
    QVERIFY2(x1 > TimelineView::kHeaderWidth && x1 < v1->viewport()->width(), qPrintable(QString::number(x1)));
    QVERIFY2(std::abs(x1 - v0->xOf(aligned + off0)) < 1.0, qPrintable(QString::number(x1)));
    const double nsPerPx = v1->axis().nsPerPixel();
    QVERIFY(std::llabs(lines->alignedTimeAt(1, x1) - aligned) <= nsPerPx + 1);
    QVERIFY(std::llabs(lines->alignedTimeAt(0, x1) - aligned) <= nsPerPx + 1);
    QCOMPARE(qint64(v1->timeOrigin() - v0->timeOrigin()), off1 - off0);
    // The event really is drawn there: the box just right of x1 is that op.
    bool hit = false;
    for (int y = TimelineView::kRulerHeight; y < v1->viewport()->height() && !hit; y += 2)
      if (const auto h = v1->hitTest(QPoint(static_cast<int>(std::ceil(x1)) + 1, y))) hit = h->event == id;
    QVERIFY(hit);
  }

  // What cannot be opened is said in the window: a folder with no trace, a trace that is not JSON.
  // A node of 4 late together (a generated job, its truth from the construction): the four rows drawn as
  // one set (bracketed, each straggled step's cells outlined as one block), each of their straggled cells
  // the darkest of its column and showing the wait imposed on the others (the CLI's figure), the step
  // labels whole; a click on a cell zooms the timelines without taking the map's room.
  void nodeOfFourDrawnAsASet() {
    jobgen::Options o;
    o.form = "node", o.backend = "nccl", o.world = 16, o.collectives = 6, o.tp = 1, o.hostIn = "trace";
    o.steps = 8;
    const jobgen::Job job = jobgen::generate(4211, o);
    QTemporaryDir tmp;
    QVERIFY(jobgen::writeJob(job, tmp.path().toStdString()));
    const QJsonObject cli = cliJob(tmp.path());
    QVERIFY(!cli.isEmpty());
    const QJsonObject s = cli[QStringLiteral("stragglers")].toArray().first().toObject();
    const jobgen::TrueStraggler& truth = job.stragglers.front();
    QCOMPARE(s[QStringLiteral("ranks")].toArray().size(), qsizetype(truth.ranks.size()));
    App app;
    app.w.openJob({tmp.path()});
    RanksView* view = app.w.ranksView();
    QVERIFY(view);
    QVERIFY(waitFor([view] { return view->report() != nullptr; }));
    view->resize(1280, 800);
    QVERIFY(QTest::qWaitForWindowExposed(view));
    JobHeatMap* map = view->heatMap();
    // One set: the node's rows, on the truth's steps.
    QCOMPARE(map->sets().size(), size_t{1});
    std::vector<int> rows;
    for (int64_t r : truth.ranks) rows.push_back(map->rowOfRank(r));
    QCOMPARE(map->sets().front().rows, rows);
    QCOMPARE(map->sets().front().name, QString::fromStdString(job.hosts[static_cast<size_t>(truth.ranks.front())]));
    QVERIFY2(map->stragglerTitle().contains(s[QStringLiteral("who")].toString()), qPrintable(map->stragglerTitle()));
    for (int k : truth.steps) {
      const int col = map->columnOf(QString::fromStdString(job.stepNames[static_cast<size_t>(k)]));
      QVERIFY(col >= 0);
      for (int row = 0; row < map->rows(); ++row) {
        const bool culprit = std::find(rows.begin(), rows.end(), row) != rows.end();
        QCOMPARE(map->marked(row, col), culprit);
        // The CLI's imposed wait, in the culprit's cell.
        const QJsonObject step =
            cli[QStringLiteral("ranks")].toArray()[row].toObject()[QStringLiteral("steps")].toArray()[k].toObject();
        QCOMPARE(qint64(map->imposedAt(row, col)), culprit ? step[QStringLiteral("imposed_ns")].toInteger() : 0);
        if (culprit) QVERIFY(step[QStringLiteral("imposed_ns")].toInteger() > 0);
      }
    }
    // The culprit's cells are the darkest drawn: darker than any victim's wait colour.
    QImage img(map->size(), QImage::Format_RGB32);
    map->render(&img);
    const int col0 = map->columnOf(QString::fromStdString(job.stepNames[static_cast<size_t>(truth.steps.front())]));
    // (A fill's pixel: left of the centred figure, inside the outline.)
    auto fillAt = [&](int row) {
      return img.pixelColor(map->cellRect(row, col0).topLeft() + QPoint(8, map->cellRect(row, col0).height() / 2));
    };
    QCOMPARE(fillAt(rows.front()), JobHeatMap::culpritColor());
    const double culprit = fillAt(rows.front()).lightnessF();
    for (int row = 0; row < map->rows(); ++row)
      if (std::find(rows.begin(), rows.end(), row) == rows.end()) QVERIFY(fillAt(row).lightnessF() > culprit + 0.2);
    // Step labels whole: across the column when they fit, else upright.
    const QFontMetrics fm(map->font());
    for (int c = 0; c < map->columns(); ++c) {
      QVERIFY(map->stepAt(c).endsWith(map->columnLabel(c)));
      if (!map->uprightLabels()) QVERIFY(fm.horizontalAdvance(map->columnLabel(c)) + 6 <= map->cellRect(0, c).width());
    }
    // A click on a victim's cell: the timelines go there; the map keeps its room.
    auto* area = qobject_cast<QScrollArea*>(map->parentWidget()->parentWidget());
    QVERIFY(area);
    // Once the window has settled (the default ranks' timelines loaded, the words wrapped).
    QVERIFY(waitFor([view] { return view->timelines()->settled(); }));
    QTest::qWait(200);
    const int before = area->viewport()->height();
    const int victim = rows.back() + 1 < map->rows() ? rows.back() + 1 : 0;
    const QRect target = map->cellRect(victim, col0);
    area->ensureVisible(target.center().x(), target.center().y());
    QTest::mouseClick(map, Qt::LeftButton, Qt::NoModifier, target.center());
    QCOMPARE(view->selectedRank(), qint64(view->report()->ranks[static_cast<size_t>(victim)].rank));
    QVERIFY(waitFor([view] { return view->timelines()->settled(); }));
    QCoreApplication::processEvents();
    QVERIFY2(area->viewport()->height() >= before - 2,
             qPrintable(QStringLiteral("%1 -> %2").arg(before).arg(area->viewport()->height())));
    QVERIFY(area->viewport()->height() >= 6 * map->cellRect(0, 0).height());
    const ranks::StepFigures* f = map->figures(victim, col0);
    QVERIFY(view->timelines()->alignedStart() <= f->startNs);
    QVERIFY(view->timelines()->alignedStart() + view->timelines()->alignedSpan() >= f->startNs + f->stepNs);
  }

  void unreadableJobIsSaid() {
    App app;
    QTemporaryDir empty;
    app.w.openJob({empty.path()});
    RanksView* view = app.w.ranksView();
    QVERIFY(view);
    QVERIFY2(view->errorText().contains(QStringLiteral("holds no trace")), qPrintable(view->errorText()));
    QTemporaryDir broken;
    QVERIFY(QFile::copy(QStringLiteral(ATTNSCOPE_TEST_DATA "/malformed/not_json.json"),
                        broken.filePath(QStringLiteral("rank-0.trace.json"))));
    QVERIFY(QFile::copy(kNone, broken.filePath(QStringLiteral("rank-1.trace.json"))));
    QSignalSpy failed(view, &RanksView::jobFailed);
    QVERIFY(drop(&app.w, {broken.filePath(QStringLiteral("rank-0.trace.json")),
                          broken.filePath(QStringLiteral("rank-1.trace.json"))}));
    QVERIFY(failed.wait(60000));
    QVERIFY2(view->errorText().contains(QStringLiteral("rank-0.trace.json")), qPrintable(view->errorText()));
    QVERIFY(!view->report());
  }
};

QTEST_MAIN(RanksUiTest)
#include "test_ranks_ui.moc"
