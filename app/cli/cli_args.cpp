#include "cli_args.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "core/store/span_log.h"
#include "core/store/spill.h"
#include "core/write/atomic_file.h"

namespace attnscope::cli {

bool Args::flag(const std::string& name) {
  for (auto it = args_.begin(); it != args_.end(); ++it) {
    if (*it == name) {
      args_.erase(it);
      return true;
    }
  }
  return false;
}

std::optional<std::string> Args::value(const std::string& name, const std::string& alias) {
  for (size_t i = 0; i < args_.size(); ++i) {
    const std::string& a = args_[i];
    if (a == name || (!alias.empty() && a == alias)) {
      if (i + 1 >= args_.size()) throw UsageError(command_ + ": " + a + " needs a value");
      std::string v = args_[i + 1];
      args_.erase(args_.begin() + static_cast<long>(i), args_.begin() + static_cast<long>(i) + 2);
      return v;
    }
    if (a.rfind(name + "=", 0) == 0) {
      std::string v = a.substr(name.size() + 1);
      args_.erase(args_.begin() + static_cast<long>(i));
      return v;
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> Args::number(const std::string& name) {
  auto v = value(name);
  if (!v) return std::nullopt;
  uint64_t n = 0;
  auto r = std::from_chars(v->data(), v->data() + v->size(), n);
  if (r.ec != std::errc() || r.ptr != v->data() + v->size())
    throw UsageError(command_ + ": " + name + " takes a non-negative whole number, got '" + *v + "'");
  return n;
}

bool Args::wantsHelp() const {
  for (const auto& a : args_)
    if (a == "--help" || a == "-h") return true;
  return false;
}

std::vector<std::string> Args::positionals(size_t min, size_t max) {
  std::vector<std::string> pos;
  for (const auto& a : args_) {
    if (a.size() > 1 && a[0] == '-') throw UsageError(command_ + ": unknown option '" + a + "' (see --help)");
    pos.push_back(a);
  }
  if (pos.size() < min) throw UsageError(command_ + ": missing argument (see --help)");
  if (pos.size() > max) throw UsageError(command_ + ": too many arguments: '" + pos[max] + "' (see --help)");
  return pos;
}

ReaderLimits readerLimits(Args& a) {
  ReaderLimits l;
  if (auto v = a.number("--max-decompressed")) {
    l.maxDecompressedBytes = *v;  // exactly this, whatever the .gz's size
    l.maxDecompressedRatio = 0;
  }
  if (auto v = a.number("--max-depth")) l.maxDepth = static_cast<uint32_t>(std::min<uint64_t>(*v, 100000));
  if (auto v = a.number("--max-string")) l.maxStringBytes = static_cast<uint32_t>(std::min<uint64_t>(*v, 1u << 30));
  if (auto v = a.number("--max-events")) l.maxEvents = *v;
  return l;
}

cache::OpenOptions openOptions(Args& a, const SnapshotOptions& snapshot) {
  cache::OpenOptions o;
  o.limits = readerLimits(a);
  if (a.flag("--no-cache")) o.cache = cache::CacheUse::Off;
  o.snapshot = snapshot;
  return o;
}

std::shared_ptr<const TraceSnapshot> openOrThrow(const std::string& path, const cache::OpenOptions& options) {
  cache::OpenedTrace t = cache::openTrace(path, options);
  if (!t.ok()) throw UsageError(t.error ? t.error->what() : path + ": could not be read");
  if (!t.warning.empty()) std::cerr << "attnscope-cli: warning: " << path << ": " << t.warning << "\n";
  if (t.cache.state == cache::CacheReport::State::Failed)
    std::cerr << "attnscope-cli: note: " << path << ": its columnar cache was not written: " << t.cache.why << "\n";
  // For attnscope-bench: where the open's time went, as key=value.
  if (std::getenv("ATTNSCOPE_REPORT_OPEN")) {
    static const char* const kState[] = {"off", "hit", "written", "failed"};
    const spill::Counts sc = spill::counts();
    const auto mb = [](uint64_t b) { return static_cast<double>(b) / (1024.0 * 1024.0); };
    std::fprintf(
        stderr,
        "open_cache=%s open_read_s=%.3f open_parse_s=%.3f open_build_s=%.3f open_snapshot_s=%.3f "
        "open_cache_s=%.3f open_chunks=%llu open_cut_parts=%llu open_spilled=%d cache_bytes=%llu events=%zu "
        "rss_read_mb=%.0f "
        "rss_snapshot_mb=%.0f rss_cache_mb=%.0f cpu_read_s=%.3f cpu_snapshot_s=%.3f cpu_cache_s=%.3f "
        "spill_new_mb=%.0f spill_reused_mb=%.0f\n",
        kState[static_cast<int>(t.cache.state)], t.timings.read, t.timings.parse, t.timings.build, t.snapshotSeconds,
        t.cacheSeconds, static_cast<unsigned long long>(t.chunks), static_cast<unsigned long long>(t.cutParts),
        t.spilled ? 1 : 0, static_cast<unsigned long long>(t.cache.bytes), t.snapshot->store->size(), t.rssReadMb,
        t.rssSnapshotMb, t.rssCacheMb, t.cpuReadS, t.cpuSnapshotS, t.cpuCacheS, mb(sc.newBytes), mb(sc.reusedBytes));
  }
  if (spans::on()) std::fputs(spans::report().c_str(), stderr);
  return t.snapshot;
}

EventStore loadOrThrow(const std::string& path, const ReaderLimits& limits) {
  LoadResult r = loadTrace(path, limits);
  if (!r.ok()) throw UsageError(r.error->what());
  if (!r.warning.empty()) std::cerr << "attnscope-cli: warning: " << path << ": " << r.warning << "\n";
  return std::move(*r.store);
}

std::string formatOption(Args& a, const std::string& command, std::initializer_list<const char*> allowed) {
  auto f = a.value("--format");
  if (!f) return *allowed.begin();
  std::string list;
  for (const char* x : allowed) {
    if (*f == x) return *f;
    list += (list.empty() ? "" : "|") + std::string(x);
  }
  throw UsageError(command + ": --format takes " + list + ", got '" + *f + "'");
}

void emit(const std::optional<std::string>& outPath, const std::string& text) {
  if (!outPath || *outPath == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return;
  }
  std::string err;
  if (!writeFileAtomic(*outPath, text, &err)) throw UsageError(err);
}

}  // namespace attnscope::cli
