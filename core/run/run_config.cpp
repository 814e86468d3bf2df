#include "core/run/run_config.h"

#include <algorithm>
#include <charconv>

#include "core/run/timing_methods.h"
#include "core/text/json_out.h"

namespace attnscope {

namespace {

std::vector<std::string_view> splitList(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = s.find(sep, start);
    const std::string_view part = s.substr(start, end == std::string_view::npos ? s.npos : end - start);
    if (!part.empty()) out.push_back(part);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

bool parseInt(std::string_view s, int64_t* out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

std::string joinWraps(const RunConfig& c) {
  std::string w;
  for (int i = 0; i < kStepCount; ++i)
    if (c.wrap[i]) w += (w.empty() ? "" : ",") + std::string(kStepKeys[i]);
  if (c.wrapFull) w += (w.empty() ? "" : ",") + std::string("full");
  return w.empty() ? "none" : w;
}

std::string joinTimings(const RunConfig& c) {
  std::string t;
  for (int i = 0; i < kTimingMethodCount; ++i)
    if (c.timing[i]) t += (t.empty() ? "" : ",") + std::string(timingInfo(static_cast<TimingMethod>(i)).key);
  return t;
}

// The multi-rank options against each other and the shape (the GPU count is the engine's to check).
std::optional<std::string> checkRanks(const RunConfig& c) {
  const std::string n = std::to_string(c.ranks);
  if (c.slowRank >= 0 && c.slowRank >= c.ranks)
    return "run: --slow-rank " + std::to_string(c.slowRank) + " is not a rank of --ranks " + n + " (0 to " +
           std::to_string(c.ranks - 1) + ")";
  if (c.slowUs > 0 && c.slowRank < 0) return "run: --slow-us needs --slow-rank R (the rank to make late)";
  if (c.slowRank >= 0 && c.ranks < 2) return "run: --slow-rank needs --ranks 2 or more";
  if (c.ranks > 1 && c.shape[1] % c.ranks != 0)
    return "run: --ranks " + n + " splits the heads across the ranks, but H=" + std::to_string(c.shape[1]) +
           " (--shape B,H,S,D) is not a multiple of " + n;
  if (c.backend == RankBackend::Nccl && c.device == RunDevice::Cpu)
    return "run: --backend nccl runs on GPUs (one per rank); on the CPU use --backend gloo";
  if (c.ranks > 1 && c.backend == RankBackend::Gloo && c.device == RunDevice::Cuda)
    return "run: --backend gloo runs the ranks on the CPU (--device cpu); for one GPU per rank use --backend nccl";
  if (c.rank >= c.ranks && c.ranks > 1) return "run: --internal-rank is not below --ranks";
  return std::nullopt;
}

}  // namespace

std::string_view dtypeName(RunDType d) {
  switch (d) {
    case RunDType::Float32:
      return "float32";
    case RunDType::Float16:
      return "float16";
    case RunDType::BFloat16:
      return "bfloat16";
  }
  return "float32";
}
std::string_view syncName(SyncMode s) {
  switch (s) {
    case SyncMode::None:
      return "none";
    case SyncMode::End:
      return "end";
    case SyncMode::Step:
      return "step";
    case SyncMode::Blocking:
      return "blocking";
  }
  return "none";
}
std::string_view scaleName(ScaleMode s) { return s == ScaleMode::DeviceTensor ? "device-tensor" : "host-scalar"; }
std::string_view timingName(TimingMethod t) { return timingInfo(t).key; }
std::string_view deviceName(RunDevice d) {
  switch (d) {
    case RunDevice::Auto:
      return "auto";
    case RunDevice::Cuda:
      return "cuda";
    case RunDevice::Cpu:
      return "cpu";
  }
  return "auto";
}

std::string_view backendName(RankBackend b) { return b == RankBackend::Nccl ? "nccl" : "gloo"; }

size_t dtypeSize(RunDType d) { return d == RunDType::Float32 ? 4 : 2; }

uint64_t estimateWorkloadBytes(const RunConfig& c) {
  const auto [b, h, s, d] = c.shape;
  const double el = static_cast<double>(dtypeSize(c.dtype));
  const double qkv =
      3.0 * static_cast<double>(b) * static_cast<double>(h) * static_cast<double>(s) * static_cast<double>(d);
  const double scores =
      static_cast<double>(b) * static_cast<double>(h) * static_cast<double>(s) * static_cast<double>(s);
  const double outp = static_cast<double>(b) * static_cast<double>(h) * static_cast<double>(s) * static_cast<double>(d);
  // qk, s and w are alive together at the softmax; o at the end.
  const double bytes = (qkv + 3.0 * scores + outp) * el;
  return bytes > 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(bytes);
}

std::optional<std::string> parseRunArgs(const std::vector<std::string>& args, RunConfig* cfg) {
  RunConfig c;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string opt = args[i];
    std::string val;
    const auto eq = opt.find('=');
    bool hasVal = false;
    if (opt.rfind("--", 0) == 0 && eq != std::string::npos) {
      val = opt.substr(eq + 1);
      opt = opt.substr(0, eq);
      hasVal = true;
    }
    auto need = [&]() -> std::optional<std::string> {
      if (hasVal) return std::nullopt;
      if (i + 1 >= args.size()) return "run: " + opt + " needs a value";
      val = args[++i];
      return std::nullopt;
    };
    if (opt == "--record-shapes") {
      if (hasVal) return "run: --record-shapes takes no value, got '" + val + "'";
      c.recordShapes = true;
    } else if (opt == "--progress") {
      if (auto e = need()) return e;
      if (val != "json") return "run: --progress takes json, got '" + val + "'";
      c.progressJson = true;
    } else if (opt == "--device") {
      if (auto e = need()) return e;
      int64_t index = 0;
      if (val == "cuda") {
        c.device = RunDevice::Cuda;
        c.deviceIndex = 0;
      } else if (val.starts_with("cuda:") && parseInt(std::string_view(val).substr(5), &index) && index >= 0 &&
                 index < 1024) {
        c.device = RunDevice::Cuda;
        c.deviceIndex = static_cast<int>(index);
      } else if (val == "cpu")
        c.device = RunDevice::Cpu;
      else if (val == "auto")
        c.device = RunDevice::Auto;
      else
        return "run: --device takes cuda, cuda:N (the GPU's index) or cpu, got '" + val + "'";
    } else if (opt == "--shape") {
      if (auto e = need()) return e;
      const auto parts = splitList(val, ',');
      if (parts.size() != 4) return "run: --shape takes B,H,S,D (four positive integers), got '" + val + "'";
      for (int k = 0; k < 4; ++k) {
        int64_t x = 0;
        if (!parseInt(parts[k], &x) || x <= 0 || x > (int64_t{1} << 31))
          return "run: --shape takes B,H,S,D (four positive integers), got '" + val + "'";
        c.shape[k] = x;
      }
    } else if (opt == "--dtype") {
      if (auto e = need()) return e;
      if (val == "float32" || val == "fp32")
        c.dtype = RunDType::Float32;
      else if (val == "float16" || val == "fp16" || val == "half")
        c.dtype = RunDType::Float16;
      else if (val == "bfloat16" || val == "bf16")
        c.dtype = RunDType::BFloat16;
      else
        return "run: --dtype takes float32, float16 or bfloat16, got '" + val + "'";
    } else if (opt == "--seed") {
      if (auto e = need()) return e;
      int64_t x = 0;
      if (!parseInt(val, &x) || x < 0) return "run: --seed takes a non-negative integer, got '" + val + "'";
      c.seed = static_cast<uint64_t>(x);
    } else if (opt == "--wrap") {
      if (auto e = need()) return e;
      c.wrap = {false, false, false, false};
      c.wrapFull = false;
      for (auto w : splitList(val, ',')) {
        bool known = false;
        for (int k = 0; k < kStepCount; ++k)
          if (w == kStepKeys[k]) c.wrap[k] = known = true;
        if (w == "full") c.wrapFull = known = true;
        if (w == "all") {
          c.wrap = {true, true, true, true};
          known = true;
        }
        if (w == "none") known = true;
        if (!known)
          return "run: --wrap takes a list of qk, scale, softmax, av, full (or all, none), got '" + std::string(w) +
                 "'";
      }
    } else if (opt == "--sync") {
      if (auto e = need()) return e;
      if (val == "none")
        c.sync = SyncMode::None;
      else if (val == "end")
        c.sync = SyncMode::End;
      else if (val == "step")
        c.sync = SyncMode::Step;
      else if (val == "blocking")
        c.sync = SyncMode::Blocking;
      else
        return "run: --sync takes none, end, step or blocking, got '" + val + "'";
    } else if (opt == "--scale") {
      if (auto e = need()) return e;
      if (val == "device-tensor")
        c.scale = ScaleMode::DeviceTensor;
      else if (val == "host-scalar")
        c.scale = ScaleMode::HostScalar;
      else
        return "run: --scale takes device-tensor or host-scalar, got '" + val + "'";
    } else if (opt == "--warmup" || opt == "--iters") {
      if (auto e = need()) return e;
      int64_t x = 0;
      const bool iters = opt == "--iters";
      if (!parseInt(val, &x) || x < (iters ? 1 : 0) || x > 100000)
        return "run: " + opt + " takes an integer " + (iters ? "from 1" : "from 0") + " to 100000, got '" + val + "'";
      (iters ? c.iters : c.warmup) = static_cast<int>(x);
    } else if (opt == "--timing") {
      if (auto e = need()) return e;
      c.timing = {};
      const auto parts = splitList(val, ',');
      if (parts.empty()) return "run: --timing needs at least one of cupti, events, host, host-sync, torch, op-events";
      for (auto t : parts) {
        bool known = false;
        for (int k = 0; k < kTimingMethodCount; ++k)
          if (t == timingInfo(static_cast<TimingMethod>(k)).key) c.timing[k] = known = true;
        c.timingGiven = true;
        if (!known)
          return "run: --timing takes a list of cupti, events, host, host-sync, torch, op-events, got '" +
                 std::string(t) + "'";
      }
    } else if (opt == "--out" || opt == "-o") {
      if (auto e = need()) return e;
      if (val.empty()) return "run: --out needs a file name";
      c.out = val;
    } else if (opt == "--ranks" || opt == "--slow-rank" || opt == "--internal-rank" || opt == "--internal-store-port") {
      if (auto e = need()) return e;
      int64_t x = 0;
      const int64_t lo = opt == "--ranks" ? 1 : 0, hi = opt == "--internal-store-port" ? 65535 : 64;
      if (!parseInt(val, &x) || x < lo || x > hi)
        return "run: " + opt + " takes an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
               ", got '" + val + "'";
      (opt == "--ranks"           ? c.ranks
       : opt == "--slow-rank"     ? c.slowRank
       : opt == "--internal-rank" ? c.rank
                                  : c.storePort) = static_cast<int>(x);
    } else if (opt == "--slow-us") {
      if (auto e = need()) return e;
      int64_t x = 0;
      if (!parseInt(val, &x) || x < 0 || x > 60000000)
        return "run: --slow-us takes microseconds from 0 to 60000000, got '" + val + "'";
      c.slowUs = x;
    } else if (opt == "--backend") {
      if (auto e = need()) return e;
      if (val == "gloo")
        c.backend = RankBackend::Gloo;
      else if (val == "nccl")
        c.backend = RankBackend::Nccl;
      else
        return "run: --backend takes gloo or nccl, got '" + val + "'";
    } else if (opt == "--internal-pass") {
      if (auto e = need()) return e;
      c.pass = val;
    } else if (opt == "--internal-pass-out") {
      if (auto e = need()) return e;
      c.passOut = val;
    } else {
      return "run: unknown option '" + args[i] + "' (see --help)";
    }
  }
  if (auto e = checkRanks(c)) return e;
  if (c.device == RunDevice::Cpu)
    if (auto e = fitTimingToDevice(&c, false)) return e;
  *cfg = c;
  return std::nullopt;
}

bool timingNeedsGpu(TimingMethod m) { return timingInfo(m).needsGpu(); }

std::optional<std::string> fitTimingToDevice(RunConfig* c, bool cuda) {
  if (cuda) return std::nullopt;
  std::string refused;
  for (int k = 0; k < kTimingMethodCount; ++k) {
    const auto m = static_cast<TimingMethod>(k);
    if (!c->timing[k] || !timingNeedsGpu(m)) continue;
    if (!c->timingGiven) {
      c->timing[k] = false;
      continue;
    }
    refused += std::string(refused.empty() ? "" : "; ") + std::string(timingInfo(m).key) + " " +
               std::string(timingInfo(m).cpuRefusal);
  }
  if (!refused.empty())
    return "run: --timing asks for a GPU method on the CPU (" + refused +
           "); this run is on the CPU, where host, cupti and torch measure it";
  bool any = false;
  for (bool on : c->timing) any |= on;
  if (!any) c->timing[static_cast<int>(TimingMethod::Host)] = true;
  return std::nullopt;
}

std::vector<std::string> toRunArgs(const RunConfig& c) {
  std::vector<std::string> a;
  if (c.device != RunDevice::Auto)
    a.insert(a.end(), {"--device", std::string(deviceName(c.device)) + (c.device == RunDevice::Cuda && c.deviceIndex
                                                                            ? ":" + std::to_string(c.deviceIndex)
                                                                            : std::string())});
  a.insert(a.end(), {"--shape", std::to_string(c.shape[0]) + "," + std::to_string(c.shape[1]) + "," +
                                    std::to_string(c.shape[2]) + "," + std::to_string(c.shape[3])});
  a.insert(a.end(), {"--dtype", std::string(dtypeName(c.dtype))});
  a.insert(a.end(), {"--seed", std::to_string(c.seed)});
  a.insert(a.end(), {"--wrap", joinWraps(c)});
  a.insert(a.end(), {"--sync", std::string(syncName(c.sync))});
  a.insert(a.end(), {"--scale", std::string(scaleName(c.scale))});
  a.insert(a.end(), {"--warmup", std::to_string(c.warmup)});
  a.insert(a.end(), {"--iters", std::to_string(c.iters)});
  a.insert(a.end(), {"--timing", joinTimings(c)});
  if (c.recordShapes) a.emplace_back("--record-shapes");
  if (c.ranks > 1) {
    a.insert(a.end(), {"--ranks", std::to_string(c.ranks), "--backend", std::string(backendName(c.backend))});
    if (c.slowRank >= 0)
      a.insert(a.end(), {"--slow-rank", std::to_string(c.slowRank), "--slow-us", std::to_string(c.slowUs)});
  }
  if (c.rank >= 0)
    a.insert(a.end(),
             {"--internal-rank", std::to_string(c.rank), "--internal-store-port", std::to_string(c.storePort)});
  if (!c.out.empty()) a.insert(a.end(), {"--out", c.out});
  if (c.progressJson) a.insert(a.end(), {"--progress", "json"});
  return a;
}

std::string runConfigJson(const RunConfig& c) {
  std::string s =
      "{\"device\": " + jsonString(deviceName(c.device)) + ", \"device_index\": " + std::to_string(c.deviceIndex);
  s += ", \"shape\": [" + std::to_string(c.shape[0]) + ", " + std::to_string(c.shape[1]) + ", " +
       std::to_string(c.shape[2]) + ", " + std::to_string(c.shape[3]) + "]";
  s += ", \"dtype\": " + jsonString(dtypeName(c.dtype));
  s += ", \"seed\": " + std::to_string(c.seed);
  s += ", \"wrap\": {";
  for (int i = 0; i < kStepCount; ++i) s += jsonString(kStepKeys[i]) + ": " + (c.wrap[i] ? "true" : "false") + ", ";
  s += std::string("\"full\": ") + (c.wrapFull ? "true" : "false") + "}";
  s += ", \"sync\": " + jsonString(syncName(c.sync));
  s += ", \"scale\": " + jsonString(scaleName(c.scale));
  s += ", \"warmup\": " + std::to_string(c.warmup);
  s += ", \"iters\": " + std::to_string(c.iters);
  s += ", \"timing\": [";
  bool first = true;
  for (int i = 0; i < kTimingMethodCount; ++i) {
    if (!c.timing[i]) continue;
    s += (first ? "" : ", ") + jsonString(timingInfo(static_cast<TimingMethod>(i)).key);
    first = false;
  }
  s += std::string("], \"record_shapes\": ") + (c.recordShapes ? "true" : "false");
  s += ", \"out\": " + jsonString(c.out);
  if (c.ranks > 1)
    s += ", \"ranks\": " + std::to_string(c.ranks) + ", \"backend\": " + jsonString(backendName(c.backend)) +
         ", \"rank\": " + std::to_string(c.rank) + ", \"slow_rank\": " + std::to_string(c.slowRank) +
         ", \"slow_us\": " + std::to_string(c.slowUs);
  s += ", \"args\": " + jsonString([&] {
         std::string line;
         for (const auto& a : toRunArgs(c)) line += (line.empty() ? "" : " ") + a;
         return line;
       }());
  s += "}";
  return s;
}

std::string runSummary(const RunConfig& c) {
  return std::to_string(c.shape[0]) + "x" + std::to_string(c.shape[1]) + "x" + std::to_string(c.shape[2]) + "x" +
         std::to_string(c.shape[3]) + " " + std::string(dtypeName(c.dtype)) + ", wrap " + joinWraps(c) + ", sync " +
         std::string(syncName(c.sync)) + ", scale " + std::string(scaleName(c.scale)) + ", warmup " +
         std::to_string(c.warmup) +
         (c.ranks > 1 ? ", " + std::to_string(c.ranks) + " ranks (" + std::string(backendName(c.backend)) + ")"
                      : std::string());
}

const char* const kRunHelpOptions =
    "usage: attnscope-cli run [options]\n"
    "\n"
    "Runs a multi-head attention block (QK MATMUL, SCALE, SOFTMAX PASS, AV MATMUL) under\n"
    "LibTorch and records what really happened: ops via RecordFunction, CUDA activity via CUPTI,\n"
    "NVTX ranges. Each timing method is measured in its own pass after the same warm-up; the\n"
    "trace pass (CUPTI and our recorder) runs last, right after the host pass it is compared with.\n"
    "\n"
    "  --device cuda|cuda:N|cpu  default: cuda (GPU 0) when a GPU is present, else cpu (with a\n"
    "                          notice); cuda:N runs on GPU N\n"
    "  --shape B,H,S,D         default 1,8,64,64 (small: launch-bound)\n"
    "  --dtype float32|float16|bfloat16   default float32\n"
    "  --seed N                default 0\n"
    "  --wrap LIST             record_function around: qk,scale,softmax,av,full | all | none\n"
    "                          (full = one scope around the whole block). Default none\n"
    "  --sync none|end|step|blocking\n"
    "                          end: torch::cuda::synchronize() after the block; step: at the end\n"
    "                          of every step (inside its scope); blocking: CUDA_LAUNCH_BLOCKING=1\n"
    "  --scale device-tensor|host-scalar\n"
    "                          qk / sqrt(torch.tensor(d, device=...)) (a hidden H2D copy and\n"
    "                          stream sync), or a host scalar (no sync). Default device-tensor\n"
    "  --warmup N              untimed calls first (default 3; 0 = cold, a fresh child per method)\n"
    "  --iters N               timed iterations per method (default 20: medians with p10-p90)\n"
    "  --timing LIST           comma-separated timing methods (below)\n"
    "  --record-shapes         record every op's input shapes in the trace pass (and torch's\n"
    "                          record_shapes): off by default, as in torch.profiler, because\n"
    "                          reading every op's inputs lengthens the steps being timed\n"
    "  --out FILE              default attnscope-run-<time>.json (written atomically); with\n"
    "                          --ranks N a folder (default attnscope-run-<time>/) holding rank-R.json\n"
    "  --ranks N               N processes, one per rank (default 1): each runs H/N of the heads,\n"
    "                          then the ranks' outputs are all-gathered at the end of AV MATMUL,\n"
    "                          every call; each rank writes its own trace (distributedInfo, the\n"
    "                          all-gather as record_param_comms). attnscope-cli ranks DIR reads them\n"
    "  --backend gloo|nccl     how the ranks talk (default gloo: the CPU, over 127.0.0.1); nccl\n"
    "                          needs one GPU per rank (rank R on cuda:R)\n"
    "  --slow-rank R --slow-us T\n"
    "                          rank R sleeps T microseconds before each all-gather (inside AV\n"
    "                          MATMUL, as a slow_rank_sleep scope): a known straggler\n"
    "  --progress json         JSON lines on stdout: {\"phase\", \"iteration\", \"message\"}\n"
    "\n"
    "Exit codes: 0 ok, 2 bad options / no GPU for --device cuda (or fewer GPUs than ranks with\n"
    "--backend nccl) / unwritable output,\n"
    "3 out of memory, 1 internal error.\n";

std::string runHelp() {
  // The methods from their table: key, whether it runs by default, whether it needs a GPU, label.
  std::string t =
      "\nTiming methods, each measured in its own pass (* by default; ^ needs a GPU: a CPU run leaves\n"
      "it out, and refuses it when --timing names it):\n";
  for (const TimingMethodInfo& m : timingMethods()) {
    std::string key = "  " + std::string(m.key) + (m.defaultOn ? "*" : "") + (m.needsGpu() ? "^" : "");
    key.resize(std::max<size_t>(key.size() + 1, 14), ' ');
    t += key + std::string(m.label) + "\n";
  }
  std::string help = kRunHelpOptions;
  const size_t exits = help.find("\nExit codes:");
  return help.insert(exits == std::string::npos ? help.size() : exits, t);
}

}  // namespace attnscope
