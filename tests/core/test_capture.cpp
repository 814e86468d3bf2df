// `attnscope-cli capture` on real torch processes on this CPU machine, as a user runs it: an
// unmodified training loop started with KINETO_USE_DAEMON=1 captured for 3 steps while it runs (the
// trace holds those 3 optimizer steps of ops, by the job's own step log and the model's shape; the
// job keeps stepping), two gloo ranks under torchrun captured on the same step, the unprepared and the
// foreign processes refused, a job part of which exits mid-capture (kept, marked partial), Ctrl-C
// before and after the request, another profiler in the job, a job that never steps (timeout, then a
// capture by time), and the route through a dynolog daemon (a stand-in that speaks its protocols).
//
// The first test serves the host's abstract `dynolog` name, as users' captures do; the others give
// their jobs KINETO_IPC_SOCKET_DIR (a folder of this test's) so that nothing else on the host is
// served by them. No other test serves that name; the ctest entry runs beside no other test that runs
// torch jobs (RESOURCE_LOCK torch_jobs).
#include <signal.h>

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <set>

#include "capture_jobs.h"
#include "cli_run.h"

using namespace capture_test;

namespace {

struct CliRun {
  int code = -1;
  QString out, err;
  qint64 ms = 0;
};

std::set<QString>& leftFolders() {
  static std::set<QString> folders;
  return folders;
}

// attnscope-cli with extra environment; `interruptWhen`, when set, sends SIGINT once stderr matches.
CliRun capture(const QStringList& args, const std::map<QString, QString>& env = {}, int timeoutMs = 180000,
               const QString& interruptWhen = {}) {
  QProcess p;
  auto e = QProcessEnvironment::systemEnvironment();
  for (const auto& [k, v] : env) e.insert(k, v);
  p.setProcessEnvironment(e);
  QElapsedTimer t;
  t.start();
  p.start(QStringLiteral(ATTNSCOPE_BIN_DIR "/attnscope-cli"), QStringList{QStringLiteral("capture")} + args);
  CliRun r;
  QString err;
  bool sent = false;
  while (!p.waitForFinished(100)) {
    err += QString::fromUtf8(p.readAllStandardError());
    if (!interruptWhen.isEmpty() && !sent && err.contains(QRegularExpression(interruptWhen))) {
      ::kill(static_cast<pid_t>(p.processId()), SIGINT);
      sent = true;
      t.restart();
    }
    if (t.elapsed() > timeoutMs) {
      p.kill();
      p.waitForFinished();
      r.err = err + "\n(timed out)";
      return r;
    }
  }
  r.ms = t.elapsed();
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = err + QString::fromUtf8(p.readAllStandardError());
  // The work folders a capture leaves for a request still out: removed when the test ends.
  static const QRegularExpression kept(QStringLiteral("/tmp/attnscope-capture-[A-Za-z0-9]+"));
  for (auto m = kept.globalMatch(r.err); m.hasNext();) leftFolders().insert(m.next().captured());
  return r;
}

bool importsTorch() {
  QProcess p;
  p.start(QStringLiteral("python3"), {QStringLiteral("-c"), QStringLiteral("import torch")});
  return p.waitForFinished(120000) && p.exitCode() == 0;
}

}  // namespace

class TestCapture : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString sockets_;
  QString path(const QString& name) const { return dir_.filePath(name); }
  std::map<QString, QString> ready() const {
    return {{QStringLiteral("KINETO_USE_DAEMON"), QStringLiteral("1")},
            {QStringLiteral("KINETO_IPC_SOCKET_DIR"), sockets_}};
  }
  Job* loop(const QString& log, const QStringList& extra, const std::map<QString, QString>& env) {
    return new Job(QStringLiteral("python3"),
                   QStringList{kScripts + QStringLiteral("train_loop.py"), QStringLiteral("--log"), log} + extra, env);
  }

 private slots:
  void cleanupTestCase() {
    for (const QString& f : leftFolders()) QDir(f).removeRecursively();
  }

  void initTestCase() {
    QVERIFY(dir_.isValid());
    sockets_ = path(QStringLiteral("sockets"));
    QVERIFY(QDir().mkpath(sockets_));
    if (!importsTorch()) QSKIP("python3 cannot import torch: nothing to capture");
  }

  // The issue's case: an unmodified loop started with the variable alone (the abstract endpoint).
  void capturesThreeStepsOfARunningScript() {
    const QString log = path(QStringLiteral("plain.steps"));
    std::unique_ptr<Job> job(loop(log, {}, {{QStringLiteral("KINETO_USE_DAEMON"), QStringLiteral("1")}}));
    QVERIFY(waitForSteps(log, 3));
    const QString out = path(QStringLiteral("three.json"));
    const CliRun r = capture({QString::number(job->pid()), QStringLiteral("--iterations"), QStringLiteral("3"),
                              QStringLiteral("--out"), out});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QVERIFY2(r.out.contains(QStringLiteral("3 optimizer steps in the trace")), qPrintable(r.out));
    QVERIFY2(r.out.contains(QStringLiteral("own dynolog endpoint")), qPrintable(r.out));
    const TraceFile t = readTraceFile(out);
    // Exactly three optimizer steps, each inside one step of the job's own log, consecutive.
    const auto opt = spans(t, QStringLiteral("Optimizer.step#"), true);
    QCOMPARE(opt.size(), size_t{3});
    const std::vector<int> held = stepsHolding(opt, readSteps(log));
    QVERIFY2(held[0] >= 0 && held[1] == held[0] + 1 && held[2] == held[0] + 2,
             qPrintable(QStringLiteral("steps %1 %2 %3").arg(held[0]).arg(held[1]).arg(held[2])));
    // Those steps' ops, from the model (two Linear layers): 2 forward linears and 2 addmm backwards a
    // step, one zero_grad.
    QCOMPARE(spans(t, QStringLiteral("aten::linear")).size(), size_t{6});
    QCOMPARE(spans(t, QStringLiteral("autograd::engine::evaluate_function: AddmmBackward0")).size(), size_t{6});
    QCOMPARE(spans(t, QStringLiteral("Optimizer.zero_grad#SGD.zero_grad")).size(), size_t{3});
    const QJsonObject cap = t.root.value(QStringLiteral("attnscope_capture")).toObject();
    QCOMPARE(cap.value(QStringLiteral("pid")).toInteger(), job->pid());
    QCOMPARE(cap.value(QStringLiteral("partial")).toBool(true), false);
    // explain's headline printed is explain's own.
    const Run ex = cli({QStringLiteral("explain"), out, QStringLiteral("--format"), QStringLiteral("json")});
    const QString headline = QJsonDocument::fromJson(ex.out.toUtf8())
                                 .object()
                                 .value(QStringLiteral("diagnosis"))
                                 .toObject()
                                 .value(QStringLiteral("headline"))
                                 .toString();
    QVERIFY(!headline.isEmpty());
    QVERIFY2(r.out.contains(headline), qPrintable(r.out));
    // The job keeps running and stepping.
    const size_t after = readSteps(log).size();
    QVERIFY(waitForSteps(log, after + 3, 60000));
    QVERIFY(job->running());
  }

  void refusesTheUnprepared() {
    const QString log = path(QStringLiteral("unprepared.steps"));
    std::unique_ptr<Job> job(loop(log, {}, {}));
    QVERIFY(waitForSteps(log, 1));
    CliRun r = capture({QString::number(job->pid())});
    QCOMPARE(r.code, 2);
    QVERIFY2(
        r.err.contains(QStringLiteral("KINETO_USE_DAEMON")) && r.err.contains(QStringLiteral("record --on-demand")),
        qPrintable(r.err));
    QVERIFY(job->running());
    Job sleeper(QStringLiteral("sleep"), {QStringLiteral("60")}, {});
    QVERIFY(sleeper.process().waitForStarted());
    r = capture({QString::number(sleeper.pid())});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(QStringLiteral("not a Python process")), qPrintable(r.err));
    r = capture({QStringLiteral("2147483")});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(QStringLiteral("no process 2147483")), qPrintable(r.err));
    r = capture({QString::number(job->pid()), QStringLiteral("--iterations"), QStringLiteral("3"),
                 QStringLiteral("--duration-ms"), QStringLiteral("100")});
    QCOMPARE(r.code, 2);
  }

  void twoGlooRanksStartOnTheSameStep() {
    const QString prefix = path(QStringLiteral("ddp"));
    auto env = ready();
    env[QStringLiteral("OMP_NUM_THREADS")] = QStringLiteral("1");
    const int port = 29500 + static_cast<int>(QCoreApplication::applicationPid() % 400);
    Job job(QStringLiteral("torchrun"),
            {QStringLiteral("--nproc-per-node"), QStringLiteral("2"), QStringLiteral("--master-port"),
             QString::number(port), kScripts + QStringLiteral("ddp_loop.py"), QStringLiteral("0"), prefix},
            env);
    QVERIFY(waitForSteps(prefix + QStringLiteral("-0.txt"), 3) && waitForSteps(prefix + QStringLiteral("-1.txt"), 3));
    const QString out = path(QStringLiteral("job"));
    // The roundup attnscope's own (20, and once more with a larger one if the ranks did not line up).
    const CliRun r = capture({QString::number(job.pid()), QStringLiteral("--iterations"), QStringLiteral("3"),
                              QStringLiteral("--out"), out});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QVERIFY2(r.err.contains(QStringLiteral("launches 2 torch process")), qPrintable(r.err));
    int first[2] = {-1, -1};
    int roundup = 0;
    for (int rank = 0; rank < 2; ++rank) {
      const TraceFile t = readTraceFile(out + QStringLiteral("/rank-%1.json").arg(rank));
      roundup =
          t.root.value(QStringLiteral("attnscope_capture")).toObject().value(QStringLiteral("start_roundup")).toInt();
      const auto opt = spans(t, QStringLiteral("Optimizer.step#"), true);
      QCOMPARE(opt.size(), size_t{3});
      const std::vector<int> held = stepsHolding(opt, readSteps(prefix + QStringLiteral("-%1.txt").arg(rank)));
      QVERIFY(held[0] >= 0 && held[2] == held[0] + 2);
      first[rank] = held[0];
      QCOMPARE(t.root.value(QStringLiteral("distributedInfo")).toObject().value(QStringLiteral("rank")).toInt(-1),
               rank);
    }
    // The same optimizer step on both, right after a multiple of the roundup: Kineto counts the steps
    // from 0 (after the log's step i its count is i) and starts the capture at the step() call whose
    // count is the multiple, so the first step captured is the multiple + 1.
    QCOMPARE(first[0], first[1]);
    QVERIFY(roundup >= 20);
    QCOMPARE(first[0] % roundup, 1);
    QVERIFY2(r.out.contains(QStringLiteral("started on the same optimizer step")), qPrintable(r.out));
    const Run ranks = cli({QStringLiteral("ranks"), out}, 120000);
    QCOMPARE(ranks.code, 0);
    QVERIFY2(!ranks.out.contains(QStringLiteral("hang")), qPrintable(ranks.out));
  }

  void keepsWhatWasWrittenWhenPartOfTheJobExits() {
    const QString logA = path(QStringLiteral("short.steps")), logB = path(QStringLiteral("long.steps"));
    std::unique_ptr<Job> a(loop(
        logA, {QStringLiteral("--steps"), QStringLiteral("100000"), QStringLiteral("--sleep"), QStringLiteral("0.05")},
        ready()));
    std::unique_ptr<Job> b(loop(logB, {}, ready()));
    QVERIFY(waitForSteps(logA, 3) && waitForSteps(logB, 3));
    // A long capture; process A is stopped as soon as it is asked, B runs on.
    QProcess cap;
    cap.start(QStringLiteral(ATTNSCOPE_BIN_DIR "/attnscope-cli"),
              {QStringLiteral("capture"), QString::number(a->pid()), QString::number(b->pid()),
               QStringLiteral("--iterations"), QStringLiteral("30"), QStringLiteral("--start-roundup"),
               QStringLiteral("1"), QStringLiteral("--out"), path(QStringLiteral("partial"))});
    QString err;
    QElapsedTimer t;
    t.start();
    while (!err.contains(QRegularExpression(QStringLiteral("asked|capturing:"))) && t.elapsed() < 90000) {
      cap.waitForReadyRead(200);
      err += QString::fromUtf8(cap.readAllStandardError());
    }
    a->stop();
    QVERIFY(cap.waitForFinished(180000));
    err += QString::fromUtf8(cap.readAllStandardError());
    const QString out = QString::fromUtf8(cap.readAllStandardOutput());
    QCOMPARE(cap.exitCode(), 3);
    QVERIFY2(out.contains(QStringLiteral("captured (partial)")), qPrintable(out + err));
    QVERIFY2(err.contains(QStringLiteral("exited")), qPrintable(err));
    // Without torchrun's RANK the ranks follow the pids' order.
    const int rankA = a->pid() < b->pid() ? 0 : 1, rankB = 1 - rankA;
    QVERIFY(!QFile::exists(path(QStringLiteral("partial/rank-%1.json").arg(rankA))));
    const TraceFile kept = readTraceFile(path(QStringLiteral("partial/rank-%1.json").arg(rankB)));
    const QJsonObject c = kept.root.value(QStringLiteral("attnscope_capture")).toObject();
    QCOMPARE(c.value(QStringLiteral("partial")).toBool(), true);
    QCOMPARE(c.value(QStringLiteral("missing_ranks")).toArray(), QJsonArray{rankA});
    QCOMPARE(spans(kept, QStringLiteral("Optimizer.step#"), true).size(), size_t{30});
    QVERIFY(b->running());
  }

  // The job started by `record --on-demand` (ready, unprofiled, the same pid), then Ctrl-C.
  void ctrlCLeavesTheJobRunning() {
    const QString log = path(QStringLiteral("ctrlc.steps"));
    std::unique_ptr<Job> job(
        new Job(QStringLiteral(ATTNSCOPE_BIN_DIR "/attnscope-cli"),
                {QStringLiteral("record"), QStringLiteral("--on-demand"), QStringLiteral("--"),
                 QStringLiteral("python3"), kScripts + QStringLiteral("train_loop.py"), QStringLiteral("--log"), log},
                {{QStringLiteral("KINETO_IPC_SOCKET_DIR"), sockets_}}));
    QVERIFY(waitForSteps(log, 3));
    QFile envFile(QStringLiteral("/proc/%1/environ").arg(job->pid()));
    QVERIFY(envFile.open(QIODevice::ReadOnly));
    const QList<QByteArray> vars = envFile.readAll().split('\0');
    QVERIFY(vars.contains("KINETO_USE_DAEMON=1"));
    QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(job->pid()));
    QVERIFY(cmdline.open(QIODevice::ReadOnly) && cmdline.readAll().contains("train_loop.py"));  // the same pid
    const Run list = cli({QStringLiteral("capture"), QStringLiteral("--list")});
    QVERIFY2(list.out.contains(QRegularExpression(QStringLiteral("%1\\s+ready").arg(job->pid()))),
             qPrintable(list.out));
    // Before the request: the job is told nothing.
    CliRun r = capture({QString::number(job->pid()), QStringLiteral("--out"), path(QStringLiteral("c1.json"))}, {},
                       60000, QStringLiteral("capturing"));
    QCOMPARE(r.code, 130);
    QVERIFY2(r.ms < 3000, qPrintable(QString::number(r.ms)));
    QVERIFY2(r.err.contains(QStringLiteral("before the job was asked anything")), qPrintable(r.err));
    // After it (a start step far away): attnscope leaves at once and says where the trace will land.
    r = capture({QString::number(job->pid()), QStringLiteral("--start-roundup"), QStringLiteral("1000000"),
                 QStringLiteral("--out"), path(QStringLiteral("c2.json"))},
                {}, 90000, QStringLiteral("asked"));
    QCOMPARE(r.code, 130);
    QVERIFY2(r.ms < 3000, qPrintable(QString::number(r.ms)));
    QVERIFY2(r.err.contains(QStringLiteral("cannot withdraw")), qPrintable(r.err));
    QVERIFY(!QFile::exists(path(QStringLiteral("c2.json"))));
    // The request it left is said to the next capture of that process, up front.
    r = capture({QString::number(job->pid()), QStringLiteral("--timeout"), QStringLiteral("1")}, {}, 60000);
    QCOMPARE(r.code, 3);
    QVERIFY2(r.err.contains(QStringLiteral("still holds the request of an earlier capture")), qPrintable(r.err));
    const size_t n = readSteps(log).size();
    QVERIFY(waitForSteps(log, n + 3, 60000));
    QVERIFY(job->running());
  }

  void saysAnotherProfilerIsActive() {
    const QString log = path(QStringLiteral("profiled.steps"));
    std::unique_ptr<Job> job(loop(log, {QStringLiteral("--profile")}, ready()));
    QVERIFY(waitForSteps(log, 3));
    const CliRun r = capture({QString::number(job->pid()), QStringLiteral("--timeout"), QStringLiteral("12"),
                              QStringLiteral("--out"), path(QStringLiteral("busy.json"))});
    QCOMPARE(r.code, 3);
    QVERIFY2(r.err.contains(QStringLiteral("another profiler")), qPrintable(r.err));
    QVERIFY(job->running());
  }

  void aJobWithoutStepsTimesOutThenIsCapturedByTime() {
    const QString log = path(QStringLiteral("server.steps"));
    std::unique_ptr<Job> job(loop(log, {QStringLiteral("--forward-only")}, ready()));
    QVERIFY(waitForSteps(log, 3));
    CliRun r = capture({QString::number(job->pid()), QStringLiteral("--iterations"), QStringLiteral("3"),
                        QStringLiteral("--timeout"), QStringLiteral("10")});
    QCOMPARE(r.code, 3);
    QVERIFY2(r.err.contains(QStringLiteral("no optimizer step")) && r.err.contains(QStringLiteral("--duration-ms")),
             qPrintable(r.err));
    const QString out = path(QStringLiteral("server.json"));
    r = capture({QString::number(job->pid()), QStringLiteral("--duration-ms"), QStringLiteral("400"),
                 QStringLiteral("--out"), out});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    const TraceFile t = readTraceFile(out);
    const auto linear = spans(t, QStringLiteral("aten::linear"));
    QVERIFY(linear.size() >= 2);
    QCOMPARE(spans(t, QStringLiteral("Optimizer.step#"), true).size(), size_t{0});
    // All of it inside the 400 ms asked (Kineto's window, give or take a step's ops).
    QVERIFY(linear.back().second - linear.front().first < 600000000);
  }

  void goesThroughADaemonWhenOneRuns() {
    const QString daemonDir = path(QStringLiteral("daemon"));
    QVERIFY(QDir().mkpath(daemonDir));
    const QString portFile = path(QStringLiteral("daemon.port")), requests = path(QStringLiteral("daemon.log"));
    Job daemon(QStringLiteral("python3"), {kScripts + QStringLiteral("fake_dynolog.py"), daemonDir, portFile, requests},
               {});
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(portFile), 30000);
    QFile pf(portFile);
    QVERIFY(pf.open(QIODevice::ReadOnly));
    const QString port = QString::fromUtf8(pf.readAll()).trimmed();
    const QString log = path(QStringLiteral("daemon.steps"));
    std::unique_ptr<Job> job(loop(log, {},
                                  {{QStringLiteral("KINETO_USE_DAEMON"), QStringLiteral("1")},
                                   {QStringLiteral("KINETO_IPC_SOCKET_DIR"), daemonDir}}));
    QVERIFY(waitForSteps(log, 3));
    QThread::msleep(6000);  // the daemon knows a process once it polled
    const QString out = path(QStringLiteral("daemon.json"));
    const CliRun r = capture({QString::number(job->pid()), QStringLiteral("--iterations"), QStringLiteral("2"),
                              QStringLiteral("--out"), out},
                             {{QStringLiteral("ATTNSCOPE_DYNOLOG_PORT"), port}});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QVERIFY2(r.out.contains(QStringLiteral("through the dynolog daemon")), qPrintable(r.out));
    QCOMPARE(spans(readTraceFile(out), QStringLiteral("Optimizer.step#"), true).size(), size_t{2});
    QFile rq(requests);
    QVERIFY(rq.open(QIODevice::ReadOnly));
    const QJsonObject req = QJsonDocument::fromJson(rq.readLine()).object();
    QCOMPARE(req.value(QStringLiteral("fn")).toString(), QStringLiteral("setKinetOnDemandRequest"));
    QCOMPARE(req.value(QStringLiteral("pids")).toArray(), QJsonArray{job->pid()});
    QVERIFY(req.value(QStringLiteral("config")).toString().contains(QStringLiteral("ACTIVITIES_ITERATIONS=2\n")));
  }
};

QTEST_GUILESS_MAIN(TestCapture)
#include "test_capture.moc"
