// The issue-5 desktop pieces on real captures: every model under
// QAbstractItemModelTester, the run panel's exact command line, the engine
// as a child process (the real CPU engine when this attnscope-cli has it,
// and failing commands: missing binary, non-zero exit, out of memory,
// killed, crashed, cancelled), the table options (top-N, attribution, time
// unit), exports (content, atomic, unwritable), the explanation, why,
// compare, plots and glossary.
#include <signal.h>
#include <unistd.h>

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>
#if __has_include(<QtCharts/QChartView>)
#include <QToolTip>
#include <QtCharts/QBoxPlotSeries>
#include <QtCharts/QBoxSet>
#include <QtCharts/QChartView>
#endif

#include "core/read/trace_reader.h"
#include "core/run/engine_run.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/tables/key_averages.h"
#include "ui/panels/compare_view.h"
#include "ui/panels/explain_panel.h"
#include "ui/panels/glossary_dock.h"
#include "ui/panels/plots_panel.h"
#include "ui/panels/why_panel.h"
#include "ui/run/engine_runner.h"
#include "ui/run/run_panel.h"
#include "ui/run/runs_model.h"
#include "ui/shell/export.h"
#include "ui/shell/main_window.h"
#include "ui/shell/trace_loader.h"
#include "ui/table/key_averages_model.h"
#include "ui/table/key_averages_proxy.h"
#include "ui/table/table_pane.h"

using namespace attnscope;
using namespace attnscope::ui;

namespace {

const QString kKineto = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto");
const QString kSoftmax = kKineto + QStringLiteral("/softmax_8x16x1024x64.json");
const QString kNone = kKineto + QStringLiteral("/none_8x16x1024x64.json");
const QString kEngineTrace = QStringLiteral(ATTNSCOPE_TEST_DATA "/h200/softmax_none_8x16x1024x64.json");

std::shared_ptr<const EventStore> load(const QString& path) {
  LoadResult r = loadTrace(path.toStdString());
  if (!r.ok()) return nullptr;
  return std::make_shared<const EventStore>(std::move(*r.store));
}

// A stand-in for attnscope-cli: a shell script with this body.
QString fakeCli(const QTemporaryDir& dir, const QString& name, const QByteArray& body) {
  const QString path = dir.filePath(name);
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return {};
  f.write("#!/bin/sh\n" + body + "\n");
  f.close();
  f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
  return path;
}

bool openAndWait(MainWindow& w, QSignalSpy& shown, const QString& path) {
  const qsizetype before = shown.size();
  w.openTrace(path);
  return shown.size() > before || shown.wait(30000);
}

RunOutcome runAndWait(EngineRunner& r, const RunConfig& cfg, const QString& out, int timeoutMs = 60000,
                      std::function<void()> whileRunning = {}) {
  QSignalSpy done(&r, &EngineRunner::finished);
  if (!r.start(cfg, out)) return {};
  if (whileRunning) whileRunning();
  if (done.isEmpty()) done.wait(timeoutMs);
  if (done.isEmpty()) return {};
  return done.front().front().value<RunOutcome>();
}

}  // namespace

class TestWorkbench : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void runsModelUnderTester();
  void glossaryModelUnderTester();
  void compareModelsUnderTester();
  void topNProxyUnderTester();
  void runPanelCommandLine();
  void runPanelPresets();
  void runPanelRoundTripsEveryOption();
  void runnerMissingBinary();
  void runnerNonZeroExit();
  void runnerOutOfMemory();
  void runnerKilled();
  void runnerCrashed();
  void runnerCancelKillsTheGroup();
  void runnerRealCpuEngine();
  void workbenchRunFailureKeepsEarlierRuns();
  void tableOptionsOnRealCapture();
  void exportTableContent();
  void exportUnwritableLeavesNoFile();
  void exportTraceReloads();
  void saveRunAndReopen();
  void explainPanelCards();
  void whyPanelForARow();
  void compareTwoCaptures();
  void compareEngineRunsSaysNoiseOrChange();
  void glossaryCoversColumnsAndFamilies();
  void kernelHistogramCountsKernels();
  void engineMetadataParses();
  void plotsShowEachStepsSpread();
  void copySelection();

 private:
  std::shared_ptr<const EventStore> softmax_;
  QTemporaryDir tmp_;
};

void TestWorkbench::initTestCase() {
  qRegisterMetaType<RunOutcome>();
  QVERIFY(tmp_.isValid());
  qputenv("XDG_CONFIG_HOME", tmp_.filePath(QStringLiteral("config")).toUtf8());
  QCoreApplication::setOrganizationName(QStringLiteral("attnscope-test"));
  softmax_ = load(kSoftmax);
  QVERIFY2(softmax_, "the shared capture softmax_8x16x1024x64.json must load");
}

void TestWorkbench::runsModelUnderTester() {
  RunsModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
  RunEntry a;
  a.engine = true;
  a.config = RunConfig{};
  a.summary = RunsModel::configSummary(RunConfig{});
  const int id = m.addRun(a);
  RunEntry b;
  b.status = RunStatus::Opened;
  b.path = kSoftmax;
  b.summary = QStringLiteral("softmax");
  m.addRun(b);
  QCOMPARE(m.rowCount(), 2);
  RunOutcome o;
  o.status = RunStatus::Failed;
  o.exitCode = 2;
  o.message = QStringLiteral("bad");
  m.finishRun(id, o);
  QCOMPARE(m.data(m.index(0, RunsModel::Status)).toString(), QStringLiteral("failed"));
  QCOMPARE(m.rowOfPath(kSoftmax), 1);
  QVERIFY(m.data(m.index(0, RunsModel::Summary)).toString().contains(QStringLiteral("1x8x64x64 float32")));
}

void TestWorkbench::glossaryModelUnderTester() {
  GlossaryDock dock;
  QAbstractItemModelTester t1(dock.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
  QAbstractItemModelTester t2(dock.proxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
  QVERIFY(dock.model()->rowCount() > 40);
  dock.setSearch(QStringLiteral("synchron"));
  QVERIFY(dock.proxy()->rowCount() > 0);
  dock.setSearch(QString());
  QCOMPARE(dock.proxy()->rowCount(), dock.model()->rowCount());
}

void TestWorkbench::compareModelsUnderTester() {
  auto none = load(kNone);
  QVERIFY(none);
  const Comparison c = compareTraces(*snapshotOf(*none), *snapshotOf(*softmax_));
  CompareModel rows, steps;
  QAbstractItemModelTester t1(&rows, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QAbstractItemModelTester t2(&steps, QAbstractItemModelTester::FailureReportingMode::QtTest);
  rows.setFromRows(c);
  steps.setFromSteps(c);
  QCOMPARE(rows.rowCount(), static_cast<int>(c.rows.size()));
  QCOMPARE(steps.rowCount(), static_cast<int>(c.steps.size()));
  QCOMPARE(rows.columnCount(), 1 + 3 * 5);
  // SOFTMAX PASS is a record_function only in B: its rows are only in B.
  bool onlyB = false;
  for (int r = 0; r < rows.rowCount(); ++r)
    if (rows.data(rows.index(r, 0)).toString().startsWith(QStringLiteral("SOFTMAX PASS")))
      onlyB |= rows.data(rows.index(r, 0)).toString().contains(QStringLiteral("only in B")) &&
               rows.data(rows.index(r, 0), CompareModel::ChangedRole).toBool();
  QVERIFY(onlyB);
}

void TestWorkbench::topNProxyUnderTester() {
  KeyAveragesModel model;
  KeyAveragesProxy proxy;
  QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
  proxy.setSourceModel(&model);
  auto ka = std::make_shared<const KeyAverages>(computeKeyAverages(*softmax_, GroupBy::Name));
  model.setData(ka);
  proxy.sort(KeyAveragesModel::columnOf(Column::SelfDevice), Qt::DescendingOrder);
  proxy.setTopN(5);
  QCOMPARE(proxy.rowCount(), 5);
  // The five largest Self CUDA rows, in order.
  auto sorted = sortedRows(*ka, Column::SelfDevice, false);
  for (int r = 0; r < 5; ++r)
    QCOMPARE(proxy.data(proxy.index(r, 0)).toString(), QString::fromStdString(sorted[static_cast<size_t>(r)]->name));
  // Top-N applies after the filter.
  proxy.setNameFilter(QStringLiteral("^aten::"), true);
  QCOMPARE(proxy.rowCount(), 5);
  for (int r = 0; r < proxy.rowCount(); ++r)
    QVERIFY(proxy.data(proxy.index(r, 0)).toString().startsWith(QStringLiteral("aten::")));
  proxy.setTopN(0);
  QVERIFY(proxy.rowCount() > 5);
  // Re-sorting recomputes which rows are the top ones.
  proxy.setNameFilter(QString(), false);
  proxy.setTopN(3);
  proxy.sort(KeyAveragesModel::columnOf(Column::Calls), Qt::DescendingOrder);
  QCOMPARE(proxy.rowCount(), 3);
  const auto byCalls = sortedRows(*ka, Column::Calls, false);
  QCOMPARE(proxy.data(proxy.index(0, KeyAveragesModel::columnOf(Column::Calls)), TableModelBase::SortRole).toLongLong(),
           static_cast<qlonglong>(byCalls.front()->calls));
}

void TestWorkbench::runPanelCommandLine() {
  RunPanel panel;
  panel.findChild<QCheckBox*>(QStringLiteral("wrap_softmax"))->setChecked(true);
  panel.findChild<QCheckBox*>(QStringLiteral("wrap_full"))->setChecked(true);
  auto* sync = panel.findChild<QComboBox*>(QStringLiteral("sync"));
  sync->setCurrentIndex(sync->findData(static_cast<int>(SyncMode::Step)));
  auto* scale = panel.findChild<QComboBox*>(QStringLiteral("scale"));
  scale->setCurrentIndex(scale->findData(static_cast<int>(ScaleMode::HostScalar)));
  panel.findChild<QSpinBox*>(QStringLiteral("shape_B"))->setValue(8);
  panel.findChild<QSpinBox*>(QStringLiteral("shape_H"))->setValue(16);
  panel.findChild<QSpinBox*>(QStringLiteral("shape_S"))->setValue(1024);
  panel.findChild<QSpinBox*>(QStringLiteral("shape_D"))->setValue(64);
  auto* dtype = panel.findChild<QComboBox*>(QStringLiteral("dtype"));
  dtype->setCurrentIndex(dtype->findData(static_cast<int>(RunDType::BFloat16)));
  auto* device = panel.findChild<QComboBox*>(QStringLiteral("device"));
  device->setCurrentIndex(device->findData(static_cast<int>(RunDevice::Cuda)));
  panel.findChild<QSpinBox*>(QStringLiteral("warmup"))->setValue(0);
  panel.findChild<QSpinBox*>(QStringLiteral("iters"))->setValue(4);
  panel.findChild<QCheckBox*>(QStringLiteral("timing_events"))->setChecked(false);
  panel.findChild<QCheckBox*>(QStringLiteral("timing_host-sync"))->setChecked(true);
  const QStringList expected = {QStringLiteral("run"),
                                QStringLiteral("--device"),
                                QStringLiteral("cuda"),
                                QStringLiteral("--shape"),
                                QStringLiteral("8,16,1024,64"),
                                QStringLiteral("--dtype"),
                                QStringLiteral("bfloat16"),
                                QStringLiteral("--seed"),
                                QStringLiteral("0"),
                                QStringLiteral("--wrap"),
                                QStringLiteral("softmax,full"),
                                QStringLiteral("--sync"),
                                QStringLiteral("step"),
                                QStringLiteral("--scale"),
                                QStringLiteral("host-scalar"),
                                QStringLiteral("--warmup"),
                                QStringLiteral("0"),
                                QStringLiteral("--iters"),
                                QStringLiteral("4"),
                                QStringLiteral("--timing"),
                                QStringLiteral("cupti,host,host-sync"),
                                QStringLiteral("--out"),
                                QStringLiteral("/tmp/r.json"),
                                QStringLiteral("--progress"),
                                QStringLiteral("json")};
  QCOMPARE(panel.commandArguments(QStringLiteral("/tmp/r.json")), expected);
  // On the CPU the GPU-only methods are unticked and greyed out, and come back usable on the GPU.
  auto* hostSync = panel.findChild<QCheckBox*>(QStringLiteral("timing_host-sync"));
  auto* events = panel.findChild<QCheckBox*>(QStringLiteral("timing_events"));
  device->setCurrentIndex(device->findData(static_cast<int>(RunDevice::Cpu)));
  QVERIFY(!hostSync->isChecked() && !hostSync->isEnabled() && !events->isEnabled());
  QVERIFY(hostSync->toolTip().startsWith(QStringLiteral("Needs a GPU")));
  QVERIFY(panel.commandArguments(QStringLiteral("x.json"))
              .join(QLatin1Char(' '))
              .contains(QStringLiteral("--timing cupti,host ")));
  device->setCurrentIndex(device->findData(static_cast<int>(RunDevice::Cuda)));
  QVERIFY(hostSync->isEnabled() && events->isEnabled());
  device->setCurrentIndex(device->findData(static_cast<int>(RunDevice::Cpu)));
  // The last timing method cannot be unchecked.
  panel.findChild<QCheckBox*>(QStringLiteral("timing_host"))->setChecked(false);
  panel.findChild<QCheckBox*>(QStringLiteral("timing_host-sync"))->setChecked(false);
  QVERIFY(!panel.findChild<QCheckBox*>(QStringLiteral("timing_cupti"))->isEnabled());
  // Defaults: the engine's defaults, no --device (auto).
  RunPanel fresh;
  QCOMPARE(fresh.commandArguments(QStringLiteral("o.json")).join(QLatin1Char(' ')),
           QStringLiteral("run --shape 1,8,64,64 --dtype float32 --seed 0 --wrap none --sync none "
                          "--scale device-tensor --warmup 3 --iters 20 --timing cupti,events,host "
                          "--out o.json --progress json"));
}

void TestWorkbench::runPanelPresets() {
  RunConfig base;
  base.shape = {2, 4, 128, 32};
  base.device = RunDevice::Cpu;
  const RunConfig q = RunPanel::presetConfig(RunPreset::WrapSoftmaxOnly, base);
  QCOMPARE(q.wrap, (std::array<bool, 4>{false, false, true, false}));
  QVERIFY(q.wrapFull);
  QCOMPARE(q.sync, SyncMode::None);
  QCOMPARE(q.scale, ScaleMode::DeviceTensor);
  QCOMPARE(q.shape, base.shape);  // presets leave the workload size alone
  QCOMPARE(q.device, RunDevice::Cpu);
  const RunConfig a = RunPanel::presetConfig(RunPreset::SyncAtEnd, base);
  QCOMPARE(a.wrap, (std::array<bool, 4>{false, false, false, false}));
  QVERIFY(a.wrapFull);
  QCOMPARE(a.sync, SyncMode::End);
  const RunConfig e = RunPanel::presetConfig(RunPreset::WrapEveryStep, base);
  QCOMPARE(e.wrap, (std::array<bool, 4>{true, true, true, true}));
  QVERIFY(e.wrapFull);
  RunPanel panel;
  panel.applyPreset(RunPreset::SyncAtEnd);
  QVERIFY(panel.commandArguments(QStringLiteral("x.json"))
              .join(QLatin1Char(' '))
              .contains(QStringLiteral("--wrap full --sync end")));
}

void TestWorkbench::runPanelRoundTripsEveryOption() {
  RunConfig c;
  c.device = RunDevice::Cuda;
  c.shape = {3, 5, 7, 9};
  c.dtype = RunDType::Float16;
  c.wrap = {true, false, true, false};
  c.sync = SyncMode::Blocking;
  c.scale = ScaleMode::HostScalar;
  c.warmup = 11;
  c.iters = 13;
  c.timing = {true, false, false, true, true};
  RunPanel panel;
  QSignalSpy changed(&panel, &RunPanel::configChanged);
  panel.setConfig(c);
  QVERIFY(!changed.isEmpty());
  QCOMPARE(toRunArgs(panel.config()), toRunArgs(c));
}

void TestWorkbench::runnerMissingBinary() {
  EngineRunner r;
  r.setProgram(tmp_.filePath(QStringLiteral("no-such-attnscope-cli")));
  const RunOutcome o = runAndWait(r, RunConfig{}, tmp_.filePath(QStringLiteral("m.json")));
  QCOMPARE(o.status, RunStatus::NotStarted);
  QVERIFY2(o.message.contains(QStringLiteral("no-such-attnscope-cli")), qPrintable(o.message));
  QVERIFY(!r.isRunning());
  QSignalSpy probed(&r, &EngineRunner::availabilityChanged);
  r.probe();
  QCOMPARE(probed.size(), 1);
  QVERIFY(!r.availability().engineBuilt);
  QVERIFY(r.availability().reason.contains(QStringLiteral("not found")));
}

void TestWorkbench::runnerNonZeroExit() {
  EngineRunner r;
  // Records its arguments, prints a progress line and an error, exits 2.
  const QString args = tmp_.filePath(QStringLiteral("args.txt"));
  r.setProgram(fakeCli(tmp_, QStringLiteral("fail.sh"),
                       "printf '%s\\n' \"$@\" > '" + args.toUtf8() +
                           "'\necho '{\"phase\": \"start\", \"iteration\": 0, \"message\": \"starting\"}'\n"
                           "echo 'attnscope-cli: run: --device cuda, but no CUDA device' >&2\nexit 2"));
  QSignalSpy progress(&r, &EngineRunner::progress);
  const QString out = tmp_.filePath(QStringLiteral("f.json"));
  const RunOutcome o = runAndWait(r, RunConfig{}, out);
  QCOMPARE(o.status, RunStatus::Failed);
  QCOMPARE(o.exitCode, 2);
  QVERIFY(o.stderrText.contains(QStringLiteral("no CUDA device")));
  QVERIFY(o.message.contains(QStringLiteral("exit code 2")));
  QVERIFY(!QFile::exists(out));
  bool sawStart = false;
  for (const auto& p : progress) sawStart |= p.at(1).toString() == QStringLiteral("starting");
  QVERIFY(sawStart);
  QFile f(args);
  QVERIFY(f.open(QIODevice::ReadOnly));
  const QStringList got = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  QCOMPARE(got, EngineRunner::runArguments(RunConfig{}, out));
}

void TestWorkbench::runnerOutOfMemory() {
  EngineRunner r;
  r.setProgram(fakeCli(tmp_, QStringLiteral("oom.sh"), "echo 'attnscope-cli: run: out of memory: CUDA' >&2\nexit 3"));
  const RunOutcome o = runAndWait(r, RunConfig{}, tmp_.filePath(QStringLiteral("o.json")));
  QCOMPARE(o.status, RunStatus::OutOfMemory);
  QVERIFY(o.message.contains(QStringLiteral("Out of memory")));
}

void TestWorkbench::runnerKilled() {
  EngineRunner r;
  r.setProgram(fakeCli(tmp_, QStringLiteral("sleep.sh"), "exec sleep 30"));
  const RunOutcome o = runAndWait(r, RunConfig{}, tmp_.filePath(QStringLiteral("k.json")), 20000, [&r] {
    QTRY_VERIFY(r.pid() > 0);
    ::kill(static_cast<pid_t>(r.pid()), SIGKILL);  // as the OOM killer would
  });
  QCOMPARE(o.status, RunStatus::Killed);
  QCOMPARE(o.exitCode, SIGKILL);
  QVERIFY(o.message.contains(QStringLiteral("SIGKILL")));
}

void TestWorkbench::runnerCrashed() {
  EngineRunner r;
  r.setProgram(fakeCli(tmp_, QStringLiteral("segv.sh"), "kill -SEGV $$"));
  const RunOutcome o = runAndWait(r, RunConfig{}, tmp_.filePath(QStringLiteral("c.json")));
  QCOMPARE(o.status, RunStatus::Crashed);
  QVERIFY(o.message.contains(QStringLiteral("SIGSEGV")));
}

void TestWorkbench::runnerCancelKillsTheGroup() {
  EngineRunner r;
  // A parent that ignores SIGTERM with a child: Cancel still ends both.
  const QString childPid = tmp_.filePath(QStringLiteral("child.pid"));
  r.setProgram(fakeCli(tmp_, QStringLiteral("stubborn.sh"),
                       "trap '' TERM\nsleep 60 &\necho $! > '" + childPid.toUtf8() + "'\nwait"));
  QElapsedTimer t;
  t.start();
  const RunOutcome o = runAndWait(r, RunConfig{}, tmp_.filePath(QStringLiteral("x.json")), 20000, [&] {
    QTRY_VERIFY(QFile::exists(childPid) && QFile(childPid).size() > 0);
    r.cancel(300);
  });
  QCOMPARE(o.status, RunStatus::Cancelled);
  QVERIFY(t.elapsed() < 15000);
  QFile f(childPid);
  QVERIFY(f.open(QIODevice::ReadOnly));
  const pid_t child = static_cast<pid_t>(f.readAll().trimmed().toInt());
  QVERIFY(child > 0);
  QTRY_VERIFY(::kill(child, 0) != 0);  // the sleep is gone too
}

void TestWorkbench::runnerRealCpuEngine() {
  EngineRunner r;
  const QString env = qEnvironmentVariable("ATTNSCOPE_CLI");
  r.setProgram(env.isEmpty() ? QStringLiteral(ATTNSCOPE_BIN_DIR "/attnscope-cli") : env);
  QSignalSpy probed(&r, &EngineRunner::availabilityChanged);
  r.probe();
  QVERIFY(probed.wait(30000) || !probed.isEmpty());
  if (!r.availability().engineBuilt)
    QSKIP(qPrintable(QStringLiteral("%1: %2").arg(r.program(), r.availability().reason)));
  RunConfig c;
  c.device = RunDevice::Cpu;
  c.shape = {1, 2, 32, 16};
  c.wrap = {false, false, true, false};
  c.wrapFull = true;
  c.warmup = 1;
  c.iters = 2;
  // GPU-only methods on the CPU: the engine refuses them, saying why, and writes nothing.
  c.timing = {true, true, true, true, false};
  const QString refusedOut = tmp_.filePath(QStringLiteral("cpu-refused.json"));
  const RunOutcome refused = runAndWait(r, c, refusedOut, 120000);
  QCOMPARE(refused.exitCode, 2);
  QVERIFY2(refused.stderrText.contains(QStringLiteral("GPU method on the CPU")), qPrintable(refused.stderrText));
  QVERIFY(!QFile::exists(refusedOut));
  c.timing = {true, false, true, false, false};
  QSignalSpy progress(&r, &EngineRunner::progress);
  const QString out = tmp_.filePath(QStringLiteral("cpu-run.json"));
  const RunOutcome o = runAndWait(r, c, out, 120000);
  QVERIFY2(o.status == RunStatus::Done, qPrintable(o.message + QLatin1Char('\n') + o.stderrText));
  QVERIFY(progress.size() >= 4);
  QCOMPARE(progress.back().at(0).toInt(), 100);
  auto store = load(out);
  QVERIFY(store);
  const auto meta = readEngineRun(*store);
  QVERIFY(meta);
  QVERIFY(meta->config);
  QCOMPARE(toRunArgs(*meta->config), toRunArgs([&] {
             RunConfig x = c;
             x.out = out.toStdString();  // how the runner asked for progress is not the run's configuration
             return x;
           }()));
  std::vector<std::string> methods;
  for (const auto& t : meta->timing) methods.push_back(t.method);
  QCOMPARE(methods, (std::vector<std::string>{"cupti", "host"}));
  QCOMPARE(meta->timing[1].steps.size(), size_t{2});  // two iterations
  QCOMPARE(meta->windows().size(), size_t{8});
}

void TestWorkbench::workbenchRunFailureKeepsEarlierRuns() {
  MainWindow w({false, false, false});
  QSignalSpy shown(&w, &MainWindow::traceShown);
  QVERIFY(openAndWait(w, shown, kSoftmax));
  QCOMPARE(w.runs()->rowCount(), 1);
  const auto before = w.trace();
  w.runPanel()->runner()->setProgram(
      fakeCli(tmp_, QStringLiteral("abort.sh"), "echo 'terminate called: boom' >&2\nkill -ABRT $$"));
  QSignalSpy finished(w.runPanel(), &RunPanel::runFinished);
  QVERIFY(w.runPanel()->startRun());
  QCOMPARE(w.runs()->rowCount(), 2);
  QCOMPARE(w.runs()->entry(1)->status, RunStatus::Running);
  QVERIFY(finished.wait(20000));
  QCOMPARE(w.runs()->rowCount(), 2);
  QCOMPARE(w.runs()->entry(0)->status, RunStatus::Opened);
  QCOMPARE(w.runs()->entry(1)->status, RunStatus::Crashed);
  QVERIFY(w.runs()->entry(1)->stderrText.contains(QStringLiteral("boom")));
  QCOMPARE(w.trace(), before);  // the loaded trace stays
  auto* stderrView = w.runPanel()->findChild<QWidget*>(QStringLiteral("stderr"));
  QVERIFY(stderrView && !stderrView->isHidden());
}

void TestWorkbench::tableOptionsOnRealCapture() {
  MainWindow w({false, false, false});
  QSignalSpy shown(&w, &MainWindow::traceShown);
  QVERIFY(openAndWait(w, shown, kSoftmax));
  auto selfDeviceOf = [&](const QString& name) -> qlonglong {
    for (int r = 0; r < w.tablePane()->model()->rowCount(); ++r)
      if (w.tablePane()->model()->rowAt(r)->name == name.toStdString())
        return w.tablePane()->model()->rowAt(r)->selfDeviceNs;
    return -1;
  };
  // torch lets the profiler's Activity Buffer Request own the first GEMM.
  QVERIFY(selfDeviceOf(QStringLiteral("Activity Buffer Request")) > 500000);
  w.findChild<QComboBox*>(QStringLiteral("attribution"))->setCurrentIndex(1);
  QCOMPARE(w.tablePane()->attribution(), Attribution::Corrected);
  QCOMPARE(w.tablePane()->model()->averages()->attribution, Attribution::Corrected);
  QCOMPARE(selfDeviceOf(QStringLiteral("Activity Buffer Request")), 0);
  // Grouping keeps the attribution.
  w.tablePane()->setGroupBy(GroupBy::InputShape);
  QCOMPARE(w.tablePane()->model()->averages()->attribution, Attribution::Corrected);
  QCOMPARE(w.tablePane()->model()->averages()->groupBy, GroupBy::InputShape);
  w.tablePane()->setGroupBy(GroupBy::Name);
  // Time unit: every time cell in ms.
  w.tablePane()->setTimeUnit(KeyAveragesModel::TimeUnit::Ms);
  const int selfCuda = KeyAveragesModel::columnOf(Column::SelfDevice);
  for (int r = 0; r < w.tablePane()->proxy()->rowCount(); ++r)
    QVERIFY(w.tablePane()
                ->proxy()
                ->data(w.tablePane()->proxy()->index(r, selfCuda))
                .toString()
                .endsWith(QStringLiteral("ms")));
  w.tablePane()->setTimeUnit(KeyAveragesModel::TimeUnit::Auto);
  // Top-N with the filter.
  w.tablePane()->setNameFilter(QStringLiteral("^aten::"), true);
  w.tablePane()->setTopN(3);
  QCOMPARE(w.tablePane()->proxy()->rowCount(), 3);
  w.tablePane()->setTopN(0);
  QVERIFY(w.tablePane()->proxy()->rowCount() > 3);
}

void TestWorkbench::exportTableContent() {
  MainWindow w({false, false, false});
  QSignalSpy shown(&w, &MainWindow::traceShown);
  QVERIFY(openAndWait(w, shown, kSoftmax));
  w.tablePane()->setNameFilter(QStringLiteral("^aten::"), true);
  const int shown_ = w.tablePane()->proxy()->rowCount();
  QVERIFY(shown_ > 3);
  QString err;
  const QString csv = tmp_.filePath(QStringLiteral("t.csv"));
  QVERIFY2(w.exportTable(csv, &err), qPrintable(err));
  QFile f(csv);
  QVERIFY(f.open(QIODevice::ReadOnly));
  const QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  QCOMPARE(lines.size(), shown_ + 1);
  QVERIFY(lines[0].startsWith(QStringLiteral("name,")));
  for (int i = 1; i < lines.size(); ++i) QVERIFY(lines[i].startsWith(QStringLiteral("aten::")));
  // The first data row is the table's first row (sorted by Self CUDA, descending).
  QVERIFY(lines[1].startsWith(w.tablePane()->proxy()->data(w.tablePane()->proxy()->index(0, 0)).toString() +
                              QLatin1Char(',')));

  const QString json = tmp_.filePath(QStringLiteral("t.json"));
  QVERIFY2(w.exportTable(json, &err), qPrintable(err));
  QFile j(json);
  QVERIFY(j.open(QIODevice::ReadOnly));
  const QJsonObject o = QJsonDocument::fromJson(j.readAll()).object();
  QCOMPARE(o.value(QStringLiteral("rows")).toArray().size(), shown_);
  QCOMPARE(o.value(QStringLiteral("attribution")).toString(), QStringLiteral("torch"));

  const QString md = tmp_.filePath(QStringLiteral("t.md"));
  w.tablePane()->setTopN(2);
  QVERIFY2(w.exportTable(md, &err), qPrintable(err));
  QFile m(md);
  QVERIFY(m.open(QIODevice::ReadOnly));
  const QStringList mdLines = QString::fromUtf8(m.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  QVERIFY(mdLines[0].startsWith(QStringLiteral("| Name |")));
  int dataRows = 0;
  for (const QString& l : mdLines) dataRows += l.startsWith(QStringLiteral("| aten::"));
  QCOMPARE(dataRows, 2);
  QVERIFY(!w.exportTable(tmp_.filePath(QStringLiteral("t.xlsx")), &err));
  QVERIFY(err.contains(QStringLiteral("unknown table format")));
}

void TestWorkbench::exportUnwritableLeavesNoFile() {
  MainWindow w({false, false, false});
  QSignalSpy shown(&w, &MainWindow::traceShown);
  QVERIFY(openAndWait(w, shown, kSoftmax));
  QString err;
  // A missing directory.
  QVERIFY(!w.exportTable(QStringLiteral("/nonexistent-dir-attnscope/t.csv"), &err));
  QVERIFY(err.contains(QStringLiteral("/nonexistent-dir-attnscope")));
  // A directory where the file should go (fails even as root): no temp file left behind.
  QTemporaryDir dir;
  const QString blocked = dir.filePath(QStringLiteral("t.csv"));
  QVERIFY(QDir().mkdir(blocked));
  QVERIFY(!w.exportTable(blocked, &err));
  QVERIFY2(err.contains(blocked), qPrintable(err));
  QCOMPARE(QDir(dir.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::Hidden),
           QStringList{QStringLiteral("t.csv")});
  // A read-only directory (not for root, who may write anyway).
  if (::geteuid() != 0) {
    QTemporaryDir ro;
    QVERIFY(QFile::setPermissions(ro.path(), QFileDevice::ReadOwner | QFileDevice::ExeOwner));
    const QString target = ro.filePath(QStringLiteral("t.csv"));
    const bool ok = w.exportTable(target, &err);
    QFile::setPermissions(ro.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    QVERIFY(!ok);
    QCOMPARE(QDir(ro.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::Hidden).size(), 0);
  }
  QVERIFY(!w.exportTrace(QStringLiteral("/nonexistent-dir-attnscope/t.json"), &err));
}

void TestWorkbench::exportTraceReloads() {
  MainWindow w({false, false, false});
  QSignalSpy shown(&w, &MainWindow::traceShown);
  QVERIFY(openAndWait(w, shown, kSoftmax));
  const QString out = tmp_.filePath(QStringLiteral("export.json"));
  QString err;
  QVERIFY2(w.exportTrace(out, &err), qPrintable(err));
  auto back = load(out);
  QVERIFY(back);
  QCOMPARE(back->familyCount(Family::Kernel), softmax_->familyCount(Family::Kernel));
  const auto a = computeKeyAverages(*softmax_, GroupBy::Name);
  const auto b = computeKeyAverages(*back, GroupBy::Name);
  QCOMPARE(b.rows.size(), a.rows.size());
  QCOMPARE(b.sumSelfDeviceNs, a.sumSelfDeviceNs);
}

void TestWorkbench::saveRunAndReopen() {
  QVERIFY2(QFile::exists(kEngineTrace), qPrintable("missing engine capture " + kEngineTrace));
  MainWindow w({false, false, false});
  QSignalSpy shown(&w, &MainWindow::traceShown);
  w.openTrace(kEngineTrace);
  QVERIFY(shown.wait(30000));
  const RunEntry* e = w.runs()->entry(0);
  QVERIFY(e && e->config);  // the engine's settings came back from the trace
  QCOMPARE(e->config->wrap, (std::array<bool, 4>{false, false, true, false}));
  const QString saved = tmp_.filePath(QStringLiteral("saved-run.json"));
  QString err;
  QVERIFY2(w.saveRun(saved, &err), qPrintable(err));
  QVERIFY(w.runs()->entry(0)->saved);
  w.openTrace(saved);
  QVERIFY(shown.wait(30000));
  QCOMPARE(w.runs()->rowCount(), 2);
  QVERIFY(w.runs()->entry(1)->config.has_value());
  QVERIFY(w.recentFiles().contains(QFileInfo(saved).absoluteFilePath()));
}

void TestWorkbench::explainPanelCards() {
  ExplainPanel p;
  QSignalSpy done(&p, &ExplainPanel::explained);
  p.setTrace(loadedTraceOf(softmax_));
  QCOMPARE(done.size(), 1);  // the loader made the explanation: the cards come at once
  QVERIFY(p.explanation());
  const QString text = p.plainText();
  QVERIFY2(text.contains(QStringLiteral("SOFTMAX PASS")), qPrintable(text.left(500)));
  QVERIFY(text.contains(QStringLiteral("record_function")));
  QVERIFY(text.contains(QStringLiteral("cudaStreamSynchronize")));
  QVERIFY(text.contains(QStringLiteral("Op chain")));
  QVERIFY(text.contains(QStringLiteral("waited for")));
}

void TestWorkbench::whyPanelForARow() {
  WhyPanel p;
  QSignalSpy shown(&p, &WhyPanel::shown);
  p.setTrace(loadedTraceOf(softmax_));
  p.showRow(QStringLiteral("SOFTMAX PASS"), QStringLiteral("glossary text"));
  QCOMPARE(p.reportsMade(), 0);  // hidden: nothing is made
  p.show();
  QVERIFY(shown.wait(30000));
  QCOMPARE(p.reportsMade(), 1);
  const QString t = p.plainText();
  QVERIFY(t.startsWith(QStringLiteral("SOFTMAX PASS")));
  QVERIFY(t.size() > 60);
  QVERIFY(t.contains(QStringLiteral("glossary text")));
  p.showRow(QStringLiteral("no such row"));
  QVERIFY(shown.wait(30000));
  QVERIFY(p.plainText().contains(QStringLiteral("No event")));
}

void TestWorkbench::compareTwoCaptures() {
  MainWindow w({false, false, false});
  QSignalSpy shown(&w, &MainWindow::traceShown);
  w.openTrace(kNone);
  QVERIFY(shown.wait(30000));
  w.openTrace(kSoftmax);
  QVERIFY(shown.wait(30000));
  QCOMPARE(w.runs()->rowCount(), 2);
  QSignalSpy compared(w.compareView(), &CompareView::compared);
  QString err;
  QVERIFY2(w.compareRows(0, 1, &err), qPrintable(err));
  QVERIFY(compared.wait(30000));
  QVERIFY(w.compareView()->comparison());
  QVERIFY(w.compareView()->rowsModel()->rowCount() > 10);
  QVERIFY(w.compareView()->stepsModel()->rowCount() > 0);
  QVERIFY(!w.compareView()->perturbationText().isEmpty());
  QVERIFY(!w.compareRows(0, 7, &err));
}

// Two engine captures from the H200: the Compare summary sets each method's
// median per step side by side with its spread, and a run of one iteration
// is said to have none (so no verdict either way).
void TestWorkbench::compareEngineRunsSaysNoiseOrChange() {
  MainWindow w({false, false, false});
  QSignalSpy shown(&w, &MainWindow::traceShown);
  w.openTrace(QStringLiteral(ATTNSCOPE_TEST_DATA "/h200/softmax_none_iters3_1x8x64x64.json"));
  QVERIFY(shown.wait(30000));
  w.openTrace(QStringLiteral(ATTNSCOPE_TEST_DATA "/h200/softmax_none_1x8x64x64.json"));
  QVERIFY(shown.wait(30000));
  QSignalSpy compared(w.compareView(), &CompareView::compared);
  QString err;
  QVERIFY2(w.compareRows(0, 1, &err), qPrintable(err));
  QVERIFY(compared.wait(30000));
  const auto c = w.compareView()->comparison();
  QVERIFY(c);
  QVERIFY(!c->engineTiming.empty());
  for (const EngineTimingChange& t : c->engineTiming) {
    QCOMPARE(t.a.n, 3);
    QCOMPARE(t.b.n, 1);
    QCOMPARE(t.verdict, std::string("one iteration"));
  }
  const QString summary = w.compareView()->perturbationText();
  QVERIFY2(summary.contains(QStringLiteral("Measured by the engine")), qPrintable(summary));
  QVERIFY2(summary.contains(QStringLiteral("cannot tell from noise: one iteration has no spread")),
           qPrintable(summary));
  QVERIFY2(summary.contains(QStringLiteral("host clock around it, no sync")), qPrintable(summary));
}

void TestWorkbench::glossaryCoversColumnsAndFamilies() {
  GlossaryModel m;
  m.setItems(loadGlossary());
  for (int c = 0; c < static_cast<int>(Column::Count); ++c) {
    const QString title = QString::fromLatin1(columnTitle(static_cast<Column>(c)).data(),
                                              static_cast<qsizetype>(columnTitle(static_cast<Column>(c)).size()));
    const int row = m.find(title);
    QVERIFY2(row >= 0 && m.items()[static_cast<size_t>(row)].key.compare(title, Qt::CaseInsensitive) == 0,
             qPrintable(title));
  }
  const QStringList names = {QStringLiteral("aten::bmm"),
                             QStringLiteral("cudaLaunchKernel"),
                             QStringLiteral("cudaLaunchKernelExC"),
                             QStringLiteral("cudaStreamSynchronize"),
                             QStringLiteral("cudaMemcpyAsync (Pageable -> Device)"),
                             QStringLiteral("gpu_user_annotation"),
                             QStringLiteral("Activity Buffer Request"),
                             QStringLiteral("user_annotation"),
                             QStringLiteral("kernel"),
                             QStringLiteral("cuda_runtime"),
                             QStringLiteral("overhead")};
  for (const QString& n : names) QVERIFY2(m.find(n) >= 0, qPrintable(n));
  QCOMPARE(m.items()[static_cast<size_t>(m.find(QStringLiteral("cudaLaunchKernelExC")))].key,
           QStringLiteral("cudaLaunchKernel"));
  // A kernel name has no entry of its own: its family's.
  QCOMPARE(
      m.items()[static_cast<size_t>(m.find(QStringLiteral("sm80_xmma_gemm"), static_cast<int>(Family::Kernel)))].key,
      QStringLiteral("kernel"));
  GlossaryDock dock;
  QVERIFY(dock.lookup(QStringLiteral("Self CUDA %")));
  QVERIFY(dock.currentText().contains(QStringLiteral("100%")));
}

void TestWorkbench::kernelHistogramCountsKernels() {
  const auto bins = kernelHistogram(*softmax_, ActivityIndex(*softmax_));
  int total = 0;
  for (const auto& b : bins) total += b.count;
  QCOMPARE(static_cast<uint64_t>(total), softmax_->familyCount(Family::Kernel));
  QVERIFY(!bins.isEmpty() && bins.front().count > 0 && bins.back().count > 0);
  PlotsPanel p;
  p.setTrace(loadedTraceOf(softmax_));
  QVERIFY(p.stepSeries().isEmpty());  // a torch.profiler capture has no per-method timings
}

void TestWorkbench::engineMetadataParses() {
  QVERIFY2(QFile::exists(kEngineTrace), qPrintable("missing engine capture " + kEngineTrace));
  auto store = load(kEngineTrace);
  QVERIFY(store);
  const auto meta = readEngineRun(*store);
  QVERIFY(meta);
  QCOMPARE(meta->stepNames().size(), size_t{kStepCount});
  QVERIFY(!meta->timing.empty());
  QCOMPARE(meta->timing.front().method, std::string("cupti"));
  for (const auto& t : meta->timing) {
    const std::vector<StepSpread> sp = t.spread();
    QCOMPARE(sp.size(), size_t{kStepCount});
    for (const StepSpread& s : sp) QVERIFY(s.n >= 1 && s.medianNs >= 0);
  }
  QVERIFY(!parseEngineRun("not json"));
  QVERIFY(!parseEngineRun(""));
  if (PlotsPanel::chartsAvailable()) {
    PlotsPanel p;
    p.setTrace(loadedTraceOf(store));
    QCOMPARE(static_cast<size_t>(p.stepSeries().size()), meta->timing.size());
  }
}

// The Plots panel draws every step of every method as a box: p10-p90, min-max
// whiskers, the median line; the figures here are computed from the run's
// per-iteration values, sorted in the test.
void TestWorkbench::plotsShowEachStepsSpread() {
  if (!PlotsPanel::chartsAvailable()) QSKIP("this build has no Qt Charts");
  auto store = load(QStringLiteral(ATTNSCOPE_TEST_DATA "/h200/softmax_none_iters3_1x8x64x64.json"));
  QVERIFY(store);
  const auto meta = readEngineRun(*store);
  QVERIFY(meta);
  PlotsPanel p;
  p.setTrace(loadedTraceOf(store));
  const QVector<PlotsPanel::StepBox> boxes = p.stepBoxes();
  QCOMPARE(static_cast<size_t>(boxes.size()), meta->timing.size() * kStepCount);
  int spreadOut = 0;
  for (const PlotsPanel::StepBox& b : boxes) {
    const auto t = std::find_if(meta->timing.begin(), meta->timing.end(),
                                [&](const TimingSeries& x) { return QString::fromStdString(x.method) == b.method; });
    QVERIFY2(t != meta->timing.end(), qPrintable(b.method));
    const std::vector<std::string> names = meta->stepNames();
    const auto k = std::find(names.begin(), names.end(), b.step.toStdString());
    QVERIFY2(k != names.end(), qPrintable(b.step));
    std::vector<double> v;
    for (const auto& it : t->steps)
      if (it[static_cast<size_t>(k - names.begin())] >= 0)
        v.push_back(static_cast<double>(it[static_cast<size_t>(k - names.begin())]) / 1000.0);
    std::sort(v.begin(), v.end());
    QCOMPARE(v.size(), size_t{3});
    const QString what = b.method + QLatin1Char('/') + b.step;
    QVERIFY2(qAbs(b.medianUs - v[1]) < 1e-6, qPrintable(what));
    QVERIFY2(qAbs(b.minUs - v.front()) < 1e-6 && qAbs(b.maxUs - v.back()) < 1e-6, qPrintable(what));
    QVERIFY2(b.minUs <= b.p10Us && b.p10Us <= b.medianUs && b.medianUs <= b.p90Us && b.p90Us <= b.maxUs,
             qPrintable(what));
    spreadOut += v.back() > v.front();
    QVERIFY2(b.tip.contains(QString::number(v[1], 'f', 1)) && b.tip.contains(QStringLiteral("3 iteration")),
             qPrintable(b.tip));
  }
  QVERIFY(spreadOut > 0);  // three iterations on a GPU never time alike
#if __has_include(<QtCharts/QChartView>)
  // Pointing at a box shows its figures: the mouse swept across the first
  // step's category at the first method's median.
  p.resize(900, 600);
  p.show();
  QVERIFY(QTest::qWaitForWindowExposed(&p));
  QChartView* view = nullptr;
  QBoxPlotSeries* series = nullptr;
  for (QChartView* v : p.findChildren<QChartView*>())
    if (auto* b = qobject_cast<QBoxPlotSeries*>(v->chart()->series().value(0))) view = v, series = b;
  QVERIFY(view && series);
  const QBoxSet* first = series->boxSets().front();
  QSignalSpy hovered(series, &QBoxPlotSeries::hovered);
  bool hit = false;
  for (double dx = -0.5; dx <= 0.5 && !hit; dx += 0.01) {
    const QPointF at = view->chart()->mapToPosition(QPointF(dx, first->at(QBoxSet::Median)), series);
    QTest::mouseMove(view->viewport(), view->mapFromScene(view->chart()->mapToScene(at)));
    hit = !hovered.isEmpty() && hovered.last().at(0).toBool();
  }
  QVERIFY2(hit, "no box answered the pointer");
  QTRY_VERIFY(QToolTip::isVisible());
  QVERIFY2(QToolTip::text().startsWith(QStringLiteral("QK MATMUL, ")), qPrintable(QToolTip::text()));
  QVERIFY2(QToolTip::text().contains(QStringLiteral("median")), qPrintable(QToolTip::text()));
#endif
}

void TestWorkbench::copySelection() {
  MainWindow w({false, false, false});
  QSignalSpy shown(&w, &MainWindow::traceShown);
  QVERIFY(openAndWait(w, shown, kSoftmax));
  w.show();
  w.dock(QStringLiteral("whyDock"))->raise();  // the Why panel answers while it is on screen
  QSignalSpy why(w.whyPanel(), &WhyPanel::shown);
  w.tablePane()->view()->selectRow(0);
  const QString text = w.copySelection();
  const QStringList lines = text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  QCOMPARE(lines.size(), 2);
  QVERIFY(lines[0].startsWith(QStringLiteral("Name\t")));
  QVERIFY(lines[1].startsWith(w.tablePane()->proxy()->data(w.tablePane()->proxy()->index(0, 0)).toString() +
                              QLatin1Char('\t')));
  // Selecting a row answers "why is this zero?" for it.
  QVERIFY(why.wait(30000));
  QVERIFY(w.whyPanel()->plainText().startsWith(
      w.tablePane()->proxy()->data(w.tablePane()->proxy()->index(0, 0)).toString()));
}

QTEST_MAIN(TestWorkbench)
#include "test_workbench.moc"
