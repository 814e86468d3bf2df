#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "core/explain/why.h"
#include "core/snapshot/trace_snapshot.h"

namespace attnscope::cli {

static const char* kWhyHelp =
    "usage: attnscope-cli why TRACE NAME [--format text|json] [-o FILE]\n"
    "\n"
    "NAME is a row as the table shows it (\"ProfilerStep*\", a kernel's name, or grouped by\n"
    "input shape \"aten::bmm [[128, 1024, 64], [128, 64, 1024]]\") or any event's name.\n"
    "What the row aggregates, and where its GPU time is: its torch and corrected table values, the GPU\n"
    "work it launched itself, that of the ops inside it, and if there is none, where the GPU\n"
    "work near it went (another op, another thread, the profiler's overhead event, unlinked).\n"
    "For a gpu_user_annotation or kernel name: the span and the work inside it, or who\n"
    "launched it.\n"
    "\n"
    "  --format text|json      output format (default text)\n"
    "  -o, --output FILE       write to FILE atomically instead of stdout\n";

int cmdWhy(Args& a) {
  if (a.wantsHelp()) {
    std::cout << kWhyHelp << kLimitsHelp;
    return kExitOk;
  }
  const bool json = formatOption(a, "why", {"text", "json"}) == "json";
  auto out = a.value("--output", "-o");
  cache::OpenOptions options = openOptions(a);
  const auto pos = a.positionals(2, 2);
  // A row as the table shows it (ProfilerStep*, a name with its input shapes), else any event name.
  const bool shapes = pos[1].find(" [") != std::string::npos;
  // With its explanation: the row says what the diagnosis blamed while its calls ran.
  options.snapshot = {.explain = true, .shapeTables = shapes};
  const auto snap = openOrThrow(pos[0], options);
  const EventStore& store = *snap->store;
  const WhyReport r = whyShownRow(*snap, pos[1]);
  if (!r.found)
    throw UsageError(pos[0] + ": no table row or event named '" + pos[1] +
                     "' (a row grouped by input shape is 'NAME [[shapes]]', as the table shows it)");
  emit(out, json ? whyJson(store, r) : whyText(store, r));
  return kExitOk;
}

}  // namespace attnscope::cli
