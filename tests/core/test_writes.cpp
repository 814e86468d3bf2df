// Every file attnscope-cli writes (-o of table, info, explain, why, compare)
// and the atomic write under it: an unwritable directory, a full device
// (/dev/full) and a disk that fills up half-way each give an error that names
// the file, exit 2, no partial or temp file, and the file that was there
// before left as it was.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "cli_run.h"
#include "core/write/atomic_file.h"
#include "write_faults.h"

using namespace writefaults;

namespace {

const QString kKineto = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto");
const QString kSoftmax = kKineto + QStringLiteral("/softmax_8x16x1024x64.json");
const QString kNone = kKineto + QStringLiteral("/none_8x16x1024x64.json");
const QByteArray kBefore = "the export that was here before\n";

// attnscope-cli with its files limited to `fileBytes`.
Run cliWithFileLimit(const QStringList& args, rlim_t fileBytes) {
  QProcess p;
  p.setChildProcessModifier([fileBytes] { FileSizeLimit::applyInChild(fileBytes); });
  p.start(QStringLiteral(ATTNSCOPE_BIN_DIR "/attnscope-cli"), args);
  Run r;
  if (!p.waitForFinished(30000)) {
    p.kill();
    p.waitForFinished();
    return r;
  }
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}

bool writeBefore(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly) && f.write(kBefore) == kBefore.size();
}

}  // namespace

class WritesTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QVERIFY2(QFile::exists(kSoftmax), qPrintable("missing " + kSoftmax)); }

  // writeFileAtomic itself.
  void atomicWriteReplacesOrLeavesAlone() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("out.csv"));
    std::string err;
    QVERIFY(attnscope::writeFileAtomic(path.toStdString(), "a,b\n", &err));
    QVERIFY(writeBefore(path));
    QVERIFY(attnscope::writeFileAtomic(path.toStdString(), "c,d\n", &err));
    QCOMPARE(contents(path), QByteArray("c,d\n"));
    QCOMPARE(entries(dir.path()), QStringList{QStringLiteral("out.csv")});

    // An unwritable directory, a missing one.
    for (const QString& d : {kUnwritableDir, kMissingDir}) {
      QVERIFY(!attnscope::writeFileAtomic((d + QStringLiteral("/out.csv")).toStdString(), "x", &err));
      QVERIFY2(QString::fromStdString(err).startsWith(d + QStringLiteral("/out.csv: cannot write (")), err.c_str());
    }
    // A directory where the file should be.
    QVERIFY(QDir().mkdir(dir.filePath(QStringLiteral("sub"))));
    QVERIFY(!attnscope::writeFileAtomic(dir.filePath(QStringLiteral("sub")).toStdString(), "x", &err));
    QVERIFY2(err.find("is a directory") != std::string::npos, err.c_str());
    // A full device.
    QVERIFY(!attnscope::writeFileAtomic(kFullDevice.toStdString(), "x", &err));
    QVERIFY2(err == "/dev/full: write failed (No space left on device)", err.c_str());
    // The disk fills up half-way: the old file stays whole, no temp file.
    QVERIFY(writeBefore(path));
    {
      FileSizeLimit limit(4096);
      QVERIFY(!attnscope::writeFileAtomic(path.toStdString(), std::string(1 << 20, 'x'), &err));
    }
    QVERIFY2(err.find("write failed (File too large)") != std::string::npos, err.c_str());
    QCOMPARE(contents(path), kBefore);
    QCOMPARE(entries(dir.path()), (QStringList{QStringLiteral("out.csv"), QStringLiteral("sub")}));
  }

  void everyOutputFile_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("table text") << QStringList{"table", kSoftmax};
    QTest::newRow("table csv") << QStringList{"table", kSoftmax, "--format", "csv"};
    QTest::newRow("table json") << QStringList{"table", kSoftmax, "--format", "json", "--group-by", "shape"};
    QTest::newRow("table md") << QStringList{"table", kSoftmax, "--format", "md"};
    QTest::newRow("info") << QStringList{"info", kSoftmax};
    QTest::newRow("info json") << QStringList{"info", kSoftmax, "--format", "json"};
    QTest::newRow("explain") << QStringList{"explain", kSoftmax};
    QTest::newRow("explain json") << QStringList{"explain", kSoftmax, "--format", "json"};
    QTest::newRow("why") << QStringList{"why", kSoftmax, "SOFTMAX PASS"};
    QTest::newRow("compare") << QStringList{"compare", kSoftmax, kNone};
    QTest::newRow("compare csv") << QStringList{"compare", kSoftmax, kNone, "--format", "csv"};
  }
  void everyOutputFile() {
    QFETCH(QStringList, args);
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("out.txt"));
    // It works, and leaves only its file.
    Run ok = cli(args + QStringList{"-o", out});
    QVERIFY2(ok.code == 0, qPrintable(ok.err));
    const QByteArray written = contents(out);
    QVERIFY(written.size() > 256);
    QCOMPARE(entries(dir.path()), QStringList{QStringLiteral("out.txt")});

    // An unwritable directory, a missing one: exit 2, the file named.
    for (const QString& d : {kUnwritableDir, kMissingDir}) {
      const QString nowhere = d + QStringLiteral("/out.txt");
      Run bad = cli(args + QStringList{"-o", nowhere});
      QCOMPARE(bad.code, 2);
      QVERIFY2(bad.err.contains(nowhere + QStringLiteral(": cannot write")), qPrintable(bad.err));
      QVERIFY(bad.out.isEmpty());
    }

    // A full device.
    Run full = cli(args + QStringList{"-o", kFullDevice});
    QCOMPARE(full.code, 2);
    QVERIFY2(full.err.contains(QStringLiteral("/dev/full: write failed (No space left on device)")),
             qPrintable(full.err));

    // The disk fills up while the file is written: the last good file stays.
    QVERIFY(writeBefore(out));
    Run cut = cliWithFileLimit(args + QStringList{"-o", out}, 256);
    QCOMPARE(cut.code, 2);
    QVERIFY2(cut.err.contains(out + QStringLiteral(": write failed (File too large)")), qPrintable(cut.err));
    QCOMPARE(contents(out), kBefore);
    QCOMPARE(entries(dir.path()), QStringList{QStringLiteral("out.txt")});
  }
};

QTEST_GUILESS_MAIN(WritesTest)
#include "test_writes.moc"
