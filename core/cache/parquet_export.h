// A trace as Parquet tables shaped like Perfetto's trace processor's (slice, thread_track, counter,
// counter_track, flow, args), with torch's columns on each slice and the steps with their causes, for
// DuckDB, pandas, Polars or Spark (`attnscope-cli export TRACE --parquet DIR`; docs/query.md).
//
//   slice.parquet        one row per event: id, ts, dur (ns, the trace's clock), track_id, category
//                        (cpu_op, kernel, cuda_runtime, ...), name, depth, parent_id, arg_set_id;
//                        torch's: external_id, correlation, launch_id (GPU work: its runtime call),
//                        op_id and op (GPU work: the op that launched it; anything on a CPU thread: the
//                        op it ran in; an op: the op it ran in, if any), step (the step that launched it,
//                        or whose host window it started in), cause (the diagnosis's cause at its start)
//   thread_track.parquet id, name, type (thread, gpu_stream, other), pid, tid (a GPU's: device, stream)
//   counter_track.parquet, counter.parquet   memory allocated and reserved per device, after each event
//   flow.parquet         id, slice_out, slice_in, flow_id, kind (ac2g: launch -> GPU work, fwdbwd)
//   args.parquet         arg_set_id, flat_key, key, int_value, string_value, real_value, value_type
//   step.parquet         the explanation's steps (slice.step): id, name, ts, dur (host window), gpu_ns, idle_ns
//   step_cause.parquet   the diagnosis's steps (its own cut: optimizer steps where the explanation has
//                        annotations) with their time by cause: the causes add up to each step's dur
// Written in row groups of at most 1M rows from the snapshot's columns: memory does not grow with
// the trace.
#pragma once

#include <string>

#include "core/snapshot/trace_snapshot.h"

namespace attnscope::cache {

struct ExportOutcome {
  bool ok = false;
  std::string error;  // naming the file
  uint64_t rows = 0;  // of slice.parquet
};

// Writes the tables into `dir` (created when missing); each file is written aside and renamed.
// A snapshot with its explanation (step, cause) is needed.
ExportOutcome exportParquet(const TraceSnapshot& snap, const std::string& dir);

}  // namespace attnscope::cache
