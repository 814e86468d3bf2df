#include "core/capture/kineto_wire.h"

#include <algorithm>
#include <cstring>

namespace attnscope::capture {

namespace {

template <class T>
T readAt(std::string_view s, size_t at) {
  T v{};
  std::memcpy(&v, s.data() + at, sizeof v);
  return v;
}

template <class T>
void append(std::string& s, T v) {
  char b[sizeof v];
  std::memcpy(b, &v, sizeof v);
  s.append(b, sizeof v);
}

}  // namespace

std::optional<KinetoMessage> decodeMessage(std::string_view d) {
  if (d.size() < kWireHeaderBytes) return std::nullopt;
  const auto size = readAt<uint64_t>(d, 0);
  if (size > d.size() - kWireHeaderBytes) return std::nullopt;
  KinetoMessage m;
  const std::string_view type = d.substr(8, 32);
  m.type = std::string(type.substr(0, type.find('\0')));
  m.payload = std::string(d.substr(kWireHeaderBytes, size));
  return m;
}

std::string encodeMessage(std::string_view type, std::string_view payload) {
  std::string out;
  out.reserve(kWireHeaderBytes + payload.size());
  append<uint64_t>(out, payload.size());
  char t[32] = {};
  std::memcpy(t, type.data(), std::min<size_t>(type.size(), sizeof t - 1));
  out.append(t, sizeof t);
  out.append(payload);
  return out;
}

// LibkinetoRequest: int32 type, int32 n, int64 jobid (8-aligned: no padding), int32 pids[n].
std::optional<KinetoPoll> decodePoll(std::string_view p) {
  if (p.size() < 16) return std::nullopt;
  KinetoPoll r;
  r.configType = readAt<int32_t>(p, 0);
  const auto n = readAt<int32_t>(p, 4);
  r.jobId = readAt<int64_t>(p, 8);
  if (n < 1 || static_cast<size_t>(n) > (p.size() - 16) / 4) return std::nullopt;
  r.pids.reserve(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) r.pids.push_back(readAt<int32_t>(p, 16 + 4 * static_cast<size_t>(i)));
  return r;
}

std::string encodePoll(const KinetoPoll& r) {
  std::string p;
  append<int32_t>(p, r.configType);
  append<int32_t>(p, static_cast<int32_t>(r.pids.size()));
  append<int64_t>(p, r.jobId);
  for (int32_t pid : r.pids) append<int32_t>(p, pid);
  return encodeMessage("req", p);
}

// LibkinetoContext: int32 gpu, int32 pid (pid_t), int64 jobid.
std::optional<KinetoContext> decodeContext(std::string_view p) {
  if (p.size() < 16) return std::nullopt;
  KinetoContext c;
  c.gpu = readAt<int32_t>(p, 0);
  c.pid = readAt<int32_t>(p, 4);
  c.jobId = readAt<int64_t>(p, 8);
  return c;
}

std::string encodeContextReply(int32_t count) {
  std::string p;
  append<int32_t>(p, count);
  return encodeMessage("ctxt", p);
}

}  // namespace attnscope::capture
