// .gz decompression with a size cap (refuses decompression bombs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope {

bool isGzip(const char* data, size_t size);

// Decompresses a gzip (possibly multi-member) stream into `out`, leaving
// `padding` zeroed bytes after the data (simdjson needs them). On failure
// returns false with `error` set ("gzip data is corrupt at byte N",
// "decompressed size exceeds the limit of N bytes").
bool gunzip(const char* data, size_t size, uint64_t maxOut, size_t padding, std::vector<char>* out,
            size_t* outSize, std::string* error);

}  // namespace attnscope
