#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "core/explain/explanation.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/store/trace_info.h"

namespace attnscope::cli {

static const char* kInfoHelp =
    "usage: attnscope-cli info TRACE [--format text|json] [-o FILE]\n"
    "\n"
    "What a trace holds: events per family, lanes (CPU threads, GPU streams), time span,\n"
    "devices, and the events that could not be loaded, counted by kind with the byte\n"
    "offset of the first one; the accounting ledger (torch's Self CUDA sums vs the GPU\n"
    "activity sum, union and wall span; double counting; unlinked GPU work; GPU work owned\n"
    "by the profiler's overhead events).\n";

int cmdInfo(Args& a) {
  if (a.wantsHelp()) {
    std::cout << kInfoHelp << kLimitsHelp;
    return kExitOk;
  }
  bool json = false;
  if (auto f = a.value("--format")) {
    if (*f == "json")
      json = true;
    else if (*f != "text")
      throw UsageError("info: --format takes text or json, got '" + *f + "'");
  }
  auto out = a.value("--output", "-o");
  const cache::OpenOptions options = openOptions(a, {.explain = false, .shapeTables = false});
  const auto pos = a.positionals(1, 1);
  const auto snap = openOrThrow(pos[0], options);
  const EventStore& store = *snap->store;
  const Ledger ledger = snap->explanation ? snap->explanation->ledger : computeLedger(*snap);
  emit(out, json ? traceInfoJson(store, "\"ledger\": " + ledgerJson(store, ledger, true))
                 : traceInfoText(store) + ledgerText(ledger));
  return kExitOk;
}

}  // namespace attnscope::cli
