#include "core/read/trace_parser.h"

#include "core/text/json_out.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>

namespace attnscope {

namespace reader {

namespace {

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
      if (n < 3)
        frac = frac * 10 + (tok[i] - '0');
      else if (n == 3)
        roundDigit = tok[i] - '0';
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

constexpr int64_t kSyntheticIdBase = -(int64_t{1} << 40);  // name-like pid/tid: base - string id

bool inSyntheticRange(int64_t v) { return v <= kSyntheticIdBase && v > kSyntheticIdBase - (int64_t{1} << 32); }

// Python's repr() of a str: single quotes unless the text holds a ' and no
// "; the quote, backslash, \n \r \t and other control bytes escaped (the
// writer's pyReprToJson reads it back).
void appendPyStr(std::string& out, std::string_view s) {
  const char q = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos ? '"' : '\'';
  out.push_back(q);
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == q || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out.push_back(hex[u >> 4]);
      out.push_back(hex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  out.push_back(q);
}

}  // namespace

bool bareWord(od::value v) {
  const std::string_view tok = v.raw_json_token();
  return !tok.empty() && (std::isalpha(static_cast<unsigned char>(tok[0])) || tok[0] == '+' || tok[0] == '.');
}

std::string describe(simdjson::error_code ec) {
  switch (ec) {
    case simdjson::DEPTH_ERROR:
      return "JSON nesting is too deep";
    case simdjson::UTF8_ERROR:
      return "text is not valid UTF-8";
    case simdjson::UNCLOSED_STRING:
      return "JSON ends early inside a string (file truncated?)";
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
      return "JSON ends early (file truncated?)";
    case simdjson::TAPE_ERROR:
    case simdjson::TRAILING_CONTENT:
      return "not valid JSON";
    case simdjson::CAPACITY:
      return "document too large for one parse";
    case simdjson::EMPTY:
      return "file is empty";
    default:
      return std::string("not valid JSON (") + simdjson::error_message(ec) + ")";
  }
}

std::string typeName(od::json_type t) {
  switch (t) {
    case od::json_type::array:
      return "an array";
    case od::json_type::object:
      return "an object";
    case od::json_type::number:
      return "a number";
    case od::json_type::string:
      return "a string";
    case od::json_type::boolean:
      return "a boolean";
    case od::json_type::null:
      return "null";
  }
  return "?";
}

int64_t remapSyntheticId(int64_t v, const std::vector<uint32_t>& stringMap) {
  if (!inSyntheticRange(v)) return v;
  const auto id = static_cast<uint64_t>(kSyntheticIdBase - v);
  return id < stringMap.size() ? kSyntheticIdBase - stringMap[id] : v;
}

void Parser::noteNumericId(int64_t v) {
  if (metaLog && inSyntheticRange(v)) ambiguousId = true;
}

uint32_t Parser::nestingAt(uint64_t off) const {
  uint32_t d = 0;
  for (const char* q = textBase + (off - textOffset); *q == '[' || *q == ' ' || *q == '\n' || *q == '\t' || *q == '\r';
       ++q)
    d += *q == '[';
  return d;
}

uint64_t Parser::offsetOf(od::document& doc) {
  auto loc = doc.current_location();
  if (loc.error()) return 0;
  return textOffset + static_cast<uint64_t>(loc.value_unsafe() - textBase);
}

bool Parser::idValue(od::value v, int64_t* out) {
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

bool Parser::pyReprArray(od::array& a, std::string& out, uint32_t depth) {
  out.push_back('[');
  bool first = true;
  for (auto el : a) {
    od::value ev;
    if (el.get(ev)) return false;
    if (!first) out += ", ";
    first = false;
    if (!pyRepr(ev, out, depth + 1)) return false;
    if (out.size() > limits.maxStringBytes) {  // stop growing it: the limit bounds memory
      reprTooLong = true;
      return false;
    }
  }
  out.push_back(']');
  return true;
}

bool Parser::internRepr(od::value v, uint32_t* id) {
  od::json_type t;
  if (v.type().get(t)) return false;
  std::string s;
  if (t != od::json_type::array) {
    if (!pyRepr(v, s, 0)) return false;
    *id = b.strings().intern(s);
    return true;
  }
  // Shapes and types repeat: the same JSON text gives the same repr.
  od::array a;
  std::string_view raw;
  if (v.get_array().get(a) || a.raw_json().get(raw)) return false;
  if (auto it = reprCache_.find(raw); it != reprCache_.end()) {
    *id = it->second;
    return true;
  }
  if (a.reset().error() || !pyReprArray(a, s, 0)) return false;
  *id = b.strings().intern(s);
  reprCache_.emplace(raw, *id);
  return true;
}

bool Parser::pyRepr(od::value v, std::string& out, uint32_t depth) {
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
      return pyReprArray(a, out, depth);
    }
    case od::json_type::number: {
      std::string_view tok = v.raw_json_token();
      while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\n' || tok.back() == '\r' || tok.back() == '\t' ||
                              tok.back() == ',' || tok.back() == ']' || tok.back() == '}'))
        tok.remove_suffix(1);
      // On-Demand only looked at the number's first byte: check the rest.
      if (jsonNumberLength(tok) != tok.size()) return false;
      out += tok;
      return true;
    }
    case od::json_type::string: {
      std::string_view s;
      if (v.get_string().get(s)) return false;
      if (s.size() > limits.maxStringBytes) {
        reprTooLong = true;
        return false;
      }
      appendPyStr(out, s);
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

bool Parser::intArg(od::value v, int64_t* out) {
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

bool Parser::numArg(od::value v, double* out) {
  double d;
  if (v.get_double().get(d) || !std::isfinite(d)) return false;
  *out = d;
  return true;
}

void Parser::int3(od::value v, int32_t out[3]) {
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

bool Parser::event(od::document& doc, od::value item) {
  const uint64_t off = offsetOf(doc);
  ++eventsSeen;
  od::object obj;
  if (item.get_object().get(obj)) {
    od::json_type t;
    if (item.type().get(t)) {
      if (!bareWord(item)) return false;
      b.countBad(BadKind::NotAnObject, off, "traceEvents element is not JSON (NaN? Infinity?)");
      return true;
    }
    if (t == od::json_type::array && nestingAt(off) > limits.maxDepth) {
      b.countBad(
          BadKind::TooDeep, off,
          "an element nested deeper than " + std::to_string(limits.maxDepth) + " levels (the --max-depth limit)");
      return true;
    }
    b.countBad(BadKind::NotAnObject, off, "traceEvents element is " + typeName(t) + ", not an object");
    return true;  // the value is skipped by the array iterator
  }
  tooDeep = false;
  reprTooLong = false;
  longArg.clear();
  Raw r;
  std::string_view badField;
  BadKind badKind = BadKind::BadType;
  for (auto field : obj) {
    std::string_view key;
    od::value v;
    if (!readField(field, &key, &v)) return false;
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
        longArg = "field \"name\" (" + std::to_string(r.name.size()) + " bytes)";
      }
    } else if (key == "pid") {
      r.hasPid = idValue(v, &r.pid);
      if (!r.hasPid) badField = "pid";
    } else if (key == "tid") {
      r.hasTid = idValue(v, &r.tid);
      if (!r.hasTid) badField = "tid";
    } else if (key == "ts" || key == "dur") {
      od::json_type t;
      if (v.type().get(t)) {
        if (!bareWord(v)) return false;
        badField = key == "ts" ? "ts" : "dur";  // NaN, Infinity: a bad event, not a broken file
        badKind = BadKind::BadNumber;
        continue;
      }
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
          while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\n' || tok.back() == '\r' || tok.back() == '\t'))
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
               "an argument nested deeper than " + std::to_string(limits.maxDepth) + " levels (the --max-depth limit)");
    return true;
  }
  if (!longArg.empty()) {
    b.countBad(BadKind::StringTooLong, off,
               longArg + " is over the limit of " + std::to_string(limits.maxStringBytes) + " bytes (--max-string)");
    return true;
  }
  if (!badField.empty()) {
    b.countBad(badKind, off, std::string("field \"") + std::string(badField) + "\"");
    return true;
  }
  return place(r, off);
}

bool Parser::place(Raw& r, uint64_t off) {
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
    b.countBad(BadKind::TooManyEvents, off,
               "the limit of " + std::to_string(limits.maxEvents) +
                   " events (--max-events) was reached: this event and the ones after it were not loaded");
    return true;
  }
  Family fam = Family::Other;
  const bool known = familyOf(r.cat, &fam);
  if (r.cat == "cuda_profiler_range") b.countProfilerRange();
  if (ph != 'X') {
    fam = (r.name == "[memory]" || r.name == "[OutOfMemory]") ? Family::Memory
          : (known && fam == Family::CpuInstant)              ? Family::CpuInstant
                                                              : Family::Other;
  } else if (!known || fam == Family::CpuInstant) {
    fam = Family::Other;
  }
  LaneKind lk = LaneKind::Other;
  if (isGpuFamily(fam))
    lk = LaneKind::GpuStream;
  else if (isCpuFamily(fam))
    lk = LaneKind::CpuThread;
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
  if (r.commUsed) {
    r.args.comm = b.addComm(r.comm);
    r.argsUsed = true;
  }
  if (r.argsUsed || r.args.totalAllocated >= 0 || r.args.sequenceNumber >= 0) {
    e.args = b.addArgs(r.args);
  }
  b.addEvent(e);
  return true;
}

}  // namespace reader

bool microsecondsToNs(std::string_view token, int64_t* ns) { return reader::usTokenToNs(token, ns); }

}  // namespace attnscope
