#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "core/ranks/job.h"

namespace attnscope::cli {

static const char* kRanksHelp =
    "usage: attnscope-cli ranks PATH... [--format text|json] [-o FILE]\n"
    "\n"
    "A distributed job's traces read together, one per rank. PATH is a trace file or a folder (its\n"
    "*.json / *.json.gz files with 'trace' in the name). Each file's rank comes from the trace's\n"
    "distributedInfo.rank, else from its name (rank-3, rank3, worker3); world size and process groups\n"
    "from distributedInfo. Missing ranks, a rank claimed twice and files from different jobs are said.\n"
    "\n"
    "Collectives (gloo's c10d ops with their gloo worker spans; NCCL/RCCL kernels with the op that\n"
    "enqueued them) are matched across ranks by Comms Id, else by process group and Seq, else by their\n"
    "order in the group checked against name and size. Each rank's clock offset is estimated from the\n"
    "matched collectives' ends (they end together on every rank) and applied where it stands out of its\n"
    "uncertainty; every cross-rank figure is on that aligned clock. Then: per rank and step, the step\n"
    "time, compute, exposed and overlapped communication, the time it waited for the last rank to\n"
    "arrive and its own top cause; the stragglers (the ranks that make the others wait, in which steps,\n"
    "by how much, and what they were doing before they arrived); the hangs (a collective some ranks\n"
    "entered and another never issued). The first line says what costs the job most.\n"
    "\n"
    "  --format text|json      output format (default text)\n"
    "  -o, --output FILE       write to FILE atomically instead of stdout\n";

int cmdRanks(Args& a) {
  if (a.wantsHelp()) {
    std::cout << kRanksHelp << kLimitsHelp;
    return kExitOk;
  }
  const bool json = formatOption(a, "ranks", {"text", "json"}) == "json";
  auto out = a.value("--output", "-o");
  const ReaderLimits limits = readerLimits(a);
  const auto pos = a.positionals(1, 100000);
  std::string error;
  const std::vector<std::string> files = ranks::jobFiles(pos, &error);
  if (!error.empty()) throw UsageError("ranks: " + error);
  std::vector<std::string> warnings;
  const ranks::JobReport r = ranks::openJob(files, limits, &error, &warnings);
  if (!error.empty()) throw UsageError(error);
  for (const std::string& w : warnings) std::cerr << "attnscope-cli: warning: " << w << "\n";
  emit(out, json ? ranks::jobJson(r) : ranks::jobText(r));
  return kExitOk;
}

}  // namespace attnscope::cli
