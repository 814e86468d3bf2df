// One rank of a distributed job, summarised from its own trace alone: its steps (host windows, the
// split of each into compute and communication, the rank's own top cause), and its collectives in
// the order it issued them, each with when it arrived (started taking part), when it ended, its
// process group and its size. A plain struct with no pointer into the trace: the job analysis
// (job_analysis.h) reads summaries only, so one rank's events can be dropped once it is summarised
// (and a summary can later be cached or computed elsewhere).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/store/event_store.h"

namespace attnscope {
struct TraceSnapshot;
}

namespace attnscope::ranks {

// Time in one named region (an annotation or op one level below the step) inside a window.
struct Activity {
  std::string name;
  int64_t ns = 0;
};

struct Collective {
  std::string name;  // the collective in one word: "allreduce", "all_to_all", ... ("Collective name" when given)
  std::string op;    // the event it came from: "c10d::allreduce_", "ncclKernel_AllReduce_RING_LL_Sum_float"
  std::string kind;  // "gloo" (c10d op + gloo worker span), "gpu_kernel" (NCCL/RCCL kernel), "cpu_op"
  // Its process group: "Process Group Name" when the trace has it; else inferred ("0", "1" by the order
  // the group's worker threads were created, matched to distributedInfo.pg_config; "stream 84" for a
  // GPU stream), `pgInferred` then true.
  std::string pg;
  bool pgInferred = false;
  int64_t seq = -1;     // "Seq" (per process group), -1 absent
  std::string commsId;  // "Comms Id", "" absent
  std::string dims;     // its tensors' Input Dims ("[[135696]]"), "" unknown
  int64_t nelems = -1;  // "In msg nelems", -1 absent
  std::string dtype;
  int64_t issueNs = 0;      // when its thread issued it (the op's start; the kernel's launch for a GPU kernel)
  int64_t arrivalNs = 0;    // when this rank started taking part (gloo worker start, kernel start)
  int64_t endNs = 0;        // when it ended on this rank
  bool cut = false;         // its end is not known: it ran past the trace's end, or its end was not traced
  bool endUnknown = false;  // the latter (a gloo op whose worker span is missing)
  int step = -1;            // index into RankSummary::steps of the step whose window holds its issue (-1 none)
  std::string thread;       // the thread that issued it ("thread 17763 (python3)")
  std::string blockedIn;    // the innermost annotation around it on that thread ("metric_allreduce"), "" none
  // What the issuing thread did from this rank's previous collective end (on any group, the last that
  // ended before this one's arrival; the step's start for the first) to this arrival: the regions one
  // level below the step, largest first, and the window itself.
  int64_t beforeFromNs = 0;
  std::vector<Activity> before;  // the regions up to its issue (after it, the rank no longer holds it up)
  // Of that window, the time this rank spent in point-to-point transfers (send/recv: NCCL kernels, gloo
  // spans), which run until the peer is there: waiting for a pipeline neighbour, not its own work.
  int64_t peerWaitNs = 0;
};

struct RankStep {
  std::string name;                // "ProfilerStep#5"
  int64_t startNs = 0, endNs = 0;  // its host window
  // Inside the window: compute (device work other than collectives; on a CPU-only trace, the step
  // thread's ops other than collectives), communication (the collectives from arrival to end, merged),
  // and communication with no compute beside it (exposed) or with compute beside it (overlapped).
  int64_t computeNs = 0, commNs = 0, exposedCommNs = 0, overlappedCommNs = 0;
  std::string cause;       // the rank's own top cause for the step (diagnosis code, or see ranks_output)
  std::string causeLabel;  // in a few words
  int64_t causeNs = 0;
  std::vector<Activity> phases;  // regions one level below the step (data_loading, forward, ...), largest first
  int64_t spanNs() const { return endNs - startNs; }
};

struct RankSummary {
  std::string file;
  int64_t rank = -1;
  std::string rankFrom;  // "distributedInfo", "file name", "" (unknown)
  // The host it ran on: the trace's "hostname", else its file name's when torch's tensorboard_trace_handler
  // named it (HOST_PID.MILLISECONDS.pt.trace.json); "" unknown.
  std::string host;
  std::string hostFrom;   // "trace", "file name", ""
  std::string truncated;  // the file was cut and only its start read: the reader's words ("" complete)
  DistributedInfo dist;
  bool hasDevice = false;  // any GPU work
  int64_t traceStartNs = 0, traceEndNs = 0;
  std::vector<RankStep> steps;
  std::vector<Collective> collectives;  // in the order this rank issued them
  std::vector<std::string> notes;       // what the summary could not tell (plain words)
};

// The rank a file name gives ("rank-3", "rank3", "rank_3", "worker3"), or -1.
int64_t rankFromFileName(const std::string& path);
// The host torch's tensorboard_trace_handler put in a file name ("gpu-a17_48211.1700000000123.pt.trace.json"
// -> "gpu-a17"; the process id has 3 digits or more), or "".
std::string hostFromFileName(const std::string& path);

// Summarises one rank's trace. `file` is the path shown in findings.
RankSummary summarizeRank(const TraceSnapshot& snap, const std::string& file);

}  // namespace attnscope::ranks
