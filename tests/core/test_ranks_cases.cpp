// The cases issue 42 lists, each as `attnscope-cli ranks` on disk sees them: generated jobs (tests/jobgen,
// truth from the construction) and the shared gloo sets made into the faults users hit (a truncated
// rank, a rank claimed twice, two jobs in one folder; TRUTH.json says who straggled). Each failed before
// the model of who waited for whom (the rule "last at more than half of a step's collectives"):
// ATTNSCOPE_CLI=/path/to/an/older/attnscope-cli test_ranks_cases runs them against another build.
#include <zlib.h>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "job_gen.h"
#include "test_json.h"

namespace {

const QString kSets = QStringLiteral(ATTNSCOPE_SHARED_TRACES "/multirank");

struct Out {
  int code = -1;
  QJsonObject json;
  QString err;
};

Out ranks(const QString& folder) {
  QString exe = qEnvironmentVariable("ATTNSCOPE_CLI");
  if (exe.isEmpty()) exe = QStringLiteral(ATTNSCOPE_BIN_DIR "/attnscope-cli");
  QProcess p;
  p.start(exe, {QStringLiteral("ranks"), folder, QStringLiteral("--format"), QStringLiteral("json"),
                QStringLiteral("--no-cache")});
  Out o;
  if (!p.waitForFinished(120000)) return o;
  o.code = p.exitCode();
  o.json = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
  o.err = QString::fromUtf8(p.readAllStandardError());
  return o;
}

QList<qint64> ranksOf(const jobgen::TrueStraggler& t) { return QList<qint64>(t.ranks.begin(), t.ranks.end()); }

QStringList stepsOf(const jobgen::Job& j, const jobgen::TrueStraggler& t) {
  QStringList s;
  for (int k : t.steps) s << QString::fromStdString(j.stepNames[static_cast<size_t>(k)]);
  return s;
}

QJsonObject truthOf(const QString& set) {
  QFile f(kSets + "/" + set + "/TRUTH.json");
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object()["injected"].toObject();
}

// The shared set's traces copied into `dir`, each name with `prefix`.
bool copySet(const QString& set, const QString& dir, const QString& prefix = {}) {
  bool ok = true;
  for (const QString& n : QDir(kSets + "/" + set).entryList({"rank-*.pt.trace.json.gz"}, QDir::Files))
    ok = ok && QFile::copy(kSets + "/" + set + "/" + n, dir + "/" + prefix + n);
  return ok;
}

// A straggler of the report with these ranks (nullptr: none).
const QJsonObject* find(const QJsonArray& stragglers, const QList<qint64>& ranks, QJsonObject* holder) {
  for (const QJsonValue& s : stragglers)
    if (ints(s.toObject()["ranks"]) == ranks) {
      *holder = s.toObject();
      return holder;
    }
  return nullptr;
}

}  // namespace

class RanksCasesTest : public QObject {
  Q_OBJECT

  // Writes a generated job and reads it back with the CLI.
  Out run(const jobgen::Job& j, QTemporaryDir& tmp) {
    if (!jobgen::writeJob(j, tmp.path().toStdString())) return {};
    return ranks(tmp.path());
  }

 private slots:
  void initTestCase() {
    if (!QDir(kSets).exists()) QSKIP("no ../shared/traces/multirank");
  }

  // One rank 40 ms late in every step of a 32-rank NCCL job with 8 collectives a step: the ranks are
  // back in step after the first collective, so it is last at one collective in eight.
  void persistentStragglerEightCollectives() {
    jobgen::Options o;
    o.form = "one", o.backend = "nccl", o.world = 32, o.collectives = 8, o.tp = 1, o.persistent = 1;
    o.lateNs = 40'000'000, o.steps = 6;
    const jobgen::Job j = jobgen::generate(4201, o);
    QTemporaryDir tmp;
    const Out out = run(j, tmp);
    QCOMPARE(out.code, 0);
    const QJsonArray st = out.json["stragglers"].toArray();
    QCOMPARE(st.size(), 1);
    const QJsonObject s = st.first().toObject();
    QCOMPARE(ints(s["ranks"]), ranksOf(j.stragglers.front()));
    QCOMPARE(strings(s["steps"]), stepsOf(j, j.stragglers.front()));
    QVERIFY(s["persistent"].toBool());
    QVERIFY2(std::abs(s["late_ns"].toDouble() - 40e6) < 2e6, qPrintable(QString::number(s["late_ns"].toDouble())));
    QCOMPARE(s["cause"].toString(), QStringLiteral("slow_region"));
    QCOMPARE(s["region"].toString().toStdString(), j.stragglers.front().cause);
    const QString h = out.json["headline"].toString();
    QVERIFY2(
        h.startsWith(QStringLiteral("What costs this job most: rank %1 ").arg(j.stragglers.front().ranks.front())) &&
            h.contains(QStringLiteral("held the others up on %1 of 6 steps").arg(j.stragglers.front().steps.size())),
        qPrintable(h));
  }

  // Two ranks late on different steps: both named, each with its own steps.
  void twoStragglersOnDifferentSteps() {
    jobgen::Options o;
    o.form = "two", o.backend = "nccl", o.world = 8, o.collectives = 4, o.tp = 1, o.steps = 8;
    const jobgen::Job j = jobgen::generate(4202, o);
    QTemporaryDir tmp;
    const Out out = run(j, tmp);
    QCOMPARE(out.code, 0);
    const QJsonArray st = out.json["stragglers"].toArray();
    QCOMPARE(st.size(), 2);
    for (const jobgen::TrueStraggler& t : j.stragglers) {
      QJsonObject s;
      QVERIFY2(find(st, ranksOf(t), &s), qPrintable(QString::number(t.ranks.front())));
      QCOMPARE(strings(s["steps"]), stepsOf(j, t));
      QVERIFY(!s["persistent"].toBool());
    }
  }

  // The four ranks of one host late together: one set, named by its host.
  void nodeOfFourLateTogether() {
    jobgen::Options o;
    o.form = "node", o.backend = "nccl", o.world = 16, o.collectives = 6, o.tp = 1, o.hostIn = "trace";
    const jobgen::Job j = jobgen::generate(4203, o);
    QTemporaryDir tmp;
    const Out out = run(j, tmp);
    QCOMPARE(out.code, 0);
    const QJsonArray st = out.json["stragglers"].toArray();
    QCOMPARE(st.size(), 1);
    const QJsonObject s = st.first().toObject();
    const jobgen::TrueStraggler& t = j.stragglers.front();
    QCOMPARE(ints(s["ranks"]), ranksOf(t));
    QCOMPARE(strings(s["steps"]), stepsOf(j, t));
    const QString host = QString::fromStdString(j.hosts[static_cast<size_t>(t.ranks.front())]);
    QCOMPARE(s["host"].toString(), host);
    QVERIFY(s["whole_host"].toBool());
    const QString who = QStringLiteral("ranks %1-%2 (one host: %3").arg(t.ranks.front()).arg(t.ranks.back()).arg(host);
    QVERIFY2(s["who"].toString().startsWith(who), qPrintable(s["who"].toString()));
    QVERIFY2(out.json["headline"].toString().contains(who), qPrintable(out.json["headline"].toString()));
  }

  // A tensor-parallel pair with a slow link: torch lists each pair's process group only on its members,
  // which is one job; the pair is the straggler and the cause is its group's collective.
  void subgroupPair_data() {
    QTest::addColumn<QString>("backend");
    QTest::newRow("nccl") << "nccl";
    QTest::newRow("gloo") << "gloo";
  }
  void subgroupPair() {
    QFETCH(QString, backend);
    jobgen::Options o;
    o.form = "link", o.backend = backend.toStdString(), o.world = 8, o.tp = 2, o.collectives = 5;
    const jobgen::Job j = jobgen::generate(4204, o);
    QTemporaryDir tmp;
    const Out out = run(j, tmp);
    QCOMPARE(out.code, 0);
    for (const QJsonValue& f : out.json["findings"].toArray())
      QVERIFY2(f.toObject()["kind"].toString() != "mixed_job", qPrintable(f.toObject()["text"].toString()));
    QVERIFY(!out.json["headline"].toString().startsWith("These files are not one job"));
    // The merged groups: the default, 4 pairs, 2 data-parallel groups of 4.
    QCOMPARE(out.json["groups"].toArray().size(), 7);
    const jobgen::TrueStraggler& t = j.stragglers.front();
    const QJsonArray st = out.json["stragglers"].toArray();
    QCOMPARE(st.size(), 1);
    const QJsonObject s = st.first().toObject();
    QCOMPARE(ints(s["ranks"]), ranksOf(t));
    QCOMPARE(strings(s["steps"]), stepsOf(j, t));
    QCOMPARE(s["cause"].toString(), QStringLiteral("slow_collective"));
    QCOMPARE(s["group"].toString().toStdString(), t.group);
    QVERIFY(s["collective_ns"].toDouble() - s["others_collective_ns"].toDouble() > 0.8 * static_cast<double>(t.lateNs));
  }

  // gloo_ddp4_straggler with rank 2's file cut at 80% of its JSON (a job killed while writing): exit 0,
  // the truncation said in the headline and in ranks[].truncated, no hang made up of the file's end, and
  // the straggler of TRUTH.json still found.
  void truncatedRank() {
    QTemporaryDir tmp;
    QVERIFY(copySet("gloo_ddp4_straggler", tmp.path()));
    const QByteArray whole = gunzip(tmp.filePath("rank-2.pt.trace.json.gz"));
    QVERIFY(whole.size() > 100000);
    QVERIFY(QFile::remove(tmp.filePath("rank-2.pt.trace.json.gz")));
    QFile cut(tmp.filePath("rank-2.pt.trace.json"));
    QVERIFY(cut.open(QIODevice::WriteOnly));
    cut.write(whole.left(whole.size() * 8 / 10));
    cut.close();
    const Out out = ranks(tmp.path());
    QCOMPARE(out.code, 0);
    QVERIFY(out.json["hangs"].toArray().isEmpty());
    for (const QJsonValue& f : out.json["findings"].toArray())
      QVERIFY2(!f.toObject()["text"].toString().contains("never issued"), qPrintable(f.toObject()["text"].toString()));
    const QJsonObject r2 = out.json["ranks"].toArray()[2].toObject();
    QCOMPARE(r2["rank"].toInteger(), 2);
    const QJsonObject tr = r2["truncated"].toObject();
    QVERIFY(tr["reader"].toString().contains("ends early"));
    QVERIFY(!tr["last_complete_step"].toString().isEmpty());
    QVERIFY(out.json["ranks"].toArray()[0].toObject()["truncated"].isNull());
    QVERIFY2(out.json["headline"].toString().startsWith("Rank 2's trace is truncated"),
             qPrintable(out.json["headline"].toString()));
    // The clock: every rank shares the host's clock (TRUTH.json): no offset applied.
    for (const QJsonValue& v : out.json["clock"].toObject()["offsets_ns"].toObject()) QCOMPARE(v.toInteger(), 0);
    const QJsonObject inj = truthOf("gloo_ddp4_straggler");
    const QJsonArray st = out.json["stragglers"].toArray();
    QCOMPARE(st.size(), 1);
    QCOMPARE(st.first().toObject()["rank"].toInteger(), inj["rank"].toInteger());
    QCOMPARE(strings(st.first().toObject()["steps"]), strings(inj["profiler_step_names"]));
  }

  // The straggler's rank claimed twice: by a copy of its file, and by an older run's file for that rank.
  // The finding says which file is used and why; the straggler of TRUTH.json is still found.
  void duplicateRank() {
    const QJsonObject inj = truthOf("gloo_ddp4_straggler");
    QTemporaryDir tmp;
    QVERIFY(copySet("gloo_ddp4_straggler", tmp.path()));
    QVERIFY(QFile::copy(tmp.filePath("rank-2.pt.trace.json.gz"), tmp.filePath("rank-2 (1).pt.trace.json.gz")));
    Out out = ranks(tmp.path());
    QCOMPARE(out.code, 0);
    QJsonObject dup;
    for (const QJsonValue& f : out.json["findings"].toArray())
      if (f.toObject()["kind"].toString() == "duplicate_rank") dup = f.toObject();
    QCOMPARE(ints(dup["ranks"]), QList<qint64>{2});
    QVERIFY2(dup["text"].toString().contains("copies of one trace"), qPrintable(dup["text"].toString()));
    QCOMPARE(out.json["stragglers"].toArray().size(), 1);
    QCOMPARE(out.json["stragglers"].toArray()[0].toObject()["rank"].toInteger(), inj["rank"].toInteger());
    QCOMPARE(strings(out.json["stragglers"].toArray()[0].toObject()["steps"]), strings(inj["profiler_step_names"]));
    // An older run's rank 2 (gloo_ddp4_clean ran 18 s before) beside it: the file whose time matches the
    // other ranks' is used.
    QVERIFY(QFile::remove(tmp.filePath("rank-2 (1).pt.trace.json.gz")));
    QVERIFY(
        QFile::copy(kSets + "/gloo_ddp4_clean/rank-2.pt.trace.json.gz", tmp.filePath("old-rank-2.pt.trace.json.gz")));
    out = ranks(tmp.path());
    QCOMPARE(out.code, 0);
    dup = {};
    for (const QJsonValue& f : out.json["findings"].toArray())
      if (f.toObject()["kind"].toString() == "duplicate_rank") dup = f.toObject();
    QVERIFY2(dup["text"].toString().contains(tmp.filePath("rank-2.pt.trace.json.gz") + " is used: its time matches"),
             qPrintable(dup["text"].toString()));
    QVERIFY(dup["text"].toString().contains("old-rank-2.pt.trace.json.gz ran"));
    QCOMPARE(out.json["stragglers"].toArray().size(), 1);
    QCOMPARE(out.json["stragglers"].toArray()[0].toObject()["rank"].toInteger(), inj["rank"].toInteger());
  }

  // Two jobs in one folder (gloo_ddp4_clean, then gloo_ddp4_straggler 18 s later): said, and the later
  // one analysed.
  void twoJobsInOneFolder() {
    QTemporaryDir tmp;
    QVERIFY(copySet("gloo_ddp4_clean", tmp.path(), "a-"));
    QVERIFY(copySet("gloo_ddp4_straggler", tmp.path(), "b-"));
    const Out out = ranks(tmp.path());
    QCOMPARE(out.code, 0);
    QJsonObject two;
    for (const QJsonValue& f : out.json["findings"].toArray())
      if (f.toObject()["kind"].toString() == "two_jobs") two = f.toObject();
    QVERIFY2(!two.isEmpty(), qPrintable(out.json["headline"].toString()));
    QVERIFY(two["text"].toString().contains("analysed: ranks 0-3 (4 files: " + tmp.filePath("b-rank-0")));
    QVERIFY(out.json["headline"].toString().startsWith("More than one job in these files"));
    QCOMPARE(out.json["ranks"].toArray().size(), 4);
    for (const QJsonValue& r : out.json["ranks"].toArray())
      QVERIFY(r.toObject()["file"].toString().contains("/b-rank-"));
    QCOMPARE(out.json["stragglers"].toArray()[0].toObject()["rank"].toInteger(),
             truthOf("gloo_ddp4_straggler")["rank"].toInteger());
  }

  // Rank 0's clock 15 ms ahead of the three others': the offset is said on rank 0, against the clock the
  // others share.
  void clockOffsetOnTheRankThatIsOff() {
    jobgen::Options o;
    o.form = "none", o.world = 4, o.clockShift = 0, o.shiftRank = 0, o.shiftNs = 15'000'000;
    const jobgen::Job j = jobgen::generate(4205, o);
    QTemporaryDir tmp;
    const Out out = run(j, tmp);
    QCOMPARE(out.code, 0);
    const QJsonObject clock = out.json["clock"].toObject();
    QCOMPARE(clock["reference_rank"].toInteger(), 1);
    const QJsonObject off = clock["offsets_ns"].toObject();
    // The truth: rank 0's clock minus the others' (theirs differ by a few us at most).
    const double want = static_cast<double>(j.clockNs[0] - j.clockNs[1]);
    QVERIFY2(std::abs(off["0"].toDouble() - want) < 20e3, qPrintable(QString::number(off["0"].toDouble())));
    for (const char* k : {"1", "2", "3"}) QCOMPARE(off[k].toInteger(), 0);
    const QString h = out.json["headline"].toString();
    QVERIFY2(h.contains("Clocks: rank 0's clock is 15.0") && h.contains("ahead of rank 1's"), qPrintable(h));
    QVERIFY(!h.contains("rank 2's clock") && !h.contains("rank 3's clock"));
  }
};

QTEST_GUILESS_MAIN(RanksCasesTest)
#include "test_ranks_cases.moc"
