#include "core/cache/open_trace.h"

#include <malloc.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>

#include "core/cache/cache_dir.h"
#include "core/cache/trace_cache.h"
#include "core/store/span_log.h"
#include "core/store/spill.h"

namespace attnscope::cache {

namespace {

double residentMb() {
  if (std::getenv("ATTNSCOPE_DEBUG_RSS"))
    std::fprintf(stderr, "rss total %zu MB, files %zu MB\n", spill::residentBytes() >> 20,
                 spill::residentFileBytes() >> 20);
  return static_cast<double>(spill::residentBytes()) / 1e6;
}

double cpuSeconds() {
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void setStage(const ReaderLimits& l, int stage) {
  if (l.progress) l.progress->stage.store(stage, std::memory_order_relaxed);
}

bool cancelled(const ReaderLimits& l) { return l.progress && l.progress->cancel.load(std::memory_order_relaxed); }

// How much JSON the file holds, roughly (a .gz inflates about 10x).
uint64_t expectedJsonBytes(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  const auto size = static_cast<uint64_t>(st.st_size);
  const std::string_view p(path);
  return p.ends_with(".gz") ? size * 10 : size;
}

}  // namespace

CacheUse cacheUseFromEnv() {
  const char* v = std::getenv("ATTNSCOPE_CACHE");
  if (!v) return CacheUse::Auto;
  const std::string_view s(v);
  if (s == "off" || s == "0" || s == "no") return CacheUse::Off;
  if (s == "rebuild") return CacheUse::Rebuild;
  return CacheUse::Auto;
}

bool defaultContentLimits(const ReaderLimits& l) {
  const ReaderLimits d;
  return l.maxDecompressedBytes == d.maxDecompressedBytes && l.maxDecompressedRatio == d.maxDecompressedRatio &&
         l.maxFileBytes == d.maxFileBytes && l.maxDepth == d.maxDepth && l.maxStringBytes == d.maxStringBytes &&
         l.maxEvents == d.maxEvents && l.maxEventBytes == d.maxEventBytes;
}

OpenedTrace openTrace(const std::string& path, const OpenOptions& options) {
  OpenedTrace out;
  const ReaderLimits& limits = options.limits;
  // Whether the cache takes part, and what the trace is now.
  bool useCache = options.cache != CacheUse::Off;
  TraceKey key;
  if (!available()) {
    useCache = false;
    out.cache.why = kNoCache;
  } else if (options.cache == CacheUse::Off) {
    out.cache.why = "the cache is off (ATTNSCOPE_CACHE=off or --no-cache)";
  } else if (!defaultContentLimits(limits)) {
    useCache = false;
    out.cache.why = "reader limits other than the defaults: the cache holds what the defaults read";
  } else if (std::string error; !traceKey(path, &key, &error)) {
    useCache = false;  // the reader below says what is wrong with the file
    out.cache.why = error;
  }
  if (useCache) {
    out.cache.dir = cacheFolder(path);
    if (options.cache == CacheUse::Auto) {
      const auto t0 = std::chrono::steady_clock::now();
      setStage(limits, kStageReadCache);
      std::string why;
      if (auto hit = openCache(path, key, &why)) {
        out.snapshot = std::move(hit->snapshot);
        out.cache.state = CacheReport::State::Hit;
        out.cacheSeconds = since(t0);
        out.warning = hit->extras.warning;
        out.jsonBytes = hit->extras.jsonBytes;
        return out;
      }
      out.cache.why = why;
    } else {
      out.cache.why = "rebuilt on request (ATTNSCOPE_CACHE=rebuild)";
    }
  }

  // The JSON, read once. Past the memory budget, large arrays go to files beside the cache.
  const size_t budget = spill::budgetFromEnv(size_t{1} << 30);
  const uint64_t expected = expectedJsonBytes(path);
  out.spilled = expected > 2 * static_cast<uint64_t>(budget);
  if (out.spilled) {
    spill::Settings s;
    s.budgetBytes = budget;
    if (useCache) {
      const std::string dir = cacheDirFor(path, "traces").dir;
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (!ec) s.dir = dir;
    }
    spill::setSpilling(true, s);
  }
  setStage(limits, 0);
  const double cpu0 = cpuSeconds();
  std::optional<spans::Span> phase(std::in_place, "open: JSON read, parsed, store built");
  LoadResult r = loadTrace(path, limits);
  phase.reset();
  out.cpuReadS = cpuSeconds() - cpu0;
  out.timings = r.timings;
  out.rssReadMb = residentMb();
  out.jsonBytes = r.jsonBytes;
  out.chunks = r.chunks;
  out.cutParts = r.cutParts;
  out.warning = r.warning;
  out.cancelled = r.cancelled;
  if (!r.ok()) {
    out.error = r.error;
    if (out.spilled) spill::setSpilling(false);
    return out;
  }
  if (cancelled(limits)) {
    out.cancelled = true;
    out.error = LoadError{path, "loading cancelled"};
    if (out.spilled) spill::setSpilling(false);
    return out;
  }
  const auto ts = std::chrono::steady_clock::now();
  setStage(limits, kStageSnapshot);
  SnapshotOptions so = options.snapshot;
  if (useCache) so = SnapshotOptions{};  // the cache holds everything
  auto store = std::make_shared<const EventStore>(std::move(*r.store));
  // The store's columns go to the cache while the snapshot is built (their write and fsync beside the
  // snapshot's work); a spilled trace writes them after it, one large array at a time, past the page
  // cache (CacheWriteMode).
  std::unique_ptr<CacheWriter> writer;
  if (useCache)
    writer =
        std::make_unique<CacheWriter>(path, key, store, CacheWriteMode{/*early=*/!out.spilled, /*direct=*/out.spilled});
  phase.emplace("open: snapshot");
  auto built = buildSnapshot(std::move(store), so);
  phase.reset();
  out.snapshotSeconds = since(ts);
  out.cpuSnapshotS = cpuSeconds() - cpu0 - out.cpuReadS;
  out.rssSnapshotMb = residentMb();
  if (cancelled(limits)) {
    out.cancelled = true;
    out.error = LoadError{path, "loading cancelled"};
    if (out.spilled) spill::setSpilling(false);
    return out;
  }
  out.snapshot = built;
  if (useCache) {
    const auto tc = std::chrono::steady_clock::now();
    setStage(limits, kStageWriteCache);
    phase.emplace("open: cache's last part");
    const WriteOutcome w = writer->finish(*built, CacheExtras{out.warning, out.jsonBytes});
    phase.reset();
    writer.reset();  // it holds the store
    out.cache.note = w.note;
    if (w.ok) {
      out.cache.state = CacheReport::State::Written;
      out.cache.dir = w.dir;
      out.cache.bytes = w.bytes;
      if (out.spilled) {
        // From now on the cache, mapped: the spilled arrays go.
        setStage(limits, kStageReadCache);
        out.snapshot.reset();
        built.reset();
#ifdef __GLIBC__
        ::malloc_trim(0);  // the heap the snapshot's small parts took, back to the system
#endif
        std::string why;
        if (auto hit = openCache(path, key, &why)) {
          out.snapshot = std::move(hit->snapshot);
        } else {
          out.cache.state = CacheReport::State::Failed;
          out.cache.why = "written but not readable: " + why;
          out.spilled = false;
          spill::setSpilling(false);
          return openTrace(path, OpenOptions{limits, CacheUse::Off, options.snapshot});
        }
      }
    } else {
      out.cache.state = CacheReport::State::Failed;
      out.cache.why = w.error;
    }
    out.cacheSeconds = since(tc);
    out.cpuCacheS = cpuSeconds() - cpu0 - out.cpuReadS - out.cpuSnapshotS;
    out.rssCacheMb = residentMb();
  }
  if (out.spilled) spill::setSpilling(false);
  return out;
}

}  // namespace attnscope::cache
