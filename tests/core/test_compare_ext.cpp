// compare on two real runs of one model (HTA's trace_diff pair in ../shared/traces/ext), checked
// against numbers computed independently by tests/reference/compare_reference.py
// (tests/data/ext/compare_reference/trace_diff.json): the steps paired in order, the per-step
// medians with their spread and the change of each, the top 40 changes (ops by Self CPU, kernels by
// GPU time, sync waits by cause) per step with their rank; the output bounds; why on the names the
// table shows.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QStringList>
#include <QtTest>
#include <cmath>
#include <map>

#include "cli_run.h"
#include "core/explain/compare.h"
#include "core/explain/why.h"
#include "core/read/trace_reader.h"
#include "core/snapshot/trace_snapshot.h"

using namespace attnscope;

namespace {

const QString kControl = QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_trace_diff_control.json.gz");
const QString kTest = QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_trace_diff_test_v100.json.gz");
const QString kReference = QStringLiteral(ATTNSCOPE_TEST_DATA "/ext/compare_reference/trace_diff.json");

std::shared_ptr<const TraceSnapshot> load(const QString& path) {
  LoadResult lr = loadTrace(path.toStdString());
  if (!lr.ok()) return nullptr;
  return buildSnapshot(std::make_shared<const EventStore>(std::move(*lr.store)));
}

}  // namespace

class CompareExtTest : public QObject {
  Q_OBJECT

  std::shared_ptr<const TraceSnapshot> a_, b_;
  Comparison c_;
  QJsonObject ref_;

 private slots:
  void initTestCase() {
    a_ = load(kControl);
    b_ = load(kTest);
    QVERIFY2(a_ && b_, "the trace_diff pair of ../shared/traces/ext does not load");
    c_ = compareTraces(*a_, *b_);
    QFile f(kReference);
    QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(kReference));
    ref_ = QJsonDocument::fromJson(f.readAll()).object();
    QVERIFY(!ref_.isEmpty());
  }

  // ProfilerStep#N steps of both, paired in time order; per-step medians, spreads and changes.
  void stepsMatchTheReference() {
    QCOMPARE(c_.stepPairing, std::string("order"));
    QCOMPARE(static_cast<qint64>(c_.stepsA), ref_["steps_a"].toInteger());
    QCOMPARE(static_cast<qint64>(c_.stepsB), ref_["steps_b"].toInteger());
    const QJsonArray pairs = ref_["step_pairs"].toArray();
    QCOMPARE(c_.steps.size(), static_cast<size_t>(pairs.size()));
    for (qsizetype i = 0; i < pairs.size(); ++i) {
      const auto& p = c_.steps[static_cast<size_t>(i)];
      const QJsonObject r = pairs[i].toObject();
      QVERIFY(p.a && p.b);
      QCOMPARE(QString::fromStdString(p.a->name), r["a"].toString());
      QCOMPARE(QString::fromStdString(p.b->name), r["b"].toString());
      QCOMPARE(p.b->hostNs() - p.a->hostNs(), r["host_delta_ns"].toInteger());
      QCOMPARE(p.b->syncWaitNs - p.a->syncWaitNs, r["sync_wait_delta_ns"].toInteger());
    }
    const QJsonObject stats = ref_["step_stats"].toObject();
    QCOMPARE(c_.stepStats.size(), static_cast<size_t>(stats.size()));
    for (const StepStat& s : c_.stepStats) {
      const QJsonObject r = stats[QString::fromStdString(s.metric)].toObject();
      QVERIFY2(!r.isEmpty(), s.metric.c_str());
      for (const auto& [mine, side] : {std::pair{&s.a, "a"}, std::pair{&s.b, "b"}}) {
        const QJsonObject rs = r[side].toObject();
        QCOMPARE(mine->median, rs["median"].toDouble());
        QCOMPARE(mine->p25, rs["p25"].toDouble());
        QCOMPARE(mine->p75, rs["p75"].toDouble());
      }
      QCOMPARE(s.deltaNs, r["delta_ns"].toDouble());
      QCOMPARE(s.noise, r["noise"].toBool());
    }
  }

  // The top 40 changes: the same things, the same figures per step, the same order (ties aside).
  void topChangesMatchTheReference() {
    const QJsonArray ref = ref_["changes"].toArray();
    QVERIFY(ref.size() >= 40);
    std::map<std::pair<std::string, std::string>, size_t> rank;
    for (size_t i = 0; i < c_.changes.size(); ++i) rank[{c_.changes[i].kind, c_.changes[i].key}] = i;
    for (qsizetype i = 0; i < ref.size(); ++i) {
      const QJsonObject r = ref[i].toObject();
      const auto key = std::pair{r["kind"].toString().toStdString(), r["key"].toString().toStdString()};
      const auto it = rank.find(key);
      QVERIFY2(it != rank.end(), qPrintable(QString("missing change %1: %2").arg(i).arg(r["key"].toString())));
      const Change& ch = c_.changes[it->second];
      const QByteArray where = QString("%1 %2").arg(i).arg(r["key"].toString().left(80)).toUtf8();
      QVERIFY2(std::fabs(ch.aNs - r["a_per_step_ns"].toDouble()) < 1e-6, where.constData());
      QVERIFY2(std::fabs(ch.bNs - r["b_per_step_ns"].toDouble()) < 1e-6, where.constData());
      QVERIFY2(std::fabs(ch.deltaNs - r["delta_per_step_ns"].toDouble()) < 1e-6, where.constData());
      QCOMPARE(QString::fromStdString(ch.status), r["status"].toString());
      QCOMPARE(ch.noise, r["noise"].toBool());
      // Its rank: the same |change| as the reference's at that place.
      QVERIFY2(std::fabs(std::fabs(c_.changes[static_cast<size_t>(i)].deltaNs) -
                         std::fabs(r["delta_per_step_ns"].toDouble())) < 1e-6,
               where.constData());
    }
    // What a reader of the two traces sees first: B's steps wait on copies to pageable memory and
    // their all-to-all (the sync groups), and B runs torch.compile'd code with CUDA graphs.
    QCOMPARE(c_.changes[0].key, std::string("cudaMemcpyAsync"));
    QCOMPARE(c_.changes[1].kind, std::string("sync_group"));
    bool graphs = false;
    for (size_t i = 0; i < 40; ++i)
      graphs |= c_.changes[i].key == "cudaGraphLaunch" && c_.changes[i].status == "appeared";
    QVERIFY(graphs);
  }

  // Bounded like explain: text <= 200 lines of <= 400 characters, JSON <= 100 findings, ranked,
  // the sign stated; --all lifts the bounds.
  // What the time went to, A -> B: every cause of either diagnosis, per step; the changes add up to
  // the change of the mean step (the parts add up to each step), and the line names the largest first.
  void causesMoveAsTheSteps() {
    QVERIFY(!c_.causes.empty());
    auto meanStep = [](const Diagnosis& d) {
      return static_cast<double>(d.wallNs) / static_cast<double>(d.steps.size());
    };
    double sum = 0;
    for (const CauseChange& k : c_.causes) {
      QVERIFY(std::abs(k.deltaNs - (k.bNs - k.aNs)) < 1e-6);
      sum += k.deltaNs;
    }
    const double stepDelta = meanStep(b_->explanation->diagnosis) - meanStep(a_->explanation->diagnosis);
    QVERIFY2(std::abs(sum - stepDelta) < 1.0, qPrintable(QString("%1 vs %2").arg(sum).arg(stepDelta)));
    for (size_t i = 1; i < c_.causes.size(); ++i)
      QVERIFY(std::abs(c_.causes[i - 1].deltaNs) >= std::abs(c_.causes[i].deltaNs));
    const QString line = QString::fromStdString(c_.causesLine);
    // The largest first, in words and with its code.
    const QString first = QString::fromStdString(causeLabel(c_.causes.front().code)) + " [" +
                          QString::fromLatin1(causeCode(c_.causes.front().code)) + "]";
    QVERIFY2(line.section(QStringLiteral(": "), 1).startsWith(first), qPrintable(line));
    QVERIFY(QString::fromStdString(compareText(c_)).contains(line));
  }

  // The perturbation lists the sync waits that moved, the largest move first, and never one that did
  // not move ("+0.000 us" is no change): the attention captures with and without the softmax wrapped.
  void movedWaitsLargestFirstNoZeros() {
    const auto a = load(QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/none_8x16x1024x64.json"));
    const auto b = load(QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_8x16x1024x64.json"));
    QVERIFY(a && b);
    const Comparison c = compareTraces(*a, *b);
    static const QRegularExpression kMove(QStringLiteral("^sync wait moved: .*\\(([+-][0-9.]+) us, B - A\\)"));
    double last = 1e300;
    int lines = 0;
    for (const std::string& line : c.perturbation) {
      const auto m = kMove.match(QString::fromStdString(line));
      if (!m.hasMatch()) continue;
      const double delta = std::abs(m.captured(1).toDouble());
      QVERIFY2(delta > 0, line.c_str());
      QVERIFY2(delta <= last, line.c_str());
      last = delta;
      ++lines;
    }
    int nonZero = 0;
    for (const auto& p : c.syncWaits) nonZero += p.a && p.b && p.a->durNs != p.b->durNs;
    QCOMPARE(lines, nonZero);
    QVERIFY(lines >= 2);  // these two captures have waits that moved
  }

  void outputsAreBounded() {
    const Run t = cli({"compare", kControl, kTest});
    QCOMPARE(t.code, 0);
    const QStringList lines = t.out.split('\n', Qt::SkipEmptyParts);
    QVERIFY2(lines.size() <= 200, qPrintable(QString::number(lines.size())));
    for (const QString& l : lines) QVERIFY2(l.toUtf8().size() <= 400, qPrintable(l.left(80)));
    QVERIFY(t.out.contains(QStringLiteral("every difference is B - A")));
    QVERIFY(t.out.contains(QStringLiteral("paired in time order")));
    QVERIFY(!t.out.contains(QStringLiteral("sync wait moved")));  // one line per wait was the old output
    const Run j = cli({"compare", kControl, kTest, "--format", "json"});
    QCOMPARE(j.code, 0);
    const QJsonObject o = QJsonDocument::fromJson(j.out.toUtf8()).object();
    QCOMPARE(o["sign"].toString(), QStringLiteral("B - A"));
    const QJsonArray f = o["findings"].toArray();
    QCOMPARE(f.size(), 100);
    QVERIFY(o["findings_total"].toInt() > 100);
    for (qsizetype i = 1; i < f.size(); ++i)
      QVERIFY(std::llabs(f[i - 1].toObject()["delta_per_step_ns"].toInteger()) >=
              std::llabs(f[i].toObject()["delta_per_step_ns"].toInteger()));
    QCOMPARE(o["rows"].toArray().size(), static_cast<qsizetype>(c_.rows.size()));  // complete
    const Run all = cli({"compare", kControl, kTest, "--all"});
    QCOMPARE(all.code, 0);
    QVERIFY(all.out.split('\n').size() > 200);
  }

  void rolesAndNames() {
    QCOMPARE(roleName("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"),
             std::string("enumerate(DataLoader)#*.__next__"));
    QCOMPARE(roleName("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"),
             std::string("enumerate(DataLoader)#*.__next__"));
    QCOMPARE(roleName("aten::mm"), std::string("aten::mm"));
    // why takes the name the table shows and says what the row aggregates.
    const WhyReport r = whyShownRow(*a_, "ProfilerStep*");
    QVERIFY(r.found);
    QVERIFY(!r.items.empty());
    QCOMPARE(r.items[0].section, std::string("aggregates"));
    QVERIFY2(r.items[0].text.find("6 events named ProfilerStep#1009, ProfilerStep#1010") != std::string::npos,
             r.items[0].text.c_str());
    const Run why = cli({"why", kControl, "ProfilerStep*"});
    QCOMPARE(why.code, 0);
    QVERIFY(why.out.contains(QStringLiteral("aggregates 6 events")));
  }
};

QTEST_GUILESS_MAIN(CompareExtTest)
#include "test_compare_ext.moc"
