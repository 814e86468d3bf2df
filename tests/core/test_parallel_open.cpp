// Issue 44: the first open of a trace on every core. The chunked parse, the store's build (its lanes
// sorted and scanned in halves, its columns and indexes filled on two threads), the snapshot (torch's
// tables beside the explanation) and the diagnosis's evidence (its causes on two threads) must give
// exactly what one thread gives: real traces opened both ways, compared cell for cell (the store, the
// activity index, the four tables, the explanation's every field, the founding answer). The thresholds
// are lowered (ATTNSCOPE_PARALLEL_MIN_EVENTS=1) so that traces of every shape take the split paths.
// Also: how many threads an open takes (the process's CPUs, ATTNSCOPE_THREADS), and a cache writer
// dropped unfinished (a cancelled open) leaves nothing behind; the helpers that share the evidence.
#include <sched.h>

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cache_compare.h"
#include "core/cache/open_trace.h"
#include "core/cache/trace_cache.h"
#include "core/explain/diagnosis_internal.h"
#include "core/read/gzip.h"
#include "core/read/trace_reader.h"
#include "core/store/parallel_sort.h"
#include "core/store/span_log.h"
#include "core/store/threads.h"

using namespace attnscope;
namespace fs = std::filesystem;

namespace {

// threads: 0 for the process's CPUs. spilled: past a 1 MB memory budget (large arrays in files).
cache::OpenedTrace openWith(const std::string& path, bool parallel, int threads = 0, bool spilled = false) {
  cache::OpenOptions o;
  o.cache = cache::CacheUse::Off;
  if (spilled) qputenv("ATTNSCOPE_MEMORY_BUDGET", "1M");
  if (parallel) {
    if (threads > 0)
      qputenv("ATTNSCOPE_THREADS", QByteArray::number(threads));
    else
      qunsetenv("ATTNSCOPE_THREADS");
    qputenv("ATTNSCOPE_PARALLEL_MIN_EVENTS", "1");
    o.limits.parallelMinBytes = 1;           // the chunked parse, whatever the size
    o.limits.chunkBytes = size_t{16} << 10;  // in many chunks
    o.limits.parallelCutMinThreads = 1;      // a text cut into them in parts, on every thread count
  } else {
    qputenv("ATTNSCOPE_THREADS", "1");
    qunsetenv("ATTNSCOPE_PARALLEL_MIN_EVENTS");
    o.limits.parallelMinBytes = UINT64_MAX;  // the one-pass reader
  }
  cache::OpenedTrace t = cache::openTrace(path, o);
  qunsetenv("ATTNSCOPE_MEMORY_BUDGET");
  qunsetenv("ATTNSCOPE_THREADS");
  qunsetenv("ATTNSCOPE_PARALLEL_MIN_EVENTS");
  return t;
}

}  // namespace

class TestParallelOpen : public QObject {
  Q_OBJECT

 private slots:
  // Before any open asks: the span log is read once, at its first use (the merge test reads it).
  void initTestCase() { qputenv("ATTNSCOPE_REPORT_SPANS", "1"); }

  // The chunked parse on 8 threads: one chunk merged at a time, while other threads parse (the merge is
  // outside the parsers' lock). From the span log: every chunk parsed once and merged once, no two
  // merges at once, each chunk's merge after its parse.
  void mergesOneAtATime() {
    QVERIFY(spans::on());
    spans::clear();
    const cache::OpenedTrace t =
        openWith(std::string(ATTNSCOPE_SHARED_TRACES) + "/h200/transformer_train20.json.gz", true, 8);
    QVERIFY(t.ok());
    struct S {
      std::string name;
      int thread;
      double start, end;
    };
    std::vector<S> parsed, merged;
    std::istringstream in(spans::report());
    for (std::string line; std::getline(in, line);) {
      // "span NAME thread T START END", NAME of several words
      const size_t at = line.rfind(" thread ");
      QVERIFY2(line.starts_with("span ") && at != std::string::npos, line.c_str());
      S x;
      x.name = line.substr(5, at - 5);
      std::istringstream rest(line.substr(at + 8));
      QVERIFY(static_cast<bool>(rest >> x.thread >> x.start >> x.end));
      QVERIFY2(x.start <= x.end, line.c_str());
      if (x.name == "parse chunk") parsed.push_back(x);
      if (x.name == "merge chunk") merged.push_back(x);
    }
    QVERIFY2(t.chunks >= 50, qPrintable(QString::number(t.chunks)));  // 16 KiB chunks of 63 MB of JSON
    QCOMPARE(parsed.size(), size_t{t.chunks});
    QCOMPARE(merged.size(), size_t{t.chunks});
    // (The report is in start order, to the microsecond.)
    for (size_t i = 1; i < merged.size(); ++i)
      QVERIFY2(merged[i].start >= merged[i - 1].end,
               qPrintable(QString("merge %1 starts at %2 s, the one before ends at %3 s")
                              .arg(i)
                              .arg(merged[i].start)
                              .arg(merged[i - 1].end)));
    // The k-th merge (in text order) is of a chunk already parsed: k+1 parses have ended by its start.
    std::vector<double> parseEnds;
    for (const S& p : parsed) parseEnds.push_back(p.end);
    std::sort(parseEnds.begin(), parseEnds.end());
    for (size_t k = 0; k < merged.size(); ++k) QVERIFY(parseEnds[k] <= merged[k].start);
    // The parsed chunks held for the merge stay bounded: a thread takes a chunk only while fewer than 2 a
    // thread (16) wait, so at most 15 and one per thread under way wait at once: 23. Counted at each parse's
    // end: the parses ended by then less the merges begun (a merge begun in the same microsecond counts as
    // not begun, so the check allows one more: 24). (Here 8 threads share the machine's CPUs with one
    // merging, so on a 2-CPU box the merge falls behind and the cap is what holds them.)
    size_t most = 0, begun = 0;
    for (size_t k = 0; k < parseEnds.size(); ++k) {
      while (begun < merged.size() && merged[begun].start < parseEnds[k]) ++begun;
      most = std::max(most, k + 1 - begun);
    }
    qInfo("at most %zu parsed chunks waited for the merge at once (of %zu; the cap 16 and 8 under way)", most,
          merged.size());
    QVERIFY2(most <= 3 * 8, qPrintable(QString::number(most)));
    spans::clear();
  }

  void threadsFollowTheProcessCpus() {
    const unsigned all = workerThreads();
    QVERIFY(all >= 1 && all <= 8);
    qputenv("ATTNSCOPE_THREADS", "1");
    QCOMPARE(workerThreads(), 1u);
    qputenv("ATTNSCOPE_THREADS", "not a number");
    QCOMPARE(workerThreads(), all);
    // Asked for more than the CPUs (the tests' larger machine), given them, up to 8.
    qputenv("ATTNSCOPE_THREADS", "5");
    QCOMPARE(workerThreads(), 5u);
    qputenv("ATTNSCOPE_THREADS", "40");
    QCOMPARE(workerThreads(), 8u);
    qunsetenv("ATTNSCOPE_THREADS");
    // Pinned to one CPU (as `taskset -c 0` does), one thread.
    cpu_set_t before, one;
    QCOMPARE(::sched_getaffinity(0, sizeof(before), &before), 0);
    int first = 0;
    while (first < CPU_SETSIZE && !CPU_ISSET(first, &before)) ++first;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    QCOMPARE(::sched_setaffinity(0, sizeof(one), &one), 0);
    const unsigned pinned = workerThreads();
    QCOMPARE(::sched_setaffinity(0, sizeof(before), &before), 0);
    QCOMPARE(pinned, 1u);
    QCOMPARE(parallelMinEvents(123), size_t{123});
  }

  void parallelEqualsOneThread_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("threads");
    QTest::addColumn<bool>("spilled");
    const QString shared = QStringLiteral(ATTNSCOPE_SHARED_TRACES);
    // Training, inference, communication (NCCL), another accelerator (MTIA), recommendation models,
    // a CPU-side data loader and one of torch's own kineto captures (small: 16 KiB chunks).
    // Each also on more threads than this machine may have (a larger machine's paths, run here): 3 (torch's
    // two attributions on threads of their own, the ledger after both, the lanes split in three) or 8
    // (eight lane groups, the four id indexes each on its own thread, five threads that only help),
    // in turn.
    std::vector<QString> paths;
    for (const char* t :
         {"h200/transformer_train20.json.gz", "ext/hta_spmd_dhen_rank1.json.gz", "ext/tl_h100_owlv2.json.gz",
          "ext/param_linear_kineto.json.gz", "ext/kineto_tb_resnet50_nw0.pt.trace.json.gz", "ext/hta_nccl_data.json.gz",
          "ext/hta_mtia_inference_rank0.json.gz", "ext/param_dlrm_worker0.pt.trace.json"})
      paths.push_back(shared + "/" + QString::fromLatin1(t));
    paths.push_back(QStringLiteral(ATTNSCOPE_TEST_DATA "/torch/kineto/softmax_8x16x1024x64.json"));
    for (size_t i = 0; i < paths.size(); ++i) {
      const QByteArray name = QFileInfo(paths[i]).fileName().toUtf8();
      const int more = i % 2 == 0 ? 8 : 3;
      QTest::addRow("%s, the CPUs", name.constData()) << paths[i] << 0 << false;
      QTest::addRow("%s, %d threads", name.constData(), more) << paths[i] << more << false;
    }
    // Past the memory budget (its large arrays in files, given back to the spill pool and handed out again
    // across threads), split as in memory.
    QTest::addRow("transformer_train20.json.gz, spilled, 3 threads") << paths[0] << 3 << true;
    QTest::addRow("hta_nccl_data.json.gz, spilled, 8 threads") << paths[5] << 8 << true;
    // Large texts in memory (not gzip streams): cut into chunks in parts on several threads. (Two of the
    // smaller captures: the ThreadSanitizer run reads each several times over.)
    QTest::addRow("hta_mtia_inference_rank0.json.gz unzipped, 8 threads") << paths[6] + ":unzip" << 8 << false;
    QTest::addRow("hta_nccl_data.json.gz unzipped, spilled, 3 threads") << paths[5] + ":unzip" << 3 << true;
  }
  void parallelEqualsOneThread() {
    QFETCH(QString, path);
    QFETCH(int, threads);
    QFETCH(bool, spilled);
    if (threads == 0 && workerThreads() < 2) QSKIP("one CPU: no second thread to compare with");
    QTemporaryDir dir;
    const bool unzip = path.endsWith(QLatin1String(":unzip"));
    if (unzip) {
      path.chop(6);
      QVERIFY2(QFile::exists(path), qPrintable(path + " is missing"));
      QFile in(path);
      QVERIFY(in.open(QIODevice::ReadOnly));
      const QByteArray raw = in.readAll();
      std::vector<char> text;
      size_t n = 0;
      std::string err;
      QVERIFY(gunzip(raw.constData(), static_cast<size_t>(raw.size()), 1ull << 32, 0, &text, &n, &err));
      path = dir.filePath(QStringLiteral("unzipped.json"));
      QFile out(path);
      QVERIFY(out.open(QIODevice::WriteOnly) && out.write(text.data(), static_cast<qint64>(n)) == qint64(n));
    }
    QVERIFY2(QFile::exists(path), qPrintable(path + " is missing"));
    const cache::OpenedTrace one = openWith(path.toStdString(), false);
    const cache::OpenedTrace many = openWith(path.toStdString(), true, threads, spilled);
    QVERIFY2(one.ok() && many.ok(), qPrintable(path));
    QCOMPARE(many.spilled, spilled);
    QCOMPARE(one.chunks, uint64_t{0});
    QVERIFY(many.chunks >= 2);
    // A text in memory of more than two parts (8 chunks each) was cut in parts; a gzip stream never is.
    if (path.endsWith(QLatin1String(".json")) && QFileInfo(path).size() > 16 * (16 << 10))
      QVERIFY2(many.cutParts >= 2, qPrintable(QString::number(many.cutParts)));
    if (path.endsWith(QLatin1String(".gz"))) QCOMPARE(many.cutParts, uint64_t{0});
    // (Parts of 128 KiB: each of these texts' parts holds an element's end, so every one is taken, but
    // perhaps a last sliver.)
    if (unzip)
      QVERIFY2(many.cutParts + 1 >= static_cast<uint64_t>(QFileInfo(path).size() / (128 << 10)),
               qPrintable(QString::number(many.cutParts)));
    QCOMPARE(many.warning, one.warning);
    const std::string d = testutil::compareSnapshots(*many.snapshot, *one.snapshot);
    QVERIFY2(d.empty(), d.c_str());
  }

  // Lanes into groups: boundaries from 0 to the lane count, strictly increasing, min(parts, lanes)
  // groups, each of about equal events (by hand on small cases, then a bound on random ones).
  void lanesSplitIntoGroups() {
    using B = std::vector<uint32_t>;
    QCOMPARE(splitByCounts({}, 4), (B{0, 0}));
    QCOMPARE(splitByCounts({5}, 4), (B{0, 1}));
    QCOMPARE(splitByCounts({7, 7, 7}, 1), (B{0, 3}));
    QCOMPARE(splitByCounts({3, 3}, 8), (B{0, 1, 2}));
    QCOMPARE(splitByCounts({0, 0, 0}, 2), (B{0, 1, 3}));
    QCOMPARE(splitByCounts({10, 10, 10, 10}, 2), (B{0, 2, 4}));
    QCOMPARE(splitByCounts({10, 10, 10, 10}, 4), (B{0, 1, 2, 3, 4}));
    QCOMPARE(splitByCounts({100, 1, 1, 100}, 2), (B{0, 2, 4}));
    // One lane of most events: its middle past half, it starts the second group.
    QCOMPARE(splitByCounts({1, 1000, 1, 1}, 2), (B{0, 1, 4}));
    std::mt19937 rng(4404);
    for (int round = 0; round < 500; ++round) {
      const size_t lanes = rng() % 40;
      const unsigned parts = 1 + rng() % 8;
      std::vector<size_t> counts(lanes);
      size_t total = 0, most = 0;
      for (size_t& c : counts) {
        c = rng() % 4 == 0 ? 0 : rng() % 1000;
        total += c;
        most = std::max(most, c);
      }
      const B b = splitByCounts(counts, parts);
      QCOMPARE(b.front(), 0u);
      QCOMPARE(b.back(), static_cast<uint32_t>(lanes));
      QCOMPARE(b.size() - 1, std::max<size_t>(1, std::min<size_t>(parts, lanes)));
      for (size_t g = 1; g + 1 < b.size(); ++g) QVERIFY(b[g] > b[g - 1]);
      if (lanes < 4 * parts) continue;  // room for every group to take what its share holds
      for (size_t g = 0; g + 1 < b.size(); ++g) {
        size_t in = 0;
        for (uint32_t l = b[g]; l < b[g + 1]; ++l) in += counts[l];
        QVERIFY2(in <= total / (b.size() - 1) + most, qPrintable(QString("round %1 group %2").arg(round).arg(g)));
      }
    }
  }

  // The diagnosis's rules built in lane groups by helping threads equal the rules built in one pass,
  // list for list and in the same order (the evidence reads that order): every rule's events, spans
  // and cover, each device's work, the backlog, the set-up kinds, the autotuned ops, the counters.
  void rulesInGroupsEqualOnePass_data() {
    QTest::addColumn<QString>("path");
    const QString shared = QStringLiteral(ATTNSCOPE_SHARED_TRACES);
    for (const char* t : {"h200/transformer_train20.json.gz", "ext/hta_spmd_dhen_rank1.json.gz",
                          "ext/kineto_tb_resnet50_nw0.pt.trace.json.gz", "ext/hta_mtia_inference_rank0.json.gz"})
      QTest::newRow(t) << shared + "/" + QString::fromLatin1(t);
  }
  void rulesInGroupsEqualOnePass() {
    QFETCH(QString, path);
    const cache::OpenedTrace t = openWith(path.toStdString(), false);
    QVERIFY(t.ok());
    const EventStore& s = *t.snapshot->store;
    QVERIFY(s.lanes().size() >= 2);
    const diag::Windows w = diag::findWindows(s, *t.snapshot->explanation);
    const diag::RuleSet one = diag::buildRules(s, *t.snapshot->explanation, w);
    qputenv("ATTNSCOPE_PARALLEL_MIN_EVENTS", "1");
    Helpers h;
    std::vector<std::thread> helping;
    for (int k = 0; k < 3; ++k) helping.emplace_back([&] { h.help(); });
    const diag::RuleSet many = diag::buildRules(s, *t.snapshot->explanation, w, &h);
    h.close();
    for (std::thread& th : helping) th.join();
    qunsetenv("ATTNSCOPE_PARALLEL_MIN_EVENTS");
    size_t events = 0;
    for (int r = 0; r < diag::kRuleCount; ++r) {
      const QByteArray rule = QByteArray("rule ") + QByteArray::number(r);
      QVERIFY2(many.rules[r].events == one.rules[r].events, rule.constData());
      QVERIFY2(many.rules[r].spans == one.rules[r].spans, rule.constData());
      QVERIFY2(many.rules[r].cover == one.rules[r].cover, rule.constData());
      events += one.rules[r].events.size();
    }
    QVERIFY(events > 1000);  // a real trace's rules, not empty ones
    QVERIFY(many.deviceWork == one.deviceWork);
    QVERIFY(many.backlog == one.backlog);
    QVERIFY(many.setup == one.setup);
    QVERIFY(many.autotuneOps == one.autotuneOps);
    QCOMPARE(many.anyDevice, one.anyDevice);
    QCOMPARE(many.kernels, one.kernels);
    QCOMPARE(many.launchedKernels, one.launchedKernels);
    QCOMPARE(many.kernelsInLaunch, one.kernelsInLaunch);
    QCOMPARE(many.kernelNs, one.kernelNs);
    QCOMPARE(many.shortKernelNs, one.shortKernelNs);
    QCOMPARE(many.kernelMedianNs, one.kernelMedianNs);
    QCOMPARE(many.gemmNs, one.gemmNs);
    QCOMPARE(many.gemmTcNs, one.gemmTcNs);
  }

  // parallelSort against std::sort: 300 random arrays (fixed seed) of 0 to 5,000 items, split from 1,024
  // items (its floor) on 1, 2, 3 and 8 threads. Keys repeat (a small range); the item's place breaks the tie, so every
  // order is total and the two results must be equal item for item.
  void parallelSortEqualsStdSort() {
    std::mt19937_64 rng(52);
    qputenv("ATTNSCOPE_PARALLEL_MIN_EVENTS", "1");
    using Item = std::pair<int, uint32_t>;  // a key, then the item's place
    for (int c = 0; c < 300; ++c) {
      const unsigned threads = std::vector<unsigned>{1, 2, 3, 8}[static_cast<size_t>(c) % 4];
      qputenv("ATTNSCOPE_THREADS", QByteArray::number(threads));
      const size_t n = c % 10 == 0 ? static_cast<size_t>(c % 7) : static_cast<size_t>(rng() % 5001);
      std::vector<Item> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = {static_cast<int>(rng() % 97), static_cast<uint32_t>(i)};
      std::vector<Item> want = v;
      std::sort(want.begin(), want.end());
      parallelSort(v.begin(), v.end(), std::less<Item>());
      QVERIFY2(v == want, qPrintable(QString("case %1: %2 items on %3 threads").arg(c).arg(n).arg(threads)));
    }
    qunsetenv("ATTNSCOPE_THREADS");
    qunsetenv("ATTNSCOPE_PARALLEL_MIN_EVENTS");
  }

  // Helpers: every index of a forEach runs once, on the caller and the threads that help; a later
  // forEach hands out again; an exception comes back from forEach; help() returns once closed.
  void helpersShareTheWork() {
    Helpers h;
    std::vector<std::thread> helping;
    for (int k = 0; k < 3; ++k) helping.emplace_back([&] { h.help(); });
    std::mutex m;
    std::set<std::thread::id> who;
    for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{500}}) {
      std::vector<std::atomic<int>> ran(n);
      h.forEach(n, [&](size_t i) {
        ran[i]++;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        const std::lock_guard lock(m);
        who.insert(std::this_thread::get_id());
      });
      for (size_t i = 0; i < n; ++i) QCOMPARE(ran[i].load(), 1);
    }
    // 500 jobs of 200 us: the helpers took some (one thread alone would be here).
    QVERIFY2(who.size() >= 2, qPrintable(QString::number(who.size())));
    bool threw = false;
    try {
      h.forEach(20, [&](size_t i) {
        if (i == 13) throw std::runtime_error("job 13");
      });
    } catch (const std::runtime_error& e) {
      threw = std::string(e.what()) == "job 13";
    }
    QVERIFY(threw);
    // Two jobs fail: the lower index's error, whichever failed first.
    for (int k = 0; k < 20; ++k) {
      std::string what;
      try {
        h.forEach(40, [&](size_t i) {
          if (i == 31) throw std::runtime_error("job 31");
          if (i == 7) {
            std::this_thread::sleep_for(std::chrono::microseconds(300));
            throw std::runtime_error("job 7");
          }
        });
      } catch (const std::runtime_error& e) {
        what = e.what();
      }
      QCOMPARE(what, std::string("job 7"));
    }
    // Still usable after an exception.
    std::atomic<int> sum{0};
    h.forEach(10, [&](size_t i) { sum += static_cast<int>(i); });
    QCOMPARE(sum.load(), 45);
    h.close();
    for (std::thread& t : helping) t.join();  // returns: a hang here is a failure (ctest's timeout)
  }

  // runWithHelpers: the parts run on their threads and then help the main part's forEach; an exception
  // from a part or from the main part comes back, and the helpers are let go either way.
  void runWithHelpersEndsEitherWay() {
    Helpers h;
    std::atomic<int> parts{0};
    std::vector<int> ran(200, 0);
    runWithHelpers(h, [&] { h.forEach(ran.size(), [&](size_t i) { ran[i]++; }); },
                   {[&] { parts++; }, [&] { parts++; }, {}});
    QCOMPARE(parts.load(), 2);
    QCOMPARE(std::count(ran.begin(), ran.end(), 1), std::ptrdiff_t{200});
    Helpers h2;
    bool threw = false;
    try {
      runWithHelpers(h2, [] { throw std::runtime_error("main"); }, {{}, {}});
    } catch (const std::runtime_error& e) {
      threw = std::string(e.what()) == "main";
    }
    QVERIFY(threw);
    Helpers h3;
    threw = false;
    try {
      runWithHelpers(h3, [&] { h3.forEach(50, [](size_t) {}); }, {[] { throw std::runtime_error("part"); }});
    } catch (const std::runtime_error& e) {
      threw = std::string(e.what()) == "part";
    }
    QVERIFY(threw);
  }

  // A writer whose open was cancelled (dropped before finish) stops and takes its folder with it; a
  // finished one leaves the cache and nothing else.
  void droppedWriterLeavesNothing() {
    if (!cache::available()) QSKIP(cache::kNoCache);
    QTemporaryDir tmp;
    const std::string trace = tmp.filePath("t.json").toStdString();
    fs::copy_file(QStringLiteral(ATTNSCOPE_TEST_DATA "/steps/profiler_steps.json").toStdString(), trace);
    cache::TraceKey key;
    std::string error;
    QVERIFY(cache::traceKey(trace, &key, &error));
    LoadResult r = loadTrace(trace);
    QVERIFY(r.ok());
    auto store = std::make_shared<const EventStore>(std::move(*r.store));
    const fs::path dir = fs::path(trace + ".attnscope");
    auto entries = [&] {
      QStringList out;
      if (fs::exists(dir))
        for (const auto& e : fs::directory_iterator(dir)) out << QString::fromStdString(e.path().filename().string());
      out.sort();
      return out;
    };
    {
      cache::CacheWriter w(trace, key, store, cache::CacheWriteMode{});
      QCOMPARE(entries().size(), 1);  // its folder, being written
      QVERIFY(entries().front().startsWith(".trace-"));
    }
    QCOMPARE(entries(), QStringList());
    {
      cache::CacheWriter w(trace, key, store, cache::CacheWriteMode{});
      const auto snap = buildSnapshot(store, SnapshotOptions{});
      const cache::WriteOutcome out = w.finish(*snap);
      QVERIFY2(out.ok, out.error.c_str());
      // Once only.
      QVERIFY(!w.finish(*snap).ok);
    }
    QCOMPARE(entries(), QStringList{"trace"});
    std::string why;
    QVERIFY2(cache::openCache(trace, key, &why).has_value(), why.c_str());
  }
};

QTEST_GUILESS_MAIN(TestParallelOpen)
#include "test_parallel_open.moc"
