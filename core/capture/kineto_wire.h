// The messages a torch process started with KINETO_USE_DAEMON=1 exchanges with the `dynolog`
// endpoint (Kineto's IpcFabricConfigClient; dynolog's IPCMonitor answers them). Verified on torch
// 2.11's wheel with strace and a live process (docs/capture.md has the transcript):
//
//   a datagram = Metadata {uint64 size; char type[32]} + `size` bytes of payload, native-endian
//   "req"  = LibkinetoRequest {int32 type; int32 n; int64 jobid; int32 pids[n]}: a poll for a config,
//            every ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS (5 s). pids[0] is the process, the rest its
//            ancestors; type's bit 1 = event profiler free, bit 2 = activity profiler free (clear
//            while a trace runs in the process: torch.profiler's, or an on-demand one)
//   "ctxt" = LibkinetoContext {int32 gpu; int32 pid; int64 jobid}: a GPU process registering, answered
//            with an int32 (the processes dynolog counts on that GPU)
//   reply  = the same header (type "req") + the Kineto config text, empty when there is nothing to do
//
// The client sends from its own abstract address `dynoconfigclient<uuid>` and waits about 50 ms
// (5 x 10 ms) for the reply. Pure functions: the socket is dynolog_endpoint.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope::capture {

inline constexpr size_t kWireHeaderBytes = 8 + 32;  // Metadata: size_t size, char type[32]
inline constexpr int32_t kKinetoEvents = 1;         // LibkinetoConfigType::EVENTS
inline constexpr int32_t kKinetoActivities = 2;     // LibkinetoConfigType::ACTIVITIES

struct KinetoMessage {
  std::string type;  // "req", "ctxt", or what came
  std::string payload;
};

struct KinetoPoll {
  int32_t configType = 0;     // kKinetoEvents | kKinetoActivities
  int64_t jobId = 0;          // SLURM_JOB_ID in the process's environment, else 0
  std::vector<int32_t> pids;  // the process, then its ancestors
  bool activitiesFree() const { return (configType & kKinetoActivities) != 0; }
};

struct KinetoContext {
  int32_t gpu = -1;
  int32_t pid = 0;
  int64_t jobId = 0;
};

// A datagram's header and payload; nothing when it is shorter than its header says.
std::optional<KinetoMessage> decodeMessage(std::string_view datagram);
std::string encodeMessage(std::string_view type, std::string_view payload);

// A "req" payload; nothing when it is malformed (short, n < 1 or beyond the payload).
std::optional<KinetoPoll> decodePoll(std::string_view payload);
std::string encodePoll(const KinetoPoll& poll);  // for tests: what Kineto sends

std::optional<KinetoContext> decodeContext(std::string_view payload);

// The reply to a poll: the config text (may be empty).
inline std::string encodeConfigReply(std::string_view config) { return encodeMessage("req", config); }
// The reply to a registration: the count dynolog would give.
std::string encodeContextReply(int32_t count);

}  // namespace attnscope::capture
