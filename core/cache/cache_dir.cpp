#include "core/cache/cache_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <vector>

namespace attnscope::cache {

namespace fs = std::filesystem;

namespace {

bool writable(const fs::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return false;
  // Mode bits first: root may write anywhere, but a folder marked r-x is meant to stay as it is.
  if ((st.st_mode & 0222) == 0) return false;
  return ::access(dir.c_str(), W_OK) == 0;
}

std::string hex64(uint64_t v) {
  static const char* d = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = d[v & 15];
  return s;
}

fs::path userCacheRoot(const std::string& kind) {
  if (const char* c = std::getenv("ATTNSCOPE_CACHE_DIR"); c && *c) return c;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "attnscope" / kind;
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "attnscope" / kind;
  return fs::temp_directory_path() / "attnscope-cache" / kind;
}

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ull;
  x ^= x >> 33;
  return x;
}

}  // namespace

CacheDir cacheDirFor(const std::string& trace, const std::string& kind) {
  const fs::path p(trace);
  const std::string name = p.filename().string() + ".attnscope";
  fs::path folder = p.parent_path();
  if (folder.empty()) folder = ".";
  CacheDir d;
  if (writable(folder)) {
    d.dir = (folder / name).string();
    return d;
  }
  std::error_code ec;
  const fs::path abs = fs::weakly_canonical(p, ec);
  const uint64_t h = std::hash<std::string>{}(ec ? p.string() : abs.string());
  d.dir = (userCacheRoot(kind) / (hex64(h) + "-" + name)).string();
  d.fallback = true;
  d.why = "the trace's folder " + folder.string() + " is read-only";
  return d;
}

uint64_t hashBytes(const void* data, size_t n, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = mix(seed ^ (n * 0x9E3779B97F4A7C15ull));
  uint64_t a = 0, b = 0, c = 0, d = 0;
  size_t i = 0;
  // Four lanes of 8 bytes: fast enough that reading the samples is the cost.
  for (; i + 32 <= n; i += 32) {
    uint64_t w[4];
    std::memcpy(w, p + i, 32);
    a = (a ^ w[0]) * 0x9FB21C651E98DF25ull;
    b = (b ^ w[1]) * 0xC2B2AE3D27D4EB4Full;
    c = (c ^ w[2]) * 0x165667B19E3779F9ull;
    d = (d ^ w[3]) * 0x27D4EB2F165667C5ull;
    a ^= a >> 29, b ^= b >> 31, c ^= c >> 27, d ^= d >> 33;
  }
  for (; i < n; ++i) h = (h ^ p[i]) * 0x100000001B3ull;
  return mix(h ^ mix(a) ^ (mix(b) << 1) ^ (mix(c) << 2) ^ (mix(d) << 3));
}

bool traceKey(const std::string& trace, TraceKey* out, std::string* error) {
  const int fd = ::open(trace.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *error = trace + ": cannot open (" + std::strerror(errno) + ")";
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    *error = trace + ": not a regular file";
    return false;
  }
  out->size = static_cast<int64_t>(st.st_size);
  out->mtimeNs = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  constexpr uint64_t kEdge = uint64_t{1} << 20, kBlock = uint64_t{64} << 10;
  constexpr int kInner = 15;
  const auto size = static_cast<uint64_t>(st.st_size);
  std::vector<std::pair<uint64_t, uint64_t>> samples;  // (offset, length)
  if (size <= 2 * kEdge + kInner * kBlock) {
    samples.emplace_back(0, size);
  } else {
    samples.emplace_back(0, kEdge);
    const uint64_t span = size - 2 * kEdge - kBlock;
    for (int k = 0; k < kInner; ++k)
      samples.emplace_back(kEdge + span * static_cast<uint64_t>(k) / (kInner - 1), kBlock);
    samples.emplace_back(size - kEdge, kEdge);
  }
  std::vector<char> buf;
  uint64_t h = 0;
  for (const auto& [off, len] : samples) {
    buf.resize(len);
    uint64_t got = 0;
    while (got < len) {
      const ssize_t r = ::pread(fd, buf.data() + got, len - got, static_cast<off_t>(off + got));
      if (r <= 0) {
        ::close(fd);
        *error = trace + ": cannot be read (" + (r < 0 ? std::strerror(errno) : "it shrank") + ")";
        return false;
      }
      got += static_cast<uint64_t>(r);
    }
    h = hashBytes(buf.data(), len, h ^ off);
  }
  ::close(fd);
  out->contentHash = h;
  return true;
}

}  // namespace attnscope::cache
