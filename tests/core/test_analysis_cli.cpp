// explain, why, compare and table --attribution corrected as a user runs them.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>

#include "cli_run.h"

namespace {

const QString kKineto = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/");
const QString kSoftmax = kKineto + "softmax_8x16x1024x64.json";
const QString kNone = kKineto + "none_8x16x1024x64.json";
const QString kFallback = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/event-fallback/softmax_8x16x1024x64_w3.json");

}  // namespace

class AnalysisCliTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    for (const QString& f : {kSoftmax, kNone, kFallback}) QVERIFY2(QFile::exists(f), qPrintable("missing " + f));
  }

  void explainJsonFollowsTheSchema() {
    Run r = cli({"explain", kSoftmax, "--format", "json"});
    QCOMPARE(r.code, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    for (const char* k : {"steps", "sync_waits", "ledger", "verdicts", "events", "glossary"})
      QVERIFY2(o.contains(k), k);
    const QJsonObject step = o["steps"].toArray()[0].toObject();
    for (const char* k : {"name", "wrapped", "host_start_ns", "host_end_ns", "gpu_start_ns", "gpu_end_ns",
                          "gpu_attributed_ns", "gpu_busy_in_host_window_ns", "event_ns", "launches", "sync_waits"})
      QVERIFY2(step.contains(k), k);
    bool found = false;
    for (const auto& v : o["sync_waits"].toArray()) {
      const QJsonObject w = v.toObject();
      if (w["api"] != "cudaStreamSynchronize") continue;
      found = true;
      QCOMPARE(w["dur_ns"].toInteger(), 298889);
      QCOMPARE(w["awaited"].toArray()[0].toObject()["correlation"].toInteger(), 990);
      // The evidence can be found in the trace file by its ts text.
      const QJsonObject ev = o["events"].toObject()[QString::number(w["event"].toInteger())].toObject();
      QCOMPARE(ev["ts"].toString(), QString("5367878834488.945"));
      QCOMPARE(ev["dur"].toString(), QString("298.889"));
    }
    QVERIFY(found);
    QCOMPARE(o["ledger"].toObject()["corrected_self_device_ns"].toInteger(),
             o["ledger"].toObject()["gpu_activity_sum_ns"].toInteger());
    for (const auto& v : o["verdicts"].toArray())
      for (const auto& id : v.toObject()["evidence"].toArray())
        QVERIFY(o["events"].toObject().contains(QString::number(id.toInteger())));
  }

  void explainTextOnEventFallback() {
    Run r = cli({"explain", kFallback});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains("CUDA-event timing without kernels"));
    QVERIFY(r.out.contains("timing: cuda_events"));
  }

  void tableCorrectedSaysSo() {
    Run r = cli({"table", kSoftmax, "--attribution", "corrected", "--format", "json"});
    QCOMPARE(r.code, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o["attribution"].toString(), QString("corrected"));
    for (const auto& v : o["rows"].toArray())
      if (v.toObject()["name"] == "Activity Buffer Request") QCOMPARE(v.toObject()["self_device_us"].toDouble(), 0.0);
  }

  void whyExplainsAWrappedStep() {
    Run r = cli({"why", kSoftmax, "SOFTMAX PASS"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains("launched by aten::_softmax inside it: 1 GPU activities, 259.261 us"));
    QVERIFY(r.out.contains("gpu_user_annotation"));
    Run missing = cli({"why", kSoftmax, "NO SUCH ROW"});
    QCOMPARE(missing.code, 2);
    QVERIFY(missing.err.contains("NO SUCH ROW"));
    QVERIFY(missing.err.contains("softmax_8x16x1024x64.json"));
  }

  void compareFormats() {
    Run t = cli({"compare", kSoftmax, kNone});
    QCOMPARE(t.code, 0);
    QVERIFY(t.out.contains("298.889 us in A vs 211.845 us in B"));
    Run c = cli({"compare", kSoftmax, kNone, "--format", "csv"});
    QCOMPARE(c.code, 0);
    QVERIFY(c.out.startsWith("section,key,metric,a,b,delta\n"));
    QVERIFY(c.out.contains(",dur_ns,298889,211845,-87044\n"));  // B - A
    Run j = cli({"compare", kSoftmax, kNone, "--format", "json"});
    QCOMPARE(j.code, 0);
    QVERIFY(QJsonDocument::fromJson(j.out.toUtf8()).object()["sync_waits"].isArray());
    Run bad = cli({"compare", kSoftmax, kNone, "--format", "xml"});
    QCOMPARE(bad.code, 2);
    Run one = cli({"compare", kSoftmax});
    QCOMPARE(one.code, 2);
  }

  // Files that are not Kineto traces (an execution trace, HTA's memory timeline): refused, exit 2,
  // the file named with the reason; a real trace with ProfilerSteps explains with exit 0.
  void explainRefusesWhatIsNotATrace() {
    for (const char* f : {"NEG_hta_execution_trace_et.json.gz", "NEG_hta_memory_timeline.raw.json.gz"}) {
      const QString path = QStringLiteral(ATTNSCOPE_TEST_DATA "/ext/") + f;
      QVERIFY2(QFile::exists(path), qPrintable("missing " + path));
      Run r = cli({"explain", path, "--format", "json"});
      QCOMPARE(r.code, 2);
      QVERIFY2(r.err.contains(f) && (r.err.contains("not a trace") || r.err.contains("no event could be loaded")),
               qPrintable(r.err));
      QVERIFY(r.out.isEmpty());
    }
    Run ok =
        cli({"explain", QStringLiteral(ATTNSCOPE_TEST_DATA "/ext/hta_sampled_rank-0.json.gz"), "--format", "json"});
    QCOMPARE(ok.code, 0);
    QCOMPARE(QJsonDocument::fromJson(ok.out.toUtf8()).object()["step_source"].toString(), QString("profiler_steps"));
    Run all = cli({"explain", QStringLiteral(ATTNSCOPE_TEST_DATA "/ext/hta_sampled_rank-0.json.gz"), "--all"});
    QCOMPARE(all.code, 0);
    QVERIFY(all.out.split('\n').size() > 200);  // --all lists every launch
  }

  void helpEverywhere() {
    for (const char* cmd : {"explain", "why", "compare", "table", "info"}) {
      Run r = cli({cmd, "--help"});
      QCOMPARE(r.code, 0);
      QVERIFY(r.out.startsWith("usage: attnscope-cli"));
    }
  }
};

QTEST_APPLESS_MAIN(AnalysisCliTest)
#include "test_analysis_cli.moc"
