// `attnscope-cli record` on the models users have: names as the model's own qualified paths (never a
// bare "0"), a REGEX's notes checked against what ran, a torch.compile'd model (wrapped from outside
// its compiled code, the compiled program the same as without attnscope: graphs and graph breaks
// compared with a plain run), a DDP job whose summary names the rank that held it up, and the
// judgement of the profiler's inflation over generated windows (truth from the construction).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <random>

#include "core/run/script_run.h"
#include "record_test_util.h"

using namespace attnscope;
using namespace record_test;

namespace {

QString notesOf(const Trace& t) {
  return QJsonDocument(t.record.value("notes").toArray()).toJson(QJsonDocument::Compact);
}

// The `compiled: {...}` line compiled_model.py prints (what torch.compile made of it).
QString compiledLine(const QString& out) {
  const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("(?m)^compiled: (.*)$")).match(out);
  return m.hasMatch() ? m.captured(1) : QString();
}

}  // namespace

class TestRecordModels : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString path(const QString& name) const { return dir_.filePath(name); }
  bool torch_ = false;

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    torch_ = pythonHasTorch();
  }
  void init() {
    if (!torch_ && QLatin1String(QTest::currentTestFunction()) != QLatin1String("inflationJudgedAgainstTheLoad"))
      QSKIP("python3 cannot import torch here: record has nothing to record with");
  }

  // A transformer LM: the attention blocks by their qualified paths; out_proj, which
  // nn.MultiheadAttention uses by its weights, said as never called though its holder ran; a
  // container named with the pattern for its members, and that pattern, used, wraps them.
  void qualifiedNamesAndWhatRan() {
    const QStringList lm{"python3", kScripts + "transformer_lm.py", "--steps", "8"};
    QString out = path(QStringLiteral("lm_attn.json"));
    Run r = record({"--wrap-modules", "layers\\.\\d+\\.self_attn$", "--baseline", "0", "--out", out}, lm);
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    Trace t = readTrace(out);
    QCOMPARE(t.record.value("wrapped_modules").toArray(),
             (QJsonArray{"encoder.layers.0.self_attn", "encoder.layers.1.self_attn"}));
    // Two micro-batches a step (--accum 2), three traced steps.
    QCOMPARE(countInSteps(t, "encoder.layers.0.self_attn").second, 6);
    QCOMPARE(countInSteps(t, "encoder.layers.1.self_attn").second, 6);

    out = path(QStringLiteral("lm_outproj.json"));
    r = record({"--wrap-modules", "out_proj$", "--baseline", "0", "--out", out}, lm);
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    t = readTrace(out);
    QVERIFY(t.record.value("wrapped_modules").toArray().isEmpty());
    QString notes = notesOf(t);
    QVERIFY2(notes.contains("never called, though the module holding it ran") &&
                 notes.contains("encoder.layers.0.self_attn.out_proj, encoder.layers.1.self_attn.out_proj"),
             qPrintable(notes));
    QVERIFY(!notes.contains("container"));
    QCOMPARE(countInSteps(t, "encoder.layers.0.self_attn.out_proj").first, 0);

    out = path(QStringLiteral("lm_list.json"));
    r = record({"--wrap-modules", "encoder\\.layers$", "--baseline", "0", "--out", out}, lm);
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    notes = notesOf(readTrace(out));
    const QRegularExpressionMatch m =
        QRegularExpression(QStringLiteral("containers are not called themselves, so not in the trace: encoder.layers; "
                                          "to wrap the members that ran: --wrap-modules '([^']+)'"))
            .match(notes.replace(QStringLiteral("\\\\"), QStringLiteral("\\")));
    QVERIFY2(m.hasMatch(), qPrintable(notes));
    out = path(QStringLiteral("lm_members.json"));
    r = record({"--wrap-modules", m.captured(1), "--baseline", "0", "--out", out}, lm);
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QCOMPARE(readTrace(out).record.value("wrapped_modules").toArray(),
             (QJsonArray{"encoder.layers.0", "encoder.layers.1"}));
  }

  // An nn.Sequential model's children are named after the script's own name for the model.
  void sequentialNamedAfterItsModel() {
    const QString out = path(QStringLiteral("seq.json"));
    const Run r =
        record({"--wrap-modules", "children", "--step-fn", "__main__:train_step", "--baseline", "0", "--out", out},
               {"python3", kScripts + "step_fn.py"});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    const Trace t = readTrace(out);
    QCOMPARE(t.record.value("wrapped_modules").toArray(), (QJsonArray{"model.0", "model.1", "model.2"}));
    QCOMPARE(countInSteps(t, "model.0").second, 3);
    QCOMPARE(countInSteps(t, "0").first, 0);
  }

  // A compiled model: wrapped as a whole from outside its compiled code, and torch.compile makes the
  // same graphs with the same graph breaks as in a plain run; its compile time is the set-up's.
  void compiledModel_data() {
    QTest::addColumn<QString>("wrap");
    QTest::addColumn<bool>("inPlace");
    QTest::addColumn<QJsonArray>("wrapped");
    QTest::addColumn<QString>("note");
    QTest::newRow("torch.compile(model), children")
        << "children" << false << QJsonArray{"model"} << "inside compiled code, so not wrapped: encoder, head";
    QTest::newRow("torch.compile(model), a REGEX inside it")
        << "encoder" << false << QJsonArray{} << "inside compiled code, so not wrapped: encoder, encoder.0";
    QTest::newRow("model.compile(), children")
        << "children" << true << QJsonArray{"model"} << "inside compiled code, so not wrapped: encoder, head";
  }
  void compiledModel() {
    QFETCH(QString, wrap);
    QFETCH(bool, inPlace);
    QFETCH(QJsonArray, wrapped);
    QFETCH(QString, note);
    QStringList command{"python3", kScripts + "compiled_model.py", "--backend", "aot_eager"};
    if (inPlace) command << "--in-place";
    QProcess plain;
    plain.start(command.front(), command.mid(1));
    QVERIFY(plain.waitForFinished(300000));
    const QString expected = compiledLine(QString::fromUtf8(plain.readAllStandardOutput()));
    QVERIFY2(!expected.isEmpty(), plain.readAllStandardError().constData());

    const QString out =
        path(QStringLiteral("compiled-%1.json").arg(QTest::currentDataTag()).replace(QRegularExpression("\\W"), "_"));
    const Run r = record({"--wrap-modules", wrap, "--keep-running", "--out", out}, command, 300000);
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QCOMPARE(compiledLine(r.out), expected);  // the same compiled program
    const Trace t = readTrace(out);
    QCOMPARE(t.record.value("wrapped_modules").toArray(), wrapped);
    if (!wrapped.isEmpty()) QCOMPARE(countInSteps(t, "model").second, 3);  // the compiled model, once a step
    const QString notes = notesOf(t);
    QVERIFY2(notes.contains(note), qPrintable(notes));
    if (!wrapped.isEmpty())
      QVERIFY(notes.contains("compiled by torch.compile: model, wrapped as a whole from outside"));
    // The set-up before the first step holds torch.compile's time, said with it.
    double setupNs = t.record.value("setup_ns").toDouble(), compileNs = 0;
    int compiles = 0;
    for (const auto& c : t.record.value("compiles").toArray())
      if (c.toObject().value("step").toInt() == 0) {
        compileNs += c.toObject().value("ns").toDouble();
        ++compiles;
      }
    QVERIFY(compiles >= 1 && compileNs > 0 && compileNs <= setupNs);
    QVERIFY2(
        notes.contains(QRegularExpression(
            QStringLiteral("set-up before the first step: [0-9.]+ m?s \\(not in the trace\\), of which torch.compile "
                           "[0-9.]+ m?s \\(%1 compile pass(es)?\\)")
                .arg(compiles))),
        qPrintable(notes));
    QVERIFY2(r.out.contains("note: set-up before the first step:"), qPrintable(r.out));
  }

  // A DDP job with one slow rank: the summary names the job folder and the rank that held it up.
  void ddpJobNamesTheStraggler() {
    const QString out = path(QStringLiteral("ddp_slow"));
    const Run r = record({"--nproc", "2", "--baseline", "0", "--out", out},
                         {"python3", kScripts + "ddp_gloo.py", "--slow-rank", "1", "--slow-ms", "30"});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QVERIFY2(r.out.contains("the job (2 of 2 ranks traced): " + out), qPrintable(r.out));
    const QString job = r.out.section(QStringLiteral("the job (2 of 2 ranks traced): "), 1).section('\n', 1, 1);
    // Late in all 3 steps by construction; on a loaded machine (2 cores, load 9) the others' own jitter
    // hid it in one step of 3 once: 2 of 3 is accepted, fewer is a miss.
    QVERIFY2(job.contains(QRegularExpression(QStringLiteral("rank 1 held the others up on [23] of 3 steps"))),
             qPrintable(job));
    // The script's slow rank spins 30 ms in plain Python before each forward, outside any op: the reason
    // names that host time (by construction about 30 ms; the others have next to none), and no device.
    const QRegularExpressionMatch m =
        QRegularExpression(QStringLiteral("spent ([0-9.]+) ms on the host outside any op the trace recorded"))
            .match(job);
    QVERIFY2(m.hasMatch(), qPrintable(job));
    QVERIFY2(m.captured(1).toDouble() >= 29 && m.captured(1).toDouble() < 60, qPrintable(job));
    QVERIFY2(!job.contains("nvidia-smi"), qPrintable(job));
    QVERIFY(r.out.contains("open the job: attnscope-cli ranks " + out));
    // Rank 0's own view is still there.
    QVERIFY(r.out.contains("recorded: rank 0: " + out + "/rank-0.json"));
  }

  // The profiler's inflation is claimed only beyond the steps' spread and only when the machine was
  // as busy in both windows. Generated windows: a step's time B (1-100 ms) with jitter, a true profiler
  // cost (none in half the cases), and other programs' load in one window, both or neither, which adds
  // to the steps the time the process then waits for a CPU (what the recorder measures).
  void inflationJudgedAgainstTheLoad() {
    std::mt19937_64 rng(46);
    std::uniform_real_distribution<double> u(0, 1);
    int cases = 0, claims = 0, wrongClaims = 0, claimable = 0, claimedOfClaimable = 0, noCost = 0, claimedNoCost = 0;
    QStringList misses, wrong;
    for (int i = 0; i < 600; ++i) {
      const double base = 1e6 * (1 + 99 * u(rng));
      const double jitter = base * 0.02 * u(rng);
      const double cost = u(rng) < 0.5 ? 0 : base * (0.05 + 0.95 * u(rng));
      const double roll = u(rng);
      // Load: the slowdown's added time per step, and the wait for a CPU it comes with.
      const double loadTrace = roll < 0.3 ? base * (0.5 + 49 * u(rng)) : 0;
      const double loadBase = roll >= 0.3 && roll < 0.45 ? base * (0.5 + 10 * u(rng)) : 0;
      const double loadBoth = roll >= 0.45 && roll < 0.6 ? base * (0.5 + 5 * u(rng)) : 0;
      std::vector<int64_t> profiled, baseline;
      for (int s = 0; s < 3; ++s) {
        profiled.push_back(static_cast<int64_t>(base + cost + loadTrace + loadBoth + jitter * (u(rng) - 0.5)));
        baseline.push_back(static_cast<int64_t>(base + loadBase + loadBoth + jitter * (u(rng) - 0.5)));
      }
      const auto waitOf = [&](double load) { return static_cast<int64_t>(load * (0.9 + 0.1 * u(rng)) + 2e4 * u(rng)); };
      const InflationJudgement j =
          judgeInflation(profiled, baseline, waitOf(loadTrace + loadBoth), waitOf(loadBase + loadBoth));
      ++cases;
      // Truth: a claim is right when it is the true cost within the steps' spread and a tenth.
      const bool claimed = j.kind == InflationJudgement::Claimed;
      const bool right = std::abs(j.differenceNs - cost) <= j.spreadNs + 0.1 * cost + 1;
      claims += claimed;
      wrongClaims += claimed && !right;
      noCost += cost == 0;
      claimedNoCost += claimed && cost == 0;
      if (claimed && !right && wrong.size() < 5)
        wrong << QStringLiteral("claimed %1 ms, cost %2 ms on %3 ms (load: trace %4, baseline %5, both %6 ms)")
                     .arg(j.differenceNs / 1e6, 0, 'f', 2)
                     .arg(cost / 1e6, 0, 'f', 2)
                     .arg(base / 1e6, 0, 'f', 2)
                     .arg(loadTrace / 1e6, 0, 'f', 2)
                     .arg(loadBase / 1e6, 0, 'f', 2)
                     .arg(loadBoth / 1e6, 0, 'f', 2);
      // Claimable: a real cost beyond the spread, on a quiet machine. (Under the same load in both windows
      // "too noisy to tell" is a fair answer too: a claim there must be right, but none is owed.)
      if (cost > 3 * jitter && loadTrace == 0 && loadBase == 0 && loadBoth == 0) {
        ++claimable;
        claimedOfClaimable += claimed;
        if (!claimed && misses.size() < 5)
          misses << QStringLiteral("cost %1 ms on %2 ms (load both %3 ms): %4")
                        .arg(cost / 1e6, 0, 'f', 2)
                        .arg(base / 1e6, 0, 'f', 2)
                        .arg(loadBoth / 1e6, 0, 'f', 2)
                        .arg(int(j.kind));
      }
    }
    const double recall = double(claimedOfClaimable) / claimable;
    const double wrongRate = claims ? double(wrongClaims) / claims : 0.0;
    const double falsePositive = double(claimedNoCost) / noCost;
    qInfo(
        "inflation: %d cases, %d claims, %d wrong (%.3f of claims); a cost claimed where there was none in %d "
        "of %d cases (false positive rate %.3f); recall %.3f of %d claimable (a cost beyond 3x the jitter, quiet "
        "machine); misses: %s; wrong: %s",
        cases, claims, wrongClaims, wrongRate, claimedNoCost, noCost, falsePositive, recall, claimable,
        qPrintable(misses.join("; ")), qPrintable(wrong.join("; ")));
    // Three steps a window leave a floor of chance (two windows of the same steps can sit apart):
    // measured at about 0.5% by the rule's own simulation; the gate leaves room for it, no more.
    QVERIFY2(falsePositive <= 0.01, qPrintable(QString::number(falsePositive)));
    QVERIFY2(wrongRate <= 0.02, qPrintable(QString::number(wrongRate)));
    QVERIFY2(recall >= 0.95, qPrintable(QString::number(recall)));
  }
};

QTEST_GUILESS_MAIN(TestRecordModels)
#include "test_record_models.moc"
