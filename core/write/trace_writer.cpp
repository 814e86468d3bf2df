#include "core/write/trace_writer.h"

#include <cctype>
#include <cstdio>
#include <string>
#include <unordered_map>

#include "core/text/json_out.h"

namespace attnscope {

namespace {

// ns -> Kineto's microseconds with three decimals, exactly.
void appendUs(std::string& out, int64_t ns) {
  if (ns < 0) {
    out.push_back('-');
    ns = -ns;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ns / 1000), static_cast<long long>(ns % 1000));
  out += buf;
}

// Kineto's "cat" for a family (memory instants are cpu_instant_event).
std::string_view catOf(Family f) {
  switch (f) {
    case Family::Memory:
      return "cpu_instant_event";
    case Family::Other:
      return "Trace";
    default:
      return familyName(f);
  }
}

bool syntheticId(int64_t id) { return id <= -(int64_t{1} << 40); }

// A Python string literal ('...' or "...", backslash escapes) at the start
// of `t`: its value into *value, its length returned (0 if unterminated).
size_t pyStringLiteral(std::string_view t, std::string* value) {
  const char q = t[0];
  for (size_t i = 1; i < t.size(); ++i) {
    const char c = t[i];
    if (c == q) return i + 1;
    if (c != '\\' || i + 1 == t.size()) {
      value->push_back(c);
      continue;
    }
    const char e = t[++i];
    switch (e) {
      case 'n':
        value->push_back('\n');
        break;
      case 'r':
        value->push_back('\r');
        break;
      case 't':
        value->push_back('\t');
        break;
      case 'x':
        if (i + 2 < t.size() && std::isxdigit(static_cast<unsigned char>(t[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(t[i + 2]))) {
          value->push_back(static_cast<char>(std::stoi(std::string(t.substr(i + 1, 2)), nullptr, 16)));
          i += 2;
        } else {
          value->push_back(e);
        }
        break;
      default:
        value->push_back(e);  // \\ \' \" and anything else: the character itself
    }
  }
  return 0;
}

// pyReprToJson's conversion; false when `r` is not a list/scalar repr.
bool convertPyRepr(std::string_view r, std::string& out) {
  // Arrays only (no dicts), so the grammar is a depth and what may come next.
  int depth = 0;
  bool wantValue = true;  // else: a comma or a closing bracket
  bool done = false;      // the top-level value is complete
  for (size_t i = 0; i < r.size();) {
    const char c = r[i];
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (done) return false;
    if (c == ']') {
      if (depth == 0 || (wantValue && out.back() != '[')) return false;
      out.push_back(']');
      --depth;
      ++i;
      wantValue = false;
    } else if (!wantValue) {
      if (c != ',' || depth == 0) return false;
      out += ", ";
      ++i;
      wantValue = true;
      continue;
    } else if (c == '[') {
      out.push_back('[');
      ++depth;
      ++i;
      continue;
    } else if (c == '\'' || c == '"') {
      std::string value;
      const size_t n = pyStringLiteral(r.substr(i), &value);
      if (n == 0) return false;
      appendJsonString(out, value);
      i += n;
      wantValue = false;
    } else {
      static constexpr std::pair<std::string_view, std::string_view> kWords[] = {
          {"None", "null"}, {"True", "true"}, {"False", "false"}};
      size_t n = jsonNumberLength(r.substr(i));
      std::string_view json = r.substr(i, n);
      for (const auto& [py, js] : kWords)
        if (n == 0 && r.substr(i, py.size()) == py) n = py.size(), json = js;
      if (n == 0) return false;
      out += json;
      i += n;
      wantValue = false;
    }
    done = depth == 0;
  }
  return done;
}

}  // namespace

std::string pyReprToJson(std::string_view r) {
  std::string out;
  out.reserve(r.size() + 8);
  if (convertPyRepr(r, out)) return out;
  // Not something the reader's repr makes (a hostile trace's argument):
  // keep the text, as one JSON string, so the file stays valid JSON.
  out.clear();
  appendJsonString(out, r);
  return out;
}

std::string chromeTraceJson(const EventStore& s, std::string_view extraMembers) {
  const auto& m = s.meta();
  std::string out;
  out.reserve(s.events().size() * 220 + 4096);
  out += "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [";
  for (size_t i = 0; i < m.devices.size(); ++i) {
    const auto& d = m.devices[i];
    out += i ? ", " : "";
    out += "{\"id\": " + std::to_string(d.id) + ", \"name\": " + jsonString(d.name) +
           ", \"totalGlobalMem\": " + std::to_string(d.totalGlobalMem) +
           ", \"computeMajor\": " + std::to_string(d.computeMajor) +
           ", \"computeMinor\": " + std::to_string(d.computeMinor) + ", \"numSms\": " + std::to_string(d.numSms) + "}";
  }
  out += "],\n";
  if (m.distributed.present) {
    // As Kineto writes it (torch.distributed's rank, world size and process groups).
    const DistributedInfo& d = m.distributed;
    out += "  \"distributedInfo\": {\"backend\": " + jsonString(d.backend) + ", \"rank\": " + std::to_string(d.rank) +
           ", \"world_size\": " + std::to_string(d.worldSize);
    if (d.pgCount >= 0) out += ", \"pg_count\": " + std::to_string(d.pgCount);
    if (d.hasPgConfig) {
      out += ", \"pg_config\": [";
      for (size_t i = 0; i < d.pgConfig.size(); ++i) {
        const ProcessGroupConfig& p = d.pgConfig[i];
        out += std::string(i ? ", " : "") + "{\"pg_name\": " + jsonString(p.name) +
               ", \"pg_desc\": " + jsonString(p.desc) + ", \"backend_config\": " + jsonString(p.backendConfig) +
               ", \"pg_size\": " + std::to_string(p.size) + ", \"ranks\": [";
        for (size_t k = 0; k < p.ranks.size(); ++k) out += (k ? ", " : "") + std::to_string(p.ranks[k]);
        out += "]}";
      }
      out += "]";
    }
    out += "},\n";
  }
  if (m.cudaRuntimeVersion) out += "  \"cuda_runtime_version\": " + std::to_string(m.cudaRuntimeVersion) + ",\n";
  if (m.cudaDriverVersion) out += "  \"cuda_driver_version\": " + std::to_string(m.cudaDriverVersion) + ",\n";
  if (m.cuptiVersion) out += "  \"cupti_version\": " + std::to_string(m.cuptiVersion) + ",\n";
  out += std::string("  \"record_shapes\": ") + (m.recordShapes ? "1" : "0") + ",\n";
  out += std::string("  \"profile_memory\": ") + (m.profileMemory ? "1" : "0") + ",\n";
  out += "  \"displayTimeUnit\": \"ms\",\n";
  out += "  \"baseTimeNanoseconds\": " + std::to_string(m.baseTimeNanoseconds) + ",\n";
  out += "  \"traceEvents\": [";

  bool first = true;
  auto sep = [&] {
    out += first ? "\n    " : ",\n    ";
    first = false;
  };
  auto idText = [&](int64_t id) -> std::string {
    if (!syntheticId(id)) return std::to_string(id);
    auto it = m.processNames.find(id);
    return jsonString(it != m.processNames.end() ? it->second : std::string());
  };

  // Process and thread names.
  for (const auto& [pid, name] : m.processNames) {
    if (syntheticId(pid)) continue;
    sep();
    out += "{\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": " + std::to_string(pid) +
           ", \"tid\": 0, \"args\": {\"name\": " + jsonString(name) + "}}";
  }
  for (const auto& lane : s.lanes()) {
    if (lane.kind != LaneKind::CpuThread || syntheticId(lane.tid)) continue;
    auto it = m.threadNames.find(lane.tid);
    if (it == m.threadNames.end()) continue;
    sep();
    out += "{\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": " + std::to_string(lane.pid) +
           ", \"tid\": " + std::to_string(lane.tid) + ", \"args\": {\"name\": " + jsonString(it->second) + "}}";
  }

  for (const Event& e : s.events()) {
    const Lane& lane = s.lanes()[e.lane];
    sep();
    const bool instant = e.family == Family::Memory || e.family == Family::CpuInstant;
    out += instant ? "{\"ph\": \"i\", \"s\": \"t\", \"cat\": " : "{\"ph\": \"X\", \"cat\": ";
    appendJsonString(out, catOf(e.family));
    out += ", \"name\": ";
    appendJsonString(out, s.name(e));
    out += ", \"pid\": " + idText(lane.pid) + ", \"tid\": " + idText(lane.tid) + ", \"ts\": ";
    appendUs(out, e.start);
    if (!instant) {
      out += ", \"dur\": ";
      appendUs(out, e.dur);
    }
    std::string args;
    auto arg = [&](std::string_view k, const std::string& v) {
      args += args.empty() ? "" : ", ";
      appendJsonString(args, k);
      args += ": " + v;
    };
    if (e.externalId != kNoId) arg("External id", std::to_string(e.externalId));
    if (e.correlation != kNoId) arg("correlation", std::to_string(e.correlation));
    if (const auto a = s.argsOf(e)) {
      if (e.family == Family::Memory) {
        arg("Bytes", std::to_string(a->bytes));
        if (a->totalAllocated >= 0) arg("Total Allocated", std::to_string(a->totalAllocated));
        if (a->totalReserved >= 0) arg("Total Reserved", std::to_string(a->totalReserved));
        arg("Device Type", std::to_string(a->deviceType));
        arg("Device Id", std::to_string(a->device));
        if (a->hasAddr) arg("Addr", std::to_string(a->addr));
      } else {
        if (a->inputDims) arg("Input Dims", pyReprToJson(s.str(a->inputDims)));
        if (a->inputTypes) arg("Input type", pyReprToJson(s.str(a->inputTypes)));
        if (a->concreteInputs) arg("Concrete Inputs", pyReprToJson(s.str(a->concreteInputs)));
        if (a->sequenceNumber >= 0) arg("Sequence number", std::to_string(a->sequenceNumber));
        if (a->fwdThreadId >= 0) arg("Fwd thread id", std::to_string(a->fwdThreadId));
        if (a->device >= 0) arg("device", std::to_string(a->device));
        if (a->stream >= 0) arg("stream", std::to_string(a->stream));
        if (a->registersPerThread >= 0) arg("registers per thread", std::to_string(a->registersPerThread));
        if (a->sharedMemory >= 0) arg("shared memory", std::to_string(a->sharedMemory));
        if (a->blocksPerSm >= 0) arg("blocks per SM", jsonNumber(a->blocksPerSm));
        if (a->warpsPerSm >= 0) arg("warps per SM", jsonNumber(a->warpsPerSm));
        if (a->occupancyPct >= 0) arg("est. achieved occupancy %", jsonNumber(a->occupancyPct));
        if (isGpuFamily(e.family) && (a->bytes || e.family != Family::Kernel)) arg("bytes", std::to_string(a->bytes));
        if (const CommArgs* c = s.commOf(e)) {
          const std::pair<const char*, uint32_t> texts[] = {{"Collective name", c->collectiveName},
                                                            {"Process Group Name", c->pgName},
                                                            {"Process Group Description", c->pgDesc},
                                                            {"Process Group Ranks", c->groupRanks},
                                                            {"Comms Id", c->commsId},
                                                            {"dtype", c->dtype}};
          for (const auto& [k, id] : texts)
            if (id) arg(k, jsonString(s.str(id)));
          const std::pair<const char*, int64_t> nums[] = {{"In msg nelems", c->inNelems},
                                                          {"Out msg nelems", c->outNelems},
                                                          {"Seq", c->seq},
                                                          {"Group size", c->groupSize}};
          for (const auto& [k, x] : nums)
            if (x >= 0) arg(k, std::to_string(x));
        }
        if (a->grid[0] || a->block[0]) {
          arg("grid", "[" + std::to_string(a->grid[0]) + ", " + std::to_string(a->grid[1]) + ", " +
                          std::to_string(a->grid[2]) + "]");
          arg("block", "[" + std::to_string(a->block[0]) + ", " + std::to_string(a->block[1]) + ", " +
                           std::to_string(a->block[2]) + "]");
        }
      }
    }
    if (!args.empty()) out += ", \"args\": {" + args + "}";
    out += "}";
  }

  // Flows: launch -> GPU work (ac2g), forward -> backward (fwdbwd).
  for (const Link& l : s.links()) {
    const Event& from = s.event(l.from);
    const Event& to = s.event(l.to);
    const char* cat = l.kind == LinkKind::Ac2g ? "ac2g" : l.kind == LinkKind::FwdBwd ? "fwdbwd" : "flow";
    sep();
    out += "{\"ph\": \"s\", \"id\": " + std::to_string(l.id) + ", \"pid\": " + idText(s.lanes()[from.lane].pid) +
           ", \"tid\": " + idText(s.lanes()[from.lane].tid) + ", \"ts\": ";
    appendUs(out, from.start);
    out += ", \"cat\": \"" + std::string(cat) + "\", \"name\": \"" + cat + "\"}";
    sep();
    out += "{\"ph\": \"f\", \"id\": " + std::to_string(l.id) + ", \"pid\": " + idText(s.lanes()[to.lane].pid) +
           ", \"tid\": " + idText(s.lanes()[to.lane].tid) + ", \"ts\": ";
    appendUs(out, to.start);
    out += ", \"cat\": \"" + std::string(cat) + "\", \"name\": \"" + cat + "\", \"bp\": \"e\"}";
  }
  out += "\n  ],\n  \"traceName\": " + jsonString(m.traceName.empty() ? m.sourcePath : m.traceName);
  if (!extraMembers.empty()) {
    out += ",\n  ";
    out += extraMembers;
  }
  out += "\n}\n";
  return out;
}

}  // namespace attnscope
