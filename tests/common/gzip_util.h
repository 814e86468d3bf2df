// gzip and raw deflate of test inputs (zlib), for the reader tests.
#pragma once

#include <zlib.h>

#include <cstdint>
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

// A .gz of `head`, `copies` MiB of `fill` bytes, `tail`: a few KB that
// inflate to any size (raw deflate blocks flushed and repeated, with the
// CRC-32 and size of it all computed without building it).
inline std::string inflatesTo(const std::string& head, char fill, int copies, const std::string& tail) {
  const std::string mib(1 << 20, fill);
  std::string bomb("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);
  bomb += deflated(head, 9, -15, Z_FULL_FLUSH);
  const std::string block = deflated(mib, 9, -15, Z_FULL_FLUSH);
  for (int i = 0; i < copies; ++i) bomb += block;
  bomb += deflated(tail, 9, -15, Z_FINISH);
  auto crcOf = [](const std::string& x) {
    return crc32(0, reinterpret_cast<const Bytef*>(x.data()), static_cast<uInt>(x.size()));
  };
  uLong crc = crcOf(head);
  const uLong crcMib = crcOf(mib);
  for (int i = 0; i < copies; ++i) crc = crc32_combine(crc, crcMib, static_cast<z_off_t>(mib.size()));
  crc = crc32_combine(crc, crcOf(tail), static_cast<z_off_t>(tail.size()));
  const uint64_t total = head.size() + uint64_t{static_cast<unsigned>(copies)} * mib.size() + tail.size();
  for (int k = 0; k < 4; ++k) bomb.push_back(static_cast<char>((crc >> (8 * k)) & 0xFF));
  for (int k = 0; k < 4; ++k) bomb.push_back(static_cast<char>((total >> (8 * k)) & 0xFF));
  return bomb;
}
