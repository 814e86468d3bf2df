// `attnscope-cli run` options: parsed and refused before any allocation.
#include <QtTest>

#include <algorithm>

#include "core/run/engine_run.h"
#include "core/run/run_config.h"

using namespace attnscope;

class RunConfigTest : public QObject {
  Q_OBJECT
 private slots:
  void defaultsAreTheQuestions() {
    RunConfig c;
    QVERIFY(!parseRunArgs({}, &c));
    QCOMPARE(c.shape[2], int64_t{64});
    QCOMPARE(c.warmup, 3);
    QVERIFY(c.timing[static_cast<int>(TimingMethod::Cupti)]);
    QVERIFY(!c.timing[static_cast<int>(TimingMethod::Torch)]);
    QVERIFY(!c.wrap[0] && !c.wrapFull);
    QVERIFY(!c.recordShapes);  // as torch.profiler's record_shapes=False
  }

  void parsesEveryOption() {
    RunConfig c;
    auto err = parseRunArgs({"--device",    "cpu",      "--shape", "8,16,1024,64",    "--dtype",    "bf16",
                             "--seed",      "7",        "--wrap",  "qk,softmax,full", "--sync=end", "--scale",
                             "host-scalar", "--warmup", "0",       "--iters",         "2",          "--timing",
                             "cupti,torch", "--out",    "r.json",  "--progress",      "json",       "--record-shapes"},
                            &c);
    QVERIFY2(!err, err ? err->c_str() : "");
    QCOMPARE(c.device, RunDevice::Cpu);
    QCOMPARE(c.shape[1], int64_t{16});
    QCOMPARE(c.dtype, RunDType::BFloat16);
    QVERIFY(c.wrap[0] && !c.wrap[1] && c.wrap[2] && !c.wrap[3] && c.wrapFull);
    QCOMPARE(c.sync, SyncMode::End);
    QCOMPARE(c.scale, ScaleMode::HostScalar);
    QCOMPARE(c.warmup, 0);
    QCOMPARE(c.iters, 2);
    QVERIFY(c.timing[0] && !c.timing[1] && c.timing[4]);
    QVERIFY(c.progressJson);
    QVERIFY(c.recordShapes);
    QVERIFY(runConfigJson(c).find("\"record_shapes\": true") != std::string::npos);
    // The canonical form round-trips (the GUI and the per-method children use it).
    RunConfig d;
    QVERIFY(!parseRunArgs(toRunArgs(c), &d));
    QCOMPARE(toRunArgs(d), toRunArgs(c));
  }

  // Methods that cannot exist on the CPU: refused by name, dropped from the
  // defaults; on a GPU nothing changes.
  // --device cuda:N picks the GPU; it survives the round trip to the child
  // passes' arguments and is in the trace's config.
  void deviceIndex() {
    RunConfig c;
    QVERIFY(!parseRunArgs({"--device", "cuda:1"}, &c));
    QVERIFY(c.device == RunDevice::Cuda);
    QCOMPARE(c.deviceIndex, 1);
    const std::vector<std::string> args = toRunArgs(c);
    const auto it = std::find(args.begin(), args.end(), std::string("--device"));
    QVERIFY(it != args.end() && std::next(it) != args.end());
    QCOMPARE(*std::next(it), std::string("cuda:1"));
    RunConfig back;
    QVERIFY(!parseRunArgs(args, &back));
    QCOMPARE(back.deviceIndex, 1);
    QVERIFY(runConfigJson(c).find("\"device_index\": 1") != std::string::npos);
    RunConfig zero;
    QVERIFY(!parseRunArgs({"--device", "cuda"}, &zero));
    QCOMPARE(zero.deviceIndex, 0);
    for (const char* bad : {"cuda:", "cuda:x", "cuda:-1", "gpu1"}) {
      const auto err = parseRunArgs({"--device", bad}, &c);
      QVERIFY2(err && err->find("cuda:N") != std::string::npos, bad);
    }
  }

  void timingFollowsTheDevice() {
    RunConfig c;
    auto err = parseRunArgs({"--device", "cpu", "--timing", "events,host"}, &c);
    QVERIFY(err);
    QVERIFY2(err->find("events times the GPU's stream") != std::string::npos, err->c_str());
    QVERIFY(err->find("host-sync") == std::string::npos);
    err = parseRunArgs({"--device", "cpu", "--timing", "host-sync"}, &c);
    QVERIFY(err && err->find("host-sync ends every step with a GPU sync") != std::string::npos);
    err = parseRunArgs({"--device", "cpu", "--timing", "op-events"}, &c);
    QVERIFY(err && err->find("op-events times the GPU's stream with CUDA events") != std::string::npos);
    // On a GPU op-events is a method of its own, next to events, off by default.
    RunConfig both;
    QVERIFY(!parseRunArgs({"--device", "cuda", "--timing", "events,op-events"}, &both));
    QVERIFY(both.timing[static_cast<int>(TimingMethod::Events)] &&
            both.timing[static_cast<int>(TimingMethod::OpEvents)]);
    QCOMPARE(toRunArgs(both).back(), std::string("events,op-events"));
    RunConfig plain;
    QVERIFY(!parseRunArgs({"--device", "cuda"}, &plain));
    QVERIFY(!plain.timing[static_cast<int>(TimingMethod::OpEvents)]);
    QVERIFY(!parseRunArgs({"--device", "cpu"}, &c));
    QVERIFY(c.timing[static_cast<int>(TimingMethod::Cupti)] && c.timing[static_cast<int>(TimingMethod::Host)]);
    QVERIFY(!c.timing[static_cast<int>(TimingMethod::Events)] && !c.timing[static_cast<int>(TimingMethod::HostSync)]);
    // `auto` is decided by the engine, which calls the same rule.
    RunConfig a;
    QVERIFY(!parseRunArgs({"--timing", "events"}, &a));
    RunConfig onGpu = a;
    QVERIFY(!fitTimingToDevice(&onGpu, true));
    QVERIFY(onGpu.timing[static_cast<int>(TimingMethod::Events)]);
    QVERIFY(fitTimingToDevice(&a, false));
    RunConfig d;
    QVERIFY(!parseRunArgs({}, &d));
    QVERIFY(!fitTimingToDevice(&d, false));
    QVERIFY(!d.timing[static_cast<int>(TimingMethod::Events)] && d.timing[static_cast<int>(TimingMethod::Host)]);
    // Only GPU methods left to the defaults: host takes their place.
    RunConfig onlyGpu;
    onlyGpu.timing = {false, true, false, true, false, true};
    QVERIFY(!fitTimingToDevice(&onlyGpu, false));
    QVERIFY(onlyGpu.timing[static_cast<int>(TimingMethod::Host)]);
  }

  // Median and spread over iterations: percentiles between sorted values
  // (numpy's linear rule), "not measured" (-1) left out.
  void spreadOfIterations() {
    StepSpread s = spreadOf({10, 1, 9, 2, 8, 3, 7, 4, 6, 5, -1});
    QCOMPARE(s.n, 10);
    QCOMPARE(s.minNs, 1.0);
    QCOMPARE(s.maxNs, 10.0);
    QCOMPARE(s.medianNs, 5.5);
    QCOMPARE(s.p10Ns, 1.9);
    QCOMPARE(s.p90Ns, 9.1);
    s = spreadOf({42});
    QVERIFY(s.n == 1 && s.medianNs == 42.0 && s.p10Ns == 42.0 && s.p90Ns == 42.0);
    QCOMPARE(spreadOf({-1, -1}).n, 0);
    QCOMPARE(QString::fromStdString(spreadJson(spreadOf({1, 2}))),
             QStringLiteral("{\"n\": 2, \"median_ns\": 1.500, \"min_ns\": 1.000, \"max_ns\": 2.000, "
                            "\"p10_ns\": 1.100, \"p90_ns\": 1.900}"));
    TimingSeries t;
    t.steps = {{100, 5, -1, 7}, {300, 5, -1, 9}, {200, 5, -1, 8}};
    const std::vector<StepSpread> sp = t.spread();
    QCOMPARE(sp[0].medianNs, 200.0);
    QCOMPARE(sp[2].n, 0);
    QCOMPARE(sp[3].p90Ns, 8.8);
  }

  void wrapAllAndNone() {
    RunConfig c;
    QVERIFY(!parseRunArgs({"--wrap", "all"}, &c));
    QVERIFY(c.wrap[0] && c.wrap[1] && c.wrap[2] && c.wrap[3] && !c.wrapFull);
    QVERIFY(!parseRunArgs({"--wrap", "none"}, &c));
    QVERIFY(!c.wrap[0] && !c.wrap[3]);
  }

  void refusesBadValues_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expect");
    QTest::newRow("shape 3 dims") << QStringList{"--shape", "1,2,3"} << "--shape";
    QTest::newRow("shape zero") << QStringList{"--shape", "1,0,64,64"} << "--shape";
    QTest::newRow("shape negative") << QStringList{"--shape", "1,8,-64,64"} << "--shape";
    QTest::newRow("dtype") << QStringList{"--dtype", "int8"} << "--dtype";
    QTest::newRow("wrap name") << QStringList{"--wrap", "qk,attention"} << "'attention'";
    QTest::newRow("sync") << QStringList{"--sync", "always"} << "--sync";
    QTest::newRow("timing") << QStringList{"--timing", "cupti,nsys"} << "'nsys'";
    QTest::newRow("iters 0") << QStringList{"--iters", "0"} << "--iters";
    QTest::newRow("unknown") << QStringList{"--fast"} << "unknown option";
    QTest::newRow("missing value") << QStringList{"--device"} << "needs a value";
    QTest::newRow("record-shapes value") << QStringList{"--record-shapes=0"} << "takes no value";
  }
  void refusesBadValues() {
    QFETCH(QStringList, args);
    QFETCH(QString, expect);
    std::vector<std::string> a;
    for (const auto& s : args) a.push_back(s.toStdString());
    RunConfig c;
    auto err = parseRunArgs(a, &c);
    QVERIFY(err.has_value());
    QVERIFY2(QString::fromStdString(*err).contains(expect), err->c_str());
  }

  void estimatesMemory() {
    RunConfig c;
    c.shape = {8, 16, 1024, 64};
    // q,k,v (3 x 8M) + 3 score tensors (3 x 128M) + o (8M), float32.
    QCOMPARE(estimateWorkloadBytes(c), uint64_t{(3ull * 8388608 + 3ull * 134217728 + 8388608) * 4});
    c.shape = {1024, 1024, 65536, 64};
    QVERIFY(estimateWorkloadBytes(c) > (1ull << 50));
  }
};

QTEST_GUILESS_MAIN(RunConfigTest)
#include "test_run_config.moc"
