// The run as the viewer drives it: the Run panel's exact command line and presets, the engine as
// a child process (the real CPU engine when this attnscope-cli has it, and failing commands:
// missing binary, non-zero exit, out of memory, killed, crashed, cancelled), saving and reopening
// a run, and what the Explanation, Why, Compare and Plots make of engine captures.
#include "viewer_fixture.h"

using namespace viewer_fixture;

namespace {

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

class EngineRunnerTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void runPanelCommandLine();
  void runPanelPresets();
  void runPanelRoundTripsEveryOption();
  void runnerMissingBinary();
  void runnerNonZeroExit();
  void runnerOutOfMemory();
  void runnerKilled();
  void runnerCrashed();
  void recordCancelKeepsAWrittenTrace();
  void runnerCancelKillsTheGroup();
  void runnerRealCpuEngine();
  void runFailureKeepsEarlierRuns();
  void saveRunAndReopen();
  void explainPanelCards();
  void whyPanelForARow();
  void compareTwoCaptures();
  void compareEngineRunsSaysNoiseOrChange();
  void engineMetadataParses();
  void plotsShowEachStepsSpread();

 private:
  std::shared_ptr<const EventStore> softmax_;
  QTemporaryDir tmp_;
};

void EngineRunnerTest::initTestCase() { initViewerSuite(tmp_, &softmax_); }

void EngineRunnerTest::runPanelCommandLine() {
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

void EngineRunnerTest::runPanelPresets() {
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

void EngineRunnerTest::runPanelRoundTripsEveryOption() {
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

void EngineRunnerTest::runnerMissingBinary() {
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

void EngineRunnerTest::runnerNonZeroExit() {
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

void EngineRunnerTest::runnerOutOfMemory() {
  EngineRunner r;
  r.setProgram(fakeCli(tmp_, QStringLiteral("oom.sh"), "echo 'attnscope-cli: run: out of memory: CUDA' >&2\nexit 3"));
  const RunOutcome o = runAndWait(r, RunConfig{}, tmp_.filePath(QStringLiteral("o.json")));
  QCOMPARE(o.status, RunStatus::OutOfMemory);
  QVERIFY(o.message.contains(QStringLiteral("Out of memory")));
}

void EngineRunnerTest::runnerKilled() {
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

// A record cancelled once its trace was written: the CLI kept it (exit 130) and said so; the runner
// shows it. Cancelled before that: nothing to show, even where an older file has the name.
void EngineRunnerTest::recordCancelKeepsAWrittenTrace() {
  QTemporaryDir dir;
  const QString trace = dir.filePath(QStringLiteral("t.json"));
  QFile f(trace);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write("{}");
  f.close();
  const QString kept =
      QStringLiteral(
          "attnscope-cli: record: cancelled while timing steps without the profiler, after the trace was written: the "
          "trace is kept without the baseline (the profiler's inflation is not measured): ") +
      trace + "\n";
  RunOutcome o = EngineRunner::classifyRecord(QProcess::NormalExit, 130, true, kept, trace, 1);
  QCOMPARE(o.status, RunStatus::Cancelled);
  QCOMPARE(o.outPath, trace);
  QVERIFY2(o.message.contains(QLatin1String("the trace is kept without the baseline")), qPrintable(o.message));
  o = EngineRunner::classifyRecord(QProcess::NormalExit, 130, true,
                                   QStringLiteral("attnscope-cli: record: cancelled before the trace was complete; "
                                                  "nothing was written\n"),
                                   trace, 1);
  QCOMPARE(o.status, RunStatus::Cancelled);
  QVERIFY(o.outPath.isEmpty());
}

void EngineRunnerTest::runnerCrashed() {
  EngineRunner r;
  r.setProgram(fakeCli(tmp_, QStringLiteral("segv.sh"), "kill -SEGV $$"));
  const RunOutcome o = runAndWait(r, RunConfig{}, tmp_.filePath(QStringLiteral("c.json")));
  QCOMPARE(o.status, RunStatus::Crashed);
  QVERIFY(o.message.contains(QStringLiteral("SIGSEGV")));
}

void EngineRunnerTest::runnerCancelKillsTheGroup() {
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

void EngineRunnerTest::runnerRealCpuEngine() {
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

void EngineRunnerTest::runFailureKeepsEarlierRuns() {
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

void EngineRunnerTest::saveRunAndReopen() {
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

void EngineRunnerTest::explainPanelCards() {
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

void EngineRunnerTest::whyPanelForARow() {
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

void EngineRunnerTest::compareTwoCaptures() {
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
void EngineRunnerTest::compareEngineRunsSaysNoiseOrChange() {
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

void EngineRunnerTest::engineMetadataParses() {
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
void EngineRunnerTest::plotsShowEachStepsSpread() {
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

QTEST_MAIN(EngineRunnerTest)
#include "test_engine_runner.moc"
