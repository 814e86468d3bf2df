#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <map>
#include <set>

#include "core/snapshot/trace_snapshot.h"
#include "core/store/device_activity.h"
#include "core/tables/attribution.h"
#include "core/views/views.h"

namespace attnscope {

bool usesTensorCores(std::string_view n) {
  // MMA instruction families and library kernels that use them; FlashAttention (flash_fwd/bwd, FMHA),
  // Hopper's cuBLAS (nvjet) and warpgroup GEMMs (gmma, wgmma), AMD's matrix cores (hipBLASLt Cijk
  // kernels with MI<m>x<n> tiles, MFMA), Triton's Inductor templates (triton_tem_: mm, bmm, conv via
  // tl.dot) and the AMD Triton flash-attention kernels (attn_fwd/attn_bwd).
  // cuBLAS names the instruction its kernel runs: "_ffma_" is plain fp32 FMA (TF32 off), however
  // "xmma" its family.
  if (n.find("_ffma") != std::string_view::npos) return false;
  static constexpr std::array<std::string_view, 30> kMarks = {
      "h884",      "h1688",     "s1688",   "i8816",    "hmma",        "imma",
      "xmma",      "wgmma",     "gmma",    "16816",    "1688gemm",    "_tc",
      "tensorop",  "TensorOp",  "tf32",    "bf16gemm", "f16gemm",     "cutlass_80_tensorop",
      "flash_fwd", "flash_bwd", "flash::", "fmha",     "nvjet",       "_MI16x16",
      "_MI32x32",  "_MI4x4",    "MFMA",    "mfma",     "triton_tem_", "attn_fwd"};
  for (std::string_view m : kMarks)
    if (n.find(m) != std::string_view::npos) return true;
  return false;
}

namespace {

std::string int3Text(const int32_t v[3]) {
  return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + "]";
}

struct Acc {
  KernelRow row;
  bool first = true;
  double blocksW = 0, warpsW = 0, occW = 0;  // duration-weighted sums
  int64_t blocksNs = 0, warpsNs = 0, occNs = 0;
  std::map<std::string, int64_t> ops;
};

}  // namespace

KernelView kernelView(const TraceSnapshot& snap, KernelGrouping grouping, bool untilLastStep) {
  const EventStore& s = *snap.store;
  KernelView v;
  int64_t bound = INT64_MAX;
  if (untilLastStep) {
    int steps = 0;
    int64_t lastEnd = INT64_MIN;
    for (const Event& e : s.events())
      if ((e.family == Family::UserAnnotation || e.family == Family::CpuOp) &&
          s.name(e).rfind("ProfilerStep#", 0) == 0) {
        ++steps;
        lastEnd = std::max(lastEnd, e.end());
      }
    if (steps >= 2) bound = lastEnd;
  }
  std::map<std::string, Acc> acc;
  std::vector<std::string> order;
  for (EventId id = 0; id < s.events().size(); ++id) {
    const Event& e = s.event(id);
    // Device activity by the one definition (device_activity.h: MTIA's work too), and CUPTI's sync records.
    const bool work = isDeviceWork(s, e);
    if (!work && e.family != Family::CudaSync) continue;
    if (bound != INT64_MAX) {
      const EventId call = launchOf(s, id);
      if (call == kNoEvent || s.event(call).start > bound) continue;
    }
    const auto a = s.argsOf(e);
    const std::string name(s.name(e));
    const GpuOwner owner = isGpuWork(e.family) ? gpuOwner(s, id) : GpuOwner{};
    const std::string op = owner.op != kNoEvent ? std::string(s.name(s.event(owner.op))) : std::string();
    std::string launch;
    if (grouping == KernelGrouping::NameAndLaunch && a)
      launch = "grid " + int3Text(a->grid) + " block " + int3Text(a->block);
    const std::string key = std::string(1, static_cast<char>('0' + static_cast<int>(e.family == Family::CudaSync))) +
                            name + '\x1f' + (grouping == KernelGrouping::NameAndOp ? op : "") + '\x1f' + launch;
    auto [it, fresh] = acc.try_emplace(key);
    Acc& x = it->second;
    KernelRow& r = x.row;
    if (fresh) {
      order.push_back(key);
      r.name = name;
      // An accelerator's work (MTIA) is listed as a kernel, its DMA transfers as copies.
      r.family = e.family != Family::Other ? e.family : isAcceleratorCopy(name) ? Family::GpuMemcpy : Family::Kernel;
      if (grouping == KernelGrouping::NameAndOp) r.op = op;
      r.launch = launch;
      r.minNs = e.dur;
      r.maxNs = e.dur;
      r.tensorCores = e.family == Family::Kernel && usesTensorCores(name);
    }
    ++r.calls;
    r.totalNs += e.dur;
    r.minNs = std::min(r.minNs, e.dur);
    r.maxNs = std::max(r.maxNs, e.dur);
    r.events.push_back(id);
    if (work) v.gpuWorkNs += e.dur;
    if (!op.empty()) x.ops[op] += e.dur;
    if (a && e.family == Family::Kernel) {
      const std::string g = int3Text(a->grid), b = int3Text(a->block);
      if (x.first) {
        r.grid = g, r.block = b, r.registersPerThread = a->registersPerThread, r.sharedMemory = a->sharedMemory;
      } else {
        if (r.grid != g) r.grid = "varies";
        if (r.block != b) r.block = "varies";
        if (r.registersPerThread != a->registersPerThread) r.registersPerThread = -2;
        if (r.sharedMemory != a->sharedMemory) r.sharedMemory = -2;
      }
      x.first = false;
      const double d = static_cast<double>(e.dur);
      if (a->blocksPerSm >= 0) x.blocksW += a->blocksPerSm * d, x.blocksNs += e.dur;
      if (a->warpsPerSm >= 0) x.warpsW += a->warpsPerSm * d, x.warpsNs += e.dur;
      if (a->occupancyPct >= 0) x.occW += a->occupancyPct * d, x.occNs += e.dur;
    }
  }
  for (const std::string& key : order) {
    Acc& x = acc[key];
    KernelRow& r = x.row;
    r.meanNs = static_cast<double>(r.totalNs) / static_cast<double>(r.calls);
    r.sharePct = r.family != Family::CudaSync && v.gpuWorkNs > 0
                     ? 100.0 * static_cast<double>(r.totalNs) / static_cast<double>(v.gpuWorkNs)
                     : 0;
    if (x.blocksNs > 0) r.blocksPerSm = x.blocksW / static_cast<double>(x.blocksNs);
    if (x.warpsNs > 0) r.warpsPerSm = x.warpsW / static_cast<double>(x.warpsNs);
    if (x.occNs > 0) r.occupancyPct = x.occW / static_cast<double>(x.occNs);
    std::vector<std::pair<int64_t, std::string>> ops;
    for (auto& [op, ns] : x.ops) ops.emplace_back(-ns, op);
    std::sort(ops.begin(), ops.end());
    for (auto& [ns, op] : ops) r.ops.push_back(op);
    v.rows.push_back(std::move(r));
  }
  std::stable_sort(v.rows.begin(), v.rows.end(), [](const KernelRow& a, const KernelRow& b) {
    const bool wa = a.family != Family::CudaSync, wb = b.family != Family::CudaSync;
    if (wa != wb) return wa;
    return a.totalNs > b.totalNs;
  });
  return v;
}

}  // namespace attnscope
