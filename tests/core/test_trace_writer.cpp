// Our Chrome-trace writer round-trips real captures: written, read back,
// torch's table is unchanged and the engine's metadata survives.
#include <QtTest>

#include "core/read/trace_reader.h"
#include "core/tables/key_averages.h"
#include "core/write/trace_writer.h"

using namespace attnscope;

class TraceWriterTest : public QObject {
  Q_OBJECT
 private slots:
  void roundTripKeepsTorchTable_data() {
    QTest::addColumn<QString>("path");
    for (const char* f : {"softmax_8x16x1024x64.json", "none_sync_1x8x64x64.json"})
      QTest::newRow(f) << QString(ATTNSCOPE_TEST_DATA "/torch/kineto/") + f;
    QTest::newRow("train20") << QString(ATTNSCOPE_SHARED_TRACES "/h200/transformer_train20.json.gz");
  }
  void roundTripKeepsTorchTable() {
    QFETCH(QString, path);
    LoadResult a = loadTrace(path.toStdString());
    QVERIFY2(a.ok(), qPrintable(path));
    const std::string json = chromeTraceJson(*a.store, "\"attnscope\": {\"version\": 1, \"steps\": [\"QK MATMUL\"]}");
    LoadResult b = parseTrace(json, "roundtrip.json");
    QVERIFY2(b.ok(), b.ok() ? "" : b.error->what().c_str());
    QCOMPARE(b.store->events().size(), a.store->events().size());
    QCOMPARE(b.store->links().size(), a.store->links().size());
    QCOMPARE(b.store->badTotal(), uint64_t{0});
    QCOMPARE(QString::fromStdString(b.store->meta().attnscopeJson),
             QString("{\"version\": 1, \"steps\": [\"QK MATMUL\"]}"));
    for (GroupBy g : {GroupBy::Name, GroupBy::InputShape}) {
      const KeyAverages x = computeKeyAverages(*a.store, g);
      const KeyAverages y = computeKeyAverages(*b.store, g);
      QCOMPARE(y.rows.size(), x.rows.size());
      for (size_t i = 0; i < x.rows.size(); ++i) {
        QCOMPARE(y.rows[i].name, x.rows[i].name);
        QCOMPARE(y.rows[i].inputShapes, x.rows[i].inputShapes);
        QCOMPARE(y.rows[i].calls, x.rows[i].calls);
        QCOMPARE(y.rows[i].selfCpuNs, x.rows[i].selfCpuNs);
        QCOMPARE(y.rows[i].deviceTotalNs, x.rows[i].deviceTotalNs);
        QCOMPARE(y.rows[i].selfDeviceMemBytes, x.rows[i].selfDeviceMemBytes);
      }
    }
  }

  void pyReprConvertsBack() {
    QCOMPARE(pyReprToJson("['float', 'Scalar', None, True]"), std::string("[\"float\", \"Scalar\", null, true]"));
    QCOMPARE(pyReprToJson("[[8, 16], []]"), std::string("[[8, 16], []]"));
    // (Plain literals: moc cannot read raw strings holding a single quote.)
    const std::string quotes = "[\"it\x27s\", \x27say \\\x27hi\\\x27\x27, \x27\\\\\x27, -1.5e-3, False]";
    const std::string quotesJson = "[\"it\x27s\", \"say \x27hi\x27\", \"\\\\\", -1.5e-3, false]";
    QCOMPARE(pyReprToJson(quotes), quotesJson);
    // Whatever the text, the result is valid JSON: what is not a repr stays one string.
    const std::string notRepr = "[\x27\x27, 1\"[32768, 4096w \x27, 64]\", \x27\x27]";
    const std::string notReprJson = "\"[\x27\x27, 1\\\"[32768, 4096w \x27, 64]\\\", \x27\x27]\"";
    QCOMPARE(pyReprToJson(notRepr), notReprJson);
    for (const char* bad : {"", "[1,]", "[1 2]", "[[1]", "1]", "['a", "[NaN]", "[01x]", "[1] [2]", "-"})
      QVERIFY2(pyReprToJson(bad).front() == '\"', bad);
  }

  // Fuzzer finding (2026-12-03): a trace whose Concrete Inputs hold a
  // malformed list loaded, and the trace written back from it did not.
  void writtenTraceAlwaysLoadsAgain() {
    // Plain literals: moc misreads raw strings holding escapes.
    const std::string t =
        "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::transpose\",\"pid\":1,\"tid\":1,"
        "\"ts\":1.5,\"dur\":1,\"args\":{\"External id\": 3,"
        "\"Concrete Inputs\": [\"\", \"[1, 8, 64, 64]\", 1\"[32768, 4096w \x27, 64]\", \"\"],"
        "\"Input type\": [\"it\x27s\", \"a \\\"quoted\\\" \\\\ type\"]}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":1}]}";
    LoadResult a = parseTrace(t, "in.json");
    QVERIFY(a.ok());
    const std::string out = chromeTraceJson(*a.store);
    LoadResult b = parseTrace(out, "roundtrip.json");
    QVERIFY2(b.ok(), b.ok() ? "" : (b.error->what() + "\n" + out).c_str());
    QCOMPARE(b.store->events().size(), a.store->events().size());
  }
};

QTEST_GUILESS_MAIN(TraceWriterTest)
#include "test_trace_writer.moc"
