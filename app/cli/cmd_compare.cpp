#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "core/explain/compare.h"
#include "core/snapshot/trace_snapshot.h"

namespace attnscope::cli {

static const char* kCompareHelp =
    "usage: attnscope-cli compare A B [options]\n"
    "\n"
    "Two traces of the same workload (two runs of a training loop, or the attention block\n"
    "with different steps wrapped). Every difference is B - A.\n"
    "  steps     ProfilerStep#N of both paired in time order (else steps joined by name);\n"
    "            per step, the median [p25-p75] of host time, GPU work launched, GPU busy,\n"
    "            idle, sync wait, communication and spill, then step by step\n"
    "  changes   ranked by the time at stake per step: ops (Self CPU; the DataLoader's\n"
    "            single- and multi-process iterators are one role), kernels/copies/memsets\n"
    "            by name (GPU time), sync waits by cause (op chain); what appeared and\n"
    "            disappeared. A change smaller than the step-to-step spread (p25-p75) in\n"
    "            both traces is called noise.\n"
    "  perturbation   host time added by scopes, how sync waits moved and why (one line\n"
    "            per wait only when there are few), CUDA-event markers.\n"
    "By default the text has at most 200 lines of at most 400 characters and the JSON at\n"
    "most 100 findings (it keeps every row, step and sync wait).\n"
    "\n"
    "  --format text|json|csv  output format (default text); csv is long form:\n"
    "                          section,key,metric,a,b,delta\n"
    "  --all                   lift the bounds (every change, step pair and row in the text)\n"
    "  --attribution torch|corrected   how the rows attribute GPU time (default torch)\n"
    "  --group-by name|shape   row key (default name)\n"
    "  -o, --output FILE       write to FILE atomically instead of stdout\n";

int cmdCompare(Args& a) {
  if (a.wantsHelp()) {
    std::cout << kCompareHelp << kLimitsHelp;
    return kExitOk;
  }
  const std::string format = formatOption(a, "compare", {"text", "json", "csv"});
  CompareOptions opt;
  if (auto v = a.value("--attribution")) {
    if (*v == "torch")
      opt.attribution = Attribution::Torch;
    else if (*v == "corrected")
      opt.attribution = Attribution::Corrected;
    else
      throw UsageError("compare: --attribution takes torch or corrected, got '" + *v + "'");
  }
  if (auto g = a.value("--group-by")) {
    if (*g == "name")
      opt.groupBy = GroupBy::Name;
    else if (*g == "shape")
      opt.groupBy = GroupBy::InputShape;
    else
      throw UsageError("compare: --group-by takes name or shape, got '" + *g + "'");
  }
  CompareOutputOptions bounds;
  bounds.all = a.flag("--all");
  auto out = a.value("--output", "-o");
  const cache::OpenOptions options = openOptions(a);
  const auto pos = a.positionals(2, 2);
  const auto sa = openOrThrow(pos[0], options);
  const auto sb = openOrThrow(pos[1], options);
  const Comparison c = compareTraces(*sa, *sb, opt);
  emit(out, format == "json" ? compareJson(c, bounds) : format == "csv" ? compareCsv(c) : compareText(c, bounds));
  return kExitOk;
}

}  // namespace attnscope::cli
