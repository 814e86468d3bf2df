// A build without Arrow C++ (no pyarrow wheel, ATTNSCOPE_ARROW=OFF): no columnar cache. Every open
// reads the JSON; writing and reading a cache say why not.
#include "core/cache/parquet_export.h"
#include "core/cache/trace_cache.h"

namespace attnscope::cache {

bool available() { return false; }

std::string cacheFolder(const std::string& trace) { return cacheDirFor(trace, "traces").dir + "/trace"; }

struct CacheWriter::State {};

CacheWriter::CacheWriter(const std::string&, const TraceKey&, std::shared_ptr<const EventStore>, CacheWriteMode) {}
CacheWriter::~CacheWriter() = default;

WriteOutcome CacheWriter::finish(const TraceSnapshot&, const CacheExtras&) {
  WriteOutcome out;
  out.error = kNoCache;
  return out;
}

std::optional<OpenedCache> openCache(const std::string&, const TraceKey&, std::string* why, bool* damaged) {
  *why = kNoCache;
  if (damaged) *damaged = false;
  return std::nullopt;
}

ExportOutcome exportParquet(const TraceSnapshot&, const std::string&) {
  ExportOutcome out;
  out.error = "this build has no Parquet (built without Arrow C++: pip install pyarrow and rebuild)";
  return out;
}

}  // namespace attnscope::cache
