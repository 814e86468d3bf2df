// A rank's summary (rank_summary.h) cached next to its trace as Arrow IPC files (arrow_ipc.h), one per
// table: `<trace>.attnscope/rank.arrow` (who the rank is), steps.arrow, step_phases.arrow,
// collectives.arrow, collective_before.arrow, process_groups.arrow, notes.arrow. Every file's schema
// metadata holds the cache version and the trace's size and mtime, so a changed trace is summarised
// again; rank.arrow is written last. When the trace's folder is read-only (or not writable), the files
// go to the user cache instead: $ATTNSCOPE_CACHE_DIR, else $XDG_CACHE_HOME/attnscope/ranks, else
// ~/.cache/attnscope/ranks, in a folder named by a hash of the trace's full path. pandas, pyarrow and
// DuckDB read the files with no code of ours (docs/architecture.md lists the columns).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/ranks/arrow_ipc.h"
#include "core/ranks/rank_summary.h"
#include "core/read/trace_reader.h"

namespace attnscope::ranks {

// 2: engine traces summarised by their ProfilerSteps; 3: the rank's host and truncation
inline constexpr const char* kSummaryCacheVersion = "4";

struct SummaryCacheDir {
  std::string dir;        // the folder the summary's files are (or go) in
  bool fallback = false;  // the user cache, the trace's folder being read-only
  std::string why;        // fallback: why, in words naming the folder
};

// Where `trace`'s summary is cached (the folder is not created).
SummaryCacheDir summaryCacheDir(const std::string& trace);

// The trace's size and modification time, as the cache records them; false when it cannot be read.
struct TraceStamp {
  int64_t size = -1;
  int64_t mtimeNs = -1;
};
bool traceStamp(const std::string& trace, TraceStamp* out);

// The summary as tables (file name without ".arrow", table), each with the stamp in its metadata; and
// the summary read back from them (false with `error` when a table or column is missing).
std::vector<std::pair<std::string, ipc::Table>> summaryTables(const RankSummary& s, const TraceStamp& stamp);
bool summaryFromTables(const std::vector<std::pair<std::string, ipc::Table>>& tables, RankSummary* out,
                       std::string* error);

// Writes the summary's files to summaryCacheDir(trace) (creating the folder). `dir` gets the folder,
// `note` a sentence when the user cache was used. False with `error` (naming the path) on failure.
bool writeSummaryCache(const std::string& trace, const RankSummary& s, std::string* dir, std::string* note,
                       std::string* error);

// The cached summary of `trace`, when one is there and its stamp matches the trace now; its `file` is
// set to `trace`. False with `why` (missing, stale, unreadable) otherwise.
bool readSummaryCache(const std::string& trace, RankSummary* out, std::string* why);

// Loads `trace` and summarises it (one trace's events in memory, dropped on return). False with `error`
// naming the file when it cannot be read; `warning` gets the reader's warning, if any.
bool summarizeFile(const std::string& trace, const ReaderLimits& limits, RankSummary* out, std::string* error,
                   std::string* warning);

}  // namespace attnscope::ranks
