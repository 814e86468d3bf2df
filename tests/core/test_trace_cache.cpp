// Issue 44: the columnar cache of a trace (core/cache). On every shared trace the cache equals a fresh
// parse cell for cell; a changed trace invalidates it; a damaged one is rebuilt, never trusted; a
// read-only trace folder uses the user cache; a trace read with its arrays spilled to files (a tiny
// memory budget) gives the same snapshot.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QDirIterator>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "cache_compare.h"
#include "core/cache/open_trace.h"
#include "core/cache/trace_cache.h"
#include "core/read/trace_reader.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/store/spill.h"

using namespace attnscope;
using cache::CacheReport;
namespace fs = std::filesystem;

namespace {

// Every trace under ../shared/traces (their folders are read-only: the caches go to the user cache).
QStringList sharedTraces() {
  QStringList out;
  QDirIterator it(QStringLiteral(ATTNSCOPE_SHARED_TRACES), {"*.json", "*.json.gz"}, QDir::Files,
                  QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QString p = it.next();
    if (p.endsWith(".keyavg.json") || p.endsWith(".steps.json") || p.endsWith("TRUTH.json")) continue;
    out << p;
  }
  out.sort();
  return out;
}

cache::OpenedTrace open(const std::string& path, cache::CacheUse use = cache::CacheUse::Auto) {
  cache::OpenOptions o;
  o.cache = use;
  return cache::openTrace(path, o);
}

void copyFile(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  QVERIFY2(!ec, ec.message().c_str());
}

}  // namespace

class TestTraceCache : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string userCache_;

 private slots:
  void initTestCase() {
    if (!cache::available()) QSKIP(cache::kNoCache);
    QVERIFY(tmp_.isValid());
    userCache_ = tmp_.filePath("user-cache").toStdString();
    qputenv("ATTNSCOPE_CACHE_DIR", QByteArray::fromStdString(userCache_));
    qunsetenv("ATTNSCOPE_CACHE");
    qunsetenv("ATTNSCOPE_MEMORY_BUDGET");
  }

  // Written on the first open, read on the second, and both equal to a fresh parse in every cell.
  void cacheEqualsFreshParse() {
    const QStringList traces = sharedTraces();
    QVERIFY(traces.size() >= 40);
    int compared = 0;
    for (const QString& q : traces) {
      const std::string path = q.toStdString();
      const cache::OpenedTrace fresh = open(path, cache::CacheUse::Off);
      const cache::OpenedTrace first = open(path);
      if (!fresh.ok()) {  // a trace the reader refuses (the NEG_ ones) is refused the same way
        QVERIFY2(!first.ok(), path.c_str());
        QCOMPARE(first.error->what(), fresh.error->what());
        continue;
      }
      QVERIFY2(first.ok(), path.c_str());
      QVERIFY2(first.cache.state == CacheReport::State::Written, (path + ": " + first.cache.why).c_str());
      QVERIFY2(first.cache.dir.starts_with(userCache_), first.cache.dir.c_str());
      const cache::OpenedTrace second = open(path);
      QVERIFY2(second.ok(), path.c_str());
      QVERIFY2(second.cache.state == CacheReport::State::Hit, (path + ": " + second.cache.why).c_str());
      QCOMPARE(second.warning, fresh.warning);
      QCOMPARE(second.jsonBytes, fresh.jsonBytes);
      const std::string d = testutil::compareSnapshots(*second.snapshot, *fresh.snapshot);
      QVERIFY2(d.empty(), (path + ": " + d).c_str());
      ++compared;
    }
    QVERIFY(compared >= 40);
  }

  // A changed trace: its size, its time, or (same size and time) its content.
  void changedTraceInvalidates() {
    const std::string dir = tmp_.filePath("changed").toStdString();
    fs::create_directories(dir);
    const std::string trace = dir + "/t.json";
    copyFile(QStringLiteral(ATTNSCOPE_TEST_DATA "/steps/profiler_steps.json").toStdString(), trace);
    auto first = open(trace);
    QVERIFY(first.ok());
    QCOMPARE(int(first.cache.state), int(CacheReport::State::Written));
    QCOMPARE(first.cache.dir, trace + ".attnscope/trace");  // beside the trace: its folder is writable
    QCOMPARE(int(open(trace).cache.state), int(CacheReport::State::Hit));

    // The same bytes, a new time: stale.
    struct stat st {};
    QCOMPARE(::stat(trace.c_str(), &st), 0);
    timespec times[2] = {st.st_atim, st.st_mtim};
    times[1].tv_sec += 5;
    QCOMPARE(::utimensat(AT_FDCWD, trace.c_str(), times, 0), 0);
    auto touched = open(trace);
    QCOMPARE(int(touched.cache.state), int(CacheReport::State::Written));
    QVERIFY2(touched.cache.why.starts_with("stale"), touched.cache.why.c_str());

    // One name changed to another of the same length, size and time put back: only the content hash sees it.
    std::string text;
    {
      std::ifstream in(trace, std::ios::binary);
      text.assign(std::istreambuf_iterator<char>(in), {});
    }
    const std::string name = std::string(first.snapshot->store->name(first.snapshot->store->event(0)));
    const size_t at = text.find("\"" + name + "\"");
    QVERIFY(at != std::string::npos && !name.empty());
    std::string renamed = name;
    renamed[0] = renamed[0] == 'Z' ? 'Y' : 'Z';
    text.replace(at + 1, name.size(), renamed);
    QCOMPARE(::stat(trace.c_str(), &st), 0);
    {
      std::ofstream out(trace, std::ios::binary | std::ios::trunc);
      out << text;
    }
    timespec same[2] = {st.st_atim, st.st_mtim};
    QCOMPARE(::utimensat(AT_FDCWD, trace.c_str(), same, 0), 0);
    auto changed = open(trace);
    QCOMPARE(int(changed.cache.state), int(CacheReport::State::Written));
    QVERIFY2(changed.cache.why.starts_with("stale"), changed.cache.why.c_str());
    uint32_t id = 0;
    QVERIFY(changed.snapshot->store->strings().find(renamed, &id));
    const std::string d =
        testutil::compareSnapshots(*open(trace).snapshot, *open(trace, cache::CacheUse::Off).snapshot);
    QVERIFY2(d.empty(), d.c_str());
  }

  // Each way a cache can be damaged: it is rebuilt, and what comes back equals a fresh parse.
  void damagedCacheRebuilt_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("damage");
    for (const char* f : {"events", "args", "strings", "manifest", "explanation", "table_torch_name_events"}) {
      QTest::newRow((std::string(f) + " cut").c_str()) << f << "cut";
      QTest::newRow((std::string(f) + " zeroed").c_str()) << f << "zero";
      QTest::newRow((std::string(f) + " missing").c_str()) << f << "missing";
      QTest::newRow((std::string(f) + " garbage").c_str()) << f << "garbage";
    }
    QTest::newRow("events from another write") << "events"
                                               << "foreign";
  }
  void damagedCacheRebuilt() {
    QFETCH(QString, file);
    QFETCH(QString, damage);
    const std::string dir = tmp_.filePath("damaged-" + file + "-" + damage).toStdString();
    fs::create_directories(dir);
    const std::string trace = dir + "/t.json.gz", other = dir + "/o.json.gz";
    copyFile(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_cp_alexnet.json.gz").toStdString(), trace);
    copyFile(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_cp_alexnet.json.gz").toStdString(), other);
    QCOMPARE(int(open(trace).cache.state), int(CacheReport::State::Written));
    QCOMPARE(int(open(other).cache.state), int(CacheReport::State::Written));
    const std::string victim = cache::cacheFolder(trace) + "/" + file.toStdString() + ".arrow";
    QVERIFY(fs::exists(victim));
    const auto size = fs::file_size(victim);
    if (damage == "cut") {
      fs::resize_file(victim, size / 2);
    } else if (damage == "zero") {
      // 4 KiB of zeros in the middle of the file (inside its columns or its footer).
      const int fd = ::open(victim.c_str(), O_WRONLY);
      const std::string zeros(std::min<uint64_t>(4096, size / 2), '\0');
      QCOMPARE(::pwrite(fd, zeros.data(), zeros.size(), static_cast<off_t>(size / 2 - zeros.size() / 2)),
               static_cast<ssize_t>(zeros.size()));
      ::close(fd);
    } else if (damage == "missing") {
      fs::remove(victim);
    } else if (damage == "garbage") {
      std::ofstream(victim, std::ios::binary | std::ios::trunc) << "not an arrow file at all";
    } else {
      // The same file of another trace's cache: whole, but of another write.
      copyFile(cache::cacheFolder(other) + "/" + file.toStdString() + ".arrow", victim);
    }
    const cache::OpenedTrace again = open(trace);
    QVERIFY(again.ok());
    QVERIFY2(again.cache.state == CacheReport::State::Written, again.cache.why.c_str());
    // A damaged manifest may read as another trace's ("stale"): rebuilt all the same.
    QVERIFY2(again.cache.why.starts_with("damaged") || again.cache.why.starts_with("no cache") ||
                 (file == "manifest" && again.cache.why.starts_with("stale")),
             again.cache.why.c_str());
    const cache::OpenedTrace fixed = open(trace);
    QCOMPARE(int(fixed.cache.state), int(CacheReport::State::Hit));
    const std::string d = testutil::compareSnapshots(*fixed.snapshot, *open(trace, cache::CacheUse::Off).snapshot);
    QVERIFY2(d.empty(), d.c_str());
  }

  // A read-only folder: nothing is written beside the trace; the user cache holds it and says why.
  void readOnlyFolderUsesUserCache() {
    const std::string dir = tmp_.filePath("readonly").toStdString();
    fs::create_directories(dir);
    const std::string trace = dir + "/t.json.gz";
    copyFile(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/ext/hta_cp_alexnet.json.gz").toStdString(), trace);
    QCOMPARE(::chmod(dir.c_str(), 0555), 0);
    const cache::OpenedTrace first = open(trace);
    const cache::OpenedTrace second = open(trace);
    ::chmod(dir.c_str(), 0755);
    QCOMPARE(int(first.cache.state), int(CacheReport::State::Written));
    QVERIFY2(first.cache.dir.starts_with(userCache_ + "/"), first.cache.dir.c_str());
    QVERIFY2(first.cache.note.find("read-only") != std::string::npos, first.cache.note.c_str());
    QVERIFY(!fs::exists(trace + ".attnscope"));
    QCOMPARE(int(second.cache.state), int(CacheReport::State::Hit));
    QCOMPARE(second.cache.dir, first.cache.dir);
  }

  // A trace larger than a (tiny) memory budget: read with its arrays in files, then the cache mapped;
  // the governor dropped pages, and everything equals a fresh parse.
  void spilledReadEqualsFresh() {
    const std::string dir = tmp_.filePath("spilled").toStdString();
    fs::create_directories(dir);
    const std::string trace = dir + "/t.json.gz";
    copyFile(QStringLiteral(ATTNSCOPE_SHARED_TRACES "/h200/transformer_train20.json.gz").toStdString(), trace);
    qputenv("ATTNSCOPE_MEMORY_BUDGET", "4M");
    const cache::OpenedTrace spilled = open(trace);
    qunsetenv("ATTNSCOPE_MEMORY_BUDGET");
    QVERIFY(spilled.ok());
    QVERIFY(spilled.spilled);
    QCOMPARE(int(spilled.cache.state), int(CacheReport::State::Written));
    spill::dropAll();  // every mapped page given back: what follows reads them again
    const std::string d = testutil::compareSnapshots(*spilled.snapshot, *open(trace, cache::CacheUse::Off).snapshot);
    QVERIFY2(d.empty(), d.c_str());
  }

  // A cache written past the page cache (CacheWriteMode::direct, as a spilled trace's is), on every
  // shared trace (files of every length: each one's last part, shorter than a page, is written plainly):
  // it reads back equal to a fresh parse in every cell, one file at least through several 8 MiB writes.
  // Where the folder's file system writes past the page cache (a probe), the written files' pages are not
  // in the page cache before the cache is read: at most each file's last page is.
  void directWriteEqualsFresh() {
    const std::string dir = tmp_.filePath("direct").toStdString();
    fs::create_directories(dir);
    const long page = ::sysconf(_SC_PAGESIZE);
    // Whether this folder's file system writes past the page cache at all: 1 MiB written with O_DIRECT,
    // then none of it in the page cache (not so on a tmpfs, an overlay on one, btrfs compressing, ext4
    // journalling data).
    bool direct = false;
    {
      const std::string probe = dir + "/probe";
      constexpr size_t kProbe = size_t{1} << 20;
      const int fd = ::open(probe.c_str(), O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0644);
      void* b = nullptr;
      if (fd >= 0 && ::posix_memalign(&b, 4096, kProbe) == 0) {
        std::memset(b, 7, kProbe);
        if (::write(fd, b, kProbe) == static_cast<ssize_t>(kProbe) && ::fsync(fd) == 0) {
          void* m = ::mmap(nullptr, kProbe, PROT_READ, MAP_SHARED, fd, 0);
          if (m != MAP_FAILED) {
            std::vector<unsigned char> in(kProbe / static_cast<size_t>(page));
            direct = ::mincore(m, kProbe, in.data()) == 0 &&
                     std::none_of(in.begin(), in.end(), [](unsigned char c) { return (c & 1) != 0; });
            ::munmap(m, kProbe);
          }
        }
      }
      std::free(b);
      if (fd >= 0) ::close(fd);
      fs::remove(probe);
    }
    int compared = 0;
    size_t pages = 0, resident = 0, files = 0, largest = 0;
    for (const QString& q : sharedTraces()) {
      const std::string from = q.toStdString();
      const std::string trace = dir + "/" + std::to_string(compared) + "-" + fs::path(from).filename().string();
      copyFile(from, trace);
      const cache::OpenedTrace fresh = open(trace, cache::CacheUse::Off);
      if (!fresh.ok()) continue;  // a trace the reader refuses
      cache::TraceKey key;
      std::string error;
      QVERIFY2(cache::traceKey(trace, &key, &error), error.c_str());
      LoadResult r = loadTrace(trace);
      QVERIFY2(r.ok(), trace.c_str());
      auto store = std::make_shared<const EventStore>(std::move(*r.store));
      cache::WriteOutcome out;
      {
        cache::CacheWriter w(trace, key, store, cache::CacheWriteMode{/*early=*/false, /*direct=*/true});
        out = w.finish(*buildSnapshot(store, SnapshotOptions{}));
      }
      QVERIFY2(out.ok, (trace + ": " + out.error).c_str());
      for (const auto& e : fs::directory_iterator(out.dir)) {
        const int fd = ::open(e.path().c_str(), O_RDONLY | O_CLOEXEC);
        QVERIFY(fd >= 0);
        const auto bytes = static_cast<size_t>(fs::file_size(e.path()));
        largest = std::max(largest, bytes);
        if (bytes > 0) {
          void* m = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
          QVERIFY(m != MAP_FAILED);
          const size_t n = (bytes + static_cast<size_t>(page) - 1) / static_cast<size_t>(page);
          std::vector<unsigned char> in(n);
          QCOMPARE(::mincore(m, bytes, in.data()), 0);
          for (unsigned char c : in) resident += c & 1;
          pages += n;
          ::munmap(m, bytes);
        }
        ::close(fd);
        ++files;
      }
      std::string why;
      auto hit = cache::openCache(trace, key, &why);
      QVERIFY2(hit.has_value(), (trace + ": " + why).c_str());
      const std::string d = testutil::compareSnapshots(*hit->snapshot, *fresh.snapshot);
      QVERIFY2(d.empty(), (trace + ": " + d).c_str());
      ++compared;
    }
    QVERIFY(compared >= 40);
    qInfo("direct: %d traces, %zu files, %zu pages, %zu of them in the page cache after the write", compared, files,
          pages, resident);
    QVERIFY(pages > 10 * files);  // files of many pages, so the count below says something
    QVERIFY2(largest > (size_t{8} << 20), "no file of more than one 8 MiB write");
    if (!direct) QSKIP("this folder's file system does not write past the page cache (O_DIRECT)");
    QVERIFY2(resident <= files, qPrintable(QString("%1 pages resident").arg(resident)));
  }

  // The spill allocator itself: while spilling, a large buffer is a file mapping (spill::Vector always;
  // a plain std::vector where the program's new goes through it: spill_new.cpp, not under sanitizers),
  // a small one is heap; its contents survive its pages being dropped and spilling being turned off;
  // a forked child does not share it (a child writing there would write into the parent's array).
  void spillAllocator() {
    const std::string dir = tmp_.filePath("spill-alloc").toStdString();
    fs::create_directories(dir);
    spill::setSpilling(true, spill::Settings{dir, size_t{1} << 30});
    spill::Vector<int64_t> big(size_t{1} << 17);  // 1 MiB
    std::vector<int64_t> plain(size_t{1} << 17);
    std::vector<int64_t> small(16);
    spill::setSpilling(false);
    spill::Vector<int64_t> after(size_t{1} << 17);
    QVERIFY(spill::isSpilled(big.data()));
#ifdef ATTNSCOPE_SPILL_NEW
    QVERIFY(spill::isSpilled(plain.data()));
#else
    QVERIFY(!spill::isSpilled(plain.data()));
#endif
    QVERIFY(!spill::isSpilled(small.data()));
    QVERIFY(!spill::isSpilled(after.data()));
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<int64_t>(i) * 7 - 3, plain[i] = -big[i];
    spill::dropAll();
    for (size_t i = 0; i < big.size(); ++i) {
      if (big[i] != static_cast<int64_t>(i) * 7 - 3 || plain[i] != -big[i])
        QFAIL(qPrintable(QStringLiteral("element %1 changed after its pages were dropped").arg(i)));
    }
    const pid_t pid = ::fork();
    QVERIFY(pid >= 0);
    if (pid == 0) {
      big[5] = 12345;  // not mapped in the child: a fault, never the parent's memory
      ::_exit(0);
    }
    int status = 0;
    QCOMPARE(::waitpid(pid, &status, 0), pid);
    QVERIFY2(!(WIFEXITED(status) && WEXITSTATUS(status) == 0), "the child wrote into the spilled buffer");
    QCOMPARE(big[5], int64_t{5 * 7 - 3});
  }

  // A type aligned past malloc's 16 bytes (key_averages' 64-byte records, one cache line each) gets its
  // alignment from spill::Vector on the heap (small and large blocks: glibc maps a large one and puts its
  // header in the first 16 bytes) and spilled (page-aligned), and its elements keep their values.
  void spillVectorKeepsAlignment() {
    struct alignas(64) Line {
      int64_t v[8];
    };
    const std::string dir = tmp_.filePath("spill-align").toStdString();
    fs::create_directories(dir);
    const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; };
    for (const bool spilled : {false, true}) {
      if (spilled) spill::setSpilling(true, spill::Settings{dir, size_t{1} << 30});
      for (const size_t n : {size_t{3}, size_t{1} << 14}) {  // 192 bytes; 1 MiB
        spill::Vector<Line> lines(n);
        QVERIFY2(aligned(lines.data()), qPrintable(QStringLiteral("%1 lines, spilled %2: at %3")
                                                       .arg(n)
                                                       .arg(spilled)
                                                       .arg(reinterpret_cast<uintptr_t>(lines.data()) % 64)));
        QCOMPARE(spill::isSpilled(lines.data()), spilled && n * sizeof(Line) >= (size_t{64} << 10));
        for (size_t i = 0; i < n; ++i) lines[i].v[7] = static_cast<int64_t>(i);
        lines.push_back(Line{});  // grown: moved to a new block, aligned too
        QVERIFY(aligned(lines.data()));
        for (size_t i = 0; i < n; ++i)
          if (lines[i].v[7] != static_cast<int64_t>(i)) QFAIL("a line lost its value when the vector grew");
      }
      if (spilled) spill::setSpilling(false);
    }
  }

  // A spilled buffer given back is kept (file and pages) and handed out again for a request of at least
  // half its size; the pool holds at most poolBytes, the oldest going first, and nothing once spilling
  // is off.
  void spillPool() {
    const std::string dir = tmp_.filePath("spill-pool").toStdString();
    fs::create_directories(dir);
    constexpr size_t kMiB = size_t{1} << 20;
    spill::setSpilling(true, spill::Settings{dir, size_t{1} << 30, 3 * kMiB});
    QCOMPARE(spill::pooledBytes(), size_t{0});
    const spill::Counts before = spill::counts();
    auto* a = static_cast<int64_t*>(spill::allocate(kMiB));
    QVERIFY(spill::isSpilled(a));
    QCOMPARE(spill::counts().newBytes - before.newBytes, uint64_t{kMiB});
    for (size_t i = 0; i < kMiB / 8; ++i) a[i] = static_cast<int64_t>(i);
    spill::deallocate(a, kMiB);
    QCOMPARE(spill::pooledBytes(), kMiB);
    // Of at least half its size: the same buffer, its pages still there (no new file).
    auto* b = static_cast<int64_t*>(spill::allocate(kMiB / 2 + 4096));
    QCOMPARE(b, a);
    QCOMPARE(spill::pooledBytes(), size_t{0});
    // Counted as reused, by the buffer's own size; nothing new.
    QCOMPARE(spill::counts().reusedBytes - before.reusedBytes, uint64_t{kMiB});
    QCOMPARE(spill::counts().newBytes - before.newBytes, uint64_t{kMiB});
    QCOMPARE(b[12345], int64_t{12345});
    // Smaller than half of it, or larger than it: a buffer of its own.
    spill::deallocate(b, kMiB / 2 + 4096);
    auto* c = static_cast<int64_t*>(spill::allocate(kMiB / 2 - 4096));
    auto* d = static_cast<int64_t*>(spill::allocate(kMiB + 4096));
    QVERIFY(c != a && d != a && spill::isSpilled(c) && spill::isSpilled(d));
    QCOMPARE(spill::pooledBytes(), kMiB);
    // Past poolBytes (3 MiB) the oldest go: a (1 MiB, given back first), then c.
    spill::deallocate(d, kMiB + 4096);  // 1 MiB + 4 KiB
    spill::deallocate(c, kMiB / 2 - 4096);
    QCOMPARE(spill::pooledBytes(), kMiB + (kMiB + 4096) + (kMiB / 2 - 4096));
    auto* e = static_cast<int64_t*>(spill::allocate(kMiB));
    QVERIFY(e == a);  // the smallest of at least this size
    spill::deallocate(e, kMiB);
    void* f = spill::allocate(2 * kMiB);
    QVERIFY(f != a && f != d);
    // 0.5 + 1 + 1 + 2 MiB pooled: past 3 MiB the oldest given back go, d and then c (a came back later).
    spill::deallocate(f, 2 * kMiB);
    QCOMPARE(spill::pooledBytes(), kMiB + 2 * kMiB);
    QVERIFY(spill::allocate(kMiB + 4096) == f);  // d went: the smallest left of at least that size is f
    spill::deallocate(f, kMiB + 4096);
    // Buffers larger than the pool are not kept.
    void* g = spill::allocate(4 * kMiB);
    spill::deallocate(g, 4 * kMiB);
    QCOMPARE(spill::pooledBytes(), kMiB + 2 * kMiB);
    // Nor one whose pages were punched out (its blocks no longer reserved); its own pages only. (400 KiB:
    // under half of every pooled buffer, so both are new, one after the other.)
    constexpr size_t kSmall = 100 * 4096;
    auto* h = static_cast<char*>(spill::allocate(kSmall));
    auto* next = static_cast<char*>(spill::allocate(kSmall));
    QCOMPARE(next, h + kSmall);
    std::memset(next, 7, kSmall);
    spill::discardPages(h + 4096, 4 * kMiB);  // runs past h: clamped to it
    QCOMPARE(next[0], char{7});
    spill::deallocate(h, kSmall);
    QCOMPARE(spill::pooledBytes(), kMiB + 2 * kMiB);
    // Once spilling is off, the pool is emptied and a buffer given back is not kept.
    spill::setSpilling(false);
    QCOMPARE(spill::pooledBytes(), size_t{0});
    QCOMPARE(next[kSmall - 1], char{7});
    spill::deallocate(next, kSmall);
    QCOMPARE(spill::pooledBytes(), size_t{0});
  }
};

QTEST_APPLESS_MAIN(TestTraceCache)
#include "test_trace_cache.moc"
