// attnscope-cli ranks over every shared multi-rank set (../shared/traces/multirank) against its
// TRUTH.json and a reference computed from the raw events by tests/data/ranks_reference.py (json and
// gzip only), and over hand-made traces (tests/data/ranks, written by its make.py) with values by hand.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QtTest>
#include <algorithm>
#include <cmath>

#include "cli_run.h"
#include "core/ranks/rank_summary.h"
#include "test_json.h"

namespace {

const QString kSets = QStringLiteral(ATTNSCOPE_SHARED_TRACES "/multirank");
const QString kHand = QStringLiteral(ATTNSCOPE_TEST_DATA "/ranks");

QJsonObject ranksJson(const QString& path) {
  // --no-cache: every call summarises the traces again (a cache left by an earlier build would test that build).
  const Run r = cli({"ranks", path, "--format", "json", "--no-cache"}, 120000);
  if (r.code != 0) qWarning("%s", qPrintable(r.err));
  return QJsonDocument::fromJson(r.out.toUtf8()).object();
}

QJsonObject fileJson(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

}  // namespace

class RanksTest : public QObject {
  Q_OBJECT
  QJsonObject reference_;  // ranks_reference.py's output, by set

 private slots:
  void initTestCase() {
    if (!QDir(kSets).exists()) QSKIP("no ../shared/traces/multirank");
    QProcess p;
    p.start("python3", {QStringLiteral(ATTNSCOPE_TEST_DATA "/ranks_reference.py"), kSets});
    QVERIFY(p.waitForFinished(120000));
    QCOMPARE(p.exitCode(), 0);
    reference_ = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
    QVERIFY(reference_.contains("gloo_ddp4_clean"));
  }

  // Every set: each rank's collectives as many as the raw events hold, and every one matched on every
  // rank but the hang's.
  void collectivesMatchedOnEveryRank_data() {
    QTest::addColumn<QString>("set");
    for (const QString& s : QDir(kSets).entryList(QDir::Dirs | QDir::NoDotAndDotDot))
      if (s != "gen") QTest::newRow(qPrintable(s)) << s;
  }
  void collectivesMatchedOnEveryRank() {
    QFETCH(QString, set);
    const QJsonObject j = ranksJson(kSets + "/" + set);
    const QJsonObject ref = reference_[set].toObject()["ranks"].toObject();
    const QJsonObject per = j["collectives"].toObject()["per_rank"].toObject();
    QCOMPARE(j["ranks"].toArray().size(), ref.size());
    qint64 fewest = INT64_MAX;
    for (const QString& rank : ref.keys())
      fewest = std::min<qint64>(fewest, ref[rank].toObject()["collectives"].toInteger());
    for (const QString& rank : ref.keys()) {
      const qint64 issued = ref[rank].toObject()["collectives"].toInteger();
      QCOMPARE(per[rank].toObject()["issued"].toInteger(), issued);
      // All matched; in the hang set all but the one collective rank 1 never issued.
      QCOMPARE(per[rank].toObject()["matched"].toInteger(), fewest);
    }
    const QJsonObject truth = fileJson(kSets + "/" + set + "/TRUTH.json");
    if (truth.contains("measured_from_traces")) {
      const QJsonObject m = truth["measured_from_traces"].toObject();
      for (const QString& rank : m.keys())
        QCOMPARE(per[rank].toObject()["issued"].toInteger(), m[rank].toObject()["n_gloo_all_reduce"].toInteger());
    }
    QCOMPARE(j["collectives"].toObject()["unmatched"].toArray().size(), set == "gloo_hang_missing" ? 1 : 0);
  }

  // Clock offsets: the shifted rank's +20 ms within 2 ms and applied; every other rank's near zero (the
  // gloo ranks share one host clock: within 2 ms; the NCCL ranks within 0.1 ms) and each estimate
  // within 1 ms (gloo) or 5 us (NCCL) of the raw events' median end difference.
  void clockOffsets_data() { collectivesMatchedOnEveryRank_data(); }
  void clockOffsets() {
    QFETCH(QString, set);
    const QJsonObject j = ranksJson(kSets + "/" + set);
    const QJsonObject clock = j["clock"].toObject();
    const QJsonObject applied = clock["offsets_ns"].toObject(), est = clock["estimated_ns"].toObject();
    const QJsonObject ref = reference_[set].toObject()["end_offset_us"].toObject();
    const QJsonObject truth = fileJson(kSets + "/" + set + "/TRUTH.json");
    const QJsonObject inj = truth["injected"].toObject();
    const bool nccl = set.contains("nccl");
    QCOMPARE(clock["reference_rank"].toInteger(), 0);
    for (const QString& rank : ref.keys()) {
      const double e = est[rank].toDouble(), a = applied[rank].toDouble();
      QVERIFY2(std::abs(e - ref[rank].toDouble() * 1000) < (nccl ? 5e3 : 1e6), qPrintable(rank));
      if (inj["type"].toString() == "clock_skew" && rank.toInt() == inj["rank"].toInt()) {
        const double shift = inj["shift_us"].toDouble() * 1000;
        QVERIFY2(std::abs(e - shift) < 2e6, qPrintable(QString::number(e)));
        QCOMPARE(a, e);  // applied
      } else {
        QVERIFY2(std::abs(e) < (nccl ? 1e5 : 2e6), qPrintable(rank + ": " + QString::number(e)));
        QVERIFY2(std::abs(a) < (nccl ? 1e5 : 2e6), qPrintable(rank));
      }
    }
    if (nccl) {  // the k-th NCCL kernel ends within 1-7 us on every rank
      QVERIFY(reference_[set].toObject()["max_end_spread_us"].toDouble() <= 7);
      for (const QJsonValue& m : j["collectives"].toObject()["matched"].toArray())
        QVERIFY(m.toObject()["end_spread_ns"].toInteger() <= 7000);
    }
  }

  // gloo_ddp4_straggler: rank 2 on ProfilerStep#5 and #7, in data_loading ~30 ms; the clean and skewed
  // sets have none.
  void straggler_data() { collectivesMatchedOnEveryRank_data(); }
  void straggler() {
    QFETCH(QString, set);
    const QJsonObject j = ranksJson(kSets + "/" + set);
    const QJsonArray st = j["stragglers"].toArray();
    const QJsonObject inj = fileJson(kSets + "/" + set + "/TRUTH.json")["injected"].toObject();
    if (inj["type"].toString() != "transient_straggler") {
      for (const QJsonValue& s : st) QVERIFY2(!s.toObject()["persistent"].toBool(), qPrintable(set));
      if (set != "gloo_hang_missing") QCOMPARE(st.size(), 0);
      return;
    }
    QVERIFY(!st.isEmpty());
    const QJsonObject s = st.first().toObject();
    QCOMPARE(s["rank"].toInteger(), inj["rank"].toInteger());
    QCOMPARE(strings(s["steps"]), strings(inj["profiler_step_names"]));
    QCOMPARE(s["persistent"].toBool(), false);
    QCOMPARE(s["cause"].toString(), QStringLiteral("slow_region"));
    QCOMPARE(s["region"].toString(), QStringLiteral("data_loading"));
    const double extra = inj["extra_ms"].toDouble() * 1e6;
    QVERIFY(std::abs(s["region_ns"].toDouble() - extra) < 5e6);
    QVERIFY(s["others_region_ns"].toDouble() < 2e6);
    QVERIFY(std::abs(s["late_ns"].toDouble() - extra) < 10e6);
    QVERIFY(s["text"].toString().contains("data_loading"));
    QVERIFY(j["headline"].toString().contains("rank 2"));
    QCOMPARE(st.size(), 1);
  }

  // A job with no straggler: its headline names the largest part of the ranks' step time, with the
  // share the ranks' own figures give (added over ranks and steps, from the JSON's per-rank table).
  void noStragglerHeadlineAgreesWithTheTable_data() {
    QTest::addColumn<QString>("set");
    QTest::newRow("dlrm8_nccl_v100") << "dlrm8_nccl_v100";
    QTest::newRow("gloo_ddp4_clean") << "gloo_ddp4_clean";
  }
  void noStragglerHeadlineAgreesWithTheTable() {
    QFETCH(QString, set);
    const QJsonObject j = ranksJson(kSets + "/" + set);
    QVERIFY(j["stragglers"].toArray().isEmpty());
    double total = 0, sums[3] = {};
    for (const QJsonValue& rk : j["ranks"].toArray())
      for (const QJsonValue& st : rk.toObject()["steps"].toArray()) {
        const QJsonObject o = st.toObject();
        const double step = o["step_ns"].toDouble(), comp = o["compute_ns"].toDouble(),
                     exposed = o["exposed_comm_ns"].toDouble();
        total += step;
        sums[0] += comp;
        sums[1] += exposed;
        sums[2] += std::max(0.0, step - comp - exposed);
      }
    QVERIFY(total > 0);
    const char* names[3] = {"the ranks' compute", "communication not hidden behind compute",
                            "time in neither compute nor communication"};
    const int k = static_cast<int>(std::max_element(sums, sums + 3) - sums);
    const QString h = j["headline"].toString();
    QVERIFY2(h.startsWith(QStringLiteral("What costs this job most: ") + names[k]), qPrintable(h));
    const QRegularExpressionMatch m = QRegularExpression("\\), (\\d+)% of the ranks' step time").match(h);
    QVERIFY2(m.hasMatch(), qPrintable(h));
    QVERIFY2(std::abs(m.captured(1).toDouble() - 100.0 * sums[k] / total) <= 1, qPrintable(h));
    QVERIFY(h.contains("No straggler"));
  }

  // gloo_hang_missing: rank 1 never issued the 6th collective on process group '1'; ranks 0, 2, 3
  // waited ~3 s (the side group's timeout).
  void hang() {
    const QJsonObject j = ranksJson(kSets + "/gloo_hang_missing");
    const QJsonObject inj = fileJson(kSets + "/gloo_hang_missing/TRUTH.json")["injected"].toObject();
    const QJsonObject side = reference_["gloo_hang_missing"].toObject()["side"].toObject();
    const QJsonArray hangs = j["hangs"].toArray();
    QCOMPARE(hangs.size(), 1);
    const QJsonObject h = hangs.first().toObject();
    QCOMPARE(ints(h["missing_ranks"]), QList<qint64>{inj["rank"].toInteger()});
    QCOMPARE(ints(h["waiting_ranks"]), (QList<qint64>{0, 2, 3}));
    QCOMPARE(h["pg"].toString(), inj["side_pg"].toString());
    QCOMPARE(h["index"].toInteger(), side["0"].toInteger());  // the 6th of the side group
    QCOMPARE(side["1"].toInteger(), side["0"].toInteger() - 1);
    QVERIFY(std::abs(h["waited_ns"].toDouble() - inj["side_pg_timeout_s"].toDouble() * 1e9) < 0.2e9);
    QCOMPARE(h["step"].toString(), inj["profiler_step_name"].toString());
    QCOMPARE(h["blocked_in"].toString(), QStringLiteral("metric_allreduce"));
    QVERIFY(h["missing_rank_traced_past"].toBool());
    QVERIFY(j["headline"].toString().contains("missing ranks: {1}"));
  }

  // Hand-made: a rank that issued a different size (values by hand in tests/data/ranks/make.py).
  void handMismatch() {
    const QJsonObject j = ranksJson(kHand + "/mismatch");
    QCOMPARE(j["collectives"].toObject()["matched"].toArray().size(), 2);
    bool found = false;
    for (const QJsonValue& f : j["findings"].toArray())
      if (f.toObject()["kind"].toString() == "mismatch") {
        found = true;
        QCOMPARE(ints(f.toObject()["ranks"]), QList<qint64>{1});
        QVERIFY(f.toObject()["text"].toString().contains("#2"));
        QVERIFY(f.toObject()["text"].toString().contains("[[99]]"));
      }
    QVERIFY(found);
  }

  void handDuplicateMissingMixed() {
    // Rank 0 claimed by two files holding the same events (make.py writes them alike): one is used, and
    // the finding says which and why.
    QJsonObject j = ranksJson(kHand + "/duplicate");
    QCOMPARE(j["ranks"].toArray().size(), 2);
    const QJsonObject dup = j["findings"].toArray().first().toObject();
    QCOMPARE(dup["kind"].toString(), QStringLiteral("duplicate_rank"));
    QCOMPARE(ints(dup["ranks"]), QList<qint64>{0});
    QVERIFY2(dup["text"].toString().contains("copies of one trace") &&
                 dup["text"].toString().contains("a-rank-0.trace.json is used"),
             qPrintable(dup["text"].toString()));
    QVERIFY(j["ranks"].toArray()[0].toObject()["file"].toString().endsWith("a-rank-0.trace.json"));

    j = ranksJson(kHand + "/missing");
    QCOMPARE(j["world_size"].toInteger(), 3);
    QCOMPARE(j["ranks"].toArray()[1].toObject()["rank"].toInteger(), 2);  // from the name worker2
    QCOMPARE(j["ranks"].toArray()[1].toObject()["rank_from"].toString(), QStringLiteral("file name"));
    bool missing = false;
    for (const QJsonValue& f : j["findings"].toArray())
      if (f.toObject()["kind"].toString() == "missing_ranks") {
        missing = true;
        QCOMPARE(ints(f.toObject()["ranks"]), QList<qint64>{1});
      }
    QVERIFY(missing);
    QCOMPARE(j["collectives"].toObject()["matched"].toArray().size(), 1);  // named as rank 0's group '0'

    j = ranksJson(kHand + "/mixed");
    QVERIFY(j["headline"].toString().startsWith("These files are not one job: world sizes differ"));
  }

  // Hand-made NCCL: kernels with Comms Id; rank 1's clock 500 us ahead; a 4th collective rank 1 never
  // issued while its trace ran on (a finding, not a hang: the wait in it was short).
  void handNcclCommsId() {
    const QJsonObject j = ranksJson(kHand + "/nccl");
    const QJsonArray matched = j["collectives"].toObject()["matched"].toArray();
    QCOMPARE(matched.size(), 3);
    for (const QJsonValue& m : matched) {
      QCOMPARE(m.toObject()["method"].toString(), QStringLiteral("comms_id"));
      QCOMPARE(m.toObject()["end_spread_ns"].toInteger(), 0);  // on the aligned clock
    }
    QCOMPARE(j["clock"].toObject()["offsets_ns"].toObject()["1"].toInteger(), 500000);
    // Aligned arrivals: rank 0 at 100, 200, 300; rank 1 at 80, 190, 290: rank 0 is last by 20, 10, 10 us.
    QCOMPARE(matched[0].toObject()["last_rank"].toInteger(), 0);
    QCOMPARE(matched[0].toObject()["late_ns"].toInteger(), 20000);
    // The 4th collective rank 1 never issued though its trace ran on: said, but rank 0 waited in it only
    // 30 us (its end came; the others took 20-70 us): no hang is claimed.
    QVERIFY(j["hangs"].toArray().isEmpty());
    bool said = false;
    for (const QJsonValue& f : j["findings"].toArray())
      if (f.toObject()["kind"].toString() == "missing_collective") {
        said = true;
        QCOMPARE(ints(f.toObject()["ranks"]), QList<qint64>{1});
        const QString t = f.toObject()["text"].toString();
        QVERIFY2(t.contains("#4") && t.contains("waited 30.000 us") && t.contains("no hang"), qPrintable(t));
      }
    QVERIFY(said);
  }

  void rankFromName() {
    using attnscope::ranks::rankFromFileName;
    QCOMPARE(rankFromFileName("/x/rank-3.pt.trace.json.gz"), 3);
    QCOMPARE(rankFromFileName("worker12_step_4.json"), 12);
    QCOMPARE(rankFromFileName("rank7.json"), 7);
    QCOMPARE(rankFromFileName("ranking.json"), -1);
    QCOMPARE(rankFromFileName("trace.json"), -1);
  }

  void badInput() {
    Run r = cli({"ranks", "/nonexistent/job"});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains("/nonexistent/job: no such file or folder"));
    r = cli({"ranks", QStringLiteral(ATTNSCOPE_TEST_DATA "/ranks/make.py")});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains("make.py"));
    const QString empty = QDir::tempPath() + "/attnscope_ranks_empty";
    QDir().mkpath(empty);
    r = cli({"ranks", empty});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains("holds no trace"));
    r = cli({"ranks", kHand + "/nccl", "--format", "xml"});
    QCOMPARE(r.code, 2);
  }
};

QTEST_GUILESS_MAIN(RanksTest)
#include "test_ranks.moc"
