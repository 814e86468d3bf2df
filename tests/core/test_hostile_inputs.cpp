// Hostile inputs too big, too many or too odd to keep in tests/data/malformed:
// each is generated into a temporary directory and given to attnscope-cli as
// a user would. Each must end in a clear error (exit 2, the file named) or a
// partial load with the bad events counted, never a crash, never over 5 s.
// (The static corpus is tests/data/malformed, run by test_cli.)
#include <sys/stat.h>
#include <unistd.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>
#include <string>

#include "cli_run.h"
#include "gzip_util.h"
#include "hostile_shapes.h"

namespace {

const QString kCapture = QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_1x8x64x64.json");

// A hang guard, not a speed goal: a run that takes longer than this is
// killed and fails its exit-code check (an endless loop or a quadratic walk
// over these inputs takes minutes). How fast each of these shapes is, next to
// an ordinary trace of the same size, is `attnscope-bench hostile`'s to say.
// Sanitizers slow every instruction several times over.
#if defined(ATTNSCOPE_SANITIZED)
constexpr int kHangMs = 600000;
// Under the sanitizers the millions are tens of thousands: they look for memory errors, which do not
// need the scale (the release run keeps it, and the hang guard with it).
constexpr size_t kMillion = 100'000;
// ASan's shadow memory and quarantine are in every figure: memory bounds are the release run's.
constexpr bool kBoundMemory = false;
#else
constexpr bool kBoundMemory = true;
constexpr int kHangMs = 60000;
constexpr size_t kMillion = 1'000'000;
#endif

// "2,000,000": how info prints a count.
QString withCommas(size_t n) {
  QString s = QString::number(n);
  for (qsizetype i = s.size() - 3; i > 0; i -= 3) s.insert(i, QLatin1Char(','));
  return s;
}

std::string op(const char* name, int64_t tsNs, int64_t durNs, int tid = 1, const std::string& args = {}) {
  auto us = [](int64_t ns) {
    char b[40];
    std::snprintf(b, sizeof b, "%lld.%03lld", static_cast<long long>(ns / 1000), static_cast<long long>(ns % 1000));
    return std::string(b);
  };
  return std::string(R"({"ph":"X","cat":"cpu_op","name":")") + name + R"(","pid":1,"tid":)" + std::to_string(tid) +
         R"(,"ts":)" + us(tsNs) + R"(,"dur":)" + us(durNs) + (args.empty() ? "" : R"(,"args":)" + args) + "}";
}

// {"traceEvents": [...]} from n events made by `event(i)`.
std::string trace(size_t n, const std::function<std::string(size_t)>& event) {
  std::string s = "{\"traceEvents\": [\n";
  for (size_t i = 0; i < n; ++i) {
    if (i) s += ",\n";
    s += event(i);
  }
  s += "\n]}\n";
  return s;
}

bool writeFile(const QString& path, const std::string& data) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return false;
  return f.write(data.data(), static_cast<qint64>(data.size())) == static_cast<qint64>(data.size());
}

struct Timed {
  Run run;
  qint64 ms = 0;
};

Timed timedCli(const QStringList& args) {
  QElapsedTimer t;
  t.start();
  Timed r{cli(args, kHangMs), 0};
  r.ms = t.elapsed();
  return r;
}

// The events count `info` prints ("events: 1,234").
qint64 eventsOf(const QString& infoOut) {
  const auto m =
      QRegularExpression(QStringLiteral("^events: ([0-9,]+)$"), QRegularExpression::MultilineOption).match(infoOut);
  return m.hasMatch() ? m.captured(1).remove(QLatin1Char(',')).toLongLong() : -1;
}

}  // namespace

// One outcome: the exit code, then text that must be in stdout or stderr.
#define EXPECT_RUN(r, wantCode, text)                                                                                  \
  do {                                                                                                                 \
    QVERIFY2(                                                                                                          \
        (r).run.code == (wantCode),                                                                                    \
        qPrintable(                                                                                                    \
            QString("exit %1 after %2 ms, stderr: %3").arg((r).run.code).arg((r).ms).arg((r).run.err.left(400))));     \
    QVERIFY2((r).run.out.contains(text) || (r).run.err.contains(text),                                                 \
             qPrintable(                                                                                               \
                 QString("no '%1' in stdout/stderr: %2 %3").arg(text, (r).run.out.left(600), (r).run.err.left(400)))); \
  } while (0)

class HostileInputsTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  QString path(const QString& name) const { return dir_.filePath(name); }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    QVERIFY2(QFile::exists(kCapture), qPrintable("missing " + kCapture));
  }

  // A real capture cut at 64 points (and its gzip at 16): what was complete
  // before the cut loads and the cut is reported, or, with nothing to keep,
  // one clear error. Never a silent loss.
  void truncatedAtManyPoints_data() {
    QTest::addColumn<bool>("gz");
    QTest::addColumn<qint64>("cut");
    QFile f(kCapture);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const qint64 n = f.size();
    for (int i = 0; i < 64; ++i) {
      const qint64 cut = 1 + n * i / 64 + (i * 7919) % 97;  // not always on a line break
      QTest::newRow(qPrintable(QString("json cut at %1 of %2").arg(cut).arg(n))) << false << cut;
    }
    for (int i = 1; i <= 16; ++i)
      QTest::newRow(qPrintable(QString("gzip cut at %1/16").arg(i - 1))) << true << qint64(i);
  }
  void truncatedAtManyPoints() {
    QFETCH(bool, gz);
    QFETCH(qint64, cut);
    QFile f(kCapture);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray all = f.readAll();
    static const qint64 full = eventsOf(cli({"info", kCapture}).out);
    QVERIFY(full > 100);
    std::string bytes;
    if (gz) {
      const std::string z = gzipOf(all.toStdString(), Z_BEST_COMPRESSION);
      bytes = z.substr(0, static_cast<size_t>(static_cast<qint64>(z.size()) * (cut - 1) / 16));
    } else {
      bytes = all.left(cut).toStdString();
    }
    const QString file = path(gz ? QStringLiteral("cut.json.gz") : QStringLiteral("cut.json"));
    QVERIFY(writeFile(file, bytes));
    const Timed r = timedCli({"info", file});
    if (r.run.code == 2) {
      QVERIFY2(r.run.err.contains(QFileInfo(file).fileName()), qPrintable(r.run.err));
      QVERIFY2(r.run.err.contains(QRegularExpression(QStringLiteral("ends early|empty|gzip|truncated"))),
               qPrintable(r.run.err));
      return;
    }
    QVERIFY2(r.run.code == 0, qPrintable(QString("exit %1: %2").arg(r.run.code).arg(r.run.err)));
    // A cut gzip stream is salvaged like a cut .json: what it held before the cut, with a warning.
    const qint64 got = eventsOf(r.run.out);
    QVERIFY(got >= 0 && got <= full);
    if (got < full || gz) QVERIFY2(r.run.err.contains(QStringLiteral("ends early")), qPrintable(r.run.err));
    const Timed table = timedCli({"table", file, "--attribution", "corrected"});
    QCOMPARE(table.run.code, 0);
  }

  // 100,000 levels of nesting, wherever they can hide.
  void deepNesting_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("expect");
    const std::string open(100000, '['), close(100000, ']');
    std::string objs, objsEnd;
    for (int i = 0; i < 100000; ++i) objs += "{\"a\":", objsEnd += "}";
    struct Case {
      const char* file;
      std::string text;
      int code;
      const char* expect;
    };
    const Case cases[] = {
        // 100,000 arrays that never close: a truncated, hostile array form.
        {"deep_unclosed.json", open, 2, "deep"},
        // 100,000 arrays as the only element of traceEvents.
        {"deep_element.json", "{\"traceEvents\": [" + open + close + "]}", 2, "nested too deep"},
        // 100,000 nested objects in an argument nobody reads: skipped, the events load.
        {"deep_unused_arg.json",
         trace(2,
               [&](size_t i) {
                 return op("aten::add", 1000 * i, 10, 1, i ? "{}" : "{\"x\":" + objs + "1" + objsEnd + "}");
               }),
         0, "events: 2"},
        // 100,000 arrays inside Input Dims, which the reader does descend into.
        {"deep_input_dims.json",
         trace(2,
               [&](size_t i) {
                 return op("aten::add", 1000 * i, 10, 1, i ? "{}" : "{\"Input Dims\":" + open + close + "}");
               }),
         0, "nested too deep: 1"},
        // 100,000 ops each inside the one before, on one thread: the nesting
        // depth (and any recursion over it) is 100,000 deep.
        {"deep_events.json",
         trace(
             100000,
             [](size_t i) { return op("aten::add", static_cast<int64_t>(i), static_cast<int64_t>(2 * (100000 - i))); }),
         0, "events: 100,000"},
        // 100,000 ops with identical spans: each contains the next.
        {"deep_identical.json", trace(100000, [](size_t) { return op("aten::mul", 5000, 1000); }), 0,
         "events: 100,000"},
    };
    for (const Case& c : cases) {
      QVERIFY(writeFile(path(c.file), c.text));
      QTest::newRow(c.file) << QString(c.file) << c.code << QString(c.expect);
    }
  }
  void deepNesting() {
    QFETCH(QString, name);
    QFETCH(int, code);
    QFETCH(QString, expect);
    const Timed r = timedCli({"info", path(name)});
    EXPECT_RUN(r, code, expect);
    if (code == 2) {
      QVERIFY2(r.run.err.contains(name), qPrintable(r.run.err));
      return;
    }
    for (const QStringList& w :
         {QStringList{"table", path(name), "--group-by", "shape"},
          QStringList{"table", path(name), "--attribution", "corrected"}, QStringList{"explain", path(name)}}) {
      const Timed a = timedCli(w);
      EXPECT_RUN(a, 0, QString());
    }
  }

  // Two million tiny events (and one million more gzip'd, out of order).
  void millionsOfTinyEvents() {
    const size_t n = 2 * kMillion;
    const QString file = path(QStringLiteral("tiny.json"));
    QVERIFY(writeFile(file, trace(n, [](size_t i) {
                        return op(i % 3 ? "aten::add" : "aten::mul", static_cast<int64_t>(2 * i), 1,
                                  static_cast<int>(i % 4));
                      })));
    const Timed r = timedCli({"info", file});
    EXPECT_RUN(r, 0, QStringLiteral("events: ") + withCommas(n));
    const Timed t = timedCli({"table", file});
    EXPECT_RUN(t, 0, QStringLiteral("aten::add"));
    const QString gz = path(QStringLiteral("tiny_reversed.json.gz"));
    QVERIFY(writeFile(
        gz,
        gzipOf(trace(kMillion, [](size_t i) { return op("aten::add", static_cast<int64_t>(3 * kMillion - 3 * i), 2); }),
               Z_BEST_SPEED)));
    const Timed g = timedCli({"info", gz});
    EXPECT_RUN(g, 0, QStringLiteral("events: ") + withCommas(kMillion));
  }

  // Ids that everything shares: 50,000 launches and 50,000 kernels on one
  // correlation and one External id, 50,000 flows with one id. Anything that
  // pairs them all up is 2.5 billion steps (explain took 50 s and ran out of
  // memory; info took 6 s).
  void sharedIdsAtScale() {
    constexpr size_t n = 50'000;
    const QString file = path(QStringLiteral("shared_ids.json"));
    QVERIFY(writeFile(file, trace(4 * n + 1, [](size_t i) { return bench::sharedIdsEvent(i, n); })));
    // The same without any launch: 50,000 ops and 50,000 kernels carry
    // correlation 1 and External id 7 (a search for the launch finds none).
    const QString noLaunch = path(QStringLiteral("shared_ids_no_launch.json"));
    QVERIFY(writeFile(noLaunch, trace(2 * n, [](size_t i) -> std::string {
                        const std::string ts = std::to_string(10 + i / 2) + ".0";
                        if (i % 2 == 0)
                          return R"({"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":)" + ts +
                                 R"(,"dur":0.5,"args":{"External id":7,"correlation":1}})";
                        return R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":)" + ts +
                               R"(,"dur":0.5,"args":{"External id":7,"correlation":1,"device":0,"stream":7}})";
                      })));
    for (const QString& f : {file, noLaunch}) {
      const Timed r = timedCli({"info", f});
      EXPECT_RUN(r, 0, f == file ? QStringLiteral("events: 100,001") : QStringLiteral("events: 100,000"));
      for (const QStringList& w : {QStringList{"table", f}, QStringList{"table", f, "--attribution", "corrected"},
                                   QStringList{"explain", f}, QStringList{"why", f, "aten::add"}}) {
        const Timed a = timedCli(w);
        EXPECT_RUN(a, 0, QString());
      }
    }
  }

  // 100,000 threads and 10,000 GPU streams with one event each, and 200,000
  // ops on one thread each starting 1 ns after the last (a staircase of
  // partial overlaps, the worst case for nesting by containment).
  void manyLanesAndOverlaps() {
    const QString lanes = path(QStringLiteral("lanes.json"));
    QVERIFY(writeFile(lanes, trace(110'000, [](size_t i) -> std::string {
                        if (i < 100'000) return op("aten::add", static_cast<int64_t>(i), 5, static_cast<int>(i + 1));
                        return R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":)" + std::to_string(i) +
                               R"(,"ts":1.0,"dur":1.0,"args":{"device":0,"stream":)" + std::to_string(i) + "}}";
                      })));
    const Timed r = timedCli({"info", lanes});
    EXPECT_RUN(r, 0, QStringLiteral("events: 110,000"));
    const QString stairs = path(QStringLiteral("stairs.json"));
    QVERIFY(writeFile(stairs,
                      trace(200'000, [](size_t i) { return op("aten::add", static_cast<int64_t>(i), 1'000'000); })));
    const Timed s = timedCli({"info", stairs});
    EXPECT_RUN(s, 0, QStringLiteral("events: 200,000"));
    const Timed e = timedCli({"explain", stairs});
    EXPECT_RUN(e, 0, QString());
  }

  // A gzip bomb: one member whose deflate stream inflates 1 MB into 1 GiB of
  // spaces inside a valid trace, and the same as 1,024 concatenated members.
  // Refused at the limit, without inflating the rest.
  void gzipBomb() {
    const std::string head = R"({"traceEvents": [)", tail = "]}";
    const int copies = 1024;
    const std::string mib(1 << 20, ' ');
    const std::string bomb = inflatesTo(head, ' ', copies, tail);
    QVERIFY(bomb.size() < (2u << 20));
    const QString one = path(QStringLiteral("bomb.json.gz"));
    QVERIFY(writeFile(one, bomb));
    const Timed r = timedCli({"info", one, "--max-decompressed", "67108864"});
    EXPECT_RUN(r, 2, QStringLiteral("exceeds the limit of 67108864 bytes"));
    QVERIFY(r.run.err.contains(QStringLiteral("bomb.json.gz")));
    QVERIFY(r.run.err.contains(QStringLiteral("--max-decompressed")));
    // Refused as the bytes come out, in bounded memory.
    long peakKb = 0;
    QCOMPARE(cliPeakRss({"info", one, "--max-decompressed", "67108864"}, &peakKb), 2);
    QVERIFY2(peakKb > 0 && (!kBoundMemory || peakKb < 64 * 1024),
             qPrintable(QStringLiteral("peak RSS %1 KiB").arg(peakKb)));

    std::string members = gzipOf(head, 9);
    const std::string member = gzipOf(mib, 9);
    for (int i = 0; i < copies; ++i) members += member;
    members += gzipOf(tail, 9);
    const QString many = path(QStringLiteral("bomb_members.json.gz"));
    QVERIFY(writeFile(many, members));
    const Timed m = timedCli({"info", many, "--max-decompressed", "67108864"});
    EXPECT_RUN(m, 2, QStringLiteral("exceeds the limit of 67108864 bytes"));
  }

  // Blanks between events, before them, inside an event and in a string, a
  // GiB of each (a few KB of .gz), under a limit that lets them through: the
  // blanks outside events are dropped as they come (the load ends with both
  // events and never holds the blanks); inside an event they make an event
  // over 64 MiB, refused as such. Peak memory stays far below the GiB.
  void blanksNeverHeld_data() {
    QTest::addColumn<QString>("where");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("expect");
    QTest::newRow("between events") << "between" << 0 << "events: 2";
    QTest::newRow("before the first event") << "before" << 0 << "events: 2";
    QTest::newRow("before traceEvents") << "header" << 0 << "events: 2";
    QTest::newRow("inside an event") << "inside" << 2 << "an event larger than 64 MiB";
    QTest::newRow("inside a string") << "string" << 2 << "an event larger than 64 MiB";
  }
  void blanksNeverHeld() {
    QFETCH(QString, where);
    QFETCH(int, code);
    QFETCH(QString, expect);
    const std::string a = op("a", 1000, 10), b = op("b", 2000, 10);
    std::string head, tail;
    char fill = ' ';
    if (where == "between") {
      head = "{\"traceEvents\": [" + a + ",";
      tail = b + "]}";
    } else if (where == "before") {
      head = "{\"traceEvents\": [";
      tail = a + "," + b + "]}";
    } else if (where == "header") {
      head = "{\"schemaVersion\": 1, ";
      tail = "\"traceEvents\": [" + a + "," + b + "]}";
    } else if (where == "inside") {
      head = "{\"traceEvents\": [" + a + ", {\"ph\": \"X\", \"name\": ";
      tail = "\"c\", \"ts\": 3, \"dur\": 1, \"pid\": 1, \"tid\": 1}," + b + "]}";
    } else {
      head = "{\"traceEvents\": [" + a + ", {\"ph\": \"X\", \"name\": \"";
      fill = 'x';
      tail = "\", \"ts\": 3, \"dur\": 1, \"pid\": 1, \"tid\": 1}," + b + "]}";
    }
    // 1 GiB; 300 MiB under the sanitizers (past the 256 MiB up to which a .gz may be read whole).
    const int copies = static_cast<int>(std::max<size_t>(kMillion / 1000, 300));
    const QString file = path(QStringLiteral("blanks_%1.json.gz").arg(where));
    QVERIFY(writeFile(file, inflatesTo(head, fill, copies, tail)));
    const Timed r = timedCli({"info", file, "--max-decompressed", "4294967296"});
    EXPECT_RUN(r, code, expect);
    long peakKb = 0;
    QCOMPARE(cliPeakRss({"info", file, "--max-decompressed", "4294967296"}, &peakKb), code);
    QVERIFY2(peakKb > 0 && (!kBoundMemory || peakKb < (code == 0 ? 64 : 256) * 1024),
             qPrintable(QStringLiteral("peak RSS %1 KiB").arg(peakKb)));
  }

  // Strings of 64 MiB: as a name (over the 1 MiB limit: counted), as a key
  // and as an argument nobody reads (skipped), and alone (nothing loads).
  void hugeStrings() {
    const std::string big(64u << 20, 'x');
    const QString file = path(QStringLiteral("huge_strings.json"));
    QVERIFY(writeFile(file, trace(4, [&](size_t i) -> std::string {
                        switch (i) {
                          case 0:
                            return op(big.c_str(), 0, 10);
                          case 1:
                            return op("aten::add", 20, 10, 1, "{\"" + big + "\": 1}");
                          case 2:
                            return op("aten::add", 40, 10, 1, "{\"unused\": \"" + big + "\"}");
                          default:
                            return op("aten::mul", 60, 10);
                        }
                      })));
    const Timed r = timedCli({"info", file});
    EXPECT_RUN(r, 0, QStringLiteral("string too long: 1"));
    QVERIFY(r.run.out.contains(QStringLiteral("events: 3")));
    const QString alone = path(QStringLiteral("huge_name_only.json"));
    QVERIFY(writeFile(alone, trace(1, [&](size_t) { return op(big.c_str(), 0, 10); })));
    const Timed a = timedCli({"info", alone});
    EXPECT_RUN(a, 2, QStringLiteral("string too long"));
  }

  // Paths that are not trace files: a directory named like one, a FIFO
  // (opening it must not wait for a writer), a character device, a symlink
  // loop, a symlink to a directory.
  void notAFile_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("expect");
    QVERIFY(QDir().mkpath(path(QStringLiteral("dir.json"))));
    QVERIFY(::mkfifo(path(QStringLiteral("fifo.json")).toLocal8Bit().constData(), 0600) == 0);
    QVERIFY(QFile::link(path(QStringLiteral("loop_b.json")), path(QStringLiteral("loop_a.json"))));
    QVERIFY(QFile::link(path(QStringLiteral("loop_a.json")), path(QStringLiteral("loop_b.json"))));
    QVERIFY(QFile::link(path(QStringLiteral("dir.json")), path(QStringLiteral("to_dir.json"))));
    QTest::newRow("directory") << path(QStringLiteral("dir.json")) << "is a directory";
    QTest::newRow("fifo") << path(QStringLiteral("fifo.json")) << "not a regular file";
    QTest::newRow("char device") << QStringLiteral("/dev/zero") << "not a regular file";
    QTest::newRow("symlink loop") << path(QStringLiteral("loop_a.json")) << "cannot open";
    QTest::newRow("symlink to dir") << path(QStringLiteral("to_dir.json")) << "is a directory";
  }
  void notAFile() {
    QFETCH(QString, file);
    QFETCH(QString, expect);
    const Timed r = timedCli({"info", file});
    EXPECT_RUN(r, 2, expect);
    QVERIFY(r.run.err.contains(file));
  }

  // --max-events: the events past the limit are counted, not loaded, and
  // the message names the limit.
  void eventLimit() {
    const QString file = path(QStringLiteral("5000.json"));
    QVERIFY(writeFile(file, trace(5000, [](size_t i) { return op("aten::add", static_cast<int64_t>(10 * i), 5); })));
    const Timed r = timedCli({"info", file, "--max-events", "1000"});
    EXPECT_RUN(r, 0, QStringLiteral("events: 1,000"));
    QVERIFY2(r.run.out.contains(QStringLiteral("too many events: 4,000")), qPrintable(r.run.out));
    QVERIFY2(r.run.out.contains(QStringLiteral("limit of 1000 events")), qPrintable(r.run.out));
    QVERIFY2(r.run.out.contains(QStringLiteral("--max-events")), qPrintable(r.run.out));
  }
};

QTEST_GUILESS_MAIN(HostileInputsTest)
#include "test_hostile_inputs.moc"
