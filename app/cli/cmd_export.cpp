#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "core/cache/parquet_export.h"

namespace attnscope::cli {

static const char* kExportHelp =
    "usage: attnscope-cli export TRACE --parquet DIR\n"
    "\n"
    "The trace as Parquet tables shaped like Perfetto's trace processor's, for DuckDB, pandas,\n"
    "Polars or Spark (docs/query.md shows queries):\n"
    "  slice         one row per event: id, ts, dur (ns), track_id, category, name, depth,\n"
    "                parent_id, arg_set_id, and torch's external_id, correlation, launch_id (GPU\n"
    "                work: its runtime call), op_id and op (GPU work: the op that launched it;\n"
    "                host events: the op they ran in), step, cause (the diagnosis's, at its start)\n"
    "  thread_track  the CPU threads and GPU streams (id = slice.track_id)\n"
    "  counter, counter_track  memory allocated and reserved per device\n"
    "  flow          launch -> GPU work (ac2g) and forward -> backward (fwdbwd) links\n"
    "  args          every event argument: arg_set_id, key, int/string/real value\n"
    "  step, step_cause  the steps and each step's time by cause\n"
    "Files are written aside and renamed; DIR is created when missing.\n"
    "\n"
    "  --parquet DIR             the folder to write the tables into\n";

int cmdExport(Args& a) {
  if (a.wantsHelp()) {
    std::cout << kExportHelp << kLimitsHelp;
    return kExitOk;
  }
  const auto dir = a.value("--parquet");
  if (!dir || dir->empty()) throw UsageError("export: --parquet DIR is required (the folder for the tables)");
  const cache::OpenOptions options = openOptions(a, {.explain = true, .shapeTables = false});
  const auto pos = a.positionals(1, 1);
  const auto snap = openOrThrow(pos[0], options);
  const cache::ExportOutcome out = cache::exportParquet(*snap, *dir);
  if (!out.ok) throw UsageError("export: " + out.error);
  std::cerr << "attnscope-cli: " << pos[0] << ": " << out.rows << " slices and their tables written to " << *dir
            << "\n";
  return kExitOk;
}

}  // namespace attnscope::cli
