#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "core/cache/trace_cache.h"
#include "core/tables/key_averages.h"
#include "core/tables/table_format.h"

namespace attnscope::cli {

static const char* kTableHelp =
    "usage: attnscope-cli table TRACE [options]\n"
    "\n"
    "torch.profiler's key_averages() table for a trace (Chrome JSON, .json or .json.gz),\n"
    "computed the way PyTorch 2.11 computes it.\n"
    "\n"
    "  --group-by name|shape   rows per name, or per name and input shapes (default name)\n"
    "  --attribution torch|corrected\n"
    "                          how GPU time is attributed. torch: as torch does, artifacts\n"
    "                          included. corrected: each kernel/copy/memset is self time of\n"
    "                          the op that launched it (runtime call by correlation -> its\n"
    "                          op); the profiler's own events own nothing; gpu_user_annotation\n"
    "                          spans and kernel rows show totals only; GPU work with no\n"
    "                          launching op is the row [unlinked GPU work]. The Self CUDA\n"
    "                          column then adds up to the GPU busy sum exactly, and the\n"
    "                          profiler's own CPU work comes out of the op it interrupted\n"
    "                          (Self CPU counts each thread's time once).\n"
    "  --sort COLUMN           self_cpu, cpu_total, self_device (default; self_cpu when the trace has no\n"
    "                          device time), device_total,\n"
    "                          calls, cpu_mem, ... or a header such as \"Self CUDA %\"\n"
    "  --asc                   ascending order (default descending)\n"
    "  --limit N               print the first N rows (default all)\n"
    "  --format text|csv|json|md   output format (default text, like torch)\n"
    "  -o, --output FILE       write to FILE atomically instead of stdout\n";

int cmdTable(Args& a) {
  if (a.wantsHelp()) {
    std::cout << kTableHelp << kLimitsHelp;
    return kExitOk;
  }
  GroupBy group = GroupBy::Name;
  if (auto g = a.value("--group-by")) {
    if (*g == "name")
      group = GroupBy::Name;
    else if (*g == "shape" || *g == "input-shape" || *g == "shapes")
      group = GroupBy::InputShape;
    else
      throw UsageError("table: --group-by takes name or shape, got '" + *g + "'");
  }
  Attribution attribution = Attribution::Torch;
  if (auto v = a.value("--attribution")) {
    if (*v == "torch")
      attribution = Attribution::Torch;
    else if (*v == "corrected")
      attribution = Attribution::Corrected;
    else
      throw UsageError("table: --attribution takes torch or corrected, got '" + *v + "'");
  }
  TableOptions opt;
  bool sortGiven = false;
  if (auto s = a.value("--sort")) {
    auto c = parseColumn(*s);
    if (!c) throw UsageError("table: unknown column '" + *s + "' for --sort (see --help)");
    opt.sortBy = *c;
    sortGiven = true;
  }
  opt.ascending = a.flag("--asc");
  if (auto n = a.number("--limit")) opt.limit = *n;
  if (auto f = a.value("--format")) {
    if (*f == "text")
      opt.format = TableFormat::Text;
    else if (*f == "csv")
      opt.format = TableFormat::Csv;
    else if (*f == "json")
      opt.format = TableFormat::Json;
    else if (*f == "md" || *f == "markdown")
      opt.format = TableFormat::Markdown;
    else
      throw UsageError("table: --format takes text, csv, json or md, got '" + *f + "'");
  }
  auto out = a.value("--output", "-o");
  const cache::OpenOptions options = openOptions(a);
  const auto pos = a.positionals(1, 1);
  std::shared_ptr<const KeyAverages> table;
  if (cache::available() && options.cache != cache::CacheUse::Off && cache::defaultContentLimits(options.limits)) {
    // The cache's table (the first open builds the whole snapshot, for the cache).
    table = openOrThrow(pos[0], options)->table(attribution, group);
  } else {
    // No cache: the one table this command prints, nothing else.
    const EventStore store = loadOrThrow(pos[0], options.limits);
    table = std::make_shared<const KeyAverages>(computeKeyAverages(store, group, attribution));
  }
  const KeyAverages& ka = *table;
  // A trace with no device time (a CPU-only profile): its default order is by Self CPU, not by zeros.
  if (!sortGiven && ka.sumSelfDeviceNs == 0) opt.sortBy = Column::SelfCpu;
  emit(out, renderTable(ka, opt));
  return kExitOk;
}

}  // namespace attnscope::cli
