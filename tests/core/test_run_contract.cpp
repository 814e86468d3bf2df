// The run contract (issue 33): a run's configuration is read back from the structured fields the
// engine writes (runConfigJson), never by splitting its command line again, so every field survives
// the trip, an output path with spaces and quotes included; every engine capture under tests/data
// (older engines' included) opens with the configuration its command line records; and the timing
// methods are one table that the parser, the defaults and the labels all read.
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "core/run/engine_run.h"
#include "core/run/run_config.h"
#include "core/run/timing_methods.h"

using namespace attnscope;

namespace {

// Every field a user sets, compared one by one (toRunArgs would hide a field both sides lose).
QString differences(const RunConfig& a, const RunConfig& b) {
  QStringList d;
  if (a.device != b.device) d << "device";
  if (a.deviceIndex != b.deviceIndex) d << "deviceIndex";
  if (a.shape != b.shape) d << "shape";
  if (a.dtype != b.dtype) d << "dtype";
  if (a.seed != b.seed) d << "seed";
  if (a.wrap != b.wrap) d << "wrap";
  if (a.wrapFull != b.wrapFull) d << "wrapFull";
  if (a.sync != b.sync) d << "sync";
  if (a.scale != b.scale) d << "scale";
  if (a.warmup != b.warmup) d << "warmup";
  if (a.iters != b.iters) d << "iters";
  if (a.timing != b.timing) d << "timing";
  if (a.recordShapes != b.recordShapes) d << "recordShapes";
  if (a.out != b.out) d << QString("out (%1 vs %2)").arg(QString::fromStdString(a.out), QString::fromStdString(b.out));
  return d.join(", ");
}

}  // namespace

class RunContractTest : public QObject {
  Q_OBJECT

 private slots:
  void configRoundTrip() {
    RunConfig plain;  // the defaults
    RunConfig every;
    every.device = RunDevice::Cuda;
    every.deviceIndex = 1;
    every.shape = {2, 16, 512, 128};
    every.dtype = RunDType::BFloat16;
    every.seed = 18446744073709551615ull;
    every.wrap = {true, false, true, false};
    every.wrapFull = true;
    every.sync = SyncMode::Step;
    every.scale = ScaleMode::HostScalar;
    every.warmup = 0;
    every.iters = 7;
    every.timing = {true, false, true, true, true, true};
    every.recordShapes = true;
    every.out = "/tmp/my runs/it's \"quoted\"/run 1.json";
    for (const RunConfig& c : {plain, every}) {
      const std::optional<RunConfig> back = parseRunConfigJson(runConfigJson(c));
      QVERIFY(back);
      const QString diff = differences(c, *back);
      QVERIFY2(diff.isEmpty(), qPrintable(diff));
    }
    // Through the whole metadata object, as the snapshot reads it.
    const std::string meta = "{\"version\": 1, \"config\": " + runConfigJson(every) + "}";
    const std::optional<EngineRun> m = parseEngineRun(meta);
    QVERIFY(m && m->config);
    QVERIFY2(differences(every, *m->config).isEmpty(), qPrintable(differences(every, *m->config)));
    // A value no option accepts is refused, not guessed.
    QVERIFY(!parseRunConfigJson("{\"sync\": \"sometimes\"}"));
    QVERIFY(!parseRunConfigJson("{\"timing\": [\"cupti\", \"stopwatch\"]}"));
    QVERIFY(!parseRunConfigJson("{\"shape\": [1, 2, 3]}"));
  }

  // The whole run record: every field of every part set to something other than its default,
  // written by engineRunJson and read back by parseEngineRun, equal field for field (the defaulted
  // operator== compares them all). A child pass's result is the same object with one series.
  void engineRunRoundTrip() {
    EngineRun r;
    r.version = 1;
    RunConfig c;
    c.device = RunDevice::Cuda;
    c.shape = {4, 8, 256, 64};
    c.iters = 2;
    c.wrap = {false, false, true, false};
    c.timing = {true, true, true, false, false, true};
    c.timingGiven = true;  // what the reader says of a recorded list
    c.out = "/data/my runs/a.json";
    r.config = c;
    r.versions = {"2.11.0", 13000, 13010, 130001};
    r.device = {"NVIDIA H200", "9.0", 132, 150109880320};
    for (int k = 0; k < kStepCount; ++k) {
      RunStepRecord st{std::string(kStepNames[k]), std::string(kStepKeys[k]), k == 2, {}};
      for (int i = 0; i < 2; ++i)
        st.iterations.push_back(
            {i, 1000 + 100 * k + 10 * i, 1050 + 100 * k + 10 * i, 40 + k, 2000 + k, 2040 + k, k + 1});
      r.steps.push_back(st);
    }
    TimingSeries events{"events",
                        "GPU-timeline distance",
                        "parent",
                        77,
                        {{1, 2, 3, 4}, {5, -1, 7, 8}},
                        {{"aten::bmm", false, 1500, 42000}, {"SOFTMAX PASS", true, 900, -1}},
                        "",
                        0,
                        7};
    TimingSeries torch{
        "torch", "host clock under torch.profiler", "child", 78, {{9, 10, 11, 12}}, {}, "/tmp/t.torch.json", -1, -1};
    r.timing = {events, torch};
    RunCollection& col = r.collection;
    col.cupti = "error: 1 External-id pushes or pops failed";
    col.droppedRecords = 1;
    col.buffersCapped = 2;
    col.buffersPooled = 3;
    col.buffersAdded = 4;
    col.recordsWithoutTimestamps = 5;
    col.warmupRecordsLeftOut = 6;
    col.errors = {"cuptiActivityFlushAll failed", "x \"quoted\""};
    col.clock = "tsc";
    col.clockDriftNs = -12;
    col.clockOverNs = 345;
    col.clockUncertaintyNs = 6;
    col.nvtxRangesPushed = 7;
    col.assembled = {8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18};
    col.tracePass = "child";
    r.notes = {"torch's own profiler ran in a separate child process", "a note\nwith a newline"};
    const std::optional<EngineRun> back = parseEngineRun(engineRunJson(r));
    QVERIFY(back);
    QVERIFY(back->config && *back->config == *r.config);
    QVERIFY(back->versions == r.versions);
    QVERIFY(back->device == r.device);
    QVERIFY(back->steps == r.steps);
    QCOMPARE(back->timing.size(), r.timing.size());
    for (size_t i = 0; i < r.timing.size(); ++i) QVERIFY2(back->timing[i] == r.timing[i], r.timing[i].method.c_str());
    QVERIFY(back->collection.assembled == r.collection.assembled);
    QVERIFY(back->collection == r.collection);
    QVERIFY(back->notes == r.notes);
    QVERIFY(*back == r);
    // A CPU run's device is the plain string older readers expect.
    EngineRun cpu;
    cpu.device.name = "cpu";
    QVERIFY(engineRunJson(cpu).find("\"device\": \"cpu\"") != std::string::npos);
    QVERIFY(parseEngineRun(engineRunJson(cpu))->device.isCpu());
  }

  // Every engine capture under tests/data: the structured config equals what its recorded command
  // line parses to (the old way, which these paths without spaces allow).
  void capturesOpenWithTheirConfig() {
    int seen = 0;
    for (const QString& dir : {QStringLiteral("h200"), QStringLiteral("cpu")}) {
      QDir d(QStringLiteral(ATTNSCOPE_TEST_DATA "/") + dir);
      for (const QString& name : d.entryList({QStringLiteral("*.json")}, QDir::Files)) {
        QFile f(d.filePath(name));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject meta = QJsonDocument::fromJson(f.readAll()).object()["attnscope"].toObject();
        if (meta.isEmpty()) continue;
        const std::string json = QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString();
        const std::optional<EngineRun> m = parseEngineRun(json);
        QVERIFY2(m && m->config, qPrintable(name));
        std::vector<std::string> args;
        for (const QString& a : meta["config"].toObject()["args"].toString().split(' ', Qt::SkipEmptyParts))
          args.push_back(a.toStdString());
        RunConfig expected;
        // A CPU run recorded with the GPU's default methods ("--timing cupti,events,host") no longer
        // parses as a command line: the old way lost its config; the structured fields keep it.
        if (parseRunArgs(args, &expected)) {
          QVERIFY2(m->config->device == RunDevice::Cpu, qPrintable(name));
          continue;
        }
        const QString diff = differences(expected, *m->config);
        QVERIFY2(diff.isEmpty(), qPrintable(name + ": " + diff));
        ++seen;
      }
    }
    QVERIFY2(seen >= 10, qPrintable(QString::number(seen)));
  }

  // The one table of timing methods: in TimingMethod order, keys unique and parsed by --timing,
  // the defaults of a run are the rows marked default, and a GPU-only method is refused on the CPU.
  void timingTable() {
    RunConfig defaults;
    for (const TimingMethodInfo& t : timingMethods()) {
      QCOMPARE(timingName(t.method), t.key);
      QCOMPARE(timingByKey(t.key), &t);
      QCOMPARE(defaults.timing[static_cast<size_t>(t.method)], t.defaultOn);
      QVERIFY(!t.label.empty() && !t.measures.empty() && !t.help.empty());
      RunConfig c;
      const std::optional<std::string> err = parseRunArgs({"--device", "cpu", "--timing", std::string(t.key)}, &c);
      QCOMPARE(err.has_value(), t.needsGpu());
      if (err) QVERIFY2(err->find(t.cpuRefusal) != std::string::npos, err->c_str());
    }
    QCOMPARE(timingByKey("stopwatch"), nullptr);
  }
};

QTEST_GUILESS_MAIN(RunContractTest)
#include "test_run_contract.moc"
