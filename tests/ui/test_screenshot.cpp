// Runs the built `attnscope --screenshot` the way CI and the docs do, with
// QT_QPA_PLATFORM=offscreen, and checks the PNG and the exit codes; and
// `attnscope --startup-probe` (what attnscope-bench start reads).
#include <QFileInfo>
#include <QImage>
#include <QMap>
#include <QProcess>
#include <QProcessEnvironment>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

namespace {

const QString kExe = QStringLiteral(ATTNSCOPE_GUI_EXE);
const QString kTrace = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_8x16x1024x64.json");

struct Run {
  int exitCode = -1;
  QProcess::ExitStatus status = QProcess::CrashExit;
  QString stdErr;
  QString stdOut;
};

Run runGui(const QStringList& args) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
  p.setProcessEnvironment(env);
  p.start(kExe, args);
  Run r;
  if (!p.waitForStarted(10000)) {
    r.stdErr = QStringLiteral("could not start ") + kExe;
    return r;
  }
  if (!p.waitForFinished(60000)) {
    p.kill();
    p.waitForFinished();
    r.stdErr = QStringLiteral("timed out: ") + QString::fromLocal8Bit(p.readAllStandardError());
    return r;
  }
  r.exitCode = p.exitCode();
  r.status = p.exitStatus();
  r.stdErr = QString::fromLocal8Bit(p.readAllStandardError());
  r.stdOut = QString::fromLocal8Bit(p.readAllStandardOutput());
  return r;
}

// Distinct colours on a coarse grid: a blank or single-colour image has 1.
int distinctColours(const QImage& img) {
  QSet<QRgb> seen;
  for (int y = 0; y < img.height(); y += 3) {
    for (int x = 0; x < img.width(); x += 3) seen.insert(img.pixel(x, y));
  }
  return static_cast<int>(seen.size());
}

}  // namespace

class TestScreenshot : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void screenshot_data();
  void screenshot();
  void missingTraceExitsTwo();
  void unwritablePngExitsTwo();
  void startupProbeReportsFramesInOrder_data();
  void startupProbeReportsFramesInOrder();
  void startupProbeFailsOnABadTrace();
};

void TestScreenshot::initTestCase() {
  QVERIFY2(QFileInfo(kExe).isExecutable(), qPrintable(QStringLiteral("not built: ") + kExe));
  if (!QFileInfo::exists(kTrace)) {
    QFAIL(qPrintable(QStringLiteral("test trace missing: ") + kTrace));
  }
}

void TestScreenshot::screenshot_data() {
  QTest::addColumn<QString>("size");
  QTest::addColumn<QSize>("expected");
  QTest::addColumn<bool>("bundled");
  QTest::newRow("real trace 1280x800") << QStringLiteral("1280x800") << QSize(1280, 800) << false;
  QTest::newRow("bundled sample 1280x800") << QStringLiteral("1280x800") << QSize(1280, 800) << true;
  QTest::newRow("real trace 1024x700") << QStringLiteral("1024x700") << QSize(1024, 700) << false;
}

void TestScreenshot::screenshot() {
  QFETCH(QString, size);
  QFETCH(QSize, expected);
  QFETCH(bool, bundled);
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString out = dir.filePath(QStringLiteral("out.png"));
  QStringList args{QStringLiteral("--screenshot"), out, QStringLiteral("--size"), size};
  if (!bundled) args << kTrace;
  const Run r = runGui(args);
  QVERIFY2(r.status == QProcess::NormalExit && r.exitCode == 0,
           qPrintable(QStringLiteral("exit %1: %2").arg(r.exitCode).arg(r.stdErr)));
  QImage img;
  QVERIFY2(img.load(out, "PNG"), qPrintable(QStringLiteral("no PNG at ") + out));
  QCOMPARE(img.size(), expected);
  const int colours = distinctColours(img);
  QVERIFY2(colours > 16, qPrintable(QStringLiteral("only %1 colours").arg(colours)));
}

void TestScreenshot::missingTraceExitsTwo() {
  QTemporaryDir dir;
  const QString out = dir.filePath(QStringLiteral("out.png"));
  const QString missing = dir.filePath(QStringLiteral("no_such_trace.json"));
  const Run r = runGui({QStringLiteral("--screenshot"), out, missing});
  QCOMPARE(r.status, QProcess::NormalExit);
  QCOMPARE(r.exitCode, 2);
  QVERIFY2(r.stdErr.contains(missing), qPrintable(r.stdErr));
  QVERIFY(!QFileInfo::exists(out));
}

void TestScreenshot::unwritablePngExitsTwo() {
  QTemporaryDir dir;
  const QString out = dir.filePath(QStringLiteral("no_such_dir/out.png"));
  const Run r = runGui({QStringLiteral("--screenshot"), out, kTrace});
  QCOMPARE(r.status, QProcess::NormalExit);
  QCOMPARE(r.exitCode, 2);
  QVERIFY2(r.stdErr.contains(out), qPrintable(r.stdErr));
}

void TestScreenshot::startupProbeReportsFramesInOrder_data() {
  QTest::addColumn<QStringList>("args");
  QTest::newRow("bundled sample") << QStringList{QStringLiteral("--startup-probe")};
  QTest::newRow("a trace") << QStringList{QStringLiteral("--startup-probe"), kTrace};
}

// main() starts, the window paints, the trace is shown, then the timeline
// paints with it: the probe prints those instants in that order and exits 0.
void TestScreenshot::startupProbeReportsFramesInOrder() {
  QFETCH(QStringList, args);
  const Run r = runGui(args);
  QVERIFY2(r.status == QProcess::NormalExit && r.exitCode == 0, qPrintable(r.stdErr));
  QMap<QString, qint64> t;
  for (const QString& kv : r.stdOut.trimmed().split(QLatin1Char(' '))) {
    const auto parts = kv.split(QLatin1Char('='));
    if (parts.size() == 2) t[parts[0]] = parts[1].toLongLong();
  }
  for (const char* key : {"main_ns", "first_frame_ns", "trace_shown_ns", "trace_frame_ns"})
    QVERIFY2(t.value(QLatin1String(key)) > 0, qPrintable(QStringLiteral("no %1 in: ").arg(key) + r.stdOut));
  QVERIFY(t["main_ns"] < t["first_frame_ns"]);
  QVERIFY(t["first_frame_ns"] <= t["trace_frame_ns"]);
  QVERIFY(t["trace_shown_ns"] < t["trace_frame_ns"]);
}

void TestScreenshot::startupProbeFailsOnABadTrace() {
  QTemporaryDir dir;
  const QString missing = dir.filePath(QStringLiteral("no_such_trace.json"));
  const Run r = runGui({QStringLiteral("--startup-probe"), missing});
  QCOMPARE(r.status, QProcess::NormalExit);
  QCOMPARE(r.exitCode, 2);
  QVERIFY2(r.stdErr.contains(missing), qPrintable(r.stdErr));
  QVERIFY(!r.stdOut.contains(QStringLiteral("trace_frame_ns")));
}

QTEST_GUILESS_MAIN(TestScreenshot)
#include "test_screenshot.moc"
