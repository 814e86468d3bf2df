#include "attnscope/trace_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <simdjson.h>

#include <cerrno>
#include <chrono>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "attnscope/gzip.h"

namespace attnscope {

namespace od = simdjson::ondemand;

namespace {

// simdjson On-Demand does not enforce its depth limit in release builds (it
// only asserts in debug ones): our own descent is what must stay bounded.
// pyRepr() stops at limits.maxDepth levels below an event's args (which sit
// 4 levels down), so the parser gets that much headroom.
size_t parserDepth(const ReaderLimits& limits) { return size_t{limits.maxDepth} + 16; }

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

constexpr int64_t kMaxAbsNs = int64_t{1} << 62;  // ~146 years: anything larger is garbage

// Parses a JSON number token in microseconds into integer nanoseconds
// exactly (Kineto writes "5367878831155.178"; going through double would
// lose the last nanosecond at this magnitude).
bool usTokenToNs(std::string_view tok, int64_t* out) {
  size_t i = 0;
  bool neg = false;
  if (i < tok.size() && tok[i] == '-') {
    neg = true;
    ++i;
  }
  constexpr uint64_t kMaxUs = static_cast<uint64_t>(kMaxAbsNs) / 1000;
  uint64_t intPart = 0;
  size_t digits = 0;
  bool tooBig = false;
  while (i < tok.size() && tok[i] >= '0' && tok[i] <= '9') {
    if (!tooBig) {
      intPart = intPart * 10 + static_cast<uint64_t>(tok[i] - '0');
      if (intPart > kMaxUs) tooBig = true;
    }
    ++i;
    ++digits;
  }
  if (digits == 0) return false;
  int64_t frac = 0;  // in ns (3 digits), rounded by the 4th
  if (i < tok.size() && tok[i] == '.') {
    ++i;
    int n = 0;
    int roundDigit = -1;
    while (i < tok.size() && tok[i] >= '0' && tok[i] <= '9') {
      if (n < 3) frac = frac * 10 + (tok[i] - '0');
      else if (n == 3) roundDigit = tok[i] - '0';
      ++n;
      ++i;
    }
    if (n == 0) return false;
    for (int k = n; k < 3; ++k) frac *= 10;
    if (roundDigit >= 5) frac += 1;
  }
  if (i < tok.size() && (tok[i] == 'e' || tok[i] == 'E')) {
    // Rare: exponent form. Use a double and range-check it.
    double d = 0;
    auto r = std::from_chars(tok.data(), tok.data() + tok.size(), d);
    if (r.ec != std::errc() || !std::isfinite(d)) return false;
    const double ns = d * 1000.0;
    if (!(std::fabs(ns) < static_cast<double>(kMaxAbsNs))) return false;
    *out = static_cast<int64_t>(std::llround(ns));
    return true;
  }
  if (i != tok.size() || tooBig) return false;
  const int64_t v = static_cast<int64_t>(intPart) * 1000 + frac;
  *out = neg ? -v : v;
  return true;
}

bool familyOf(std::string_view cat, Family* f) {
  static const std::pair<std::string_view, Family> table[] = {
      {"cpu_op", Family::CpuOp},
      {"user_annotation", Family::UserAnnotation},
      {"gpu_user_annotation", Family::GpuUserAnnotation},
      {"cuda_runtime", Family::CudaRuntime},
      {"cuda_driver", Family::CudaDriver},
      {"kernel", Family::Kernel},
      {"gpu_memcpy", Family::GpuMemcpy},
      {"gpu_memset", Family::GpuMemset},
      {"cuda_sync", Family::CudaSync},
      {"overhead", Family::Overhead},
      {"python_function", Family::PythonFunction},
      {"cpu_instant_event", Family::CpuInstant},
      // Older Kineto spellings.
      {"Kernel", Family::Kernel},
      {"Memcpy", Family::GpuMemcpy},
      {"Memset", Family::GpuMemset},
      {"Runtime", Family::CudaRuntime},
      {"Operator", Family::CpuOp},
      {"python_function", Family::PythonFunction},
  };
  for (const auto& [k, v] : table) {
    if (k == cat) {
      *f = v;
      return true;
    }
  }
  return false;
}

// Error text for a simdjson error code, in user words.
std::string describe(simdjson::error_code ec) {
  switch (ec) {
    case simdjson::DEPTH_ERROR: return "JSON nesting is too deep";
    case simdjson::UTF8_ERROR: return "text is not valid UTF-8";
    case simdjson::UNCLOSED_STRING: return "JSON ends early inside a string (file truncated?)";
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT: return "JSON ends early (file truncated?)";
    case simdjson::TAPE_ERROR:
    case simdjson::TRAILING_CONTENT: return "not valid JSON";
    case simdjson::CAPACITY: return "document too large for one parse";
    case simdjson::EMPTY: return "file is empty";
    default: return std::string("not valid JSON (") + simdjson::error_message(ec) + ")";
  }
}

std::string typeName(od::json_type t) {
  switch (t) {
    case od::json_type::array: return "an array";
    case od::json_type::object: return "an object";
    case od::json_type::number: return "a number";
    case od::json_type::string: return "a string";
    case od::json_type::boolean: return "a boolean";
    case od::json_type::null: return "null";
  }
  return "?";
}

constexpr int64_t kSyntheticIdBase = -(int64_t{1} << 40);  // name-like pid/tid: base - string id

bool inSyntheticRange(int64_t v) { return v <= kSyntheticIdBase && v > kSyntheticIdBase - (int64_t{1} << 32); }

// Maps a chunk's synthetic pid/tid (built from its own string ids) to the
// merged string table's ids.
int64_t remapSyntheticId(int64_t v, const std::vector<uint32_t>& stringMap) {
  if (!inSyntheticRange(v)) return v;
  const auto id = static_cast<uint64_t>(kSyntheticIdBase - v);
  return id < stringMap.size() ? kSyntheticIdBase - stringMap[id] : v;
}

// A process/thread name noted by a chunk parser, replayed in order at merge.
struct MetaOp {
  bool process = false;
  bool thread = false;
  bool overwrite = false;  // map[id] = name (M events) vs emplace (name-like ids)
  int64_t id = 0;
  std::string name;
};

struct Parser {
  Parser(const ReaderLimits& lim, const char* base) : limits(lim), textBase(base) {}

  const ReaderLimits& limits;
  const char* textBase;
  EventStoreBuilder b;
  uint64_t eventsSeen = 0;
  bool tooDeep = false;  // set by pyRepr: the current event nests too deep
  std::string warning;
  // Chunked parsing: names go to this log instead of meta; a numeric id that
  // looks synthetic makes the chunked result unusable (ambiguous remap).
  std::vector<MetaOp>* metaLog = nullptr;
  bool ambiguousId = false;

  void noteNumericId(int64_t v) {
    if (metaLog && inSyntheticRange(v)) ambiguousId = true;
  }

  // How many '[' open in a row at byte `off` (a cheap look at a suspicious
  // element: simdjson skips unused values iteratively, so depth is only a
  // risk for the values we descend into, which pyRepr bounds).
  uint32_t nestingAt(uint64_t off) const {
    uint32_t d = 0;
    for (const char* q = textBase + off; *q == '[' || *q == ' ' || *q == '\n' || *q == '\t' || *q == '\r'; ++q)
      d += *q == '[';
    return d;
  }

  uint64_t offsetOf(od::document& doc) {
    auto loc = doc.current_location();
    if (loc.error()) return 0;
    return static_cast<uint64_t>(loc.value_unsafe() - textBase);
  }

  // pid/tid may be numbers or strings ("Spans", "Traces").
  bool idValue(od::value v, int64_t* out) {
    od::json_type t;
    if (v.type().get(t)) return false;
    if (t == od::json_type::number) {
      int64_t i;
      if (!v.get_int64().get(i)) {
        *out = i;
        noteNumericId(i);
        return true;
      }
      double d;
      if (v.get_double().get(d) || !std::isfinite(d) || std::fabs(d) > 9e18) return false;
      *out = static_cast<int64_t>(d);
      noteNumericId(*out);
      return true;
    }
    if (t == od::json_type::string) {
      std::string_view s;
      if (v.get_string().get(s)) return false;
      int64_t i;
      auto r = std::from_chars(s.data(), s.data() + s.size(), i);
      if (r.ec == std::errc() && r.ptr == s.data() + s.size()) {
        *out = i;
        noteNumericId(i);
        return true;
      }
      // Name-like ids get stable synthetic negative ids, labelled by name.
      const uint32_t id = b.strings().intern(s);
      *out = kSyntheticIdBase - id;
      if (metaLog) {
        metaLog->push_back({true, true, false, *out, std::string(s)});
        return true;
      }
      b.meta().processNames.emplace(*out, std::string(s));
      b.meta().threadNames.emplace(*out, std::string(s));
      return true;
    }
    return false;
  }

  // Python's str() of a JSON value (for torch's input_shapes key).
  bool pyRepr(od::value v, std::string& out, uint32_t depth) {
    if (depth > limits.maxDepth) {
      tooDeep = true;
      return false;
    }
    od::json_type t;
    if (v.type().get(t)) return false;
    switch (t) {
      case od::json_type::array: {
        od::array a;
        if (v.get_array().get(a)) return false;
        out.push_back('[');
        bool first = true;
        for (auto el : a) {
          od::value ev;
          if (el.get(ev)) return false;
          if (!first) out += ", ";
          first = false;
          if (!pyRepr(ev, out, depth + 1)) return false;
        }
        out.push_back(']');
        return true;
      }
      case od::json_type::number: {
        std::string_view tok = v.raw_json_token();
        while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\n' || tok.back() == '\r' ||
                                tok.back() == '\t' || tok.back() == ',' || tok.back() == ']' ||
                                tok.back() == '}'))
          tok.remove_suffix(1);
        out += tok;
        return true;
      }
      case od::json_type::string: {
        std::string_view s;
        if (v.get_string().get(s)) return false;
        out.push_back('\'');
        out += s;
        out.push_back('\'');
        return true;
      }
      case od::json_type::boolean: {
        bool x;
        if (v.get_bool().get(x)) return false;
        out += x ? "True" : "False";
        return true;
      }
      case od::json_type::null:
        out += "None";
        return true;
      case od::json_type::object:
        return false;
    }
    return false;
  }

  bool intArg(od::value v, int64_t* out) {
    int64_t i;
    if (!v.get_int64().get(i)) {
      *out = i;
      return true;
    }
    double d;
    if (!v.get_double().get(d) && std::isfinite(d) && std::fabs(d) < 9e18) {
      *out = static_cast<int64_t>(d);
      return true;
    }
    return false;
  }

  void int3(od::value v, int32_t out[3]) {
    od::array a;
    if (v.get_array().get(a)) return;
    int k = 0;
    for (auto el : a) {
      int64_t x;
      od::value ev;
      if (el.get(ev)) return;
      if (k < 3 && intArg(ev, &x)) out[k] = static_cast<int32_t>(x);
      ++k;
    }
  }

  struct Raw {
    std::string_view ph, cat, name, bp;
    int64_t pid = 0, tid = 0, ts = 0, dur = 0, flowId = 0;
    bool hasPid = false, hasTid = false, hasTs = false, hasDur = false, hasFlowId = false;
    bool hasArgs = false;
    EventArgs args;
    bool argsUsed = false;
    int64_t externalId = kNoId, correlation = kNoId;
    std::string metaName;  // M events: args.name
  };

  // Returns false when the document itself is broken (stop iterating);
  // a merely bad event is counted and returns true.
  bool event(od::document& doc, od::value item) {
    const uint64_t off = offsetOf(doc);
    ++eventsSeen;
    od::object obj;
    if (item.get_object().get(obj)) {
      od::json_type t;
      if (item.type().get(t)) return false;
      if (t == od::json_type::array && nestingAt(off) > limits.maxDepth) {
        b.countBad(BadKind::TooDeep, off,
                   "an element nested deeper than " + std::to_string(limits.maxDepth) + " levels");
        return true;
      }
      b.countBad(BadKind::NotAnObject, off, "traceEvents element is " + typeName(t) + ", not an object");
      return true;  // the value is skipped by the array iterator
    }
    tooDeep = false;
    Raw r;
    std::string_view badField;
    BadKind badKind = BadKind::BadType;
    for (auto field : obj) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return false;
      od::value v;
      if (field.value().get(v)) return false;
      // Strings (keys too) are unescaped into the parser's string buffer and
      // stay valid for the whole document, so views are kept without copies.
      if (key == "ph") {
        if (v.get_string().get(r.ph)) badField = "ph";
      } else if (key == "cat") {
        if (v.get_string().get(r.cat)) badField = "cat";
      } else if (key == "name") {
        if (v.get_string().get(r.name)) {
          badField = "name";
        } else if (r.name.size() > limits.maxStringBytes) {
          badField = "name";
          badKind = BadKind::StringTooLong;
        }
      } else if (key == "pid") {
        r.hasPid = idValue(v, &r.pid);
        if (!r.hasPid) badField = "pid";
      } else if (key == "tid") {
        r.hasTid = idValue(v, &r.tid);
        if (!r.hasTid) badField = "tid";
      } else if (key == "ts" || key == "dur") {
        od::json_type t;
        if (v.type().get(t)) return false;
        int64_t ns = 0;
        if (t != od::json_type::number) {
          badField = key == "ts" ? "ts" : "dur";
          badKind = BadKind::BadType;
          continue;
        }
        if (!usTokenToNs(v.raw_json_token(), &ns)) {
          // raw_json_token includes trailing whitespace; trim and retry.
          bool ok = false;
          if (t == od::json_type::number) {
            std::string_view tok = v.raw_json_token();
            while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\n' ||
                                    tok.back() == '\r' || tok.back() == '\t'))
              tok.remove_suffix(1);
            ok = usTokenToNs(tok, &ns);
          }
          if (!ok) {
            badField = key == "ts" ? "ts" : "dur";
            badKind = BadKind::BadNumber;
            continue;
          }
        }
        if (key == "ts") {
          r.ts = ns;
          r.hasTs = true;
        } else {
          r.dur = ns;
          r.hasDur = true;
        }
      } else if (key == "id") {
        r.hasFlowId = intArg(v, &r.flowId);
        if (!r.hasFlowId) {
          std::string_view s;
          if (!v.get_string().get(s)) {
            r.flowId = static_cast<int64_t>(std::hash<std::string_view>()(s) >> 1);
            r.hasFlowId = true;
          }
        }
      } else if (key == "bp") {
        if (v.get_string().get(r.bp)) r.bp = {};
      } else if (key == "args") {
        od::object a;
        if (v.get_object().get(a)) continue;  // non-object args are ignored
        if (!argsObject(a, r)) return false;
      }
    }
    if (tooDeep) {
      b.countBad(BadKind::TooDeep, off,
                 "an argument nested deeper than " + std::to_string(limits.maxDepth) + " levels");
      return true;
    }
    if (!badField.empty()) {
      b.countBad(badKind, off, std::string("field \"") + std::string(badField) + "\"");
      return true;
    }
    return place(r, off);
  }

  bool argsObject(od::object a, Raw& r) {
    for (auto field : a) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return false;
      od::value v;
      if (field.value().get(v)) return false;
      int64_t x = 0;
      if (key == "External id") {
        if (intArg(v, &x)) r.externalId = x;
      } else if (key == "correlation") {
        if (intArg(v, &x)) r.correlation = x;
      } else if (key == "Input Dims") {
        std::string s;
        if (pyRepr(v, s, 0)) {
          r.args.inputDims = b.strings().intern(s);
          r.argsUsed = true;
        }
      } else if (key == "Input type") {
        std::string s;
        if (pyRepr(v, s, 0)) {
          r.args.inputTypes = b.strings().intern(s);
          r.argsUsed = true;
        }
      } else if (key == "Concrete Inputs") {
        std::string s;
        if (pyRepr(v, s, 0)) {
          r.args.concreteInputs = b.strings().intern(s);
          r.argsUsed = true;
        }
      } else if (key == "bytes" || key == "Bytes") {
        if (intArg(v, &x)) {
          r.args.bytes = x;
          r.argsUsed = true;
        }
      } else if (key == "device" || key == "Device Id") {
        if (intArg(v, &x)) {
          r.args.device = static_cast<int32_t>(x);
          r.argsUsed = true;
        }
      } else if (key == "Device Type") {
        if (intArg(v, &x)) {
          r.args.deviceType = static_cast<int32_t>(x);
          r.argsUsed = true;
        }
      } else if (key == "stream") {
        if (intArg(v, &x)) {
          r.args.stream = static_cast<int32_t>(x);
          r.argsUsed = true;
        }
      } else if (key == "Total Allocated") {
        if (intArg(v, &x)) r.args.totalAllocated = x;
      } else if (key == "Total Reserved") {
        if (intArg(v, &x)) r.args.totalReserved = x;
      } else if (key == "Sequence number") {
        if (intArg(v, &x)) r.args.sequenceNumber = x;
      } else if (key == "Fwd thread id") {
        if (intArg(v, &x)) r.args.fwdThreadId = x;
      } else if (key == "grid") {
        int3(v, r.args.grid);
        r.argsUsed = true;
      } else if (key == "block") {
        int3(v, r.args.block);
        r.argsUsed = true;
      } else if (key == "name") {
        std::string_view s;
        if (!v.get_string().get(s)) r.metaName = std::string(s.substr(0, limits.maxStringBytes));
      }
    }
    return true;
  }

  bool place(Raw& r, uint64_t off) {
    if (r.ph.empty()) {
      b.countBad(BadKind::MissingField, off, "no \"ph\"");
      return true;
    }
    const char ph = r.ph[0];
    if (ph == 'M') {
      if (metaLog) {
        if (r.name == "process_name" && r.hasPid) metaLog->push_back({true, false, true, r.pid, r.metaName});
        if (r.name == "thread_name" && r.hasTid) metaLog->push_back({false, true, true, r.tid, r.metaName});
        return true;
      }
      if (r.name == "process_name" && r.hasPid) b.meta().processNames[r.pid] = r.metaName;
      if (r.name == "thread_name" && r.hasTid) b.meta().threadNames[r.tid] = r.metaName;
      return true;
    }
    if (!r.hasTs) {
      b.countBad(BadKind::MissingField, off, "no \"ts\"");
      return true;
    }
    if (ph == 's' || ph == 'f' || ph == 't') {
      if (!r.hasFlowId || !r.hasPid || !r.hasTid) {
        b.countBad(BadKind::MissingField, off, "flow without id/pid/tid");
        return true;
      }
      EventStoreBuilder::RawFlow f;
      f.id = r.flowId;
      f.ts = r.ts;
      f.pid = r.pid;
      f.tid = r.tid;
      f.start = ph == 's';
      f.bindEnclosing = r.bp == "e";
      f.offset = off;
      f.kind = r.cat == "ac2g" ? LinkKind::Ac2g : r.cat == "fwdbwd" ? LinkKind::FwdBwd : LinkKind::Other;
      b.addFlow(f);
      return true;
    }
    if (ph != 'X' && ph != 'i' && ph != 'I') {
      b.countBad(BadKind::UnknownPhase, off, std::string("ph \"") + std::string(r.ph) + "\"");
      return true;
    }
    if (ph == 'X') {
      if (!r.hasDur) {
        b.countBad(BadKind::MissingField, off, "complete event without \"dur\"");
        return true;
      }
      if (r.dur < 0) {
        b.countBad(BadKind::BadNumber, off, "negative \"dur\"");
        return true;
      }
      if (r.ts > kMaxAbsNs - r.dur) {
        b.countBad(BadKind::BadNumber, off, "\"ts\" + \"dur\" overflows");
        return true;
      }
    } else {
      r.dur = 0;
    }
    if (b.eventCount() >= limits.maxEvents) {
      b.countBad(BadKind::TooManyEvents, off, "event limit reached");
      return true;
    }
    Family fam = Family::Other;
    const bool known = familyOf(r.cat, &fam);
    if (ph != 'X') {
      fam = (r.name == "[memory]" || r.name == "[OutOfMemory]") ? Family::Memory
            : (known && fam == Family::CpuInstant) ? Family::CpuInstant
                                                   : Family::Other;
    } else if (!known || fam == Family::CpuInstant) {
      fam = Family::Other;
    }
    LaneKind lk = LaneKind::Other;
    if (isGpuFamily(fam)) lk = LaneKind::GpuStream;
    else if (isCpuFamily(fam)) lk = LaneKind::CpuThread;
    if (!r.hasPid || !r.hasTid) {
      if (lk != LaneKind::Other) {
        b.countBad(BadKind::MissingField, off, "no \"pid\"/\"tid\"");
        return true;
      }
    }
    Event e;
    e.start = r.ts;
    e.dur = r.dur;
    e.name = b.strings().intern(r.name);
    e.family = fam;
    e.lane = b.lane(lk, r.pid, r.tid);
    e.externalId = r.externalId;
    e.correlation = r.correlation;
    if (r.argsUsed || r.args.totalAllocated >= 0 || r.args.sequenceNumber >= 0) {
      e.args = b.addArgs(r.args);
    }
    b.addEvent(e);
    return true;
  }

  void topMeta(std::string_view key, od::value v) {
    auto& m = b.meta();
    int64_t x = 0;
    if (key == "schemaVersion") {
      if (intArg(v, &x)) m.schemaVersion = static_cast<int>(x);
    } else if (key == "baseTimeNanoseconds") {
      if (intArg(v, &x)) m.baseTimeNanoseconds = x;
    } else if (key == "record_shapes") {
      if (intArg(v, &x)) m.recordShapes = x != 0;
    } else if (key == "profile_memory") {
      if (intArg(v, &x)) m.profileMemory = x != 0;
    } else if (key == "with_stack") {
      if (intArg(v, &x)) m.withStack = x != 0;
    } else if (key == "cuda_runtime_version") {
      if (intArg(v, &x)) m.cudaRuntimeVersion = static_cast<int>(x);
    } else if (key == "cuda_driver_version") {
      if (intArg(v, &x)) m.cudaDriverVersion = static_cast<int>(x);
    } else if (key == "cupti_version") {
      if (intArg(v, &x)) m.cuptiVersion = static_cast<int>(x);
    } else if (key == "traceName") {
      std::string_view s;
      if (!v.get_string().get(s)) m.traceName = std::string(s.substr(0, limits.maxStringBytes));
    } else if (key == "attnscope") {
      // Our engine's run metadata: kept as raw JSON text for the analysis.
      // The value is not descended into here; find its end by matching
      // braces outside strings (the buffer is NUL-padded).
      const char* p0 = nullptr;
      if (v.current_location().get(p0) || !p0 || *p0 != '{') return;
      int depth = 0;
      bool inString = false;
      const char* q = p0;
      for (; *q && q - p0 < (int64_t{64} << 20); ++q) {
        const char c = *q;
        if (inString) {
          if (c == '\\' && q[1]) ++q;
          else if (c == '"') inString = false;
        } else if (c == '"') {
          inString = true;
        } else if (c == '{' || c == '[') {
          ++depth;
        } else if (c == '}' || c == ']') {
          if (--depth == 0) break;
        }
      }
      if (depth == 0 && *q == '}') m.attnscopeJson.assign(p0, static_cast<size_t>(q - p0 + 1));
    } else if (key == "deviceProperties") {
      od::array a;
      if (v.get_array().get(a)) return;
      for (auto el : a) {
        od::object o;
        if (el.get_object().get(o)) continue;
        DeviceProperties d;
        for (auto f : o) {
          std::string_view k;
          if (f.unescaped_key().get(k)) break;
          od::value fv;
          if (f.value().get(fv)) break;
          if (k == "name") {
            std::string_view s;
            if (!fv.get_string().get(s)) d.name = std::string(s.substr(0, 256));
          } else if (intArg(fv, &x)) {
            if (k == "id") d.id = static_cast<int>(x);
            else if (k == "totalGlobalMem") d.totalGlobalMem = x;
            else if (k == "computeMajor") d.computeMajor = static_cast<int>(x);
            else if (k == "computeMinor") d.computeMinor = static_cast<int>(x);
            else if (k == "numSms") d.numSms = static_cast<int>(x);
          }
        }
        m.devices.push_back(std::move(d));
      }
    }
  }
};

// Replaces invalid UTF-8 sequences with '?', in place (offsets stay valid).
size_t repairUtf8(char* p, size_t n, size_t* firstBad) {
  size_t fixed = 0;
  size_t i = 0;
  auto cont = [&](size_t k) { return k < n && (static_cast<unsigned char>(p[k]) & 0xC0) == 0x80; };
  while (i < n) {
    const auto c = static_cast<unsigned char>(p[i]);
    size_t len = 0;
    if (c < 0x80) len = 1;
    else if (c >= 0xC2 && c <= 0xDF) len = cont(i + 1) ? 2 : 0;
    else if (c >= 0xE0 && c <= 0xEF) {
      const auto c1 = static_cast<unsigned char>(i + 1 < n ? p[i + 1] : 0);
      const bool ok1 = (c == 0xE0) ? (c1 >= 0xA0 && c1 <= 0xBF)
                       : (c == 0xED) ? (c1 >= 0x80 && c1 <= 0x9F)
                                     : cont(i + 1);
      len = (ok1 && cont(i + 2)) ? 3 : 0;
    } else if (c >= 0xF0 && c <= 0xF4) {
      const auto c1 = static_cast<unsigned char>(i + 1 < n ? p[i + 1] : 0);
      const bool ok1 = (c == 0xF0) ? (c1 >= 0x90 && c1 <= 0xBF)
                       : (c == 0xF4) ? (c1 >= 0x80 && c1 <= 0x8F)
                                     : cont(i + 1);
      len = (ok1 && cont(i + 2) && cont(i + 3)) ? 4 : 0;
    }
    if (len == 0) {
      if (fixed == 0) *firstBad = i;
      p[i] = '?';
      ++fixed;
      len = 1;
    }
    i += len;
  }
  return fixed;
}

LoadResult fail(const std::string& path, std::string msg) {
  LoadResult r;
  r.error = LoadError{path, std::move(msg)};
  return r;
}

// Parses `text` (n bytes followed by SIMDJSON_PADDING writable bytes).
// Outcome of one parse attempt over the buffer.
struct Attempt {
  LoadResult result;
  simdjson::error_code docError = simdjson::SUCCESS;  // set when the text itself is broken
};

Attempt parseOnce(char* text, size_t n, size_t skip, const std::string& path,
                  const ReaderLimits& limits, std::string warning) {
  Attempt at;
  const auto t0 = std::chrono::steady_clock::now();
  od::parser parser;
  if (parser.allocate(std::max<size_t>(n - skip, 64), parserDepth(limits)) != simdjson::SUCCESS) {
    at.result = fail(path, "cannot allocate the JSON parser for " + std::to_string(n) + " bytes");
    return at;
  }
  Parser p(limits, text);
  od::document doc;
  auto ec = parser.iterate(text + skip, n - skip, n - skip + simdjson::SIMDJSON_PADDING).get(doc);
  od::json_type top = od::json_type::null;
  if (!ec) ec = doc.type().get(top);
  if (ec) {
    at.docError = ec;
    at.result = fail(path, ec == simdjson::DEPTH_ERROR
                               ? "JSON nesting is too deep (limit " + std::to_string(limits.maxDepth) + " levels)"
                               : describe(ec));
    return at;
  }

  std::string docError;
  uint64_t docErrorOffset = 0;
  bool sawEvents = false;
  auto noteError = [&](simdjson::error_code e) {
    at.docError = e;
    docError = e == simdjson::DEPTH_ERROR
                   ? "JSON nesting is too deep (limit " + std::to_string(limits.maxDepth) + " levels)"
                   : describe(e);
    docErrorOffset = p.offsetOf(doc);
  };
  auto readEvents = [&](od::array arr) {
    sawEvents = true;
    for (auto item : arr) {
      od::value v;
      if (auto e = item.get(v)) {
        noteError(e);
        return false;
      }
      if (!p.event(doc, v)) {
        noteError(simdjson::TAPE_ERROR);
        docError = "malformed JSON inside an event";
        return false;
      }
    }
    return true;
  };

  if (top == od::json_type::array) {
    od::array arr;
    if (auto e = doc.get_array().get(arr)) {
      at.docError = e;
      at.result = fail(path, describe(e));
      return at;
    }
    readEvents(arr);
  } else if (top == od::json_type::object) {
    od::object obj;
    if (auto e = doc.get_object().get(obj)) {
      at.docError = e;
      at.result = fail(path, describe(e));
      return at;
    }
    for (auto field : obj) {
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) {
        noteError(e);
        break;
      }
      od::value v;
      if (auto e = field.value().get(v)) {
        noteError(e);
        break;
      }
      if (key == "traceEvents") {
        od::json_type t;
        if (auto e = v.type().get(t)) {
          noteError(e);
          break;
        }
        if (t != od::json_type::array) {
          at.result = fail(path, "not a trace: \"traceEvents\" is " + typeName(t) + ", expected an array");
          return at;
        }
        od::array arr;
        if (auto e = v.get_array().get(arr)) {
          noteError(e);
          break;
        }
        if (!readEvents(arr)) break;
      } else {
        p.topMeta(key, v);
      }
    }
    if (!sawEvents) {
      at.result = fail(path, docError.empty()
                                 ? "not a trace: the JSON object has no \"traceEvents\" array"
                                 : docError + " before any \"traceEvents\"");
      if (docError.empty()) at.docError = simdjson::SUCCESS;
      return at;
    }
  } else {
    at.result = fail(path, "not a trace: the top-level JSON value is " + typeName(top) +
                               ", expected an object with \"traceEvents\" or an array of events");
    return at;
  }

  const char* tail = nullptr;
  if (docError.empty() && !doc.current_location().get(tail) && tail && tail < text + n) {
    const auto off = static_cast<uint64_t>(tail - text);
    if (!warning.empty()) warning += "; ";
    warning += "trailing content after the trace at byte " + std::to_string(off) +
               " was ignored (two JSON documents in one file?)";
  }
  const std::string where = docErrorOffset ? " at byte " + std::to_string(docErrorOffset) : "";
  if (!docError.empty()) {
    if (p.eventsSeen == 0) {
      at.result = fail(path, docError + where);
      return at;
    }
    if (!warning.empty()) warning += "; ";
    warning += docError + where + ": kept the " + std::to_string(p.eventsSeen) +
               " event(s) read before it";
  }
  // Every event bad: this cannot be used as a trace.
  p.b.meta().sourcePath = path;
  if (p.b.eventCount() == 0 && p.eventsSeen > 0) {
    EventStore probe = std::move(p.b).build();
    if (probe.badTotal() > 0) {
      for (int k = 0; k < kBadKindCount; ++k) {
        const BadCount& bc = probe.bad(static_cast<BadKind>(k));
        if (bc.count == 0 || !EventStore::isError(static_cast<BadKind>(k))) continue;
        at.result = fail(path, "no event could be loaded: " + std::to_string(probe.badTotal()) +
                                   " bad (first: " + std::string(badKindName(static_cast<BadKind>(k))) +
                                   " at byte " + std::to_string(bc.firstOffset) + ": " + bc.firstDetail + ")");
        return at;
      }
    }
    at.result.store.emplace(std::move(probe));
    at.result.warning = std::move(warning);
    at.result.jsonBytes = n;
    return at;
  }
  at.result.timings.parse = secondsSince(t0);
  const auto tb = std::chrono::steady_clock::now();
  at.result.store.emplace(std::move(p.b).build());
  at.result.timings.build = secondsSince(tb);
  at.result.warning = std::move(warning);
  at.result.jsonBytes = n;
  return at;
}

bool isWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The parallel path for large object-form traces. The "traceEvents" array is
// cut at event boundaries ("},\n  {": a raw newline cannot be inside a JSON
// string) into chunks parsed in place on their own threads (the ',' at a cut
// becomes ']' and the white space before the next '{' becomes '[', restored
// afterwards), each into its own builder, then merged in order. The
// metadata around the array is parsed as a small document of its own.
// Anything unusual (a JSON error, no boundary, ambiguous ids) returns nothing
// and the caller runs the one-pass reader, which owns all error reporting.
std::optional<LoadResult> parseChunked(char* text, size_t n, size_t skip, const std::string& path,
                                       const ReaderLimits& limits, const std::string& warning) {
  if (n - skip < limits.parallelMinBytes || limits.maxDepth < 2) return std::nullopt;
  const unsigned hw = std::thread::hardware_concurrency();
  if (hw < 2) return std::nullopt;
  const auto t0 = std::chrono::steady_clock::now();

  size_t first = skip;
  while (first < n && isWs(text[first])) ++first;
  if (first >= n || text[first] != '{') return std::nullopt;
  static constexpr std::string_view kKey = "\"traceEvents\"";
  const void* hit = ::memmem(text + first, n - first, kKey.data(), kKey.size());
  if (!hit) return std::nullopt;
  size_t open = static_cast<size_t>(static_cast<const char*>(hit) - text) + kKey.size();
  while (open < n && isWs(text[open])) ++open;
  if (open >= n || text[open] != ':') return std::nullopt;
  ++open;
  while (open < n && isWs(text[open])) ++open;
  if (open >= n || text[open] != '[') return std::nullopt;
  // The array's closing ']': the last one before the final '}' that follows
  // a '}' (Kineto writes only a few short keys after the array).
  size_t z = n;
  while (z > open && isWs(text[z - 1])) --z;
  if (z <= open + 1 || text[z - 1] != '}') return std::nullopt;
  --z;  // the closing '}' of the top object
  size_t close = 0;
  for (size_t q = z; q > open + 1 && z - q < (size_t{1} << 20);) {
    --q;
    if (text[q] != ']') continue;
    size_t r = q;
    while (r > open && isWs(text[r - 1])) --r;
    if (r > open + 1 && text[r - 1] == '}') {
      close = q;
      break;
    }
  }
  if (close == 0) return std::nullopt;

  const size_t nChunks = std::min<size_t>(
      std::min<size_t>(hw, 8), std::max<size_t>(2, (close - open) / (size_t{1} << 20)));
  struct Cut {
    size_t comma;  // becomes ']'
    size_t brace;  // the next event's '{'; the byte before it becomes '['
  };
  std::vector<Cut> cuts;
  size_t from = open + 1;
  for (size_t k = 1; k < nChunks; ++k) {
    size_t p = std::max(from, open + (close - open) * k / nChunks);
    bool found = false;
    const size_t limit = std::min(close, p + (size_t{8} << 20));
    while (p < limit) {
      const void* nl = std::memchr(text + p, '\n', limit - p);
      if (!nl) break;
      p = static_cast<size_t>(static_cast<const char*>(nl) - text);
      size_t c = p;
      while (c > from && isWs(text[c - 1])) --c;
      size_t j = p + 1;
      while (j < close && isWs(text[j])) ++j;
      if (c > from + 1 && text[c - 1] == ',' && j < close && text[j] == '{') {
        size_t q = c - 1;
        while (q > from && isWs(text[q - 1])) --q;
        if (q > from && text[q - 1] == '}') {
          cuts.push_back({c - 1, j});
          from = j;
          found = true;
          break;
        }
      }
      ++p;
    }
    if (!found) return std::nullopt;
  }

  // The metadata document: everything but the events.
  std::vector<char> md;
  md.reserve(open + 1 - skip + 1 + (n - close - 1) + simdjson::SIMDJSON_PADDING);
  md.insert(md.end(), text + skip, text + open + 1);
  md.push_back(']');
  md.insert(md.end(), text + close + 1, text + n);
  const size_t mdLen = md.size();
  md.resize(mdLen + simdjson::SIMDJSON_PADDING, '\0');
  Parser mp(limits, md.data());
  {
    od::parser parser;
    if (parser.allocate(std::max<size_t>(mdLen, 64), parserDepth(limits))) return std::nullopt;
    od::document doc;
    if (parser.iterate(md.data(), mdLen, md.size()).get(doc)) return std::nullopt;
    od::object obj;
    if (doc.get_object().get(obj)) return std::nullopt;
    int eventKeys = 0;
    for (auto field : obj) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return std::nullopt;
      od::value v;
      if (field.value().get(v)) return std::nullopt;
      if (key == "traceEvents") {
        od::array arr;
        if (v.get_array().get(arr)) return std::nullopt;
        for (auto el : arr) {
          (void)el;
          return std::nullopt;
        }
        ++eventKeys;
      } else {
        mp.topMeta(key, v);
      }
    }
    const char* tl = nullptr;
    if (!doc.current_location().get(tl) && tl && tl < md.data() + mdLen) return std::nullopt;
    if (eventKeys != 1) return std::nullopt;
  }

  struct Restore {
    char* text;
    const std::vector<Cut>& cuts;
    std::vector<std::pair<char, char>> saved;
    ~Restore() {
      for (size_t i = 0; i < saved.size(); ++i) {
        text[cuts[i].comma] = saved[i].first;
        text[cuts[i].brace - 1] = saved[i].second;
      }
    }
  } restore{text, cuts, {}};
  for (const Cut& c : cuts) {
    restore.saved.emplace_back(text[c.comma], text[c.brace - 1]);
    text[c.comma] = ']';
    text[c.brace - 1] = '[';
  }

  struct Chunk {
    size_t begin = 0, end = 0;  // [begin, end) in text, "[ ... ]"
    std::unique_ptr<Parser> p;
    std::vector<MetaOp> log;
    bool ok = false;
  };
  std::vector<Chunk> chunks(nChunks);
  for (size_t k = 0; k < nChunks; ++k) {
    chunks[k].begin = k == 0 ? open : cuts[k - 1].brace - 1;
    chunks[k].end = k + 1 == nChunks ? close + 1 : cuts[k].comma + 1;
    chunks[k].p = std::make_unique<Parser>(limits, text);
    chunks[k].p->metaLog = &chunks[k].log;
  }
  auto work = [&](Chunk& ch) {
    try {
      const size_t len = ch.end - ch.begin;
      od::parser parser;
      // One level less: these arrays sit at the top, not inside an object.
      if (parser.allocate(std::max<size_t>(len, 64), parserDepth(limits) - 1)) return;
      od::document doc;
      if (parser.iterate(text + ch.begin, len, len + simdjson::SIMDJSON_PADDING).get(doc)) return;
      od::array arr;
      if (doc.get_array().get(arr)) return;
      Parser& p = *ch.p;
      for (auto item : arr) {
        od::value v;
        if (item.get(v)) return;
        if (!p.event(doc, v)) return;
      }
      const char* tl = nullptr;
      if (!doc.current_location().get(tl) && tl && tl < text + ch.end) return;
      if (p.ambiguousId) return;
      ch.ok = true;
    } catch (...) {
    }
  };
  {
    std::vector<std::thread> threads;
    try {
      for (size_t k = 1; k < nChunks; ++k) threads.emplace_back(work, std::ref(chunks[k]));
    } catch (...) {
    }
    work(chunks[0]);
    for (auto& t : threads) t.join();
    if (threads.size() + 1 != nChunks) return std::nullopt;
  }
  uint64_t total = 0;
  uint64_t seen = 0;
  for (const Chunk& ch : chunks) {
    if (!ch.ok) return std::nullopt;
    total += ch.p->b.eventCount();
    seen += ch.p->eventsSeen;
  }
  if (total > limits.maxEvents || total == 0 || seen == 0) return std::nullopt;

  EventStoreBuilder& b = chunks[0].p->b;
  std::vector<std::vector<uint32_t>> maps(nChunks);
  for (size_t k = 1; k < nChunks; ++k) maps[k] = b.merge(std::move(chunks[k].p->b), &remapSyntheticId);
  auto& meta = b.meta();
  meta = std::move(mp.b.meta());
  for (size_t k = 0; k < nChunks; ++k) {
    for (MetaOp& op : chunks[k].log) {
      const int64_t id = k == 0 ? op.id : remapSyntheticId(op.id, maps[k]);
      if (op.overwrite) {
        if (op.process) meta.processNames[id] = op.name;
        if (op.thread) meta.threadNames[id] = op.name;
      } else {
        if (op.process) meta.processNames.emplace(id, op.name);
        if (op.thread) meta.threadNames.emplace(id, op.name);
      }
    }
  }
  meta.sourcePath = path;

  LoadResult result;
  result.timings.parse = secondsSince(t0);
  const auto tb = std::chrono::steady_clock::now();
  result.store.emplace(std::move(b).build());
  result.timings.build = secondsSince(tb);
  result.warning = warning;
  result.jsonBytes = n;
  return result;
}

bool truncationLike(simdjson::error_code e) {
  return e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT || e == simdjson::UNCLOSED_STRING ||
         e == simdjson::TAPE_ERROR;
}

// simdjson::validate_utf8, on two threads for large texts: split after a
// '\n' (an ASCII byte is never inside a multi-byte sequence).
bool validUtf8(const char* p, size_t n, const ReaderLimits& limits) {
  if (n < limits.parallelMinBytes || n < 2 || std::thread::hardware_concurrency() < 2)
    return simdjson::validate_utf8(p, n);
  const void* nl = std::memchr(p + n / 2, '\n', n - n / 2);
  if (!nl) return simdjson::validate_utf8(p, n);
  const size_t cut = static_cast<size_t>(static_cast<const char*>(nl) - p) + 1;
  bool second = false;
  try {
    std::thread t([&] { second = simdjson::validate_utf8(p + cut, n - cut); });
    const bool first = simdjson::validate_utf8(p, cut);
    t.join();
    return first && second;
  } catch (...) {
    return simdjson::validate_utf8(p, n);
  }
}

// Parses `text` (n bytes followed by SIMDJSON_PADDING writable bytes).
LoadResult parseBuffer(char* text, size_t n, const std::string& path, const ReaderLimits& limits) {
  // A UTF-8 byte order mark is allowed and skipped.
  size_t skip = 0;
  if (n >= 3 && static_cast<unsigned char>(text[0]) == 0xEF &&
      static_cast<unsigned char>(text[1]) == 0xBB && static_cast<unsigned char>(text[2]) == 0xBF)
    skip = 3;
  size_t first = skip;
  while (first < n && (text[first] == ' ' || text[first] == '\n' || text[first] == '\r' ||
                       text[first] == '\t'))
    ++first;
  if (first == n) return fail(path, n == 0 ? "file is empty" : "file is empty (only white space)");
  if (text[first] != '{' && text[first] != '[') {
    const char c = text[first];
    return fail(path, "not a trace: not valid JSON for a trace: byte " + std::to_string(first) + " is '" +
                          std::string(1, (c >= 0x20 && c < 0x7f) ? c : '?') +
                          "', expected torch.profiler's Chrome-trace JSON (an object or an array)");
  }

  std::string warning;
  if (!validUtf8(text + skip, n - skip, limits)) {
    size_t firstBad = 0;
    const size_t fixed = repairUtf8(text + skip, n - skip, &firstBad);
    warning = std::to_string(fixed) + " invalid UTF-8 byte(s) replaced with '?' (first at byte " +
              std::to_string(firstBad + skip) + ")";
  }

  if (auto chunked = parseChunked(text, n, skip, path, limits, warning)) return std::move(*chunked);

  Attempt at = parseOnce(text, n, skip, path, limits, warning);
  if (at.result.ok() || !truncationLike(at.docError)) return std::move(at.result);

  // The text ends early (a cut download, a killed writer). Close the event
  // array after the last complete-looking object and keep what precedes it.
  const std::string closer = text[first] == '{' ? "]}" : "]";
  size_t end = n;
  for (int tries = 0; tries < 4; ++tries) {
    size_t pos = end;
    while (pos > first && text[pos - 1] != '}') --pos;
    if (pos <= first + 1) break;
    const size_t newLen = pos + closer.size();
    if (newLen + simdjson::SIMDJSON_PADDING > n + simdjson::SIMDJSON_PADDING) {
      end = pos - 1;
      continue;
    }
    std::vector<char> copy(text + pos, text + n);
    std::memcpy(text + pos, closer.data(), closer.size());
    std::memset(text + newLen, 0, n - newLen);
    Attempt salvaged = parseOnce(text, newLen, skip, path, limits, warning);
    if (salvaged.result.ok() && !salvaged.result.store->events().empty()) {
      auto& w = salvaged.result.warning;
      w = (w.empty() ? "" : w + "; ") + "the file ends early (" + at.result.error->message +
          "): kept the events before byte " + std::to_string(pos);
      return std::move(salvaged.result);
    }
    std::memcpy(text + pos, copy.data(), copy.size());
    end = pos - 1;
  }
  return std::move(at.result);
}

}  // namespace

bool microsecondsToNs(std::string_view token, int64_t* ns) { return usTokenToNs(token, ns); }

LoadResult parseTrace(std::string_view json, const std::string& nameForErrors,
                      const ReaderLimits& limits) {
  std::vector<char> buf(json.size() + simdjson::SIMDJSON_PADDING, '\0');
  std::memcpy(buf.data(), json.data(), json.size());
  if (isGzip(buf.data(), json.size())) {
    std::vector<char> out;
    size_t outSize = 0;
    std::string err;
    if (!gunzip(buf.data(), json.size(), limits.maxDecompressedBytes, simdjson::SIMDJSON_PADDING,
                &out, &outSize, &err))
      return fail(nameForErrors, err);
    return parseBuffer(out.data(), outSize, nameForErrors, limits);
  }
  return parseBuffer(buf.data(), json.size(), nameForErrors, limits);
}

LoadResult loadTrace(const std::string& path, const ReaderLimits& limits) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return fail(path, std::string("cannot stat: ") + std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return fail(path, "is a directory, not a trace file");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(path, "is not a regular file");
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > limits.maxFileBytes) {
    ::close(fd);
    return fail(path, "file is " + std::to_string(size) + " bytes, over the limit of " +
                          std::to_string(limits.maxFileBytes));
  }
  const auto t0 = std::chrono::steady_clock::now();
  LoadTimings tm;
  // Large files are mapped (no copy, no zeroing) when the page tail leaves
  // room for simdjson's padding; MAP_PRIVATE keeps in-place repairs private.
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  if (size >= (1u << 20) && (size % page) + simdjson::SIMDJSON_PADDING <= page) {
    void* m = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) return fail(path, std::string("cannot map the file: ") + std::strerror(errno));
    struct Unmap {
      void* p;
      size_t n;
      ~Unmap() { ::munmap(p, n); }
    } unmap{m, size};
    char* text = static_cast<char*>(m);
    tm.read = secondsSince(t0);
    if (!isGzip(text, size)) {
      LoadResult r = parseBuffer(text, size, path, limits);
      r.timings.read = tm.read;
      return r;
    }
    const auto td = std::chrono::steady_clock::now();
    std::vector<char> out;
    size_t outSize = 0;
    std::string err;
    if (!gunzip(text, size, limits.maxDecompressedBytes, simdjson::SIMDJSON_PADDING, &out, &outSize, &err))
      return fail(path, err);
    tm.decompress = secondsSince(td);
    LoadResult r = parseBuffer(out.data(), outSize, path, limits);
    r.timings.read = tm.read;
    r.timings.decompress = tm.decompress;
    return r;
  }
  std::vector<char> buf(size + simdjson::SIMDJSON_PADDING, '\0');
  size_t got = 0;
  while (got < size) {
    const ssize_t r = ::read(fd, buf.data() + got, size - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return fail(path, std::string("read failed: ") + std::strerror(err));
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  tm.read = secondsSince(t0);
  if (isGzip(buf.data(), got)) {
    const auto td = std::chrono::steady_clock::now();
    std::vector<char> out;
    size_t outSize = 0;
    std::string err;
    if (!gunzip(buf.data(), got, limits.maxDecompressedBytes, simdjson::SIMDJSON_PADDING, &out,
                &outSize, &err))
      return fail(path, err);
    std::vector<char>().swap(buf);  // the compressed bytes are no longer needed
    tm.decompress = secondsSince(td);
    LoadResult r = parseBuffer(out.data(), outSize, path, limits);
    r.timings.read = tm.read;
    r.timings.decompress = tm.decompress;
    return r;
  }
  LoadResult r = parseBuffer(buf.data(), got, path, limits);
  r.timings.read = tm.read;
  return r;
}

}  // namespace attnscope
