// One chunk of events parsed into a Parser, and the object around the events (chunked_reader's
// threads call both).
#include <algorithm>
#include <string>

#include "core/read/chunk_parse.h"

namespace attnscope::reader {

namespace {
constexpr size_t kPad = simdjson::SIMDJSON_PADDING;
}  // namespace

// Parses one chunk into `p`; false when the text is not what we expect.
bool parseChunk(od::parser& parser, size_t& capacity, const Chunk& w, Parser& p, const ReaderLimits& limits,
                size_t* fixed, size_t* firstBad) {
  if (w.len > capacity) {
    // One level less: these arrays sit at the top, not inside an object.
    if (parser.allocate(std::max<size_t>(w.len, 64), parserDepth(limits) - 1)) return false;
    capacity = w.len;
  }
  od::document doc;
  auto ec = parser.iterate(w.text, w.len, w.len + kPad).get(doc);
  if (ec == simdjson::UTF8_ERROR) {
    *fixed = repairUtf8(w.text, w.len, firstBad);
    ec = parser.iterate(w.text, w.len, w.len + kPad).get(doc);
  }
  if (ec) return false;
  od::array arr;
  if (doc.get_array().get(arr)) return false;
  for (auto item : arr) {
    od::value v;
    if (item.get(v)) return false;
    if (!p.event(doc, v)) return false;
  }
  const char* tl = nullptr;
  return !(!doc.current_location().get(tl) && tl && tl < w.text + w.len) && !p.ambiguousId;
}

// The object around the events; false when it is not exactly one
// "traceEvents": [] plus metadata keys.
bool parseMetadata(std::string md, Parser& mp, const ReaderLimits& limits) {
  const size_t len = md.size();
  md.resize(len + kPad, '\0');
  mp.textBase = md.data();
  od::parser parser;
  if (parser.allocate(std::max<size_t>(len, 64), parserDepth(limits))) return false;
  od::document doc;
  if (parser.iterate(md.data(), len, md.size()).get(doc)) return false;
  od::object obj;
  if (doc.get_object().get(obj)) return false;
  int eventKeys = 0;
  for (auto field : obj) {
    std::string_view key;
    od::value v;
    if (!readField(field, &key, &v)) return false;
    if (key == "traceEvents") {
      od::array arr;
      if (v.get_array().get(arr)) return false;
      for (auto el : arr) {
        (void)el;
        return false;
      }
      ++eventKeys;
    } else {
      mp.topMeta(key, v);
    }
  }
  const char* tl = nullptr;
  if (!doc.current_location().get(tl) && tl && tl < md.data() + len) return false;
  return eventKeys == 1;
}

}  // namespace attnscope::reader
