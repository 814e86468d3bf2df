// The parser's event args (argsObject: the args a Kineto event carries) and its trace-level metadata (the top-level
// keys around traceEvents: deviceProperties, the CUDA versions, our engine's "attnscope" object) and its failure
// results.
#include <cmath>
#include <cstring>

#include "core/read/trace_parser.h"
#include "core/text/json_out.h"

namespace attnscope::reader {

bool Parser::argsObject(od::object a, Raw& r) {
  for (auto field : a) {
    std::string_view key;
    od::value v;
    if (!readField(field, &key, &v)) return false;
    int64_t x = 0;
    // 2021-era Kineto (torch 1.8/1.9) wrote the runtime calls' and kernels' link to their op as
    // "external id", the ops' own as "External id": the same id, and torch's table joined them so.
    if (key == "External id" || key == "external id") {
      if (intArg(v, &x)) r.externalId = x;
    } else if (key == "correlation") {
      if (intArg(v, &x)) r.correlation = x;
    } else if (key == "Input Dims" || key == "Input type" || key == "Concrete Inputs") {
      uint32_t* id = key == "Input Dims"   ? &r.args.inputDims
                     : key == "Input type" ? &r.args.inputTypes
                                           : &r.args.concreteInputs;
      if (internRepr(v, id))
        r.argsUsed = true;
      else if (reprTooLong && longArg.empty())
        longArg = "argument \"" + std::string(key) + "\" (as text)";
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
    } else if (key == "registers per thread") {
      if (intArg(v, &x)) r.args.registersPerThread = static_cast<int32_t>(x), r.argsUsed = true;
    } else if (key == "shared memory") {
      if (intArg(v, &x)) r.args.sharedMemory = static_cast<int32_t>(x), r.argsUsed = true;
    } else if (key == "blocks per SM" || key == "warps per SM" || key == "est. achieved occupancy %") {
      double d = 0;
      if (numArg(v, &d)) {
        (key == "blocks per SM"  ? r.args.blocksPerSm
         : key == "warps per SM" ? r.args.warpsPerSm
                                 : r.args.occupancyPct) = static_cast<float>(d);
        r.argsUsed = true;
      }
    } else if (key == "Addr") {
      if (intArg(v, &x)) r.args.addr = x, r.args.hasAddr = true, r.argsUsed = true;
    } else if (key == "grid") {
      int3(v, r.args.grid);
      r.argsUsed = true;
    } else if (key == "block") {
      int3(v, r.args.block);
      r.argsUsed = true;
    } else if (key == "name") {
      std::string_view s;
      if (!v.get_string().get(s)) r.metaName = std::string(s.substr(0, limits.maxStringBytes));
    } else {
      commArg(key, v, r);
    }
  }
  return true;
}

bool Parser::textArg(od::value v, uint32_t* id) {
  od::json_type t;
  if (v.type().get(t)) return false;
  if (t == od::json_type::string) {
    std::string_view s;
    if (v.get_string().get(s)) return false;
    *id = b.strings().intern(s.substr(0, limits.maxStringBytes));
    return true;
  }
  if (t == od::json_type::number) {
    std::string_view tok = v.raw_json_token();
    while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\n' || tok.back() == '\r' || tok.back() == '\t' ||
                            tok.back() == ',' || tok.back() == '}'))
      tok.remove_suffix(1);
    *id = b.strings().intern(tok.substr(0, 64));
    return true;
  }
  if (t == od::json_type::array) return internRepr(v, id);
  return false;
}

bool Parser::commArg(std::string_view key, od::value v, Raw& r) {
  CommArgs& c = r.comm;
  uint32_t* text = key == "Collective name"             ? &c.collectiveName
                   : key == "Process Group Name"        ? &c.pgName
                   : key == "Process Group Description" ? &c.pgDesc
                   : key == "Process Group Ranks"       ? &c.groupRanks
                   : key == "Comms Id"                  ? &c.commsId
                   : key == "dtype"                     ? &c.dtype
                                                        : nullptr;
  if (text) {
    if (textArg(v, text)) r.commUsed = true;
    return true;
  }
  int64_t* num = key == "In msg nelems"    ? &c.inNelems
                 : key == "Out msg nelems" ? &c.outNelems
                 : key == "Seq"            ? &c.seq
                 : key == "Group size"     ? &c.groupSize
                                           : nullptr;
  if (!num) return false;
  int64_t x = 0;
  if (intArg(v, &x)) {
    *num = x;
    r.commUsed = true;
  }
  return true;
}

namespace {

// A JSON integer, or -1.
int64_t intOr(od::value v, int64_t otherwise) {
  int64_t i;
  if (!v.get_int64().get(i)) return i;
  double d;
  if (!v.get_double().get(d) && std::isfinite(d) && std::fabs(d) < 9e18) return static_cast<int64_t>(d);
  return otherwise;
}

std::string textOf(od::value v, size_t maxBytes) {
  std::string_view s;
  if (!v.get_string().get(s)) return std::string(s.substr(0, maxBytes));
  int64_t i;
  if (!v.get_int64().get(i)) return std::to_string(i);
  return {};
}

ProcessGroupConfig pgConfigOf(od::object o, size_t maxBytes) {
  ProcessGroupConfig pg;
  for (auto f : o) {
    std::string_view k;
    od::value fv;
    if (!readField(f, &k, &fv)) break;
    if (k == "pg_name")
      pg.name = textOf(fv, maxBytes);
    else if (k == "pg_desc")
      pg.desc = textOf(fv, maxBytes);
    else if (k == "backend_config")
      pg.backendConfig = textOf(fv, maxBytes);
    else if (k == "pg_size")
      pg.size = intOr(fv, -1);
    else if (k == "ranks") {
      od::array ra;
      if (fv.get_array().get(ra)) continue;
      for (auto el : ra) {
        od::value ev;
        if (el.get(ev)) break;
        const int64_t x = intOr(ev, -1);
        if (x >= 0 && pg.ranks.size() < (size_t{1} << 20)) pg.ranks.push_back(x);
      }
    }
  }
  return pg;
}

}  // namespace

// "distributedInfo": {"backend", "rank", "world_size", "pg_count", "pg_config": [{"pg_name", "pg_desc",
// "backend_config", "pg_size", "ranks"}]}. Fields of the wrong type are left unset.
static void distributedInfoOf(od::value v, DistributedInfo& d, size_t maxBytes) {
  od::object o;
  if (v.get_object().get(o)) return;
  d.present = true;
  for (auto f : o) {
    std::string_view k;
    od::value fv;
    if (!readField(f, &k, &fv)) break;
    if (k == "backend")
      d.backend = textOf(fv, maxBytes);
    else if (k == "rank")
      d.rank = intOr(fv, -1);
    else if (k == "world_size")
      d.worldSize = intOr(fv, -1);
    else if (k == "pg_count")
      d.pgCount = intOr(fv, -1);
    else if (k == "pg_config") {
      od::array a;
      if (fv.get_array().get(a)) continue;
      d.hasPgConfig = true;
      for (auto el : a) {
        od::object po;
        if (el.get_object().get(po)) continue;
        if (d.pgConfig.size() < 65536) d.pgConfig.push_back(pgConfigOf(po, maxBytes));
      }
    }
  }
}

void Parser::topMeta(std::string_view key, od::value v) {
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
  } else if (key == "attnscope" || key == "attnscope_record") {
    // Our engine's run metadata, or a recorded script's: kept as raw JSON text for the analysis.
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
        if (c == '\\' && q[1])
          ++q;
        else if (c == '"')
          inString = false;
      } else if (c == '"') {
        inString = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) break;
      }
    }
    if (depth == 0 && *q == '}')
      (key == "attnscope" ? m.attnscopeJson : m.recordJson).assign(p0, static_cast<size_t>(q - p0 + 1));
  } else if (key == "hostname" || key == "hostName" || key == "host_name") {
    std::string_view s;
    if (!v.get_string().get(s)) m.hostName = std::string(s.substr(0, 256));
  } else if (key == "distributedInfo") {
    distributedInfoOf(v, m.distributed, limits.maxStringBytes);
  } else if (key == "deviceProperties") {
    od::array a;
    if (v.get_array().get(a)) return;
    for (auto el : a) {
      od::object o;
      if (el.get_object().get(o)) continue;
      DeviceProperties d;
      for (auto f : o) {
        std::string_view k;
        od::value fv;
        if (!readField(f, &k, &fv)) break;
        if (k == "name") {
          std::string_view s;
          if (!fv.get_string().get(s)) d.name = std::string(s.substr(0, 256));
        } else if (intArg(fv, &x)) {
          if (k == "id")
            d.id = static_cast<int>(x);
          else if (k == "totalGlobalMem")
            d.totalGlobalMem = x;
          else if (k == "computeMajor")
            d.computeMajor = static_cast<int>(x);
          else if (k == "computeMinor")
            d.computeMinor = static_cast<int>(x);
          else if (k == "numSms")
            d.numSms = static_cast<int>(x);
        }
      }
      m.devices.push_back(std::move(d));
    }
  }
}

size_t repairUtf8(char* p, size_t n, size_t* firstBad) {
  size_t fixed = 0;
  size_t i = 0;
  auto cont = [&](size_t k) { return k < n && (static_cast<unsigned char>(p[k]) & 0xC0) == 0x80; };
  while (i < n) {
    const auto c = static_cast<unsigned char>(p[i]);
    size_t len = 0;
    if (c < 0x80)
      len = 1;
    else if (c >= 0xC2 && c <= 0xDF)
      len = cont(i + 1) ? 2 : 0;
    else if (c >= 0xE0 && c <= 0xEF) {
      const auto c1 = static_cast<unsigned char>(i + 1 < n ? p[i + 1] : 0);
      const bool ok1 = (c == 0xE0)   ? (c1 >= 0xA0 && c1 <= 0xBF)
                       : (c == 0xED) ? (c1 >= 0x80 && c1 <= 0x9F)
                                     : cont(i + 1);
      len = (ok1 && cont(i + 2)) ? 3 : 0;
    } else if (c >= 0xF0 && c <= 0xF4) {
      const auto c1 = static_cast<unsigned char>(i + 1 < n ? p[i + 1] : 0);
      const bool ok1 = (c == 0xF0)   ? (c1 >= 0x90 && c1 <= 0xBF)
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

LoadResult cancelledLoad(const std::string& path) {
  LoadResult r = fail(path, "loading cancelled");
  r.cancelled = true;
  return r;
}

}  // namespace attnscope::reader
