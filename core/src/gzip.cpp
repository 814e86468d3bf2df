#include "attnscope/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

namespace attnscope {

bool isGzip(const char* data, size_t size) {
  return size >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

bool gunzip(const char* data, size_t size, uint64_t maxOut, size_t padding, std::vector<char>* out,
            size_t* outSize, std::string* error) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) {
    *error = "cannot initialise zlib";
    return false;
  }
  // Guess 6x the compressed size (typical for traces), grow geometrically.
  size_t cap = std::min<uint64_t>(std::max<size_t>(size * 6, 1 << 16), maxOut) + padding;
  out->resize(cap);
  size_t produced = 0;
  size_t consumed = 0;
  int ret = Z_OK;
  while (true) {
    if (produced + padding >= out->size()) {
      if (produced >= maxOut) {
        inflateEnd(&zs);
        *error = "decompressed size exceeds the limit of " + std::to_string(maxOut) +
                 " bytes (a gzip bomb, or raise --max-decompressed)";
        return false;
      }
      const size_t next = std::min<uint64_t>(static_cast<uint64_t>(out->size()) * 2, maxOut + 1) + padding;
      out->resize(next);
    }
    const size_t room = out->size() - padding - produced;
    const size_t inChunk = std::min<size_t>(size - consumed, 1u << 30);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data + consumed));
    zs.avail_in = static_cast<uInt>(inChunk);
    zs.next_out = reinterpret_cast<Bytef*>(out->data() + produced);
    zs.avail_out = static_cast<uInt>(std::min<size_t>(room, 1u << 30));
    const uInt availOutBefore = zs.avail_out;
    ret = inflate(&zs, Z_NO_FLUSH);
    consumed += inChunk - zs.avail_in;
    produced += availOutBefore - zs.avail_out;
    if (produced > maxOut) {
      inflateEnd(&zs);
      *error = "decompressed size exceeds the limit of " + std::to_string(maxOut) +
               " bytes (a gzip bomb, or raise --max-decompressed)";
      return false;
    }
    if (ret == Z_STREAM_END) {
      // Concatenated members: continue if input remains and looks like gzip.
      if (consumed < size && isGzip(data + consumed, size - consumed)) {
        inflateReset(&zs);
        continue;
      }
      break;
    }
    if (ret == Z_BUF_ERROR && zs.avail_in == 0 && consumed >= size) {
      inflateEnd(&zs);
      *error = "gzip data ends early (truncated file) after " + std::to_string(consumed) +
               " compressed bytes";
      return false;
    }
    if (ret != Z_OK && ret != Z_BUF_ERROR) {
      inflateEnd(&zs);
      *error = std::string("gzip data is corrupt near compressed byte ") + std::to_string(consumed) +
               (zs.msg ? std::string(" (") + zs.msg + ")" : std::string());
      return false;
    }
  }
  inflateEnd(&zs);
  std::memset(out->data() + produced, 0, std::min(padding, out->size() - produced));
  *outSize = produced;
  return true;
}

}  // namespace attnscope
