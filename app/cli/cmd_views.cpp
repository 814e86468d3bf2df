// overview, kernels, memory, modules: the views of core/views, one command each.
#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/views/views.h"

namespace attnscope::cli {

static const char* kOverviewHelp =
    "usage: attnscope-cli overview TRACE [--format text|json|csv] [-o FILE]\n"
    "\n"
    "Each step (ProfilerStep#N, else as explain defines steps) split into communication,\n"
    "kernel, memcpy, memset, CPU runtime, DataLoader, other CPU and GPU idle: each moment goes\n"
    "to the first part that applies, so the parts add up to the step's span exactly; GPU\n"
    "utilization, and the estimated SM efficiency and achieved occupancy where the trace\n"
    "carries them (Kineto's \"blocks per SM\", \"est. achieved occupancy %\").\n";

static const char* kKernelsHelp =
    "usage: attnscope-cli kernels TRACE [--group-by name|op|launch] [--until-last-step] [--limit N]\n"
    "                              [--format text|json|csv] [-o FILE]\n"
    "\n"
    "GPU work by kernel name (copies and memsets too; CUDA sync records last, they are waits):\n"
    "calls, total, mean, min, max, share of GPU time, grid, block, registers per thread,\n"
    "shared memory, blocks per SM, est. achieved occupancy, Tensor Cores (by name), and the\n"
    "ops that launched it (by correlation). --group-by op: per kernel and launching op;\n"
    "launch: per kernel, grid and block. --until-last-step: HTA's scope (with two or more\n"
    "ProfilerStep#N, only the work launched by the end of the last step).\n";

static const char* kMemoryHelp =
    "usage: attnscope-cli memory TRACE [--limit N] [--format text|json|csv] [-o FILE]\n"
    "\n"
    "From the [memory] events (profile_memory=True): per device the allocated and reserved\n"
    "curve, the peak and what was live at it (the allocations made in the trace and not yet\n"
    "freed, by the op that made them, and what was allocated before the trace began: they add\n"
    "up to the peak), and every allocation (size, op, allocated, freed, lifetime). CSV is\n"
    "the allocation table; JSON has everything.\n";

static const char* kModulesHelp =
    "usage: attnscope-cli modules TRACE [--limit N] [--format text|json|csv] [-o FILE]\n"
    "\n"
    "The nn.Module tree (python_function events of with_stack / with_modules traces): per\n"
    "module path, calls, host time and the GPU time launched while it ran (by correlation from\n"
    "its thread's launches, so a module is never zero because nothing was wrapped), with self\n"
    "figures less the modules inside it.\n";

int cmdView(const std::string& view, Args& a) {
  if (a.wantsHelp()) {
    std::cout << (view == "overview"  ? kOverviewHelp
                  : view == "kernels" ? kKernelsHelp
                  : view == "memory"  ? kMemoryHelp
                                      : kModulesHelp)
              << kLimitsHelp;
    return kExitOk;
  }
  const std::string format = formatOption(a, view, {"text", "json", "csv"});
  KernelGrouping grouping = KernelGrouping::Name;
  if (view == "kernels")
    if (auto g = a.value("--group-by")) {
      if (*g == "name")
        grouping = KernelGrouping::Name;
      else if (*g == "op")
        grouping = KernelGrouping::NameAndOp;
      else if (*g == "launch")
        grouping = KernelGrouping::NameAndLaunch;
      else
        throw UsageError("kernels: --group-by takes name, op or launch, got '" + *g + "'");
    }
  size_t limit = view == "memory" ? 20 : 0;
  if (view != "overview")
    if (auto l = a.value("--limit")) {
      try {
        limit = static_cast<size_t>(std::stoull(*l));
      } catch (const std::exception&) {
        throw UsageError(view + ": --limit takes a number, got '" + *l + "'");
      }
    }
  const bool untilLastStep = view == "kernels" && a.flag("--until-last-step");
  auto out = a.value("--output", "-o");
  const cache::OpenOptions options = openOptions(a, {.explain = view == "overview", .shapeTables = false});
  const auto pos = a.positionals(1, 1);
  const auto snap = openOrThrow(pos[0], options);
  std::string text;
  if (view == "overview") {
    const OverviewView v = overviewView(*snap);
    text = format == "json" ? overviewViewJson(v) : format == "csv" ? overviewViewCsv(v) : overviewViewText(v);
  } else if (view == "kernels") {
    const KernelView v = kernelView(*snap, grouping, untilLastStep);
    text = format == "json" ? kernelViewJson(v) : format == "csv" ? kernelViewCsv(v) : kernelViewText(v, limit);
  } else if (view == "memory") {
    const MemoryView v = memoryView(*snap);
    text = format == "json" ? memoryViewJson(v) : format == "csv" ? memoryViewCsv(v) : memoryViewText(v, limit);
  } else {
    const ModuleView v = moduleView(*snap);
    text = format == "json" ? moduleViewJson(v) : format == "csv" ? moduleViewCsv(v) : moduleViewText(v, limit);
  }
  emit(out, text);
  return kExitOk;
}

}  // namespace attnscope::cli
