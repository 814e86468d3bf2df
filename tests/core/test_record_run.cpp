// `attnscope-cli record` runs the user's script as plain Python runs it, and ends as the user ends
// it: what the script sees of how it was started (compared with what plain python3 prints for the
// same command), a failure before the first step (the script's, with its own traceback once and no
// performance diagnosis), the words that depend on the run (a CPU run's blocking, a shell-quoted
// command), and Ctrl-C / SIGTERM once the trace is written (kept, and said; without the baseline
// when they come during it). Before the trace: test_record's cancelLeavesNothing.
#include <signal.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include "record_test_util.h"

using namespace record_test;

namespace {

// The `identity: {...}` line a script printed (tests/data/scripts/identity.py).
QString identityLine(const QString& out) {
  const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("(?m)^identity: (.*)$")).match(out);
  return m.hasMatch() ? m.captured(1) : QString();
}

Run runIn(const QString& dir, const QString& program, const QStringList& args, int timeoutMs = 180000) {
  QProcess p;
  p.setWorkingDirectory(dir);
  p.start(program, args);
  Run r;
  if (!p.waitForFinished(timeoutMs)) {
    p.kill();
    p.waitForFinished();
    r.err = QStringLiteral("timed out");
    return r;
  }
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}

const QString kCli = QStringLiteral(ATTNSCOPE_BIN_DIR "/attnscope-cli");

}  // namespace

class TestRecordRun : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  bool torch_ = false;

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    torch_ = pythonHasTorch();
  }
  void init() {
    if (!torch_) QSKIP("python3 cannot import torch here: record has nothing to record with");
  }

  // The same command, plain and under record, from the same folder: the script sees the same
  // __name__, __file__, __spec__, __package__, sys.path[0], argv and working folder.
  void runsAsPlainPython_data() {
    QTest::addColumn<QString>("cwd");
    QTest::addColumn<QStringList>("command");
    QTest::addColumn<bool>("steps");
    QTest::newRow("python -m from the package's root")
        << kScripts + "pkgroot" << QStringList{"python3", "-m", "trainpkg.train", "--steps", "8"} << true;
    QTest::newRow("a script from another folder") << QStringLiteral(ATTNSCOPE_SOURCE_DIR "/tests/data")
                                                  << QStringList{"python3", "scripts/pkgroot/run_me.py", "x"} << false;
    QTest::newRow("a script through a symbolic link") << QString() << QStringList{"python3", "link/run_me.py"} << false;
  }
  void runsAsPlainPython() {
    QFETCH(QString, cwd);
    QFETCH(QStringList, command);
    QFETCH(bool, steps);
    if (cwd.isEmpty()) {  // a folder holding a link to the package's script: sys.path[0] is the real folder
      cwd = dir_.filePath(QStringLiteral("linked"));
      QVERIFY(QDir().mkpath(cwd + "/link"));
      QFile::remove(cwd + "/link/run_me.py");
      QVERIFY(QFile::link(kScripts + "pkgroot/run_me.py", cwd + "/link/run_me.py"));
    }
    const Run plain = runIn(cwd, command.front(), command.mid(1));
    QVERIFY2(plain.code == 0, qPrintable(plain.err));
    const QString expected = identityLine(plain.out);
    QVERIFY2(!expected.isEmpty(), qPrintable(plain.out));
    const QString out =
        dir_.filePath(QStringLiteral("identity-%1.json").arg(QTest::currentDataTag()).replace(' ', '_'));
    QStringList args{"record", "--wait", "1", "--warmup", "1", "--active", "2", "--baseline", "0", "--out", out, "--"};
    const Run r = runIn(cwd, kCli, args + command);
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QCOMPARE(identityLine(r.out), expected);
    // What plain Python prints after the identity line comes out the same too.
    QCOMPARE(r.out.count(QStringLiteral("helpers from True")), plain.out.count(QStringLiteral("helpers from True")));
    const Trace t = readTrace(out);
    const QStringList traced = steps ? QStringList{"ProfilerStep#2", "ProfilerStep#3"} : QStringList{"ProfilerStep#0"};
    QCOMPARE(profilerSteps(t), traced);
  }

  // A script that fails before its first step: the failure is the script's (exit 3, its own
  // traceback once, its frames only), nothing is kept, and nothing is diagnosed.
  void failureBeforeTheFirstStep_data() {
    QTest::addColumn<QStringList>("command");
    QTest::addColumn<QString>("said");
    QTest::addColumn<QString>("traceback");
    QTest::newRow("raises at start")
        << QStringList{"python3", kScripts + "fail_at_start.py"}
        << "the script failed before its first step ended (exit code 1: FileNotFoundError: no training data at "
           "/data/imagenet/train): nothing was recorded"
        << "raise FileNotFoundError(\"no training data at %s\" % path)";
    QTest::newRow("python -m of a module that is not there")
        << QStringList{"python3", "-m", "no_such_pkg.train"}
        << "the script failed before its first step ended (exit code 1: Error while finding module specification "
           "for 'no_such_pkg.train' (ModuleNotFoundError: No module named 'no_such_pkg')): nothing was recorded"
        << QString();
  }
  void failureBeforeTheFirstStep() {
    QFETCH(QStringList, command);
    QFETCH(QString, said);
    QFETCH(QString, traceback);
    // Plain Python's own words for the same failure.
    const Run plain = runIn(kScripts, command.front(), command.mid(1));
    QCOMPARE(plain.code, 1);
    QTemporaryDir d;
    const QString out = d.filePath(QStringLiteral("t.json"));
    // As a user sees it in a terminal: the script's stderr and the report in one place.
    const QString log = d.filePath(QStringLiteral("log.txt"));
    QStringList args{"record", "--out", out, "--"};
    args += command;
    QString sh = "exec '" + kCli + "'";
    for (const QString& a : args) sh += " '" + a + "'";
    const Run r = runIn(kScripts, QStringLiteral("sh"), {"-c", sh + " >'" + log + "' 2>&1"});
    QCOMPARE(r.code, 3);
    QFile f(log);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    QVERIFY2(text.contains("attnscope-cli: record: " + said), qPrintable(text));
    QVERIFY2(!text.contains("What costs") && !text.contains("Fix:") && !text.contains("recorded:"), qPrintable(text));
    QCOMPARE(QDir(d.path()).entryList(QDir::Files), QStringList{"log.txt"});  // no trace, no leftovers
    // Plain Python's last line (the error itself) is there once: not repeated by the report.
    const QString last = plain.err.trimmed().section('\n', -1);
    QVERIFY2(!last.isEmpty() && text.split('\n').count(last) == 1, qPrintable(last + "\n---\n" + text));
    QVERIFY(!text.contains("gpuGetDeviceCount"));
    if (!traceback.isEmpty()) {
      QCOMPARE(text.count(traceback), 1);
      // The user's frames only: none of attnscope's (its temporary folder is gone) or runpy's.
      QVERIFY2(!text.contains("attnscope_record") && !text.contains("runpy") && !text.contains("exec(code"),
               qPrintable(text));
      // The same frames as plain Python's traceback.
      QRegularExpression frame(QStringLiteral("File \"[^\"]+\", line \\d+"));
      QStringList a, b;
      for (auto it = frame.globalMatch(plain.err); it.hasNext();) a << it.next().captured(0);
      for (auto it = frame.globalMatch(text); it.hasNext();) b << it.next().captured(0);
      QCOMPARE(b, a);
    }
  }

  // What record says depends on the run: a CPU run's --sync blocking waits for nothing, and the
  // command is echoed as a shell would read it.
  void wordsFitTheRun() {
    QTemporaryDir d;
    const QString script = d.filePath(QStringLiteral("my script.py"));
    QVERIFY(QFile::copy(kScripts + "no_optimizer.py", script));
    const QString out = d.filePath(QStringLiteral("w.json"));
    const Run r = record({"--sync", "blocking", "--out", out}, {"python3", script, "a b", "it's"});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QVERIFY2(r.err.contains("[attnscope] recording 'my script.py' 'a b' 'it'\\''s', wrap none, sync blocking"),
             qPrintable(r.err));
    const Run e = cli({QStringLiteral("explain"), out, QStringLiteral("--format"), QStringLiteral("json")});
    const QString notes = QJsonDocument(QJsonDocument::fromJson(e.out.toUtf8()).object().value("run_notes").toArray())
                              .toJson(QJsonDocument::Compact);
    QVERIFY2(notes.contains("the script ran without a GPU: there are no kernel launches to wait for"),
             qPrintable(notes));
    QVERIFY(!notes.contains("every launch waits"));
    QVERIFY2(notes.contains("your script: '" + script + "' 'a b' 'it'\\\\''s'"), qPrintable(notes));
    QVERIFY(!(r.out + r.err).contains("gpuGetDeviceCount"));
  }

  // Ctrl-C or SIGTERM once the trace is written keeps it, at each moment, and says so.
  void cancelKeepsWhatIsComplete_data() {
    QTest::addColumn<int>("sig");
    QTest::addColumn<bool>("duringBaseline");
    QTest::newRow("Ctrl-C while timing the baseline") << int(SIGINT) << true;
    QTest::newRow("SIGTERM while timing the baseline") << int(SIGTERM) << true;
    QTest::newRow("Ctrl-C in the script's exit work") << int(SIGINT) << false;
    QTest::newRow("SIGTERM in the script's exit work") << int(SIGTERM) << false;
  }
  void cancelKeepsWhatIsComplete() {
    QFETCH(int, sig);
    QFETCH(bool, duringBaseline);
    QTemporaryDir d;
    const QString out = d.filePath(QStringLiteral("kept.json"));
    // An argument the script ignores, to find its processes by (other tests run slow_loop.py too).
    const QString tag = QStringLiteral("--attnscope-test-%1").arg(QCoreApplication::applicationPid());
    QStringList args{"record", "--progress", "json", "--out", out};
    if (duringBaseline)  // 50 ms steps: 1000 baseline steps take 50 s, and the signal comes in them
      args << QStringList{"--wait",
                          "1",
                          "--warmup",
                          "1",
                          "--active",
                          "3",
                          "--baseline",
                          "1000",
                          "--",
                          "python3",
                          kScripts + "slow_loop.py",
                          tag};
    else  // the script's atexit handler waits 60 s after the trace is written
      args << QStringList{"--baseline", "0", "--", "python3", kScripts + "slow_exit.py", "20", tag};
    QProcess p;
    p.start(kCli, args);
    QVERIFY(p.waitForStarted());
    QByteArray progress, err;
    QElapsedTimer clock;
    clock.start();
    auto ready = [&] {
      return duringBaseline ? progress.contains("\"action\": \"after\"") : err.contains("cleanup started");
    };
    while (!ready() && clock.elapsed() < 120000 && p.state() == QProcess::Running) {
      p.waitForReadyRead(200);
      progress += p.readAllStandardOutput();
      err += p.readAllStandardError();
    }
    QVERIFY2(ready(), (progress + err).constData());
    if (duringBaseline) QTest::qWait(300);  // a few baseline steps in
    ::kill(static_cast<pid_t>(p.processId()), sig);
    QVERIFY(p.waitForFinished(30000));
    progress += p.readAllStandardOutput();
    err += p.readAllStandardError();
    QCOMPARE(p.exitCode(), 130);
    const QString said = QString::fromUtf8(err);
    // Only the trace is left: no .part, no temporary file.
    QCOMPARE(QDir(d.path()).entryList(QDir::Files), QStringList{"kept.json"});
    const Trace t = readTrace(out);
    QCOMPARE(t.record.value("status").toString(), QStringLiteral("complete"));
    const QString notes = QJsonDocument(t.record.value("notes").toArray()).toJson(QJsonDocument::Compact);
    if (duringBaseline) {
      QVERIFY2(said.contains("cancelled while timing steps without the profiler, after the trace was written: the "
                             "trace is kept without the baseline"),
               qPrintable(said));
      QCOMPARE(profilerSteps(t), (QStringList{"ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"}));
      QCOMPARE(t.record.value("profiled_ns").toArray().size(), 3);
      QVERIFY(t.record.value("baseline_host_ns").toArray().isEmpty());
      QVERIFY2(notes.contains("the trace is kept without the baseline"), qPrintable(notes));
    } else {
      QVERIFY2(said.contains("cancelled after the trace was written: the trace is kept: " + out), qPrintable(said));
      QCOMPARE(profilerSteps(t), (QStringList{"ProfilerStep#3", "ProfilerStep#4", "ProfilerStep#5"}));
    }
    // The progress says where the kept trace is, and the trace opens.
    QVERIFY2(progress.contains("\"phase\": \"cancelled\"") && progress.contains(out.toUtf8()), progress.constData());
    QCOMPARE(cli({QStringLiteral("explain"), out}).code, 0);
    QProcess pg;
    pg.start(QStringLiteral("pgrep"), {"-f", tag});
    pg.waitForFinished();
    QCOMPARE(QString::fromUtf8(pg.readAllStandardOutput()).trimmed(), QString());
  }
};

QTEST_GUILESS_MAIN(TestRecordRun)
#include "test_record_run.moc"
