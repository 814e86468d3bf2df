// Engine faults as the desktop app meets them, with the real attnscope-cli
// and engine on the CPU: the run killed mid-way (the engine, and a pass's
// child process), a shape that cannot fit in memory, an output path that
// cannot be written, and CUPTI unavailable. Each time the window stays up,
// the earlier runs keep their rows and files, and the trace on screen stays.
#include <signal.h>

#include <QDir>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "core/read/trace_reader.h"
#include "core/run/engine_run.h"
#include "open_window.h"
#include "ui/run/engine_runner.h"
#include "ui/run/run_panel.h"
#include "ui/run/runs_model.h"
#include "ui/shell/main_window.h"
#include "ui/table/key_averages_model.h"
#include "ui/table/table_pane.h"

using namespace attnscope;
using namespace attnscope::ui;

namespace {

const QString kCli = QStringLiteral(ATTNSCOPE_BIN_DIR "/attnscope-cli");
const QString kSoftmax = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_8x16x1024x64.json");

// A run small enough for the CPU in a second.
RunConfig smallCpuRun() {
  RunConfig c;
  c.device = RunDevice::Cpu;
  c.shape = {1, 2, 32, 16};
  c.warmup = 1;
  c.iters = 1;
  return c;
}

// The child processes of `pid` (from /proc).
QList<qint64> childrenOf(qint64 pid) {
  QList<qint64> out;
  const QDir task(QStringLiteral("/proc/%1/task").arg(pid));
  for (const QString& t : task.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
    QFile f(task.filePath(t + QStringLiteral("/children")));
    if (!f.open(QIODevice::ReadOnly)) continue;
    for (const QByteArray& c : f.readAll().split(' '))
      if (!c.trimmed().isEmpty()) out << c.trimmed().toLongLong();
  }
  return out;
}

}  // namespace

class EngineFaultsTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir tmp_;
  std::unique_ptr<OpenWindow> app_;
  QString goodRun_;  // the trace of the run that worked, shown when a fault comes
  std::shared_ptr<const LoadedTrace> before_;

  RunPanel* panel() const { return app_->window.runPanel(); }
  RunsModel* runs() const { return app_->window.runs(); }

  // Starts a run with `cfg`; `whileRunning` is called once it runs.
  RunOutcome run(const RunConfig& cfg, const std::function<void()>& whileRunning = {}) {
    panel()->setConfig(cfg);
    QSignalSpy finished(panel(), &RunPanel::runFinished);
    if (!panel()->startRun()) return {};
    if (whileRunning) whileRunning();
    if (finished.isEmpty() && !finished.wait(120000)) return {};
    return finished.front().at(1).value<RunOutcome>();
  }

  // Everything the user had before the fault is still there.
  void checkNothingLost(int rowsBefore) {
    QVERIFY(app_->window.isVisible());
    QCOMPARE(runs()->rowCount(), rowsBefore + 1);
    QCOMPARE(runs()->entry(0)->status, RunStatus::Opened);
    QCOMPARE(runs()->entry(1)->status, RunStatus::Done);
    QCOMPARE(runs()->entry(1)->path, goodRun_);
    QVERIFY(loadTrace(goodRun_.toStdString()).ok());
    QCOMPARE(app_->window.trace(), before_);  // the same trace, the same table
    QVERIFY(app_->window.tablePane()->model()->rowCount() > 0);
    QVERIFY(!panel()->runner()->isRunning());
    // The failed run has no trace, and nothing half-written is left.
    const RunEntry* failed = runs()->entry(rowsBefore);
    QVERIFY(failed->path.isEmpty());
    const QStringList left = QDir(tmp_.path()).entryList(QDir::Files | QDir::Hidden);
    for (const QString& f : left)
      QVERIFY2(!f.endsWith(QLatin1String(".tmp")) && !f.contains(QLatin1String(".pass-")), qPrintable(f));
  }

 private slots:
  void initTestCase() {
    qRegisterMetaType<RunOutcome>();
    QVERIFY(tmp_.isValid());
    qputenv("XDG_CONFIG_HOME", tmp_.filePath(QStringLiteral("config")).toUtf8());
    EngineRunner probe;
    probe.setProgram(kCli);
    QSignalSpy probed(&probe, &EngineRunner::availabilityChanged);
    probe.probe();
    QVERIFY(probed.wait(30000) || !probed.isEmpty());
    if (!probe.availability().engineBuilt)
      QSKIP(qPrintable(QStringLiteral("%1: %2").arg(kCli, probe.availability().reason)));

    app_ = std::make_unique<OpenWindow>();
    panel()->runner()->setProgram(kCli);
    panel()->setOutputDir(tmp_.path());
    QVERIFY(app_->open(kSoftmax));
    QCOMPARE(runs()->rowCount(), 1);

    // One run that works: its trace is shown and stays through every fault.
    const qsizetype shownBefore = app_->shown.size();
    const RunOutcome ok = run(smallCpuRun());
    QVERIFY2(ok.status == RunStatus::Done, qPrintable(ok.message + QLatin1Char('\n') + ok.stderrText));
    QTRY_VERIFY_WITH_TIMEOUT(app_->shown.size() > shownBefore, 30000);
    goodRun_ = ok.outPath;
    before_ = app_->window.trace();
    QCOMPARE(before_->path, goodRun_);
  }

  // CUPTI cannot collect on the CPU: the run completes, and the run panel,
  // the runs list and the status bar say which collection is missing.
  void cuptiUnavailableIsSaid() {
    const RunEntry* e = runs()->entry(1);
    QCOMPARE(e->missing, QStringLiteral("CUPTI unavailable: the run is on the CPU (no CUDA activity to collect); "
                                        "GPU kernels, copies and memsets were not collected."));
    const QModelIndex status = runs()->index(1, RunsModel::Status);
    QCOMPARE(status.data().toString(), QStringLiteral("done, no CUPTI"));
    QVERIFY(status.data(Qt::ToolTipRole).toString().contains(e->missing));
    auto* label = panel()->findChild<QLabel*>(QStringLiteral("runStatus"));
    QVERIFY(label);
    QVERIFY2(label->text().contains(QStringLiteral("CUPTI unavailable")), qPrintable(label->text()));
    // The trace itself is whole: CPU ops and the four steps' scopes.
    QVERIFY(before_->store().familyCount(Family::CpuOp) > 10);
  }

  // On a GPU box CUPTI may be refused (no profiling permission): the same
  // sentence with the engine's reason; nothing when it collected.
  void missingCollectionWording() {
    EngineRun m;
    m.collection.cupti = "ok";
    QVERIFY(missingCollection(m).empty());
    m.collection.cupti.clear();  // a torch.profiler trace: nothing to say
    QVERIFY(missingCollection(m).empty());
    m.collection.cupti = "unavailable: cuptiActivityEnable failed (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)";
    QCOMPARE(missingCollection(m), std::string("CUPTI unavailable: cuptiActivityEnable failed "
                                               "(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES); GPU kernels, copies and "
                                               "memsets were not collected."));
  }

  // The engine killed mid-run (SIGKILL, as the kernel's OOM killer does).
  void engineKilledMidRun() {
    const int rows = runs()->rowCount();
    RunConfig c = smallCpuRun();
    c.iters = 100000;
    c.timing = {false, false, true, false, false};
    QSignalSpy progress(panel()->runner(), &EngineRunner::progress);
    const RunOutcome o = run(c, [&] {
      QTRY_VERIFY_WITH_TIMEOUT(progress.size() >= 3, 60000);  // it is measuring
      ::kill(static_cast<pid_t>(panel()->runner()->pid()), SIGKILL);
    });
    QCOMPARE(o.status, RunStatus::Killed);
    QVERIFY(o.message.contains(QStringLiteral("SIGKILL")));
    QCOMPARE(runs()->entry(rows)->status, RunStatus::Killed);
    checkNothingLost(rows);
  }

  // A cold run measures each method in a child process; that child killed
  // mid-run: the engine says which pass died and fails cleanly.
  void passChildKilledMidRun() {
    const int rows = runs()->rowCount();
    RunConfig c = smallCpuRun();
    c.warmup = 0;
    c.iters = 100000;
    c.timing = {false, false, true, false, false};
    qint64 child = 0;
    const RunOutcome o = run(c, [&] {
      QTRY_VERIFY_WITH_TIMEOUT(!childrenOf(panel()->runner()->pid()).isEmpty(), 60000);
      child = childrenOf(panel()->runner()->pid()).front();
      QTest::qWait(1500);  // well into its pass
      ::kill(static_cast<pid_t>(child), SIGKILL);
    });
    QVERIFY(child > 0);
    QCOMPARE(o.status, RunStatus::Failed);
    QVERIFY2(o.stderrText.contains(QStringLiteral("was killed by signal 9")), qPrintable(o.stderrText));
    QVERIFY(o.message.contains(QStringLiteral("exit code 1")));
    auto* err = panel()->findChild<QWidget*>(QStringLiteral("stderr"));
    QVERIFY(err && !err->isHidden());
    checkNothingLost(rows);
  }

  // A shape that cannot fit: refused before anything is allocated (exit 3).
  void shapeOutOfMemory() {
    const int rows = runs()->rowCount();
    RunConfig c = smallCpuRun();
    c.shape = {64, 64, 65536, 64};
    const RunOutcome o = run(c);
    QCOMPARE(o.status, RunStatus::OutOfMemory);
    QCOMPARE(o.exitCode, 3);
    QVERIFY(o.message.startsWith(QStringLiteral("Out of memory (exit code 3)")));
    QVERIFY2(o.stderrText.contains(QStringLiteral("refusing before allocating")), qPrintable(o.stderrText));
    QCOMPARE(runs()->index(rows, RunsModel::Status).data().toString(), QStringLiteral("out of memory"));
    checkNothingLost(rows);
  }

  // The output directory cannot be written (it does not exist): exit 2,
  // known before any pass runs.
  void outputNotWritable() {
    const int rows = runs()->rowCount();
    panel()->setOutputDir(tmp_.filePath(QStringLiteral("no/such/dir")));
    const RunOutcome o = run(smallCpuRun());
    panel()->setOutputDir(tmp_.path());
    QCOMPARE(o.status, RunStatus::Failed);
    QCOMPARE(o.exitCode, 2);
    QVERIFY2(o.stderrText.contains(QStringLiteral("cannot write")), qPrintable(o.stderrText));
    QVERIFY(o.message.contains(QStringLiteral("exit code 2")));
    checkNothingLost(rows);
    // And a run after all that still works.
    const RunOutcome again = run(smallCpuRun());
    QCOMPARE(again.status, RunStatus::Done);
  }
};

QTEST_MAIN(EngineFaultsTest)
#include "test_engine_faults.moc"
