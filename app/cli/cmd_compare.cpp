#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "core/explain/compare.h"
#include "core/snapshot/trace_snapshot.h"

namespace attnscope::cli {

static const char* kCompareHelp =
    "usage: attnscope-cli compare A B [options]\n"
    "\n"
    "Two traces of the same workload (e.g. different steps wrapped, with and without a\n"
    "sync): table rows joined by name (and input shapes with --group-by shape), steps\n"
    "joined by name, sync waits joined by API and issuing ops, each with A, B and A-B;\n"
    "and a perturbation summary: host time added by scopes, how sync waits moved and why,\n"
    "CUDA-event markers.\n"
    "\n"
    "  --format text|json|csv  output format (default text); csv is long form:\n"
    "                          section,key,metric,a,b,delta\n"
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
  auto out = a.value("--output", "-o");
  const ReaderLimits limits = readerLimits(a);
  const auto pos = a.positionals(2, 2);
  const EventStore sa = loadOrThrow(pos[0], limits);
  const EventStore sb = loadOrThrow(pos[1], limits);
  const Comparison c = compareTraces(*snapshotOf(sa), *snapshotOf(sb), opt);
  emit(out, format == "json" ? compareJson(c) : format == "csv" ? compareCsv(c) : compareText(c));
  return kExitOk;
}

}  // namespace attnscope::cli
