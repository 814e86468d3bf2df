// The huge-trace generator (bench/trace_gen.h) writes what it promises: a
// trace that loads without a bad event, with K times the source's steps,
// flows and key_averages calls and times, ids unique across repetitions and
// repetitions that do not overlap in time.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <map>
#include <set>

#include "core/read/trace_reader.h"
#include "core/tables/key_averages.h"
#include "trace_gen.h"

using namespace attnscope;

class TraceGen : public QObject {
  Q_OBJECT

  static QString shared() { return QStringLiteral(ATTNSCOPE_SHARED_TRACES); }
  static QString testData() { return QStringLiteral(ATTNSCOPE_TEST_DATA); }

  static std::vector<Event> named(const EventStore& s, Family f, std::string_view name) {
    std::vector<Event> out;
    for (const Event& e : s.events())
      if (e.family == f && s.name(e) == name) out.push_back(e);
    return out;
  }

  static std::multiset<int64_t> ids(const EventStore& s, Family f, bool correlation) {
    std::multiset<int64_t> out;
    for (const Event& e : s.events()) {
      const int64_t id = correlation ? e.correlation : e.externalId;
      if (e.family == f && id > 0) out.insert(id);
    }
    return out;
  }

  static size_t distinct(const std::multiset<int64_t>& m) { return std::set<int64_t>(m.begin(), m.end()).size(); }

 private slots:
  void repeatsTheSteps_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("step");
    QTest::addColumn<int>("steps");
    QTest::addColumn<int>("reps");
    QTest::newRow("transformer_train20 x2")
        << shared() + "/h200/transformer_train20.json.gz" << QString("## train_step ##") << 20 << 2;
    QTest::newRow("softmax_8x16x1024x64 x5")
        << testData() + "/torch/kineto/softmax_8x16x1024x64.json" << QString("MULTIHEAD_ATTENTION_FULL") << 1 << 5;
  }

  void repeatsTheSteps() {
    QFETCH(QString, source);
    QFETCH(QString, step);
    QFETCH(int, steps);
    QFETCH(int, reps);
    QVERIFY2(QFile::exists(source), qPrintable(source + " is missing"));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string out = dir.filePath("huge.json").toStdString();
    const bench::TraceGenResult g = bench::generateTrace(source.toStdString(), out, 0, static_cast<uint64_t>(reps));
    QVERIFY2(g.ok, g.error.c_str());
    QCOMPARE(g.repetitions, static_cast<uint64_t>(reps));
    QCOMPARE(g.events, g.plan.bodyEvents * static_cast<uint64_t>(reps) + g.plan.onceEvents);
    QCOMPARE(static_cast<qint64>(g.bytes), QFileInfo(QString::fromStdString(out)).size());

    const LoadResult a = loadTrace(source.toStdString());
    const LoadResult b = loadTrace(out);
    QVERIFY(a.ok() && b.ok());
    QCOMPARE(b.store->badTotal(), uint64_t{0});
    QVERIFY2(b.warning.empty(), b.warning.c_str());
    const auto k = static_cast<uint64_t>(reps);

    // K times the steps, one repetition after the other.
    const std::string stepName = step.toStdString();
    QCOMPARE(named(*a.store, Family::UserAnnotation, stepName).size(), static_cast<size_t>(steps));
    auto gen = named(*b.store, Family::UserAnnotation, stepName);
    QCOMPARE(gen.size(), static_cast<size_t>(steps) * k);
    std::sort(gen.begin(), gen.end(), [](const Event& x, const Event& y) { return x.start < y.start; });
    for (size_t i = 1; i < gen.size(); ++i) QVERIFY(gen[i].start >= gen[i - 1].end());

    // Fresh ids: as many distinct External ids (ops) and correlations
    // (kernels) as K copies of the source's, each used as often.
    for (bool corr : {false, true}) {
      const Family f = corr ? Family::Kernel : Family::CpuOp;
      const auto ia = ids(*a.store, f, corr);
      const auto ib = ids(*b.store, f, corr);
      QVERIFY(!ia.empty());
      QCOMPARE(ib.size(), ia.size() * k);
      QCOMPARE(distinct(ib), distinct(ia) * k);
    }
    // Every flow pairs up within its repetition, as in the source.
    QCOMPARE(b.store->links().size(), a.store->links().size() * k);
    QCOMPARE(b.store->noteTotal(), a.store->noteTotal() * k);
    for (int f = 0; f < kFamilyCount; ++f) {
      if (static_cast<Family>(f) == Family::Other) continue;  // the profiler's spans: written once
      QCOMPARE(b.store->familyCount(static_cast<Family>(f)), a.store->familyCount(static_cast<Family>(f)) * k);
    }

    // torch's table scales exactly: K times the calls and the times.
    const KeyAverages ka = computeKeyAverages(*a.store, GroupBy::Name);
    const KeyAverages kb = computeKeyAverages(*b.store, GroupBy::Name);
    QCOMPARE(kb.rows.size(), ka.rows.size());
    std::map<std::pair<std::string, int>, const KeyAverageRow*> byKey;
    for (const auto& r : ka.rows) byKey[{r.name, static_cast<int>(r.deviceType) * 2 + r.userAnnotation}] = &r;
    for (const auto& r : kb.rows) {
      const auto it = byKey.find({r.name, static_cast<int>(r.deviceType) * 2 + r.userAnnotation});
      QVERIFY2(it != byKey.end(), r.name.c_str());
      const KeyAverageRow& o = *it->second;
      QCOMPARE(r.calls, o.calls * k);
      QCOMPARE(r.selfCpuNs, o.selfCpuNs * reps);
      QCOMPARE(r.cpuTotalNs, o.cpuTotalNs * reps);
      QCOMPARE(r.selfDeviceNs, o.selfDeviceNs * reps);
      QCOMPARE(r.deviceTotalNs, o.deviceTotalNs * reps);
      QCOMPARE(r.selfCpuMemBytes, o.selfCpuMemBytes * reps);
    }
  }

  void sizeTarget() {
    // Asked for ~3 copies' worth of bytes, it writes 3 repetitions, within
    // half a repetition of the size asked (the profiler's stretched span and
    // moved end marker are a few bytes longer).
    const std::string source = (testData() + "/torch/kineto/softmax_1x8x64x64.json").toStdString();
    QTemporaryDir dir;
    const std::string out = dir.filePath("t.json").toStdString();
    const bench::TraceGenResult one = bench::generateTrace(source, out, 0, 1);
    QVERIFY2(one.ok, one.error.c_str());
    const uint64_t fixed = one.bytes - one.plan.bodyBytes;
    const uint64_t target = fixed + 3 * one.plan.bodyBytes;
    const bench::TraceGenResult three = bench::generateTrace(source, out, target, 0);
    QVERIFY2(three.ok, three.error.c_str());
    QCOMPARE(three.repetitions, uint64_t{3});
    const uint64_t off = three.bytes > target ? three.bytes - target : target - three.bytes;
    QVERIFY(off < one.plan.bodyBytes / 2);
  }
};

QTEST_GUILESS_MAIN(TraceGen)
#include "test_trace_gen.moc"
