// File > Capture Running Job… driven as a user drives it, on real torch jobs: the menu opened with
// the mouse, the job's row ticked in the dialog's list (the unprepared process beside it shown not
// ready, with the fix, and not tickable), the steps typed, Capture clicked; the capture opens in the
// window explained (the Explanation panel's headline is `attnscope-cli explain`'s for the same file).
// Then a torchrun job's two ranks ticked (its launcher not tickable): the folder opens in the Ranks
// window. Screenshots at 1280x800 go to $ATTNSCOPE_SHOTS when set.
#include <signal.h>

#include <QProgressBar>
#include <QSpinBox>
#include <QTableWidget>

#include "../core/capture_jobs.h"
#include "app_harness.h"
#include "ui/capture/capture_dialog.h"
#include "ui/ranks/ranks_view.h"

using namespace apptest;
using namespace capture_test;

namespace {

bool waitFor(const std::function<bool()>& ok, int ms = 60000) {
  for (int waited = 0; !ok() && waited < ms; waited += 50) QTest::qWait(50);
  return ok();
}

void shot(QWidget* w, const QString& name) {
  const QByteArray dir = qgetenv("ATTNSCOPE_SHOTS");
  if (dir.isEmpty()) return;
  w->grab().save(QString::fromLocal8Bit(dir) + QLatin1Char('/') + name);
}

// File > Capture Running Job… with the mouse: the menu's title, then the item in the open menu.
CaptureDialog* openCaptureDialog(MainWindow& w) {
  QMenuBar* bar = w.menuBar();
  QAction* fileMenu = nullptr;
  for (QAction* a : bar->actions())
    if (a->text().remove('&') == QLatin1String("File")) fileMenu = a;
  if (!fileMenu) return nullptr;
  QTest::mouseClick(bar, Qt::LeftButton, Qt::NoModifier, bar->actionGeometry(fileMenu).center());
  QMenu* menu = fileMenu->menu();
  if (!waitFor([menu] { return menu->isVisible(); }, 5000)) return nullptr;
  QAction* item = menu->findChild<QAction*>(QStringLiteral("captureJobAction"));
  for (QAction* a : menu->actions())
    if (a->objectName() == QLatin1String("captureJobAction")) item = a;
  if (!item) return nullptr;
  QTest::mouseClick(menu, Qt::LeftButton, Qt::NoModifier, menu->actionGeometry(item).center());
  CaptureDialog* d = nullptr;
  waitFor([&] { return (d = w.findChild<CaptureDialog*>()) != nullptr; }, 5000);
  return d;
}

int rowOf(QTableWidget* t, qint64 pid) {
  for (int r = 0; r < t->rowCount(); ++r)
    if (t->item(r, 0)->text() == QString::number(pid)) return r;
  return -1;
}

// A click on the row's check box (the indicator at the cell's left).
void tick(QTableWidget* t, int row) {
  t->scrollToItem(t->item(row, 0));
  const QRect cell = t->visualItemRect(t->item(row, 0));
  QTest::mouseClick(t->viewport(), Qt::LeftButton, Qt::NoModifier, QPoint(cell.left() + 12, cell.center().y()));
}

void typeInto(QWidget* w, const QString& text) {
  w->setFocus();
  QTest::keyClick(w, Qt::Key_A, Qt::ControlModifier);
  QTest::keyClicks(w, text);
}

QString explainHeadline(const QString& path) {
  QProcess p;
  p.start(QStringLiteral(ATTNSCOPE_BIN_DIR "/attnscope-cli"),
          {QStringLiteral("explain"), path, QStringLiteral("--format"), QStringLiteral("json")});
  p.waitForFinished(60000);
  return QJsonDocument::fromJson(p.readAllStandardOutput())
      .object()
      .value(QStringLiteral("diagnosis"))
      .toObject()
      .value(QStringLiteral("headline"))
      .toString();
}

}  // namespace

class CaptureUiTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString sockets_;
  std::map<QString, QString> ready() const {
    return {{QStringLiteral("KINETO_USE_DAEMON"), QStringLiteral("1")},
            {QStringLiteral("KINETO_IPC_SOCKET_DIR"), sockets_}};
  }

 private slots:
  void initTestCase() {
    initSuite();
    QVERIFY(dir_.isValid());
    sockets_ = dir_.filePath(QStringLiteral("sockets"));
    QVERIFY(QDir().mkpath(sockets_));
    QProcess p;
    p.start(QStringLiteral("python3"), {QStringLiteral("-c"), QStringLiteral("import torch")});
    if (!p.waitForFinished(120000) || p.exitCode() != 0) QSKIP("python3 cannot import torch: nothing to capture");
  }

  void capturesAScriptAndOpensItExplained() {
    const QString log = dir_.filePath(QStringLiteral("ui.steps"));
    const QString other = dir_.filePath(QStringLiteral("unready.steps"));
    Job job(QStringLiteral("python3"), {kScripts + QStringLiteral("train_loop.py"), QStringLiteral("--log"), log},
            ready());
    Job unready(QStringLiteral("python3"), {kScripts + QStringLiteral("train_loop.py"), QStringLiteral("--log"), other},
                {});
    QVERIFY2(waitForSteps(log, 3), qPrintable(job.output()));
    QVERIFY2(waitForSteps(other, 1), qPrintable(unready.output()));

    App app;
    QPointer<CaptureDialog> dialog = openCaptureDialog(app.w);
    QVERIFY(dialog);
    auto* table = dialog->findChild<QTableWidget*>(QStringLiteral("captureProcesses"));
    QVERIFY(waitFor([&] { return rowOf(table, job.pid()) >= 0 && rowOf(table, unready.pid()) >= 0; }));
    // The unprepared one: not ready, the fix said, and no check box to tick.
    const int bad = rowOf(table, unready.pid());
    QVERIFY(table->item(bad, 1)->text().contains(QStringLiteral("not ready")));
    QVERIFY(!(table->item(bad, 0)->flags() & Qt::ItemIsUserCheckable));
    auto* fix = dialog->findChild<QLabel*>(QStringLiteral("captureFix"));
    QVERIFY(fix->isVisible() && fix->text().contains(QStringLiteral("KINETO_USE_DAEMON=1")));
    tick(table, bad);
    QCOMPARE(table->item(bad, 0)->checkState(), Qt::Unchecked);

    const int row = rowOf(table, job.pid());
    tick(table, row);
    QCOMPARE(table->item(row, 0)->checkState(), Qt::Checked);
    typeInto(dialog->findChild<QSpinBox*>(QStringLiteral("captureSteps")), QStringLiteral("4"));
    typeInto(dialog->findChild<QLineEdit*>(QStringLiteral("captureOutDir")), dir_.path());
    auto* start = dialog->findChild<QPushButton*>(QStringLiteral("captureStart"));
    QVERIFY(start->isEnabled());
    const qsizetype before = app.shown.size();
    QTest::mouseClick(start, Qt::LeftButton);
    // Progress while it runs (the dialog closes itself once the trace is placed).
    QVERIFY(dialog->findChild<QProgressBar*>(QStringLiteral("captureProgress"))->isVisible());
    QVERIFY(dialog->findChild<QPushButton*>(QStringLiteral("captureCancel"))->isVisible());
    auto status = [&] {
      return dialog ? dialog->findChild<QLabel*>(QStringLiteral("captureStatus"))->text() : QString();
    };
    QVERIFY(waitFor([&] { return !dialog || status().contains(QStringLiteral("waiting for the job")); }, 20000));
    if (dialog) shot(dialog, QStringLiteral("capture-dialog.png"));
    QString last;
    QVERIFY2(waitFor(
                 [&] {
                   if (dialog) last = status();
                   return app.shown.size() > before;
                 },
                 120000),
             qPrintable(last));
    QVERIFY(!dialog);  // closed once captured
    // The capture is the trace shown, with its explanation on screen.
    const QString path = app.w.trace()->path;
    QVERIFY2(path.startsWith(dir_.path()) && path.contains(QString::number(job.pid())), qPrintable(path));
    const TraceFile t = readTraceFile(path);
    QCOMPARE(spans(t, QStringLiteral("Optimizer.step#"), true).size(), size_t{4});
    QVERIFY(app.w.dock(QStringLiteral("explainDock"))->isVisible());
    const QString headline = explainHeadline(path);
    QVERIFY(!headline.isEmpty());
    QVERIFY(waitFor([&] { return app.w.explainPanel()->plainText().contains(headline.left(60)); }, 10000));
    QVERIFY(job.running());
    QTest::qWait(300);
    shot(&app.w, QStringLiteral("capture-explained.png"));
  }

  // Cancel while the job holds the request (a start step far away): the dialog stays, says the job
  // keeps running and where its trace would land, and the job steps on.
  void cancelSaysWhatItLeft() {
    const QString log = dir_.filePath(QStringLiteral("cancel.steps"));
    Job job(QStringLiteral("python3"), {kScripts + QStringLiteral("train_loop.py"), QStringLiteral("--log"), log},
            ready());
    QVERIFY2(waitForSteps(log, 3), qPrintable(job.output()));
    App app;
    QPointer<CaptureDialog> dialog = openCaptureDialog(app.w);
    QVERIFY(dialog);
    auto* table = dialog->findChild<QTableWidget*>(QStringLiteral("captureProcesses"));
    QVERIFY(waitFor([&] { return rowOf(table, job.pid()) >= 0; }));
    tick(table, rowOf(table, job.pid()));
    typeInto(dialog->findChild<QSpinBox*>(QStringLiteral("captureRoundup")), QStringLiteral("1000000"));
    QTest::mouseClick(dialog->findChild<QPushButton*>(QStringLiteral("captureStart")), Qt::LeftButton);
    auto* status = dialog->findChild<QLabel*>(QStringLiteral("captureStatus"));
    QVERIFY2(waitFor([&] { return status->text().contains(QStringLiteral("asked")); }, 90000),
             qPrintable(status->text()));
    QTest::mouseClick(dialog->findChild<QPushButton*>(QStringLiteral("captureCancel")), Qt::LeftButton);
    QVERIFY2(waitFor([&] { return status->text().startsWith(QStringLiteral("Cancelled")); }, 5000),
             qPrintable(status->text()));
    QVERIFY(status->text().contains(QStringLiteral("keeps running")));
    const QRegularExpression folder(QStringLiteral("/tmp/attnscope-capture-[A-Za-z0-9]+"));
    const QString left = folder.match(status->text()).captured();
    QVERIFY2(!left.isEmpty() && QFileInfo(left).isDir(), qPrintable(status->text()));
    auto removeLeft = qScopeGuard([left] { QDir(left).removeRecursively(); });
    QVERIFY(dialog->isVisible());
    QVERIFY(!dialog->findChild<QPushButton*>(QStringLiteral("captureCancel"))->isVisible());
    const size_t n = readSteps(log).size();
    QVERIFY(waitForSteps(log, n + 3, 60000));
    QVERIFY(job.running());
    QCOMPARE(app.shown.size(), qsizetype{0});  // nothing opened
  }

  void capturesTwoRanksIntoTheRanksWindow() {
    const QString prefix = dir_.filePath(QStringLiteral("ddp"));
    auto env = ready();
    env[QStringLiteral("OMP_NUM_THREADS")] = QStringLiteral("1");
    const int port = 29100 + static_cast<int>(QCoreApplication::applicationPid() % 400);
    Job job(QStringLiteral("torchrun"),
            {QStringLiteral("--nproc-per-node"), QStringLiteral("2"), QStringLiteral("--master-port"),
             QString::number(port), kScripts + QStringLiteral("ddp_loop.py"), QStringLiteral("0"), prefix},
            env);
    QVERIFY(waitForSteps(prefix + QStringLiteral("-0.txt"), 3) && waitForSteps(prefix + QStringLiteral("-1.txt"), 3));
    App app;
    QPointer<CaptureDialog> dialog = openCaptureDialog(app.w);
    QVERIFY(dialog);
    auto* table = dialog->findChild<QTableWidget*>(QStringLiteral("captureProcesses"));
    QSignalSpy listed(dialog.data(), &CaptureDialog::listed);
    QVERIFY(listed.wait(30000));
    // The launcher (torchrun's agent, torch imported) is listed but not tickable; its two ranks are.
    std::vector<int> ranks;
    for (int r = 0; r < table->rowCount(); ++r)
      if (table->item(r, 3)->text().contains(QStringLiteral("ddp_loop.py")) && !table->item(r, 2)->text().isEmpty())
        ranks.push_back(r);
    QCOMPARE(ranks.size(), size_t{2});
    const int agent = rowOf(table, job.pid());
    if (agent >= 0) QVERIFY(!(table->item(agent, 0)->flags() & Qt::ItemIsUserCheckable));
    for (int r : ranks) tick(table, r);
    typeInto(dialog->findChild<QSpinBox*>(QStringLiteral("captureRoundup")), QStringLiteral("5"));
    typeInto(dialog->findChild<QLineEdit*>(QStringLiteral("captureOutDir")), dir_.path());
    QTest::mouseClick(dialog->findChild<QPushButton*>(QStringLiteral("captureStart")), Qt::LeftButton);
    QVERIFY(waitFor([&] { return app.w.ranksView() && app.w.ranksView()->report(); }, 180000));
    const auto& report = app.w.ranksView()->report();
    QCOMPARE(report->ranks.size(), size_t{2});
    QVERIFY(app.w.ranksView()->isVisible());
    shot(app.w.ranksView(), QStringLiteral("capture-ranks.png"));
  }
};

QTEST_MAIN(CaptureUiTest)
#include "test_capture_ui.moc"
