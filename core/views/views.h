// The views the TensorBoard profiler plugin had and its users lost, computed from a snapshot:
// an overview of each step's time, the kernels, memory and the nn.Module tree. Attribution is by
// launch (correlation), as everywhere in attnscope, never by time overlap. `attnscope-cli
// overview|kernels|memory|modules` print them; the app shows them as tabs next to the table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/store/event_store.h"

namespace attnscope {

struct TraceSnapshot;

// ---- Kernels --------------------------------------------------------------------------------

enum class KernelGrouping : uint8_t {
  Name,          // one row per kernel name
  NameAndOp,     // per kernel name and the op that launched it
  NameAndLaunch  // per kernel name, grid and block
};

struct KernelRow {
  std::string name;
  std::string op;                  // NameAndOp: the launching op ("" when none is linked)
  std::string launch;              // NameAndLaunch: "grid [x, y, z] block [x, y, z]"
  Family family = Family::Kernel;  // Kernel, GpuMemcpy, GpuMemset, or CudaSync (a wait record, not work)
  uint64_t calls = 0;
  int64_t totalNs = 0, minNs = 0, maxNs = 0;
  double meanNs = 0;
  double sharePct = 0;      // of the trace's GPU work (kernels, copies, memsets); 0 for sync records
  std::string grid, block;  // the launch shape when every call had the same one, "varies" otherwise
  int32_t registersPerThread = -1, sharedMemory = -1;           // -1: not in the trace; -2: varies
  double blocksPerSm = -1, warpsPerSm = -1, occupancyPct = -1;  // duration-weighted means; -1: not in the trace
  bool tensorCores = false;
  std::vector<std::string> ops;  // the ops that launched it, by GPU time, largest first
  std::vector<EventId> events;
};

struct KernelView {
  std::vector<KernelRow> rows;  // GPU work by total time, largest first, then sync records
  int64_t gpuWorkNs = 0;        // the sum of kernels, copies and memsets
};

// Tensor Cores, by name (the plugin's rule, extended): a kernel whose name carries one of the MMA
// families (h884, h1688, s1688, i8816, hmma, imma, xmma, wgmma, gmma, tf32 tensor op, cutlass
// tensorop, "_tc") or cuDNN/cuBLAS Tensor Core variants; FlashAttention, Hopper's nvjet, AMD's MFMA
// (hipBLASLt's MI tiles) and Triton's Inductor templates (kernels.cpp lists them).
bool usesTensorCores(std::string_view kernelName);
// untilLastStep: HTA's scope. With two or more ProfilerStep#N, only the GPU work whose launching call
// (same correlation) started at or before the end of the last step (work with no launching call is
// left out too); with fewer, everything.
KernelView kernelView(const TraceSnapshot& snap, KernelGrouping grouping = KernelGrouping::Name,
                      bool untilLastStep = false);

// ---- Memory ---------------------------------------------------------------------------------

struct MemoryPoint {
  int64_t t = 0;
  int64_t allocated = 0;  // Total Allocated after the event
  int64_t reserved = 0;   // Total Reserved after the event (-1: not in the trace)
  EventId event = kNoEvent;
};

struct Allocation {
  int64_t bytes = 0;
  int64_t allocatedNs = 0;
  int64_t freedNs = -1;  // -1: not freed inside the trace
  std::string op;        // the op running on its thread when it was made ("" when none)
  EventId event = kNoEvent;
  EventId freeEvent = kNoEvent;
};

struct DeviceMemory {
  int32_t deviceType = -1;  // 0 CPU, 1 CUDA (c10::DeviceType)
  int32_t device = -1;
  std::string label;  // "GPU 0", "CPU"
  std::vector<MemoryPoint> curve;
  int64_t peakAllocated = 0;
  int64_t peakNs = 0;
  int64_t peakReserved = -1;
  // At the peak: the allocations made inside the trace and not yet freed, and what was already
  // allocated when the trace began; they add up to peakAllocated.
  std::vector<Allocation> liveAtPeak;  // largest first
  int64_t allocatedBeforeTrace = 0;
  // Older traces (2021-era Kineto) carry neither Total Allocated nor block addresses: the curve is
  // then the net of the Bytes seen since the trace began, and what was live at the peak is unknown
  // (liveAtPeak empty, allocatedBeforeTrace -1).
  bool totalsInTrace = true;
  bool addressesInTrace = true;
  std::vector<Allocation> allocations;  // every allocation, in time order
};

struct MemoryView {
  std::vector<DeviceMemory> devices;  // GPUs by index, then CPU
  uint64_t events = 0;
  int64_t originNs = 0;  // the trace's first timestamp: text shows times from it
};

MemoryView memoryView(const TraceSnapshot& snap);

// ---- Overview -------------------------------------------------------------------------------

// Each moment of a step goes to one part, the first that applies: GPU communication, kernel,
// memcpy, memset (any GPU running it), CPU runtime (a CUDA/HIP runtime or driver call on a CPU
// thread), DataLoader (an enumerate(DataLoader) op), other CPU (any other op), else GPU idle
// (neither the GPU nor an op on the CPU was busy). The parts add up to the step's span exactly.
enum class OverviewPart : uint8_t { Communication, Kernel, Memcpy, Memset, Runtime, DataLoader, OtherCpu, Idle, Count };
inline constexpr int kOverviewParts = static_cast<int>(OverviewPart::Count);
std::string_view overviewPartName(OverviewPart p);   // "communication", "kernel", ... (JSON keys)
std::string_view overviewPartLabel(OverviewPart p);  // the user's words

struct OverviewStep {
  std::string name;
  int64_t startNs = 0, endNs = 0;
  int64_t parts[kOverviewParts] = {};
  double gpuUtilizationPct = 0;  // GPU parts / span
  double smEfficiencyPct = -1;   // kernel-time-weighted min(blocks per SM, 1), where the trace has it
  double occupancyPct = -1;      // kernel-time-weighted est. achieved occupancy, where the trace has it
  int64_t spanNs() const { return endNs - startNs; }
};

struct OverviewView {
  std::string stepSource;           // as explain's
  std::vector<OverviewStep> steps;  // explain's steps
  OverviewStep whole;               // all the steps together (sums; percentages over the sum)
};

OverviewView overviewView(const TraceSnapshot& snap);

// ---- Modules --------------------------------------------------------------------------------

struct ModuleNode {
  std::string name;  // "nn.Module: Linear_0" without the prefix: "Linear_0"
  std::string path;  // names from the root, joined by " > "
  int parent = -1;   // index into ModuleView::nodes
  int depth = 0;
  uint64_t calls = 0;
  int64_t hostNs = 0;      // the module's host time (the calls' durations added)
  int64_t selfHostNs = 0;  // less that of the modules inside it
  int64_t gpuNs = 0;       // GPU work launched while it ran, on its thread (by correlation)
  int64_t selfGpuNs = 0;   // less that of the modules inside it
  uint64_t gpuActivities = 0;
  std::vector<EventId> events;  // its calls
};

struct ModuleView {
  bool present = false;           // the trace has nn.Module python_function events
  std::vector<ModuleNode> nodes;  // depth-first, a parent before its children, children in first-call order
};

ModuleView moduleView(const TraceSnapshot& snap);

// ---- Output (text, JSON, CSV) ---------------------------------------------------------------

std::string kernelViewText(const KernelView& v, size_t limit = 0);
std::string kernelViewJson(const KernelView& v);
std::string kernelViewCsv(const KernelView& v);
std::string memoryViewText(const MemoryView& v, size_t limit = 20);
std::string memoryViewJson(const MemoryView& v);
std::string memoryViewCsv(const MemoryView& v);  // the allocation table
std::string overviewViewText(const OverviewView& v);
std::string overviewViewJson(const OverviewView& v);
std::string overviewViewCsv(const OverviewView& v);
std::string moduleViewText(const ModuleView& v, size_t limit = 0);
std::string moduleViewJson(const ModuleView& v);
std::string moduleViewCsv(const ModuleView& v);

}  // namespace attnscope
