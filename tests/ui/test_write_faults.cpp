// Every file the desktop app writes (table exports as CSV/JSON/Markdown/
// text, the trace export, a saved run, the --screenshot PNG) into an
// unwritable directory, a missing one, a full device (/dev/full) and a disk
// that fills up half-way: an error that names the file, no partial or temp
// file, the file that was there before left whole, and the window, its
// trace and its runs as they were.
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>

#include "open_window.h"
#include "ui/common/export.h"
#include "ui/run/runs_model.h"
#include "ui/shell/main_window.h"
#include "ui/table/table_pane.h"
#include "write_faults.h"

using namespace attnscope::ui;
using namespace writefaults;

namespace {

const QString kEngineTrace = QStringLiteral(ATTNSCOPE_TEST_DATA "/h200/softmax_none_8x16x1024x64.json");
const QByteArray kBefore = "what was saved here before\n";

}  // namespace

class WriteFaultsTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir tmp_;
  std::unique_ptr<OpenWindow> app_;

  using Writer = std::function<bool(MainWindow&, const QString&, QString*)>;
  static Writer writer(const QString& kind) {
    if (kind == QLatin1String("trace"))
      return [](MainWindow& b, const QString& p, QString* e) { return b.exportTrace(p, e); };
    if (kind == QLatin1String("run"))
      return [](MainWindow& b, const QString& p, QString* e) { return b.saveRun(p, e, 0); };
    return [kind](MainWindow& b, const QString& p, QString* e) {
      return b.exportTable(p, e, formatForPath(QStringLiteral("x.") + kind));
    };
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    qputenv("XDG_CONFIG_HOME", tmp_.filePath(QStringLiteral("config")).toUtf8());
    app_ = std::make_unique<OpenWindow>();
    QVERIFY(app_->open(kEngineTrace));
    QCOMPARE(app_->window.runs()->rowCount(), 1);
  }

  void everyWriter_data() {
    QTest::addColumn<QString>("kind");
    for (const char* k : {"csv", "json", "md", "txt", "trace", "run"}) QTest::newRow(k) << QString(k);
  }
  void everyWriter() {
    QFETCH(QString, kind);
    const Writer write = writer(kind);
    const auto before = app_->window.trace();
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("out.") + (kind.size() <= 4 ? kind : QStringLiteral("json")));
    QString err;
    // It works, and leaves only its file.
    QVERIFY2(write(app_->window, path, &err), qPrintable(err));
    QVERIFY(contents(path).size() > 1024);
    QCOMPARE(entries(dir.path()).size(), 1);

    // An unwritable directory, a missing one, a full device.
    for (const QString& target :
         {kUnwritableDir + QStringLiteral("/out.json"), kMissingDir + QStringLiteral("/out.json"), kFullDevice}) {
      err.clear();
      QVERIFY(!write(app_->window, target, &err));
      QVERIFY2(err.startsWith(target + QStringLiteral(": ")), qPrintable(err));
      QVERIFY2(err.contains(QStringLiteral("cannot write")) || err.contains(QStringLiteral("write failed")),
               qPrintable(err));
    }
    QVERIFY(err.contains(QStringLiteral("No space left on device")));

    // The disk fills up half-way: the file from before stays whole.
    {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly) && f.write(kBefore) == kBefore.size());
    }
    {
      FileSizeLimit limit(512);
      QVERIFY(!write(app_->window, path, &err));
    }
    QVERIFY2(err.contains(QStringLiteral("File too large")), qPrintable(err));
    QCOMPARE(contents(path), kBefore);
    QCOMPARE(entries(dir.path()).size(), 1);

    // Nothing in the window changed.
    QCOMPARE(app_->window.trace(), before);
    QCOMPARE(app_->window.runs()->rowCount(), 1);
    QCOMPARE(app_->window.runs()->entry(0)->status, RunStatus::Opened);
    if (kind == QLatin1String("run")) QVERIFY(app_->window.runs()->entry(0)->saved);  // from the write that worked
  }

  // A failed save does not mark the run saved.
  void failedSaveIsNotMarkedSaved() {
    OpenWindow fresh;
    QVERIFY(fresh.open(kEngineTrace));
    QString err;
    QVERIFY(!fresh.window.saveRun(kFullDevice, &err, 0));
    QVERIFY(!fresh.window.runs()->entry(0)->saved);
    QVERIFY(!fresh.window.recentFiles().contains(kFullDevice));
  }

  // attnscope --screenshot FILE: the same for the PNG it writes.
  void screenshot() {
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("shot.png"));
    auto shoot = [](const QString& file, rlim_t fileLimit = RLIM_INFINITY) {
      QProcess p;
      if (fileLimit != RLIM_INFINITY)
        p.setChildProcessModifier([fileLimit] { FileSizeLimit::applyInChild(fileLimit); });
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
      p.setProcessEnvironment(env);
      p.start(QStringLiteral(ATTNSCOPE_GUI_EXE), {QStringLiteral("--screenshot"), file, kEngineTrace});
      p.waitForFinished(60000);
      return std::make_pair(p.exitCode(), QString::fromUtf8(p.readAllStandardError()));
    };
    for (const QString& target :
         {kUnwritableDir + QStringLiteral("/shot.png"), kMissingDir + QStringLiteral("/shot.png"), kFullDevice}) {
      const auto [code, err] = shoot(target);
      QVERIFY2(code == 2 && err.contains(target), qPrintable(QString("exit %1: %2").arg(code).arg(err)));
    }
    {
      QFile f(png);
      QVERIFY(f.open(QIODevice::WriteOnly) && f.write(kBefore) == kBefore.size());
    }
    const auto [code, err] = shoot(png, 512);
    QVERIFY2(code == 2 && err.contains(QStringLiteral("File too large")),
             qPrintable(QString("exit %1: %2").arg(code).arg(err)));
    QCOMPARE(contents(png), kBefore);
    QCOMPARE(entries(dir.path()), QStringList{QStringLiteral("shot.png")});
  }
};

QTEST_MAIN(WriteFaultsTest)
#include "test_write_faults.moc"
