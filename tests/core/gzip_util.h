// gzip and raw deflate of test inputs (zlib), for the reader tests.
#pragma once

#include <zlib.h>

#include <string>

// Deflates `s` in one call: windowBits 15 + 16 is a gzip member, -15 raw
// deflate; Z_FULL_FLUSH leaves a raw stream that another can follow.
inline std::string deflated(const std::string& s, int level, int windowBits, int flush) {
  z_stream zs{};
  deflateInit2(&zs, level, Z_DEFLATED, windowBits, 9, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, s.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  zs.avail_in = static_cast<uInt>(s.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, flush);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// One gzip member of `s`.
inline std::string gzipOf(const std::string& s, int level = 6) { return deflated(s, level, 15 + 16, Z_FINISH); }
