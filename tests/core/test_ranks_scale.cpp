// Issue 34's "Scale": per-rank summaries as Arrow IPC files (core/ranks/arrow_ipc.h) cached next to the
// traces (core/ranks/summary_cache.h), made by worker processes (attnscope-cli ranks --jobs N).
// The format is checked by readers that are not ours: tests/data/ranks_arrow_read.py reads every file
// with pyarrow, pandas and DuckDB (skipped, saying why, when they are not importable).
#include <sys/stat.h>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <limits>

#include "cli_run.h"
#include "core/ranks/arrow_ipc.h"
#include "core/ranks/job.h"
#include "core/ranks/summary_cache.h"

using namespace attnscope;

namespace {

const QString kStraggler = QStringLiteral(ATTNSCOPE_SHARED_TRACES "/multirank/gloo_ddp4_straggler");

// The set's traces copied into `dir` (a writable folder of their own).
QStringList copyTraces(const QString& from, const QString& dir) {
  QStringList out;
  for (const QString& n : QDir(from).entryList({"*trace*.json*"}, QDir::Files, QDir::Name)) {
    QFile::copy(from + "/" + n, dir + "/" + n);
    out << dir + "/" + n;
  }
  return out;
}

Run cliEnv(const QStringList& args, const QString& cacheDir) {
  qputenv("ATTNSCOPE_CACHE_DIR", cacheDir.toUtf8());
  Run r = cli(args, 120000);
  qunsetenv("ATTNSCOPE_CACHE_DIR");
  return r;
}

ipc::Table sample(size_t rows) {
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::vector<bool> bools;
  for (size_t i = 0; i < rows; ++i) {
    ints.push_back(i % 3 == 0 ? std::numeric_limits<int64_t>::min() + static_cast<int64_t>(i)
                              : static_cast<int64_t>(i * 1000003));
    floats.push_back(i % 5 == 0 ? -0.5 * static_cast<double>(i) : std::ldexp(1.0, static_cast<int>(i % 60)) / 3);
    strings.push_back(i % 4 == 0 ? std::string() : "r\xc3\xa9gion " + std::to_string(i) + std::string(i % 13, 'x'));
    bools.push_back(i % 3 == 1);
  }
  ipc::Table t;
  t.columns = {ipc::int64Column("i", ints), ipc::float64Column("f", floats), ipc::utf8Column("s", strings),
               ipc::boolColumn("b", bools)};
  t.metadata = {{"k", "v"}, {"trace_size", "123"}};
  return t;
}

}  // namespace

class RanksScaleTest : public QObject {
  Q_OBJECT

 private slots:
  // Write then read gives the same table: every type, empty strings, UTF-8, extremes, 0/1/1000 rows;
  // the file has the Arrow IPC file layout (magic at both ends, 8-byte aligned body).
  void arrowRoundTrip() {
    for (size_t rows : {size_t{0}, size_t{1}, size_t{9}, size_t{1000}}) {
      const ipc::Table t = sample(rows);
      std::string error;
      const std::string bytes = ipc::encodeFile(t, &error);
      QVERIFY2(error.empty(), error.c_str());
      QCOMPARE(bytes.substr(0, 8), std::string("ARROW1\0\0", 8));
      QCOMPARE(bytes.substr(bytes.size() - 6), std::string("ARROW1"));
      QCOMPARE(bytes.size() % 2, size_t{0});
      ipc::Table back;
      QVERIFY2(ipc::decodeFile(bytes, &back, &error), error.c_str());
      QCOMPARE(back.rows(), static_cast<int64_t>(rows));
      QVERIFY(back == t);
    }
    // A table with no column at all, and columns of unequal length.
    ipc::Table none, back;
    std::string error;
    QVERIFY(ipc::decodeFile(ipc::encodeFile(none, &error), &back, &error));
    QCOMPARE(back.columns.size(), size_t{0});
    ipc::Table bad;
    bad.columns = {ipc::int64Column("a", {1, 2}), ipc::int64Column("b", {1})};
    QVERIFY(ipc::encodeFile(bad, &error).empty());
    QVERIFY(error.find("column 'b'") != std::string::npos);
  }

  // Damaged files give an error, never a crash: every truncation, and flipped bytes.
  void arrowDamaged() {
    std::string error;
    const std::string bytes = ipc::encodeFile(sample(40), &error);
    ipc::Table t;
    for (size_t n = 0; n < bytes.size(); n += 7) {
      const std::string cut = bytes.substr(0, n);
      QVERIFY(!ipc::decodeFile(cut, &t, &error));
      QVERIFY(!error.empty());
    }
    for (size_t at = 8; at < bytes.size() - 6; at += 3) {
      std::string b = bytes;
      b[at] = static_cast<char>(b[at] ^ 0x5a);
      ipc::decodeFile(b, &t, &error);  // may read or fail; must not crash
    }
    QVERIFY(!ipc::readFile("/nonexistent/x.arrow", &t, &error));
    QVERIFY(error.find("/nonexistent/x.arrow") != std::string::npos);
  }

  // A real rank's summary through the tables and back: the same tables, and the job analysis of the
  // read-back summaries equals the analysis of the summaries made from the traces.
  void summaryRoundTrip() {
    if (!QDir(kStraggler).exists()) QSKIP("no ../shared/traces/multirank");
    std::vector<ranks::RankSummary> made, back;
    for (const QString& f : QDir(kStraggler).entryList({"rank-*.pt.trace.json.gz"}, QDir::Files, QDir::Name)) {
      const std::string path = (kStraggler + "/" + f).toStdString();
      ranks::RankSummary s, r;
      std::string error, warning;
      QVERIFY2(ranks::summarizeFile(path, {}, &s, &error, &warning), error.c_str());
      const ranks::TraceStamp stamp{1, 2};
      std::vector<std::pair<std::string, ipc::Table>> tables;
      for (const auto& [name, table] : ranks::summaryTables(s, stamp)) {
        ipc::Table t;
        QVERIFY2(ipc::decodeFile(ipc::encodeFile(table, &error), &t, &error), error.c_str());
        tables.emplace_back(name, std::move(t));
      }
      QVERIFY2(ranks::summaryFromTables(tables, &r, &error), error.c_str());
      QVERIFY(ranks::summaryTables(r, stamp) == ranks::summaryTables(s, stamp));
      QCOMPARE(r.collectives.size(), size_t{12});  // ranks_reference.py: 12 collectives on every rank
      made.push_back(std::move(s));
      back.push_back(std::move(r));
    }
    QCOMPARE(made.size(), size_t{4});
    QCOMPARE(ranks::jobJson(ranks::analyzeJob(back)), ranks::jobJson(ranks::analyzeJob(made)));
  }

  // attnscope-cli ranks with workers writes the cache next to the traces; the second run reads only the
  // cache; both equal the in-process run with no cache; a changed trace is summarised again.
  void cacheNextToTraces() {
    if (!QDir(kStraggler).exists()) QSKIP("no ../shared/traces/multirank");
    QTemporaryDir tmp, cache;
    const QStringList traces = copyTraces(kStraggler, tmp.path());
    QCOMPARE(traces.size(), 4);
    const Run plain = cliEnv({"ranks", tmp.path(), "--format", "json", "--no-cache"}, cache.path());
    QCOMPARE(plain.code, 0);
    QVERIFY(!QDir(traces[0] + ".attnscope").exists());
    const Run cold = cliEnv({"ranks", tmp.path(), "--format", "json", "--jobs", "2", "--stats"}, cache.path());
    QCOMPARE(cold.code, 0);
    QVERIFY2(cold.err.contains("0 summaries from the cache, 4 made by 2 worker processes"), qPrintable(cold.err));
    for (const QString& t : traces) QCOMPARE(QDir(t + ".attnscope").entryList({"*.arrow"}, QDir::Files).size(), 7);
    QCOMPARE(cold.out, plain.out);
    const Run warm = cliEnv({"ranks", tmp.path(), "--format", "json", "--stats", "--cache-only"}, cache.path());
    QCOMPARE(warm.code, 0);
    QVERIFY2(warm.err.contains("4 summaries from the cache, 0 made"), qPrintable(warm.err));
    QCOMPARE(warm.out, plain.out);
    // The straggler (TRUTH.json: rank 2) is found from the cached summaries.
    const QJsonObject j = QJsonDocument::fromJson(warm.out.toUtf8()).object();
    QCOMPARE(j["stragglers"].toArray()[0].toObject()["rank"].toInteger(), 2);
    // A changed trace (its mtime) is summarised again, the others not.
    QFile f(traces[1]);
    QVERIFY(f.open(QIODevice::ReadWrite));
    f.setFileTime(QDateTime::currentDateTime().addSecs(5), QFileDevice::FileModificationTime);
    f.close();
    const Run again = cliEnv({"ranks", tmp.path(), "--format", "json", "--stats"}, cache.path());
    QVERIFY2(again.err.contains("3 summaries from the cache, 1 made"), qPrintable(again.err));
    QCOMPARE(again.out, plain.out);
    // --cache-only names a trace whose summary is stale; a damaged cache file is made again.
    f.open(QIODevice::ReadWrite);
    f.setFileTime(QDateTime::currentDateTime().addSecs(9), QFileDevice::FileModificationTime);
    f.close();
    const Run only = cliEnv({"ranks", tmp.path(), "--cache-only"}, cache.path());
    QCOMPARE(only.code, 2);
    QVERIFY2(only.err.contains(traces[1]) && only.err.contains("stale"), qPrintable(only.err));
    QFile steps(traces[2] + ".attnscope/steps.arrow");
    QVERIFY(steps.open(QIODevice::WriteOnly | QIODevice::Truncate));
    steps.write("ARROW1 not really");
    steps.close();
    const Run fixed = cliEnv({"ranks", tmp.path(), "--format", "json", "--stats", "--jobs", "1"}, cache.path());
    QVERIFY2(fixed.err.contains("2 summaries from the cache, 2 made here"), qPrintable(fixed.err));
    QCOMPARE(fixed.out, plain.out);
  }

  // A read-only trace folder: the summaries go to the user cache ($ATTNSCOPE_CACHE_DIR), and it is said.
  void readOnlyFolderFallsBack() {
    if (!QDir(kStraggler).exists()) QSKIP("no ../shared/traces/multirank");
    QTemporaryDir tmp, cache;
    const QStringList traces = copyTraces(kStraggler, tmp.path());
    QVERIFY(::chmod(tmp.path().toUtf8().constData(), 0555) == 0);
    const Run r = cliEnv({"ranks", tmp.path(), "--format", "json", "--jobs", "2", "--stats"}, cache.path());
    const Run warm = cliEnv({"ranks", tmp.path(), "--format", "json", "--stats"}, cache.path());
    const Run one = cliEnv({"ranks", "--summarize", traces[0]}, cache.path());
    ::chmod(tmp.path().toUtf8().constData(), 0755);
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.contains("is read-only: summaries are cached under " + cache.path()), qPrintable(r.err));
    QVERIFY(!QDir(traces[0] + ".attnscope").exists());
    QCOMPARE(QDir(cache.path()).entryList({"*.attnscope"}, QDir::Dirs).size(), 4);
    QVERIFY2(warm.err.contains("4 summaries from the cache"), qPrintable(warm.err));
    QCOMPARE(warm.out, r.out);
    // --summarize: one rank, its cache folder on stdout.
    QCOMPARE(one.code, 0);
    QVERIFY(one.out.trimmed().startsWith(cache.path()));
    const Run bad = cliEnv({"ranks", "--summarize", tmp.path() + "/nope.json"}, cache.path());
    QCOMPARE(bad.code, 2);
    QVERIFY(bad.err.contains("nope.json"));
  }

  // Readers that are not ours: pyarrow reads every table of every rank with the values our reader
  // reads; pandas.read_feather the same rows; DuckDB counts each rank's collectives as the raw events
  // do (ranks_reference.py: 12 on every rank).
  void pyarrowPandasDuckdbRead() {
    if (!QDir(kStraggler).exists()) QSKIP("no ../shared/traces/multirank");
    QTemporaryDir tmp, cache;
    const QStringList traces = copyTraces(kStraggler, tmp.path());
    QCOMPARE(cliEnv({"ranks", tmp.path(), "--jobs", "2"}, cache.path()).code, 0);
    QStringList dirs;
    for (const QString& t : traces) dirs << t + ".attnscope";
    QProcess p;
    p.start("python3", QStringList{QStringLiteral(ATTNSCOPE_TEST_DATA "/ranks_arrow_read.py")} + dirs);
    QVERIFY(p.waitForFinished(120000));
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    if (p.exitCode() == 77) QSKIP(qPrintable(out.trimmed()));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    const QJsonObject j = QJsonDocument::fromJson(out.toUtf8()).object();
    int cells = 0;
    for (const QString& d : dirs) {
      const QJsonObject tables = j["folders"].toObject()[d].toObject();
      QCOMPARE(tables.size(), 7);
      for (const QString& name : tables.keys()) {
        ipc::Table ours;
        std::string error;
        QVERIFY2(ipc::readFile((d + "/" + name + ".arrow").toStdString(), &ours, &error), error.c_str());
        const QJsonObject theirs = tables[name].toObject();
        QCOMPARE(theirs["rows"].toInteger(), ours.rows());
        QCOMPARE(theirs["pandas_rows"].toInteger(), ours.rows());
        QCOMPARE(theirs["metadata"].toObject()["trace_size"].toString().toStdString(), ours.meta("trace_size"));
        const QJsonObject cols = theirs["columns"].toObject();
        QCOMPARE(cols.size(), static_cast<qsizetype>(ours.columns.size()));
        for (const ipc::Column& c : ours.columns) {
          const QJsonObject col = cols[QString::fromStdString(c.name)].toObject();
          const QJsonArray v = col["values"].toArray();
          QCOMPARE(v.size(), static_cast<qsizetype>(c.size()));
          const QString type = col["type"].toString();
          for (qsizetype i = 0; i < v.size(); ++i, ++cells) {
            const auto k = static_cast<size_t>(i);
            switch (c.type) {
              case ipc::ColumnType::Int64:
                QCOMPARE(type, "int64");
                QCOMPARE(v[i].toInteger(), c.ints[k]);
                break;
              case ipc::ColumnType::Float64:
                QCOMPARE(type, "double");
                QCOMPARE(v[i].toDouble(), c.floats[k]);
                break;
              case ipc::ColumnType::Utf8:
                QCOMPARE(type, "string");
                QCOMPARE(v[i].toString().toStdString(), c.strings[k]);
                break;
              case ipc::ColumnType::Bool:
                QCOMPARE(type, "bool");
                QCOMPARE(v[i].toBool(), c.bools[k]);
                break;
            }
          }
        }
      }
    }
    QVERIFY(cells > 500);
    const QJsonObject duck = j["duckdb_collectives"].toObject();
    QCOMPARE(duck.size(), 4);
    for (const char* r : {"0", "1", "2", "3"}) QCOMPARE(duck[QString::fromLatin1(r)].toInteger(), 12);
  }
};

QTEST_GUILESS_MAIN(RanksScaleTest)
#include "test_ranks_scale.moc"
