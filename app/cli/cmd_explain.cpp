#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "core/explain/explanation.h"
#include "core/snapshot/trace_snapshot.h"

namespace attnscope::cli {

static const char* kExplainHelp =
    "usage: attnscope-cli explain TRACE [--format text|json] [-o FILE]\n"
    "\n"
    "Per step (user annotations; inside the outermost annotation, the top-level ops no\n"
    "annotation covers): host window, the GPU work it launched (by correlation) with its GPU\n"
    "window and sum, GPU busy time inside the host window, launch latencies, sync waits.\n"
    "Every synchronizing call with the op chain that issued it and the GPU work it awaited;\n"
    "the accounting ledger; verdicts in plain words with the ids of the events behind them\n"
    "(the JSON's \"events\" object gives each id's name, ts and dur as in the trace).\n"
    "JSON schema: docs/explain-schema.md.\n"
    "\n"
    "  --format text|json      output format (default text)\n"
    "  -o, --output FILE       write to FILE atomically instead of stdout\n";

int cmdExplain(Args& a) {
  if (a.wantsHelp()) {
    std::cout << kExplainHelp << kLimitsHelp;
    return kExitOk;
  }
  const bool json = formatOption(a, "explain", {"text", "json"}) == "json";
  auto out = a.value("--output", "-o");
  const ReaderLimits limits = readerLimits(a);
  const auto pos = a.positionals(1, 1);
  const EventStore store = loadOrThrow(pos[0], limits);
  const auto snap = snapshotOf(store);
  const Explanation& an = *snap->explanation;
  emit(out, json ? explainJson(store, an) : explainText(store, an));
  return kExitOk;
}

}  // namespace attnscope::cli
