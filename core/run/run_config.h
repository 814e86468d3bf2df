// The engine's run configuration: what `attnscope-cli run` accepts and what
// the GUI's run panel produces. Torch-free so it is parsed, validated and
// tested everywhere, before anything is allocated.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

enum class RunDevice { Auto, Cuda, Cpu };
enum class RunDType { Float32, Float16, BFloat16 };
enum class SyncMode { None, End, Step, Blocking };
enum class ScaleMode { DeviceTensor, HostScalar };
// How the ranks of a multi-rank run (--ranks N) talk: gloo (the CPU, TCP on 127.0.0.1) or NCCL (one GPU per rank).
enum class RankBackend { Gloo, Nccl };
// Events: CUDA events at each step's start and end, nothing else recorded.
// OpEvents: the same step events while every op and scope also records a
// pair (use_cuda=True's way), so its inflation of the steps shows.
enum class TimingMethod { Cupti, Events, Host, HostSync, Torch, OpEvents, Count };
inline constexpr int kTimingMethodCount = static_cast<int>(TimingMethod::Count);

// The attention block's four steps, in order.
inline constexpr int kStepCount = 4;
inline constexpr std::array<std::string_view, kStepCount> kStepNames = {"QK MATMUL", "SCALE", "SOFTMAX PASS",
                                                                        "AV MATMUL"};
inline constexpr std::array<std::string_view, kStepCount> kStepKeys = {"qk", "scale", "softmax", "av"};
inline constexpr std::string_view kFullScopeName = "MULTIHEAD_ATTENTION_FULL";

struct RunConfig {
  RunDevice device = RunDevice::Auto;
  int deviceIndex = 0;                            // which GPU (--device cuda:N)
  std::array<int64_t, 4> shape = {1, 8, 64, 64};  // B, H, S, D
  RunDType dtype = RunDType::Float32;
  uint64_t seed = 0;
  std::array<bool, kStepCount> wrap = {false, false, false, false};
  bool wrapFull = false;
  SyncMode sync = SyncMode::None;
  ScaleMode scale = ScaleMode::DeviceTensor;
  int warmup = 3;
  int iters = 20;  // enough for a median and its p10-p90 (issue 17)
  std::array<bool, kTimingMethodCount> timing = {true, true, true, false, false, false};
  // Input shapes for every op in the trace pass (and torch's record_shapes):
  // off by default, as in torch.profiler, because boxing every op's inputs
  // lengthens the steps the trace pass times (issue 17's ablation).
  bool recordShapes = false;
  bool timingGiven = false;  // --timing was on the command line (else the defaults, which follow the device)
  std::string out;           // empty: attnscope-run-<time>.json
  bool progressJson = false;
  // Several processes, one per rank (issue 36): each computes H/ranks of the heads, then the ranks'
  // outputs are all-gathered at the end of AV MATMUL, every call. ranks = 1: one process, no collective.
  int ranks = 1;
  RankBackend backend = RankBackend::Gloo;
  int slowRank = -1;   // --slow-rank: this rank sleeps slowUs before its all-gather (inside AV MATMUL)
  int64_t slowUs = 0;  // --slow-us
  // Internal: the rank this process is (-1: the launcher, or a single-process run) and the port of
  // the launcher's TCPStore on 127.0.0.1.
  int rank = -1;
  int storePort = 0;
  // Internal: a child process measuring one pass ("" = the parent).
  std::string pass;
  std::string passOut;  // where a child writes its pass result
  bool operator==(const RunConfig&) const = default;
};

std::string_view dtypeName(RunDType d);
std::string_view syncName(SyncMode s);
std::string_view scaleName(ScaleMode s);
std::string_view timingName(TimingMethod t);
std::string_view deviceName(RunDevice d);
std::string_view backendName(RankBackend b);

// Parses `attnscope-cli run` arguments. Returns an error message naming the
// bad option and value, or nullopt on success. Unknown options are errors.
std::optional<std::string> parseRunArgs(const std::vector<std::string>& args, RunConfig* cfg);

// Fits the timing methods to the device the run will use. On the CPU there is
// no stream to time: `events` (CUDA events) and `host-sync` (a device sync as
// each step's last statement) cannot exist. Asked for by name (--timing),
// they are refused with a message saying why (exit 2 from the CLI); left to
// the defaults, they are dropped. parseRunArgs calls it for --device cpu; the
// engine again once `auto` has found no GPU.
std::optional<std::string> fitTimingToDevice(RunConfig* cfg, bool cuda);
bool timingNeedsGpu(TimingMethod m);

// The canonical argument list for a config (what the GUI runs, and what a
// parent passes to its per-method children). Round-trips through parseRunArgs.
std::vector<std::string> toRunArgs(const RunConfig& cfg);

// The config as a JSON object (for the trace's "attnscope" metadata); parseRunConfigJson
// (engine_run.h) reads it back, field by field.
std::string runConfigJson(const RunConfig& cfg);

// Bytes the workload keeps alive on the device at its peak: q, k, v, the
// scores, the scaled scores, the weights and the output.
uint64_t estimateWorkloadBytes(const RunConfig& cfg);
size_t dtypeSize(RunDType d);

// Human summary: "8x16x1024x64 float32, wrap softmax, sync end".
std::string runSummary(const RunConfig& cfg);

// `attnscope-cli run --help`: the options, then the timing methods from their table.
std::string runHelp();

}  // namespace attnscope
