// attnscope-cli as a user runs it: exit codes, messages, formats, atomic -o.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "cli_run.h"

namespace {

const QString kSoftmax = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_8x16x1024x64.json");

}  // namespace

class CliTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QVERIFY2(QFile::exists(kSoftmax), qPrintable("missing " + kSoftmax)); }

  void tableJsonMatchesTheDocumentedShape() {
    Run r = cli({"table", kSoftmax, "--format", "json"});
    QCOMPARE(r.code, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o["attribution"].toString(), QString("torch"));
    QVERIFY(o["columns"].isArray());
    const QJsonArray rows = o["rows"].toArray();
    QCOMPARE(rows.size(), 38);  // torch's key_averages() has 38 rows for this capture
    bool sawGpuSpan = false;
    for (const auto& v : rows) {
      const QJsonObject row = v.toObject();
      for (const char* k :
           {"name", "device_type", "input_shapes", "calls", "self_cpu_us", "cpu_total_us", "self_device_us",
            "device_total_us", "cpu_mem_bytes", "self_cpu_mem_bytes", "device_mem_bytes", "self_device_mem_bytes"})
        QVERIFY2(row.contains(k), k);
      if (row["name"] == "SOFTMAX PASS" && row["device_type"] == "cuda") {
        sawGpuSpan = true;
        QCOMPARE(row["self_device_us"].toDouble(), 259.263);
      }
    }
    QVERIFY(sawGpuSpan);
    // Default sort: Self CUDA descending.
    QVERIFY(rows[0].toObject()["self_device_us"].toDouble() >= rows[1].toObject()["self_device_us"].toDouble());
  }

  void textLooksLikeTorch() {
    Run r = cli({"table", kSoftmax, "--limit", "3"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains("Self CPU %"));
    QVERIFY(r.out.contains("# of Calls"));
    // torch's own first row for this capture (its printed table):
    QVERIFY(r.out.contains("MULTIHEAD_ATTENTION_FULL         0.00%       0.000us"));
    QVERIFY(r.out.contains("108.54%"));
    QVERIFY(r.out.contains("Self CUDA time total: 1.616ms"));
  }

  void groupByShapeAndSortAndCsv() {
    Run r = cli({"table", kSoftmax, "--group-by", "shape", "--sort", "calls", "--format", "csv"});
    QCOMPARE(r.code, 0);
    const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 1 + 48);  // header + torch's 48 by-shape rows
    QVERIFY(lines[0].startsWith("name,device_type,family,input_shapes,calls,"));
    QVERIFY(r.out.contains("\"[[8, 16, 1024, 64], [], []]\""));
    Run md = cli({"table", kSoftmax, "--format", "md", "--limit", "2"});
    QCOMPARE(md.code, 0);
    QVERIFY(md.out.startsWith("| Name | Self CPU % |"));
  }

  void outputFileIsWrittenAtomically() {
    QTemporaryDir dir;
    const QString out = dir.filePath("t.json");
    Run r = cli({"table", kSoftmax, "--format", "json", "-o", out});
    QCOMPARE(r.code, 0);
    QVERIFY(QFile::exists(out));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);  // no temp left
    Run bad = cli({"table", kSoftmax, "-o", dir.filePath("no/such/dir/t.json")});
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains("no/such/dir/t.json"), qPrintable(bad.err));
    Run full = cli({"table", kSoftmax, "-o", "/dev/full"});
    QVERIFY(full.code == 2);
  }

  void usageErrorsExit2_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expect");
    QTest::newRow("no command") << QStringList{} << "usage";
    QTest::newRow("unknown command") << QStringList{"frobnicate"} << "unknown command";
    QTest::newRow("missing trace") << QStringList{"table"} << "missing argument";
    QTest::newRow("bad group") << QStringList{"table", kSoftmax, "--group-by", "x"} << "--group-by";
    QTest::newRow("bad sort") << QStringList{"table", kSoftmax, "--sort", "nope"} << "unknown column";
    QTest::newRow("bad format") << QStringList{"table", kSoftmax, "--format", "xml"} << "--format";
    QTest::newRow("bad limit") << QStringList{"table", kSoftmax, "--limit", "-3"} << "--limit";
    QTest::newRow("unknown option") << QStringList{"info", kSoftmax, "--frob"} << "unknown option";
  }
  void usageErrorsExit2() {
    QFETCH(QStringList, args);
    QFETCH(QString, expect);
    Run r = cli(args);
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(expect), qPrintable(r.err));
  }

  void helpOnEveryCommand() {
    for (const char* c : {"table", "info"}) {
      Run r = cli({c, "--help"});
      QCOMPARE(r.code, 0);
      QVERIFY(r.out.startsWith(QString("usage: attnscope-cli ") + c));
    }
  }

  // The hostile corpus: every file gives its documented outcome, fast.
  void malformedCorpus_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("expect");
    QTest::addColumn<QStringList>("extra");
    const QString dir = QStringLiteral(ATTNSCOPE_TEST_DATA "/malformed");
    QFile m(dir + "/MANIFEST.tsv");
    QVERIFY2(m.open(QIODevice::ReadOnly), qPrintable("missing " + m.fileName()));
    int n = 0;
    for (const QByteArray& raw : m.readAll().split('\n')) {
      const QString line = QString::fromUtf8(raw);
      if (line.trimmed().isEmpty() || line.startsWith('#')) continue;
      const QStringList f = line.split('\t');
      QVERIFY2(f.size() >= 4, qPrintable("bad MANIFEST line: " + line));
      const QString path = f[0] == "." ? dir : dir + "/" + f[0];
      const QStringList extra =
          f.size() > 4 && !f[4].trimmed().isEmpty() ? f[4].split(' ', Qt::SkipEmptyParts) : QStringList{};
      QTest::newRow(qPrintable(f[0] + " — " + f[3])) << path << f[1].toInt() << f[2] << extra;
      ++n;
    }
    QVERIFY2(n >= 30, "the hostile corpus needs at least 30 files");
  }
  void malformedCorpus() {
    QFETCH(QString, file);
    QFETCH(int, code);
    QFETCH(QString, expect);
    QFETCH(QStringList, extra);
    QElapsedTimer t;
    t.start();
    Run r = cli(QStringList{"info", file} + extra);
    QVERIFY2(t.elapsed() < 5000, "took longer than 5 s");
    QVERIFY2(r.code == code, qPrintable(QString("exit %1, stderr: %2").arg(r.code).arg(r.err)));
    if (expect.startsWith("stderr:")) expect = expect.mid(7);
    if (expect.startsWith("stdout:")) {
      QVERIFY2(r.out.contains(expect.mid(7), Qt::CaseInsensitive), qPrintable(r.out));
    } else if (!expect.isEmpty()) {
      QVERIFY2(r.err.contains(expect, Qt::CaseInsensitive), qPrintable(r.err));
    }
    if (code == 2) {
      QVERIFY2(r.err.contains(QFileInfo(file).fileName()), qPrintable("message must name the file: " + r.err));
      return;
    }
    // What loads must also survive everything that walks the store (nesting,
    // links, ids, steps): the table both ways, the explanation, compare.
    const QStringList walks[] = {{"table", file, "--group-by", "shape"},
                                 {"table", file, "--attribution", "corrected"},
                                 {"explain", file, "--format", "json"},
                                 {"compare", file, file}};
    for (const QStringList& w : walks) {
      t.restart();
      Run a = cli(w + extra);
      QVERIFY2(t.elapsed() < 5000, qPrintable(w.join(' ') + " took longer than 5 s"));
      QVERIFY2(a.code == 0, qPrintable(QString("%1: exit %2, stderr: %3").arg(w[0]).arg(a.code).arg(a.err)));
    }
  }
};

QTEST_GUILESS_MAIN(CliTest)
#include "test_cli.moc"
