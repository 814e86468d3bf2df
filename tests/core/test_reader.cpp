// The reader on tiny hand-written traces whose expected values can be
// checked by eye.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "core/read/chunked_reader.h"
#include "core/read/gzip.h"
#include "core/read/json_scan.h"
#include "core/read/trace_reader.h"
#include "gzip_util.h"
#include "pipeline_check.h"

using namespace attnscope;
namespace fuzz = attnscope::fuzz;

namespace {

// A CPU op containing a launch, the kernel it launched, a flow, a memory
// event. Times in us as Kineto writes them.
const char* kTiny = R"({
  "schemaVersion": 1, "baseTimeNanoseconds": 1790857026000000000,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "computeMajor": 9, "computeMinor": 0, "numSms": 132, "totalGlobalMem": 150109880320}],
  "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::bmm", "pid": 10, "tid": 10, "ts": 5367878831332.529, "dur": 2952.71,
     "args": {"External id": 4109, "Input Dims": [[128, 1024, 64], [128, 64, 1024]], "Input type": ["float", "float"]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 5367878833812.941, "dur": 436.493,
     "args": {"External id": 4109, "correlation": 990}},
    {"ph": "s", "id": 990, "pid": 10, "tid": 10, "ts": 5367878833812.941, "cat": "ac2g", "name": "ac2g"},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 5367878834240.143, "dur": 540.41,
     "args": {"External id": 4109, "correlation": 990, "device": 0, "stream": 7, "grid": [8, 8, 128], "block": [128, 1, 1]}},
    {"ph": "f", "id": 990, "pid": 0, "tid": 7, "ts": 5367878834240.143, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10, "tid": 10, "ts": 5367878831354.077,
     "args": {"Bytes": 536870912, "Device Type": 1, "Device Id": 0, "Total Allocated": 671088640}},
    {"name": "process_name", "ph": "M", "ts": 0, "pid": 10, "tid": 0, "args": {"name": "python3"}}
  ]})";

// Whether each byte of a JSON text is inside a string (its quotes included).
struct InString {
  bool in = false, esc = false;
  bool operator()(char c) {
    if (!in) return in = c == '"';
    if (esc)
      esc = false;
    else if (c == '\\')
      esc = true;
    else if (c == '"')
      in = false;
    return true;
  }
};

// The same JSON text laid out again, written here independently of the
// reader: minified (Python's json.dump(separators=(",", ":"))) or pretty
// (json.dump(indent=1): every value on a line of its own).
enum class Layout { Minified, Pretty };
std::string relaid(const std::string& in, Layout how) {
  std::string out;
  out.reserve(in.size());
  InString str;
  int depth = 0;
  auto line = [&] {
    out += '\n';
    out.append(static_cast<size_t>(depth), ' ');
  };
  for (const char c : in) {
    if (str(c)) {
      out += c;
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    const bool pretty = how == Layout::Pretty;
    if (pretty && (c == '}' || c == ']')) {
      --depth;
      line();
    }
    out += c;
    if (pretty && (c == '{' || c == '[')) {
      ++depth;
      line();
    }
    if (pretty && c == ',') line();
  }
  return out;
}

// The "traceEvents" value of a minified trace: the top-level array form.
std::string eventsArrayOf(const std::string& minified) {
  const size_t open = minified.find("\"traceEvents\":[") + 14;
  InString str;
  int depth = 0;
  for (size_t i = open; i < minified.size(); ++i) {
    const char c = minified[i];
    if (str(c)) continue;
    if (c == '[' || c == '{') ++depth;
    if ((c == ']' || c == '}') && --depth == 0) return minified.substr(open, i + 1 - open);
  }
  return {};
}

// Readable bytes a text in memory needs after it (simdjson's padding, 64).
constexpr size_t kTextPadding = 64;

LoadResult parse(std::string_view json, ReaderLimits lim = {}) { return parseTrace(json, "tiny.json", lim); }

// The first event named `name` (its id), or kNoEvent.
EventId findId(const EventStore& s, std::string_view name) {
  for (EventId i = 0; i < s.size(); ++i)
    if (s.name(s.event(i)) == name) return i;
  return kNoEvent;
}
std::optional<Event> find(const EventStore& s, std::string_view name) {
  const EventId i = findId(s, name);
  return i == kNoEvent ? std::nullopt : std::optional<Event>(s.event(i));
}

}  // namespace

class ReaderTest : public QObject {
  Q_OBJECT

  // Issue 44: texts of the events array as users have them, and as they should not: Kineto's events with
  // names and arguments that hold brackets, "}, {", escaped quotes and runs of backslashes, nested arrays
  // of objects, elements that are not objects, every layout (minified, one per line, pretty, long runs of
  // blanks), the object and the array forms. Case c % 3 == 2 is damaged (1 cut short, 2 a quote taken
  // out, 3 a bracket put in, 4 a comma taken out, 5 a comma before the end, 6 a bare word with a quote).
  struct GenText {
    std::string text;
    int built = 0;   // events written
    int damage = 0;  // 0: valid JSON
  };
  static GenText genText(std::mt19937& rng, int c) {
    GenText g;
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    const char* names[] = {"aten::mm", "a}, {b",    "say \\\"hi\\\"", "back\\\\",       "x\\\\\\\\",
                           "[{]}",     "q\\u0022{", "\\\\\\\"}",      "ProfilerStep#3", "}]"};
    const char* argsPieces[] = {"\"Input Dims\": [[1, 2], [3]]",
                                "\"Concrete Inputs\": [\"\", \"x}]\", \"\\\\\"]",
                                "\"nested\": [{\"a\": \"}\"}, {\"b\": [1, {\"c\": \"]\"}]}]",
                                "\"s\": \"\\\\\\\\\"",
                                "\"e\": {}",
                                "\"l\": []"};
    const char* seps[] = {",", ", ", ",\n", ",\n  ", "\n,", " ,\t"};
    const bool pretty = pick(4) == 0;
    const int events = 600 + pick(500);
    // Damage 6: an element that is not JSON (a bare word with a quote in it) where one cutter and
    // the parts' sums read the text differently, followed by a name ("[{]}") that the sums, reading
    // strings as what is between them, take for an element's end.
    const int damage = g.damage = c % 3 == 2 ? 1 + pick(6) : 0;
    std::string body;
    for (int i = 0; i < events; ++i) {
      if (i) body += seps[pick(6)];
      const bool plant = damage == 6 && i == events / 3;
      if (plant) body += "7\"x, ";
      if (pick(60) == 0) body += std::string(static_cast<size_t>(1 + pick(9000)), pick(2) ? ' ' : '\n');
      if (!plant && pick(40) == 0) {  // an element that is not an event
        const char* scalars[] = {"12", "\"s}{\"", "true", "[1, {\"a\": 2}]"};
        body += scalars[pick(4)];
        continue;
      }
      const char* nl = pretty ? "\n    " : " ";
      std::string ev = std::string("{") + nl + "\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" +
                       names[plant ? 5 : pick(10)] + "\"," + nl +
                       "\"pid\": 1, \"tid\": " + std::to_string(1 + pick(3)) +
                       ", \"ts\": " + std::to_string(1000 + i * 7) + ", \"dur\": 3," + nl +
                       "\"args\": {\"External id\": " + std::to_string(i + 1);
      for (int a = pick(4); a > 0; --a) ev += std::string(", ") + argsPieces[pick(6)];
      ev += std::string("}") + (pretty ? "\n  " : "") + "}";
      body += ev;
      ++g.built;
    }
    std::string& text = g.text;
    text = pick(4) == 0 ? "[" + body + "]"
                        : "{\"schemaVersion\": 1, \"traceEvents\": [\n" + body + "\n], \"traceName\": \"a}]\\\"b\"}";
    const size_t at = text.size() / 8 + static_cast<size_t>(rng() % (text.size() * 3 / 4));
    if (damage == 1) text.resize(at);
    if (damage == 2) {
      const size_t q = text.find('"', at);
      if (q != std::string::npos) text.erase(q, 1);
    }
    if (damage == 3) text.insert(at, "}");
    if (damage == 4) {
      const size_t q = text.find(",", at);
      if (q != std::string::npos) text.erase(q, 1);
    }
    if (damage == 5) text.insert(text.rfind(']'), ",");
    return g;
  }

 private slots:
  void readsTinyTraceExactly() {
    LoadResult r = parse(kTiny);
    QVERIFY(r.ok());
    const EventStore& s = *r.store;
    QCOMPARE(s.events().size(), size_t{4});
    QCOMPARE(s.familyCount(Family::CpuOp), uint64_t{1});
    QCOMPARE(s.familyCount(Family::Kernel), uint64_t{1});
    QCOMPARE(s.familyCount(Family::Memory), uint64_t{1});
    const std::optional<Event> bmm = find(s, "aten::bmm");
    const std::optional<Event> launch = find(s, "cudaLaunchKernel");
    const std::optional<Event> kernel = find(s, "gemm");
    QVERIFY(bmm && launch && kernel);
    // Microseconds with 3 decimals become exact integer nanoseconds.
    QCOMPARE(bmm->start, int64_t{5367878831332529});
    QCOMPARE(bmm->dur, int64_t{2952710});
    QCOMPARE(kernel->dur, int64_t{540410});
    // Nesting on the CPU lane: the launch and the memory event sit in bmm.
    QCOMPARE(launch->depth, uint16_t{1});
    QCOMPARE(launch->parent, findId(s, "aten::bmm"));
    QCOMPARE(bmm->depth, uint16_t{0});
    // Lanes: one CPU thread, one GPU stream, labelled.
    QCOMPARE(s.lanes().size(), size_t{2});
    QCOMPARE(s.lanes()[0].kind, LaneKind::CpuThread);
    QCOMPARE(QString::fromStdString(s.lanes()[0].label), QString("python3 (10) / thread 10"));
    QCOMPARE(QString::fromStdString(s.lanes()[1].label), QString("GPU 0 / stream 7"));
    // Links: the flow binds the launch to the kernel; ids index both ways.
    QCOMPARE(s.links().size(), size_t{1});
    QCOMPARE(s.links()[0].from, findId(s, "cudaLaunchKernel"));
    QCOMPARE(s.links()[0].to, findId(s, "gemm"));
    QCOMPARE(s.byCorrelation(990).size(), size_t{2});
    QCOMPARE(s.byExternalId(4109).size(), size_t{3});
    QVERIFY(s.byCorrelation(12345).empty());
    // Args kept for tables and explanations.
    const auto a = s.argsOf(*bmm);
    QVERIFY(a);
    QCOMPARE(s.str(a->inputDims), std::string_view("[[128, 1024, 64], [128, 64, 1024]]"));
    const auto k = s.argsOf(*kernel);
    QVERIFY(k);
    QCOMPARE(k->grid[2], 128);
    QCOMPARE(k->stream, 7);
    const auto m = s.argsOf(*find(s, "[memory]"));
    QVERIFY(m);
    QCOMPARE(m->bytes, int64_t{536870912});
    QCOMPARE(m->deviceType, 1);
    QCOMPARE(s.meta().baseTimeNanoseconds, int64_t{1790857026000000000});
    QCOMPARE(s.meta().devices.size(), size_t{1});
    QCOMPARE(s.meta().devices[0].numSms, 132);
    QCOMPARE(s.badTotal(), uint64_t{0});
  }

  void arrayFormAndGzipGiveTheSameStore() {
    const std::string arr = R"([{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1.5,"dur":2},
                              {"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":2,"dur":0.5}])";
    LoadResult plain = parse(arr);
    LoadResult gz = parse(gzipOf(arr));
    QVERIFY(plain.ok() && gz.ok());
    QCOMPARE(plain.store->events().size(), size_t{2});
    QCOMPARE(gz.store->events().size(), size_t{2});
    QCOMPARE(gz.store->events()[1].start, int64_t{2000});
    QCOMPARE(gz.store->events()[1].parent, EventId{0});
  }

  void badEventsAreCountedNotFatal() {
    const std::string t = R"({"traceEvents": [
      42,
      {"ph":"X","cat":"cpu_op","name":"neg","pid":1,"tid":1,"ts":1,"dur":-5},
      {"ph":"X","cat":"cpu_op","name":"nots","pid":1,"tid":1,"dur":1},
      {"ph":"X","cat":"cpu_op","name":"nan","pid":1,"tid":1,"ts":"NaN","dur":1},
      {"ph":"X","cat":"cpu_op","name":"huge","pid":1,"tid":1,"ts":1e300,"dur":1},
      {"ph":"X","cat":"cpu_op","name":"good","pid":1,"tid":1,"ts":3,"dur":1}
    ]})";
    LoadResult r = parse(t);
    QVERIFY(r.ok());
    QCOMPARE(r.store->events().size(), size_t{1});
    QCOMPARE(r.store->bad(BadKind::NotAnObject).count, uint64_t{1});
    QCOMPARE(r.store->bad(BadKind::BadNumber).count, uint64_t{2});  // negative dur, 1e300
    QCOMPARE(r.store->bad(BadKind::BadType).count, uint64_t{1});    // "NaN" as a string
    QCOMPARE(r.store->bad(BadKind::MissingField).count, uint64_t{1});
    QCOMPARE(r.store->badTotal(), uint64_t{5});
    // The offset points at the bad event in the text.
    const uint64_t off = r.store->bad(BadKind::NotAnObject).firstOffset;
    QCOMPARE(t.substr(off, 2), std::string("42"));
  }

  void wholeFileErrorsNameTheReason_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expect");
    QTest::newRow("empty") << ""
                           << "empty";
    QTest::newRow("number") << "42"
                            << "not a trace";
    QTest::newRow("no traceEvents") << R"({"a": 1})"
                                    << "traceEvents";
    QTest::newRow("traceEvents string") << R"({"traceEvents": "x"})"
                                        << "traceEvents";
    QTest::newRow("garbage") << "{nope"
                             << "JSON";
  }
  void wholeFileErrorsNameTheReason() {
    QFETCH(QString, text);
    QFETCH(QString, expect);
    LoadResult r = parse(text.toStdString());
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error->what()).contains(expect), r.error->what().c_str());
    QVERIFY(QString::fromStdString(r.error->what()).startsWith("tiny.json: "));
  }

  void limitsGiveClearErrors() {
    ReaderLimits lim;
    lim.maxDepth = 8;
    // Deep values the reader descends into are refused per event...
    LoadResult deep = parse(R"({"traceEvents": [
      {"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[[[[[[[[[1]]]]]]]]]]}},
      {"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":3,"dur":1}]})",
                            lim);
    QVERIFY(deep.ok());
    QCOMPARE(deep.store->events().size(), size_t{1});
    QCOMPARE(deep.store->bad(BadKind::TooDeep).count, uint64_t{1});
    // ...and a file with nothing but them is an error that says so.
    LoadResult onlyDeep = parse("[" + std::string(100, '[') + std::string(100, ']') + "]", lim);
    QVERIFY(!onlyDeep.ok());
    QVERIFY2(onlyDeep.error->message.find("deep") != std::string::npos, onlyDeep.error->message.c_str());

    lim = {};
    lim.maxStringBytes = 16;
    LoadResult longName =
        parse(R"([{"ph":"X","cat":"cpu_op","name":"aaaaaaaaaaaaaaaaaaaaaaaaaaaa","pid":1,"tid":1,"ts":1,"dur":1},
                                    {"ph":"X","cat":"cpu_op","name":"short","pid":1,"tid":1,"ts":3,"dur":1}])",
              lim);
    QVERIFY(longName.ok());
    QCOMPARE(longName.store->bad(BadKind::StringTooLong).count, uint64_t{1});

    lim = {};
    lim.maxDecompressedBytes = 1000;
    lim.maxDecompressedRatio = 0;
    const std::string big = "[" + std::string(100000, ' ') + "]";
    LoadResult bomb = parse(gzipOf(big), lim);
    QVERIFY(!bomb.ok());
    QVERIFY2(bomb.error->message.find("decompressed") != std::string::npos, bomb.error->message.c_str());
  }

  // Each limit the reader documents (ReaderLimits, the CLI's --max-*) stops
  // at its bound and says which limit and where.
  void everyLimitSaysWhichAndWhere() {
    const std::string ev = R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1})";
    // Events: the ones past the limit are counted, not kept.
    ReaderLimits lim;
    lim.maxEvents = 3;
    std::string five = "[";
    for (int i = 0; i < 5; ++i) five += (i ? "," : "") + ev;
    LoadResult many = parse(five + "]", lim);
    QVERIFY(many.ok());
    QCOMPARE(many.store->events().size(), size_t{3});
    const BadCount& over = many.store->bad(BadKind::TooManyEvents);
    QCOMPARE(over.count, uint64_t{2});
    QCOMPARE(over.firstOffset, uint64_t{1 + 3 * (ev.size() + 1)});  // the 4th event
    QVERIFY2(over.firstDetail.find("limit of 3 events (--max-events)") != std::string::npos, over.firstDetail.c_str());

    // Strings: a name, and an argument's text, over the limit.
    lim = {};
    lim.maxStringBytes = 64;
    const std::string dims = "[" + std::string(200, '1') + "]";
    LoadResult strings =
        parse("[" + ev + R"(,{"ph":"X","cat":"cpu_op","name":")" + std::string(100, 'n') +
                  R"(","pid":1,"tid":1,"ts":2,"dur":1},)" +
                  R"({"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":3,"dur":1,"args":{"Input Dims":[)" +
                  dims + "," + dims + "]}}]",
              lim);
    QVERIFY(strings.ok());
    QCOMPARE(strings.store->events().size(), size_t{1});
    const BadCount& longs = strings.store->bad(BadKind::StringTooLong);
    QCOMPARE(longs.count, uint64_t{2});
    QVERIFY2(longs.firstDetail.find("field \"name\" (100 bytes) is over the limit of 64 bytes (--max-string)") !=
                 std::string::npos,
             longs.firstDetail.c_str());

    // Depth: an argument nested past it is counted with the limit's name.
    lim = {};
    lim.maxDepth = 4;
    LoadResult deep = parse(
        R"([{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[[[[[1]]]]]]}},)" +
            ev + "]",
        lim);
    QVERIFY(deep.ok());
    QVERIFY2(deep.store->bad(BadKind::TooDeep).firstDetail.find("--max-depth") != std::string::npos,
             deep.store->bad(BadKind::TooDeep).firstDetail.c_str());
    QCOMPARE(deep.store->bad(BadKind::TooDeep).firstOffset, uint64_t{1});

    // Decompressed size: refused at the limit, whatever the gzip says.
    lim = {};
    lim.maxDecompressedBytes = 4096;
    lim.maxDecompressedRatio = 0;
    LoadResult bomb = parse(gzipOf("[" + std::string(1 << 20, ' ') + "]"), lim);
    QVERIFY(!bomb.ok());
    QVERIFY2(bomb.error->message.find("exceeds the limit of 4096 bytes") != std::string::npos &&
                 bomb.error->message.find("--max-decompressed") != std::string::npos,
             bomb.error->message.c_str());
  }

  // Python's json writes NaN and Infinity bare: those events are bad, the
  // file is not.
  void bareNanIsABadEventNotABrokenFile() {
    LoadResult r = parse(R"({"traceEvents": [
      {"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":NaN,"dur":1},
      {"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":2,"dur":Infinity},
      NaN,
      {"ph":"X","cat":"cpu_op","name":"c","pid":1,"tid":1,"ts":3,"dur":-Infinity},
      {"ph":"X","cat":"cpu_op","name":"d","pid":1,"tid":1,"ts":4,"dur":1,"args":{"External id":NaN}}]})");
    QVERIFY(r.ok());
    QCOMPARE(r.store->events().size(), size_t{1});
    QCOMPARE(r.store->bad(BadKind::BadNumber).count, uint64_t{3});
    QCOMPARE(r.store->bad(BadKind::NotAnObject).count, uint64_t{1});
    QVERIFY(r.warning.empty());
  }

  // Argument strings keep Python's str(): quotes chosen and escaped the way
  // Python does, so the text can be read back (trace writer).
  void argumentTextIsPythonsRepr() {
    const std::string t =
        "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,"
        "\"args\":{\"Concrete Inputs\":[\"it\'s\", \"say \\\"hi\\\"\", \"a\\\\b\", \"\\n\", 1.5e3, \"\"]}}]";
    LoadResult r = parse(t);
    QVERIFY(r.ok());
    const auto a = r.store->argsOf(r.store->events()[0]);
    QVERIFY(a);
    const std::string want = "[\"it\'s\", \'say \"hi\"\', \'a\\\\b\', \'\\n\', 1.5e3, \'\']";
    QCOMPARE(std::string(r.store->str(a->concreteInputs)), want);
  }

  // Every input the fuzzer found (tests/data/fuzz, named for what it broke)
  // passes the fuzzer's own check, quickly.
  // Progress counts what was read, and a cancel stops a load at once on
  // every path (one pass, text chunks, a .gz stream) with "loading cancelled".
  void progressAndCancel() {
    std::string t = "{\"traceEvents\": [\n";
    for (int i = 0; i < 20000; ++i)
      t += std::string(i ? ",\n" : "") + R"({"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": )" +
           std::to_string(i * 3) + ", \"dur\": 1}";
    t += "\n]}";
    for (uint64_t minBytes : {uint64_t{1}, UINT64_MAX}) {
      for (bool gz : {false, true}) {
        const std::string text = gz ? gzipOf(t) : t;
        LoadProgress progress;
        ReaderLimits lim;
        lim.parallelMinBytes = minBytes;
        lim.chunkBytes = 64 << 10;
        lim.progress = &progress;
        LoadResult r = parse(text, lim);
        QVERIFY(r.ok());
        QCOMPARE(progress.events.load(), uint64_t{20000});
        QCOMPARE(progress.stage.load(), 1);
        QCOMPARE(progress.bytesTotal.load(), uint64_t{text.size()});
        QCOMPARE(progress.bytesDone.load(), progress.bytesTotal.load());
        LoadProgress stop;
        stop.cancel = true;
        lim.progress = &stop;
        LoadResult c = parse(text, lim);
        QVERIFY(!c.ok() && c.cancelled);
        QVERIFY2(c.error->message == "loading cancelled", c.error->message.c_str());
      }
    }
  }

  void fuzzFindingsStayFixed_data() {
    QTest::addColumn<QString>("path");
    const QDir dir(QStringLiteral(ATTNSCOPE_TEST_DATA "/fuzz"));
    for (const QString& f : dir.entryList(QDir::Files)) QTest::newRow(qPrintable(f)) << dir.filePath(f);
    QVERIFY(dir.entryList(QDir::Files).size() >= 3);
  }
  void fuzzFindingsStayFixed() {
    QFETCH(QString, path);
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray bytes = f.readAll();
    QElapsedTimer t;
    t.start();
    QVERIFY(fuzz::checkPipeline(std::string_view(bytes.constData(), static_cast<size_t>(bytes.size()))));
    QVERIFY2(t.elapsed() < 5000, qPrintable(QString("took %1 ms").arg(t.elapsed())));
  }

  // Fuzzer finding (2026-12-03): the windowed reader looked for a place to
  // cut between events at every newline and scanned the blanks around each
  // one, so a run of blanks cost its length squared (a 1.6 KB .gz of
  // newlines: 167 s). Both the text and the gzip windows.
  void blankRunsAreScannedOnce() {
    const std::string ev = R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1})";
    const std::string text = "{\"traceEvents\": [" + ev + ",\n" + std::string(4u << 20, '\n') + ev + "," +
                             std::string(1u << 20, ' ') + "\n" + ev + "]}";
    ReaderLimits lim;
    lim.parallelMinBytes = 4096;
    lim.chunkBytes = 1u << 16;
    for (const std::string& input : {text, gzipOf(text)}) {
      QElapsedTimer t;
      t.start();
      LoadResult r = parse(input, lim);
      QVERIFY(r.ok());
      QCOMPARE(r.store->events().size(), size_t{3});
      QVERIFY2(t.elapsed() < 2000, qPrintable(QString("took %1 ms").arg(t.elapsed())));
    }
  }

  void bomAndInvalidUtf8Load() {
    LoadResult bom =
        parse("\xEF\xBB\xBF[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]");
    QVERIFY(bom.ok());
    QCOMPARE(bom.store->events().size(), size_t{1});
    LoadResult bad =
        parse("[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\xff\xfe\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]");
    QVERIFY(bad.ok());
    QCOMPARE(bad.store->name(bad.store->events()[0]), std::string_view("a??"));
    QVERIFY(bad.warning.find("UTF-8") != std::string::npos);
  }

  void truncatedFileKeepsWhatWasRead() {
    std::string t(kTiny);
    t.resize(t.find("\"ph\": \"f\""));  // cut inside the event array
    LoadResult r = parse(t);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error->what().c_str());
    QVERIFY(r.store->events().size() >= 2);
    QVERIFY(!r.warning.empty());
  }

  // The parallel chunked parse must build exactly the store the sequential
  // parse builds (a real capture, forced down both paths).
  // (Windows: a mapped file, or a gzip stream inflated as it is parsed; many
  // small windows exercise the cuts and the carried partial events.)
  void chunkedParseEqualsSequential_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<qulonglong>("window");
    QTest::addColumn<bool>("inflateFirst");  // read train20 as a plain (mapped) JSON file
    QTest::addColumn<QString>("layout");     // written again: minified, array, pretty (+ ".gz")
    const QString softmax = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_8x16x1024x64.json");
    const QString train = QStringLiteral(ATTNSCOPE_SHARED_TRACES "/h200/transformer_train20.json.gz");
    QTest::newRow("softmax") << softmax << qulonglong{8 << 20} << false << QString();
    QTest::newRow("softmax 4 KiB windows") << softmax << qulonglong{4096} << false << QString();
    QTest::newRow("train20 gz stream") << train << qulonglong{8 << 20} << false << QString();
    QTest::newRow("train20 gz stream 64 KiB windows") << train << qulonglong{64 << 10} << false << QString();
    QTest::newRow("train20 mapped 256 KiB windows") << train << qulonglong{256 << 10} << true << QString();
    // Layouts without a newline between events, and one with newlines inside them (a small real
    // capture in 4 KiB windows: the sanitizer runs read each several times over).
    for (const char* layout : {"minified", "array", "pretty", "minified.gz", "array.gz", "pretty.gz"})
      QTest::newRow(qPrintable(QStringLiteral("softmax %1, 4 KiB windows").arg(QLatin1String(layout))))
          << softmax << qulonglong{4096} << true << QString::fromLatin1(layout);
  }
  void chunkedParseEqualsSequential() {
    QFETCH(QString, path);
    QFETCH(qulonglong, window);
    QFETCH(bool, inflateFirst);
    QFETCH(QString, layout);
    QVERIFY2(QFile::exists(path), qPrintable("missing " + path));
    QTemporaryDir dir;
    if (inflateFirst) {
      QFile in(path);
      QVERIFY(in.open(QIODevice::ReadOnly));
      const QByteArray raw = in.readAll();
      std::string json(raw.constData(), static_cast<size_t>(raw.size()));
      if (isGzip(raw.constData(), static_cast<size_t>(raw.size()))) {
        std::vector<char> text;
        size_t n = 0;
        std::string err;
        QVERIFY(gunzip(raw.constData(), static_cast<size_t>(raw.size()), 1ull << 32, 0, &text, &n, &err));
        json.assign(text.data(), n);
      }
      if (layout.startsWith(QLatin1String("minified"))) json = relaid(json, Layout::Minified);
      if (layout.startsWith(QLatin1String("array"))) json = eventsArrayOf(relaid(json, Layout::Minified));
      if (layout.startsWith(QLatin1String("pretty"))) json = relaid(json, Layout::Pretty);
      if (!layout.isEmpty()) QVERIFY(json.find("},{") != std::string::npos || layout.startsWith("pretty"));
      if (layout.endsWith(QLatin1String(".gz"))) json = gzipOf(json, 1);
      path = dir.filePath("train20.json");
      QFile out(path);
      QVERIFY(out.open(QIODevice::WriteOnly) &&
              out.write(json.data(), static_cast<qint64>(json.size())) == qint64(json.size()));
    }
    ReaderLimits seqLim;
    seqLim.parallelMinBytes = UINT64_MAX;
    ReaderLimits parLim;
    parLim.parallelMinBytes = 1;
    parLim.chunkBytes = window;
    LoadResult a = loadTrace(path.toStdString(), seqLim);
    LoadResult b = loadTrace(path.toStdString(), parLim);
    QVERIFY(a.ok() && b.ok());
    QCOMPARE(a.chunks, uint64_t{0});
    // (A minified copy of the small capture is about 55 KB: 13 chunks of 4 KiB.)
    QVERIFY(b.chunks >= (window < (1 << 20) ? (layout.isEmpty() ? 16u : 8u) : 2u));
    QCOMPARE(b.warning, a.warning);
    QCOMPARE(b.jsonBytes, a.jsonBytes);
    const EventStore& x = *a.store;
    const EventStore& y = *b.store;
    QCOMPARE(x.events().size(), y.events().size());
    QCOMPARE(x.lanes().size(), y.lanes().size());
    QCOMPARE(x.links().size(), y.links().size());
    QCOMPARE(x.badTotal(), y.badTotal());
    QCOMPARE(x.noteTotal(), y.noteTotal());
    for (size_t i = 0; i < x.lanes().size(); ++i) QCOMPARE(x.lanes()[i].label, y.lanes()[i].label);
    for (size_t i = 0; i < x.events().size(); ++i) {
      const Event& e = x.events()[i];
      const Event& f = y.events()[i];
      QVERIFY(e.start == f.start && e.dur == f.dur && e.lane == f.lane && e.parent == f.parent &&
              e.correlation == f.correlation && e.externalId == f.externalId && x.name(e) == y.name(f));
      const auto ea = x.argsOf(e);
      const auto fa = y.argsOf(f);
      QCOMPARE(ea.has_value(), fa.has_value());
      if (ea) {
        QCOMPARE(x.str(ea->inputDims), y.str(fa->inputDims));
        QCOMPARE(ea->bytes, fa->bytes);
      }
    }
  }

  // Issue 44, 8 CPUs: the text cut into chunks in parts on several threads (each part's start found
  // from the string state and nesting summed over the parts before it) must hand out the elements one
  // cutter hands out. A generator of the texts users have and of the ones they should not: Kineto's
  // events with names and arguments that hold brackets, "}, {", escaped quotes and runs of
  // backslashes, nested arrays of objects, elements that are not objects, every layout (minified,
  // one per line, pretty, long runs of blanks), the object and the array forms; a third damaged (cut
  // short, a quote or comma taken out, a bracket put in). Truth: the events built (for the undamaged
  // texts), and the one cutter's load (same error, warning, events).
  void partsCutAsOneCutter() {
    std::mt19937 rng(4404);
    int cases = 0, valid = 0, damagedCases = 0, partsTaken = 0, withParts = 0, errorsSame = 0;
    int starts = 0, startsWrong = 0, wrongFound = 0, planted = 0;
    for (int c = 0; c < 360; ++c) {
      const bool eight = c % 2 == 1;
      if (eight)
        qputenv("ATTNSCOPE_THREADS", "8");
      else
        qunsetenv("ATTNSCOPE_THREADS");
      const GenText gen = genText(rng, c);
      const std::string& text = gen.text;
      const int damage = gen.damage, built = gen.built;
      planted += damage == 6 ? 1 : 0;
      // The parts' starts themselves: the text in 8 KiB parts, each part's state from the sums before it,
      // its start the first element end after that; one cutter over the whole text must stand just after an
      // element at each of them (always where the text is valid JSON: the sums are exact there).
      {
        reader::HeadScanner head(1u << 20);
        size_t used = 0;
        QVERIFY(head.scan(text.data(), text.size(), 0, &used) == reader::HeadScanner::Stop::Found);
        const uint64_t from = head.openAt() + 1;
        reader::ElementCutter cutter(4096, 1u << 20);
        reader::TextState st;
        uint64_t pos = from;
        auto justAfterAt = [&](reader::ElementCutter& cut, uint64_t& where, uint64_t b) {
          while (where < b) {
            reader::ElementCutter::Run run;
            const auto stop = cut.scan(text.data() + where, static_cast<size_t>(b - where), where, &used, &run);
            where += used;
            if (stop == reader::ElementCutter::Stop::Close || stop == reader::ElementCutter::Stop::Error) return -1;
          }
          return cut.justAfter(b - 1) ? 1 : 0;
        };
        for (uint64_t x = from; x + 8192 < text.size(); x += 8192) {
          st = reader::after(st, reader::summarize(text.data(), from, x, x + 8192));
          const uint64_t b =
              reader::elementEndAfter(text.data(), from, x + 8192, std::min<uint64_t>(x + 16384, text.size()), st);
          if (b == reader::kNoByte || b <= pos) continue;
          const int ok = justAfterAt(cutter, pos, b);
          if (ok < 0) break;
          ++starts;
          if (ok == 1) continue;
          ++startsWrong;
          QVERIFY2(damage != 0,
                   qPrintable(QString("case %1: a part start at byte %2 is not an element end").arg(c).arg(b)));
          break;
        }
        // A part that starts just before the bare word: the sums go wrong there, and the cutter says so.
        if (damage == 6) {
          const uint64_t p7 = text.find("7\"x");
          const reader::TextState s7 = reader::after({}, reader::summarize(text.data(), from, from, p7));
          const uint64_t b = reader::elementEndAfter(text.data(), from, p7, text.size(), s7);
          QVERIFY(b != reader::kNoByte && text.compare(b - 4, 4, "[{]}") == 0);
          reader::ElementCutter fresh(4096, 1u << 20);
          uint64_t at7 = from;
          if (justAfterAt(fresh, at7, b) == 0) ++wrongFound;
        }
      }
      // One cutter over the whole text in one call and in pieces of 1 to 200 bytes (as a part's cutter
      // ends where the next part starts) ends the same way: where a call's text ends changes nothing.
      {
        reader::HeadScanner head(1u << 20);
        size_t used = 0;
        QVERIFY(head.scan(text.data(), text.size(), 0, &used) == reader::HeadScanner::Stop::Found);
        auto cutAll = [&](bool pieces) {
          reader::ElementCutter cut(4096, 1u << 20);
          uint64_t pos = head.openAt() + 1;
          auto stop = reader::ElementCutter::Stop::NeedMore;
          while (pos < text.size()) {
            const size_t n = pieces ? std::min<size_t>(1 + rng() % 200, text.size() - pos) : text.size() - pos;
            size_t got = 0;
            reader::ElementCutter::Run run;
            stop = cut.scan(text.data() + pos, n, pos, &got, &run);
            pos += got;
            if (stop == reader::ElementCutter::Stop::Close || stop == reader::ElementCutter::Stop::Error) break;
          }
          if (stop == reader::ElementCutter::Stop::Cut) stop = reader::ElementCutter::Stop::NeedMore;  // (at the end)
          return std::to_string(static_cast<int>(stop)) + " " + std::to_string(cut.closeAt()) + " " +
                 std::to_string(cut.elements()) + " " + std::to_string(cut.lastEnd()) + " " + cut.error();
        };
        const std::string whole = cutAll(false), inPieces = cutAll(true);
        QVERIFY2(whole == inPieces, qPrintable(QString("case %1: %2 / %3")
                                                   .arg(c)
                                                   .arg(QString::fromStdString(whole))
                                                   .arg(QString::fromStdString(inPieces))));
      }
      ReaderLimits one;
      one.parallelMinBytes = 1;
      one.chunkBytes = 4096;
      one.parallelCutMinThreads = 1000;
      ReaderLimits parts = one;
      parts.parallelCutMinThreads = 1;
      const LoadResult a = parse(text, one);
      const LoadResult b = parse(text, parts);
      ++cases;
      QCOMPARE(b.ok(), a.ok());
      QCOMPARE(b.warning, a.warning);
      if (!a.ok()) {
        QCOMPARE(b.error->message, a.error->message);
        ++errorsSame;
        continue;
      }
      QVERIFY2(b.store->events().size() == a.store->events().size(),
               qPrintable(QString("case %1 (damage %2): %3 events in parts, %4 with one cutter")
                              .arg(c)
                              .arg(damage)
                              .arg(b.store->events().size())
                              .arg(a.store->events().size())));
      QCOMPARE(b.store->badTotal(), a.store->badTotal());
      for (size_t i = 0; i < a.store->events().size(); ++i) {
        const Event& e = a.store->events()[i];
        const Event& f = b.store->events()[i];
        QVERIFY(e.start == f.start && e.lane == f.lane && e.externalId == f.externalId &&
                a.store->name(e) == b.store->name(f));
      }
      if (b.cutParts >= 2) ++withParts;
      partsTaken += static_cast<int>(b.cutParts);
      if (damage == 0) {
        ++valid;
        QCOMPARE(b.store->events().size(), static_cast<size_t>(built));
        QVERIFY2(b.chunks > 0 && b.cutParts >= 2, qPrintable(QString("case %1: %2 parts").arg(c).arg(b.cutParts)));
      } else {
        ++damagedCases;
      }
    }
    qunsetenv("ATTNSCOPE_THREADS");
    qInfo(
        "part starts: %d checked against one cutter, %d not an element end (all in damaged texts); a start "
        "found wrong after a bare word with a quote, and seen so by the cutter, in %d of %d texts",
        starts, startsWrong, wrongFound, planted);
    QVERIFY(starts >= 1000);
    QCOMPARE(wrongFound, planted);  // the cutters' check sees what the sums got wrong
    qInfo(
        "parts cut: %d cases (%d undamaged, all cut in parts, events as built; %d damaged that loaded); %d loaded "
        "with 2+ parts taken, %d parts in all; %d refused with the one cutter's error",
        cases, valid, damagedCases, withParts, partsTaken, errorsSame);
    QVERIFY(valid >= 200);
  }

  // The same, at the source of the chunks itself (before any parse, so damaged texts are compared too,
  // not only their one-pass fallback): the chunks a text in parts hands out, to 1 or 4 threads asking at
  // once, hold the elements one cutter's chunks hold, in the same order, and the text ends the same way
  // (complete or not, the note of a cut, the object around the array). Three texts built for the paths
  // the generator seldom takes: a part whose start the sums get wrong (a bare word with a quote just
  // after a part begins: the cutter before it sees the mismatch and goes on alone), a text cut short
  // just after the last part's start (its part holds no whole element: the whole ones are before), and a
  // stop while threads wait for parts.
  void partsHandOutOneCuttersElements() {
    // (The source's buffers are one a thread, for as many threads as an open may use: up to 8 here.)
    qputenv("ATTNSCOPE_THREADS", "8");
    struct Handed {
      std::vector<std::pair<uint64_t, uint64_t>> elements;  // first and last byte of each
      bool complete = false;
      std::string partial, meta;
      uint64_t parts = 0;
      size_t chunks = 0;
    };
    auto drive = [](const std::string& text, unsigned minThreads, int threads, Handed* h) {
      std::string buf = text;
      buf.append(kTextPadding, '\0');
      ReaderLimits lim;
      lim.chunkBytes = 4096;
      lim.parallelCutMinThreads = minThreads;
      auto src = reader::textChunks(buf.data(), text.size(), 0, lim, false);
      QVERIFY(src);
      std::mutex m;
      std::map<size_t, std::pair<uint64_t, uint64_t>> got;  // chunk index -> its run
      bool copied = true;
      auto work = [&] {
        reader::Chunk w;
        while (src->next(&w)) {
          const bool same = w.len >= 3 && w.text[0] == '[' && w.text[w.len - 1] == ']' &&
                            std::memcmp(w.text + 1, text.data() + w.offset + 1, w.len - 2) == 0;
          {
            std::lock_guard<std::mutex> lock(m);
            copied &= same;
            got[w.index] = {w.offset + 1, w.offset + w.len - 2};
          }
          src->release(w);
        }
      };
      std::vector<std::thread> ts;
      for (int k = 1; k < threads; ++k) ts.emplace_back(work);
      work();
      for (auto& t : ts) t.join();
      QVERIFY(copied);
      QVERIFY(got.empty() || got.rbegin()->first + 1 == got.size());  // indexes 0, 1, 2, ...
      // Each chunk's elements, by a fresh cutter that hands out one element at a time.
      for (const auto& [index, run] : got) {
        reader::ElementCutter one(1, 1u << 30);
        uint64_t pos = run.first;
        const uint64_t end = run.second + 1;
        while (true) {
          size_t used = 0;
          reader::ElementCutter::Run r;
          const auto stop = one.scan(text.data() + pos, static_cast<size_t>(end - pos), pos, &used, &r);
          pos += used;
          if (stop == reader::ElementCutter::Stop::Cut) h->elements.emplace_back(r.first, r.last);
          if (stop == reader::ElementCutter::Stop::Error) h->elements.emplace_back(reader::kNoByte, pos);
          if (stop != reader::ElementCutter::Stop::Cut) break;
        }
        const auto rest = one.rest();
        if (rest.first != reader::kNoByte) h->elements.emplace_back(rest.first, rest.last);
      }
      h->complete = src->complete();
      h->partial = src->partialNote();
      h->meta = src->metadataJson();
      h->parts = src->cutParts();
      h->chunks = got.size();
    };
    // (A text that ends in an error hands out no more, and is then read by the one-pass reader, which
    // says what is wrong: what came before the error is a prefix of the same elements, cut into chunks
    // that differ, so the elements held back with the error's chunk differ.)
    auto same = [](const Handed& a, const Handed& b) {
      if (a.complete != b.complete) return false;
      if (!a.complete) {
        const size_t n = std::min(a.elements.size(), b.elements.size());
        return std::equal(a.elements.begin(), a.elements.begin() + static_cast<std::ptrdiff_t>(n), b.elements.begin());
      }
      return a.elements == b.elements && a.partial == b.partial && a.meta == b.meta;
    };
    std::mt19937 rng(4405);
    int compared = 0, inParts = 0, damaged = 0;
    for (int c = 0; c < 150; ++c) {
      const GenText gen = genText(rng, c);
      Handed one, parts1, parts4;
      drive(gen.text, 1000, 4, &one);
      drive(gen.text, 1, 1, &parts1);
      drive(gen.text, 1, 4, &parts4);
      QVERIFY2(same(one, parts1) && same(one, parts4), qPrintable(QString("case %1 (damage %2): %3 / %4 / %5 elements")
                                                                      .arg(c)
                                                                      .arg(gen.damage)
                                                                      .arg(one.elements.size())
                                                                      .arg(parts1.elements.size())
                                                                      .arg(parts4.elements.size())));
      QCOMPARE(one.parts, uint64_t{0});
      if (gen.damage == 0) {
        QVERIFY(one.complete && parts4.parts >= 3);
        QVERIFY(one.elements.size() >= static_cast<size_t>(gen.built));
      }
      ++compared;
      inParts += parts4.parts >= 2 ? 1 : 0;
      damaged += gen.damage ? 1 : 0;
    }
    qInfo(
        "%d texts (%d damaged): the same elements, end and object in parts (on 1 and 4 threads) as with one "
        "cutter; %d cut in 2 or more parts",
        compared, damaged, inParts);

    // The texts built for the seldom paths, from one valid text (object form, one event per line).
    std::string base = "{\"traceEvents\": [\n";
    for (int i = 0; i < 900; ++i)
      base += std::string(i ? ",\n" : "") + "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op" +
              std::to_string(i % 7) + "\", \"pid\": 1, \"tid\": 1, \"ts\": " + std::to_string(i * 3) + ", \"dur\": 1}";
    base += "\n], \"traceName\": \"t\"}";
    const uint64_t start = base.find('[') + 1;
    const uint64_t part = 8 * 4096;  // the texts are over 32 KiB: chunks of 4 KiB, parts of 8 chunks
    // The element ends of the valid text, by one cutter.
    std::vector<uint64_t> ends;
    {
      Handed h;
      drive(base, 1000, 1, &h);
      for (const auto& e : h.elements) ends.push_back(e.second);
      QCOMPARE(ends.size(), size_t{900});
    }
    auto lastEndBefore = [&](uint64_t at) { return *std::prev(std::lower_bound(ends.begin(), ends.end(), at)); };
    auto firstEndFrom = [&](uint64_t at) { return *std::lower_bound(ends.begin(), ends.end(), at); };
    // 1. Part 1 starts among blanks put after an element, just before a bare word with a quote and an event
    // named "[{]}": the sums flip there and take the name's '}' for an element's end.
    {
      const uint64_t x1 = start + part;
      const uint64_t e = lastEndBefore(x1);
      std::string t = base;
      t.insert(e + 1, std::string(x1 - e + 4, ' ') +
                          ", 7\"x, {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"[{]}\", \"pid\": 1, \"tid\": 1, "
                          "\"ts\": 1, \"dur\": 1}");
      const reader::TextState st = reader::after({}, reader::summarize(t.data(), start, start, x1));
      const uint64_t b = reader::elementEndAfter(t.data(), start, x1, x1 + part, st);
      QVERIFY(b != reader::kNoByte && t.compare(b - 4, 4, "[{]}") == 0);  // the wrong start
      Handed one, parts;
      drive(t, 1000, 4, &one);
      drive(t, 1, 4, &parts);
      QVERIFY(same(one, parts));
      QCOMPARE(parts.parts, uint64_t{1});  // part 0's cut, then one cutter alone
      QVERIFY(one.complete);
    }
    // 2. Cut short 10 bytes after the first element end in the last part (part 2 of 3): that part holds no
    // whole element, the text's whole ones are all before it. Complete (the whole ones kept), with the note.
    {
      const uint64_t x2 = start + 2 * part;
      std::string t = base.substr(0, firstEndFrom(x2) + 10);
      QVERIFY(t.size() > x2 && (t.size() - start + part - 1) / part == 3);
      Handed one, parts;
      drive(t, 1000, 4, &one);
      drive(t, 1, 4, &parts);
      QVERIFY(same(one, parts));
      QVERIFY(one.complete);
      QVERIFY2(one.partial.find("the file ends early") != std::string::npos, one.partial.c_str());
      QVERIFY(parts.parts >= 2);
    }
    // 3. A stop while threads wait: 8 threads ask for chunks of a large text; the first to get its 5th
    // chunk stops the source. Every thread comes back (a thread left waiting for a part would hang here).
    {
      std::string t = "{\"traceEvents\": [\n";
      for (int i = 0; i < 40000; ++i)
        t += std::string(i ? ",\n" : "") +
             "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": " +
             std::to_string(i * 3) + ", \"dur\": 1}";
      t += "\n]}";
      t.append(kTextPadding, '\0');
      ReaderLimits lim;
      lim.chunkBytes = 4096;
      lim.parallelCutMinThreads = 1;
      auto src = reader::textChunks(t.data(), t.size() - kTextPadding, 0, lim, false);
      QVERIFY(src);
      std::atomic<int> handed{0}, back{0};
      auto work = [&] {
        reader::Chunk w;
        while (src->next(&w)) {
          if (++handed == 5) src->stop();
          src->release(w);
        }
        ++back;
      };
      std::vector<std::thread> ts;
      for (int k = 0; k < 8; ++k) ts.emplace_back(work);
      for (auto& th : ts) th.join();
      QCOMPARE(back.load(), 8);
      QVERIFY(!src->complete());
      QVERIFY(handed.load() < 200);  // (3.5 MB in 4 KiB chunks: about 850 in all)
    }
    qunsetenv("ATTNSCOPE_THREADS");
  }

  // Bad events, invalid UTF-8 and names inside windows read exactly as the
  // one-pass reader reads them: same counts, offsets, warning and store.
  void windowsReportWhatOnePassReports() {
    std::string t = "{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [\n";
    for (int i = 0; i < 3000; ++i) {
      std::string name = "op" + std::to_string(i % 37);
      if (i == 1500) name = "bad\xff\xfeutf8";
      const std::string ts = i == 2500 ? "" : "\"ts\": " + std::to_string(1000 + i * 10) + ".125, ";
      t += std::string(i ? ",\n" : "") + "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" + name +
           "\", \"pid\": 7, \"tid\": \"worker\", " + ts +
           "\"dur\": 5,\n    \"args\": {\"External id\": " + std::to_string(i + 1) + ", \"Input Dims\": [[" +
           std::to_string(i % 5) + ", 3]]}\n  }";
    }
    t += "\n  ],\n  \"traceName\": \"synthetic\"\n}\n";
    ReaderLimits seq;
    seq.parallelMinBytes = UINT64_MAX;
    ReaderLimits win;
    win.parallelMinBytes = 1;
    win.chunkBytes = 4096;
    for (bool gz : {false, true}) {
      const std::string text = gz ? gzipOf(t) : t;
      LoadResult a = parse(text, seq);
      LoadResult b = parse(text, win);
      QVERIFY(a.ok() && b.ok());
      QVERIFY(b.chunks > 20);
      QCOMPARE(b.store->events().size(), size_t{2999});
      QCOMPARE(b.store->bad(BadKind::MissingField).count, uint64_t{1});
      QCOMPARE(b.store->bad(BadKind::MissingField).firstOffset, a.store->bad(BadKind::MissingField).firstOffset);
      QVERIFY2(b.warning.find("2 invalid UTF-8 byte(s)") != std::string::npos, b.warning.c_str());
      QCOMPARE(b.warning, a.warning);
      QVERIFY(find(*b.store, "bad??utf8"));
      QCOMPARE(b.store->lanes().size(), size_t{1});
      QCOMPARE(b.store->lanes()[0].label, a.store->lanes()[0].label);
      for (size_t i = 0; i < a.store->events().size(); ++i) {
        const Event& e = a.store->events()[i];
        const Event& f = b.store->events()[i];
        QVERIFY(e.start == f.start && e.externalId == f.externalId && a.store->name(e) == b.store->name(f));
        QCOMPARE(a.store->str(a.store->argsOf(e)->inputDims), b.store->str(b.store->argsOf(f)->inputDims));
      }
    }
  }

  // A gzip stream that is cut short or inflates past the limit fails with
  // the gzip reason, also when inflated window by window.
  void gzipStreamErrors() {
    std::string t = "{\"traceEvents\": [\n";
    for (int i = 0; i < 20000; ++i)
      t += std::string(i ? ",\n" : "") + "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, " +
           "\"tid\": 1, \"ts\": " + std::to_string(i * 3) + ", \"dur\": 1}";
    t += "\n]}";
    ReaderLimits win;
    win.parallelMinBytes = 1;
    win.chunkBytes = 8192;
    const std::string gz = gzipOf(t);
    LoadResult whole = parse(gz, win);
    QVERIFY(whole.ok());
    QVERIFY(whole.chunks > 20);
    QCOMPARE(whole.store->events().size(), size_t{20000});
    // A stream cut short is salvaged like a cut .json: the complete events before the cut, a
    // warning that says where, and the store marked partial.
    LoadResult cut = parse(gz.substr(0, gz.size() * 2 / 3), win);
    QVERIFY2(cut.ok(), cut.error ? cut.error->message.c_str() : "");
    QVERIFY(cut.store->events().size() > 1000 && cut.store->events().size() < 20000);
    QVERIFY2(cut.warning.find("the .gz ends early") != std::string::npos, cut.warning.c_str());
    QVERIFY(!cut.store->meta().partial.empty());
    QVERIFY(whole.store->meta().partial.empty());
    std::string corrupt = gz;
    corrupt[corrupt.size() - 6] ^= 0x55;  // the CRC in the trailer
    LoadResult bad = parse(corrupt, win);
    QVERIFY(!bad.ok());
    QVERIFY2(bad.error->message.find("gzip") != std::string::npos, bad.error->message.c_str());
    win.maxDecompressedBytes = t.size() / 2;
    win.maxDecompressedRatio = 0;
    LoadResult bomb = parse(gz, win);
    QVERIFY(!bomb.ok());
    QVERIFY2(bomb.error->message.find("decompressed size exceeds") != std::string::npos, bomb.error->message.c_str());
  }

  void visibleRangeFindsOverlaps() {
    LoadResult r = parse(kTiny);
    QVERIFY(r.ok());
    const EventStore& s = *r.store;
    // A window inside bmm but after the launch ended still finds bmm.
    const int64_t t0 = 5367878834285000 - 10, t1 = 5367878834285000 - 5;
    auto [first, last] = s.visibleRange(0, t0, t1);
    bool hasBmm = false;
    for (EventId i = first; i < last; ++i) hasBmm |= s.name(s.event(i)) == "aten::bmm";
    QVERIFY(hasBmm);
    auto [f2, l2] = s.visibleRange(0, 0, 10);
    QCOMPARE(f2, l2);
  }
};

QTEST_GUILESS_MAIN(ReaderTest)
#include "test_reader.moc"
