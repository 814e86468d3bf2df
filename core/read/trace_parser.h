// Internal to the reader: one trace event (a simdjson On-Demand object) into
// an EventStoreBuilder, plus the helpers that the one-pass reader
// (trace_reader.cpp) and the chunked reader (trace_chunks.cpp) share.
//
// Every file that includes this must be compiled with the same SIMD flags
// (core/CMakeLists.txt): simdjson::ondemand names the kernel they select.
#pragma once

#include <simdjson.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/read/trace_reader.h"
#include "core/store/event_store.h"

namespace attnscope::reader {

namespace od = simdjson::ondemand;

// simdjson On-Demand does not enforce its depth limit in release builds (it
// only asserts in debug ones): our own descent is what must stay bounded.
// pyRepr() stops at limits.maxDepth levels below an event's args (which sit
// 4 levels down), so the parser gets that much headroom.
inline size_t parserDepth(const ReaderLimits& limits) { return size_t{limits.maxDepth} + 16; }

inline double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline bool isWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// An object field's key and value; false where the JSON is broken.
inline bool readField(simdjson::simdjson_result<od::field>& field, std::string_view* key, od::value* v) {
  return !field.unescaped_key().get(*key) && !field.value().get(*v);
}

// A value that is not JSON at all where a value belongs: Python's json
// writes NaN and Infinity bare, JavaScript's undefined... (simdjson's type()
// fails on them; the iterators still step over them).
bool bareWord(od::value v);

// Error text for a simdjson error code, in user words.
std::string describe(simdjson::error_code ec);
std::string typeName(od::json_type t);

// Maps a chunk's synthetic pid/tid (built from its own string ids) to the
// merged string table's ids.
int64_t remapSyntheticId(int64_t v, const std::vector<uint32_t>& stringMap);

// Replaces invalid UTF-8 sequences with '?', in place (offsets stay valid).
size_t repairUtf8(char* p, size_t n, size_t* firstBad);

LoadResult fail(const std::string& path, std::string msg);
LoadResult cancelledLoad(const std::string& path);

// A process/thread name noted by a chunk parser, replayed in order at merge.
struct MetaOp {
  bool process = false;
  bool thread = false;
  bool overwrite = false;  // map[id] = name (M events) vs emplace (name-like ids)
  int64_t id = 0;
  std::string name;
};

struct Parser {
  // `base` is the text being iterated; its first byte is at `baseOffset` of
  // the whole (decompressed) JSON text, which is what bad-event offsets count.
  Parser(const ReaderLimits& lim, const char* base, uint64_t baseOffset = 0)
      : limits(lim), textBase(base), textOffset(baseOffset) {}

  const ReaderLimits& limits;
  const char* textBase;
  uint64_t textOffset;
  EventStoreBuilder b;
  uint64_t eventsSeen = 0;
  bool tooDeep = false;  // set by pyRepr: the current event nests too deep
  // Set by internRepr: the str() of an argument grew past maxStringBytes.
  bool reprTooLong = false;
  std::string longArg;  // what in the current event is over maxStringBytes ("" if nothing)
  std::string warning;
  // Chunked parsing: names go to this log instead of meta; a numeric id that
  // looks synthetic makes the chunked result unusable (ambiguous remap).
  std::vector<MetaOp>* metaLog = nullptr;
  bool ambiguousId = false;

  uint64_t offsetOf(od::document& doc);

  // Returns false when the document itself is broken (stop iterating);
  // a merely bad event is counted and returns true.
  bool event(od::document& doc, od::value item);

  // A top-level key of the trace object other than "traceEvents".
  void topMeta(std::string_view key, od::value v);

 private:
  struct Raw {
    std::string_view ph, cat, name, bp;
    int64_t pid = 0, tid = 0, ts = 0, dur = 0, flowId = 0;
    bool hasPid = false, hasTid = false, hasTs = false, hasDur = false, hasFlowId = false;
    bool hasArgs = false;
    EventArgs args;
    bool argsUsed = false;
    CommArgs comm;  // a collective's args ("Collective name", "Seq", ...)
    bool commUsed = false;
    int64_t externalId = kNoId, correlation = kNoId;
    std::string metaName;  // M events: args.name
  };

  void noteNumericId(int64_t v);
  // How many '[' open in a row at byte `off` (a cheap look at a suspicious
  // element: simdjson skips unused values iteratively, so depth is only a
  // risk for the values we descend into, which pyRepr bounds).
  uint32_t nestingAt(uint64_t off) const;
  // pid/tid may be numbers or strings ("Spans", "Traces").
  bool idValue(od::value v, int64_t* out);
  // Python's str() of a JSON value (for torch's input_shapes key).
  bool pyRepr(od::value v, std::string& out, uint32_t depth);
  bool pyReprArray(od::array& a, std::string& out, uint32_t depth);
  // The interned str() of a value ("Input Dims", ...).
  bool internRepr(od::value v, uint32_t* id);
  bool intArg(od::value v, int64_t* out);
  bool numArg(od::value v, double* out);  // a finite number, integer or not
  void int3(od::value v, int32_t out[3]);
  bool argsObject(od::object a, Raw& r);
  // A collective's arg ("Collective name", "Seq", ...): false when `key` is none of them.
  bool commArg(std::string_view key, od::value v, Raw& r);
  // The interned text of a string, a number's JSON token or an array's str().
  bool textArg(od::value v, uint32_t* id);
  bool place(Raw& r, uint64_t off);

  // JSON text of an array already seen in this text -> its interned str().
  std::unordered_map<std::string_view, uint32_t> reprCache_;
};

}  // namespace attnscope::reader
