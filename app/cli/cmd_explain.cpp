#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "core/explain/explanation.h"
#include "core/snapshot/answer_table.h"
#include "core/snapshot/founding_answer.h"
#include "core/snapshot/trace_snapshot.h"

namespace attnscope::cli {

static const char* kExplainHelp =
    "usage: attnscope-cli explain TRACE [--format text|json] [--all] [-o FILE]\n"
    "\n"
    "Where each step's time went, on the CPU and the GPU. The steps are the trace's\n"
    "ProfilerStep#N (torch.profiler's schedule) when it has them; else our engine's steps; else\n"
    "its record_function scopes (the ops between two scopes are one step; the attention\n"
    "block's QK MATMUL, SCALE, SOFTMAX PASS, AV MATMUL when its ops are there); else the whole\n"
    "trace. Per step: host window, the GPU work it launched (by correlation, from any thread)\n"
    "split into kernels, copies, memsets and communication, GPU busy and idle time inside its\n"
    "window, sync waits, and spill (work launched here that ran in a later step, and the\n"
    "reverse). Sync waits grouped by cause; the accounting ledger (with why torch's Self CUDA\n"
    "total differs from the GPU's work); findings in plain words, ranked by the time at stake,\n"
    "with the ids of the events behind them (the JSON's \"events\" object gives each id's name,\n"
    "ts and dur as in the trace). JSON schema: docs/explain-schema.md.\n"
    "\n"
    "  --format text|json      output format (default text)\n"
    "  --all                   everything: every step, launch, group and finding (text), and\n"
    "                          every finding at full length (JSON). By default the text has at\n"
    "                          most 200 lines of at most 400 characters, and the JSON at most\n"
    "                          100 findings of at most 1,000 characters (its lists are complete)\n"
    "  -o, --output FILE       write to FILE atomically instead of stdout\n";

int cmdExplain(Args& a) {
  if (a.wantsHelp()) {
    std::cout << kExplainHelp << kLimitsHelp;
    return kExitOk;
  }
  const bool json = formatOption(a, "explain", {"text", "json"}) == "json";
  ExplainOutputOptions opt;
  opt.all = a.flag("--all");
  auto out = a.value("--output", "-o");
  const cache::OpenOptions options = openOptions(a);
  const auto pos = a.positionals(1, 1);
  const auto snap = openOrThrow(pos[0], options);
  const EventStore& store = *snap->store;
  const Explanation& an = *snap->explanation;
  if (const std::optional<AnswerTable> answer = answerTable(*snap)) {
    opt.answerLines = answerTableLines(*answer);
    opt.answerJson = answerTableJson(*answer);
  }
  if (snap->answer) {
    opt.foundingJson = foundingAnswerJson(*snap->answer);
    // An engine run on the CPU opens with what it shows (which steps torch's table has a row for),
    // not with "CPU only", which every step of such a run is.
    if (snap->answer->cpuRun) opt.headline = snap->answer->headline;
  }
  emit(out, json ? explainJson(store, an, opt) : explainText(store, an, opt));
  return kExitOk;
}

}  // namespace attnscope::cli
