#include "trace_gen.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string_view>
#include <vector>

#include "core/read/gzip.h"
#include "core/read/trace_reader.h"

namespace bench {

namespace od = simdjson::ondemand;

namespace {

// A token of an event's text that changes per repetition.
struct Patch {
  enum Kind : uint8_t { Ts, Dur, Id } kind = Ts;
  uint32_t offset = 0;  // in the event's text
  uint32_t length = 0;
  int64_t value = 0;  // ns for Ts/Dur, the id for Id
};

struct SourceEvent {
  uint64_t offset = 0;  // of the event's text in the source
  uint32_t length = 0;
  bool once = false;  // metadata / profiler pseudo-process: written once
  char ph = 0;
  uint32_t firstPatch = 0, patchCount = 0;
};

struct Source {
  std::vector<char> text;  // padded for simdjson
  size_t size = 0;
  std::vector<SourceEvent> events;
  std::vector<Patch> patches;
  size_t headEnd = 0;    // text before the first event
  size_t tailBegin = 0;  // text after the last event
};

bool readSource(const std::string& path, Source* src, std::string* error) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *error = path + ": cannot open";
    return false;
  }
  std::vector<char> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (attnscope::isGzip(raw.data(), raw.size())) {
    if (!attnscope::gunzip(raw.data(), raw.size(), uint64_t{16} << 30, simdjson::SIMDJSON_PADDING, &src->text,
                           &src->size, error)) {
      *error = path + ": " + *error;
      return false;
    }
    return true;
  }
  src->size = raw.size();
  raw.resize(raw.size() + simdjson::SIMDJSON_PADDING, '\0');
  src->text = std::move(raw);
  return true;
}

std::string_view trimToken(std::string_view t) {
  while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t'))
    t.remove_suffix(1);
  return t;
}

// Ids that must stay unique per repetition (args keys).
bool isIdKey(std::string_view k) {
  return k == "External id" || k == "correlation" || k == "Python id" || k == "Python parent id" ||
         k == "Sequence number" || k == "Ev Idx";
}

bool scanEvent(od::object obj, std::string_view span, Source* src, SourceEvent* ev, int64_t* maxId) {
  ev->firstPatch = static_cast<uint32_t>(src->patches.size());
  auto addPatch = [&](Patch::Kind kind, od::value v, bool time) -> bool {
    const std::string_view tok = trimToken(v.raw_json_token());
    Patch p;
    p.kind = kind;
    p.offset = static_cast<uint32_t>(tok.data() - span.data());
    p.length = static_cast<uint32_t>(tok.size());
    if (time) {
      if (!attnscope::microsecondsToNs(tok, &p.value)) return false;
    } else {
      if (v.get_int64().get(p.value)) return true;  // not an integer id: left as is
      if (p.value <= 0) return true;                // 0 / -1 mean "none"
      *maxId = std::max(*maxId, p.value);
    }
    src->patches.push_back(p);
    return true;
  };
  for (auto field : obj) {
    std::string_view key;
    od::value v;
    if (field.unescaped_key().get(key) || field.value().get(v)) return false;
    if (key == "ph") {
      std::string_view ph;
      if (!v.get_string().get(ph) && !ph.empty()) ev->ph = ph[0];
    } else if (key == "pid") {
      od::json_type t;
      if (!v.type().get(t) && t == od::json_type::string) ev->once = true;
    } else if (key == "ts") {
      if (!addPatch(Patch::Ts, v, true)) return false;
    } else if (key == "dur") {
      if (!addPatch(Patch::Dur, v, true)) return false;
    } else if (key == "id") {
      if (!addPatch(Patch::Id, v, false)) return false;
    } else if (key == "args") {
      od::object args;
      if (v.get_object().get(args)) continue;
      for (auto a : args) {
        std::string_view k;
        od::value av;
        if (a.unescaped_key().get(k) || a.value().get(av)) return false;
        if (isIdKey(k) && !addPatch(Patch::Id, av, false)) return false;
      }
    }
  }
  if (ev->ph == 'M') ev->once = true;
  ev->patchCount = static_cast<uint32_t>(src->patches.size()) - ev->firstPatch;
  return true;
}

bool scanSource(Source* src, int64_t* maxId, std::string* error) {
  od::parser parser;
  od::document doc;
  if (parser.iterate(src->text.data(), src->size, src->text.size()).get(doc)) {
    *error = "the source is not JSON";
    return false;
  }
  od::object top;
  if (doc.get_object().get(top)) {
    *error = "the source is not a Kineto trace object";
    return false;
  }
  const char* base = src->text.data();
  for (auto field : top) {
    std::string_view key;
    od::value v;
    if (field.unescaped_key().get(key) || field.value().get(v)) break;
    if (key != "traceEvents") continue;
    od::array arr;
    if (v.get_array().get(arr)) break;
    for (auto item : arr) {
      od::object obj;
      std::string_view span;
      if (item.get_object().get(obj) || obj.raw_json().get(span) || obj.reset().error()) {
        *error = "an event is not an object";
        return false;
      }
      SourceEvent ev;
      ev.offset = static_cast<uint64_t>(span.data() - base);
      ev.length = static_cast<uint32_t>(span.size());
      if (!scanEvent(obj, span, src, &ev, maxId)) {
        *error = "cannot read the event at byte " + std::to_string(ev.offset);
        return false;
      }
      src->events.push_back(ev);
    }
  }
  if (src->events.empty()) {
    *error = "the source has no traceEvents";
    return false;
  }
  src->headEnd = src->events.front().offset;
  src->tailBegin = src->events.back().offset + src->events.back().length;
  return true;
}

void appendNs(std::string& out, int64_t ns) {
  char buf[32];
  const bool neg = ns < 0;
  const uint64_t a = neg ? static_cast<uint64_t>(-ns) : static_cast<uint64_t>(ns);
  const int n = std::snprintf(buf, sizeof buf, "%s%llu.%03llu", neg ? "-" : "",
                              static_cast<unsigned long long>(a / 1000), static_cast<unsigned long long>(a % 1000));
  out.append(buf, static_cast<size_t>(n));
}

}  // namespace

TraceGenResult generateTrace(const std::string& sourcePath, const std::string& outPath, uint64_t targetBytes,
                             uint64_t repetitions) {
  TraceGenResult res;
  Source src;
  if (!readSource(sourcePath, &src, &res.error)) return res;
  int64_t maxId = 0;
  if (!scanSource(&src, &maxId, &res.error)) {
    res.error = sourcePath + ": " + res.error;
    return res;
  }
  // The body's time span: every repeated event's [ts, ts + dur].
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  TraceGenPlan& plan = res.plan;
  const std::string_view sep = ",\n  ";
  for (const SourceEvent& ev : src.events) {
    (ev.once ? plan.onceEvents : plan.bodyEvents)++;
    if (ev.once) continue;
    plan.bodyBytes += ev.length + sep.size();
    int64_t ts = 0, dur = 0;
    for (uint32_t i = 0; i < ev.patchCount; ++i) {
      const Patch& p = src.patches[ev.firstPatch + i];
      if (p.kind == Patch::Ts) ts = p.value;
      if (p.kind == Patch::Dur) dur = p.value;
    }
    lo = std::min(lo, ts);
    hi = std::max(hi, ts + dur);
  }
  if (plan.bodyEvents == 0) {
    res.error = sourcePath + ": no events to repeat";
    return res;
  }
  plan.shiftNs = hi - lo + 1'000'000;  // a 1 ms gap between repetitions
  plan.idStride = 1;
  while (plan.idStride <= maxId) plan.idStride *= 10;
  const uint64_t fixed = src.size - plan.bodyBytes;
  uint64_t k = repetitions;
  if (k == 0) {
    const double want = targetBytes > fixed ? static_cast<double>(targetBytes - fixed) : 0.0;
    k = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(want / static_cast<double>(plan.bodyBytes))));
  }
  const int64_t lastShift = static_cast<int64_t>(k - 1) * plan.shiftNs;
  const int64_t mid = lo + (hi - lo) / 2;

  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(outPath.c_str(), "wb"), &std::fclose);
  if (!f) {
    res.error = outPath + ": cannot create";
    return res;
  }
  std::string buf;
  buf.reserve(size_t{9} << 20);
  bool writeOk = true;
  auto flush = [&](bool force) {
    if (buf.size() < (size_t{8} << 20) && !force) return;
    if (std::fwrite(buf.data(), 1, buf.size(), f.get()) != buf.size()) writeOk = false;
    res.bytes += buf.size();
    buf.clear();
  };
  const char* text = src.text.data();
  buf.append(text, src.headEnd);
  bool first = true;
  for (uint64_t rep = 0; rep < k && writeOk; ++rep) {
    const int64_t shift = static_cast<int64_t>(rep) * plan.shiftNs;
    const int64_t idAdd = static_cast<int64_t>(rep) * plan.idStride;
    for (const SourceEvent& ev : src.events) {
      if (ev.once && rep > 0) continue;
      if (!first) buf.append(sep);
      first = false;
      const char* e = text + ev.offset;
      uint32_t at = 0;
      for (uint32_t i = 0; i < ev.patchCount; ++i) {
        const Patch& p = src.patches[ev.firstPatch + i];
        buf.append(e + at, p.offset - at);
        at = p.offset + p.length;
        int64_t v = p.value;
        if (ev.once) {
          // The profiler's own span covers every repetition; its end marker
          // moves to the end.
          if (p.kind == Patch::Dur && ev.ph == 'X') v += lastShift;
          if (p.kind == Patch::Ts && ev.ph != 'X' && ev.ph != 'M' && v > mid) v += lastShift;
        } else if (p.kind == Patch::Ts) {
          v += shift;
        } else if (p.kind == Patch::Id) {
          v += idAdd;
        }
        if (v == p.value)
          buf.append(e + p.offset, p.length);  // unchanged: the source's own text
        else if (p.kind == Patch::Id)
          buf += std::to_string(v);
        else
          appendNs(buf, v);
      }
      buf.append(e + at, ev.length - at);
      res.events++;
      flush(false);
    }
  }
  buf.append(text + src.tailBegin, src.size - src.tailBegin);
  flush(true);
  if (!writeOk || std::fflush(f.get()) != 0) {
    res.error = outPath + ": write failed (disk full?)";
    return res;
  }
  res.repetitions = k;
  res.ok = true;
  return res;
}

}  // namespace bench
