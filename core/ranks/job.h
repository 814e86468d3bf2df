// A distributed job's ranks read together: which files are which rank, every collective matched
// across ranks, the ranks' clock offsets, per rank and step the time waiting for the last arriver,
// the stragglers with what they were doing, and the hangs. The analysis reads RankSummary values
// only (rank_summary.h), never a trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ranks/rank_summary.h"
#include "core/read/trace_reader.h"

namespace attnscope::ranks {

// Something about the job's files or collectives that is said, not guessed.
struct JobFinding {
  std::string kind;  // "missing_ranks", "duplicate_rank", "unknown_rank", "mixed_job", "mismatch", "note"
  std::string text;  // plain words, naming the files or ranks
  std::vector<int64_t> ranks;
};

// A part: (index into JobReport::ranks, index into that rank's collectives).
using Part = std::pair<size_t, size_t>;

struct MatchedCollective {
  std::string method;  // "comms_id", "pg_seq", "order"
  std::string pg;
  bool pgInferred = false;
  int index = 0;  // its place in its group (1-based), by the method's order
  int64_t seq = -1;
  std::string commsId;
  std::string name, dims;
  int64_t nelems = -1;
  std::string step;  // the step it was issued in on most ranks ("" none)
  std::vector<Part> parts;
  // On the aligned clock:
  int64_t firstArrivalNs = 0, lastArrivalNs = 0, medianEndNs = 0;
  int64_t lastRank = -1;
  int64_t lateNs = 0;       // the last arrival after the median arrival of the others
  int64_t gapNs = 0;        // the last arrival after the one before it
  bool straggled = false;   // the last rank stood apart from the others (JobReport::stragglerRule)
  int64_t endSpreadNs = 0;  // latest end - earliest end
};

struct UnmatchedCollective {
  std::string pg, name, dims;
  int index = 0;
  std::vector<int64_t> presentRanks, missingRanks;
  std::string reason;  // "missing" (some ranks never issued it), "mismatch", "outside_window"
  std::vector<Part> parts;
};

struct RankClock {
  int64_t rank = -1;
  int64_t estimateNs = 0;     // this rank's clock minus the reference rank's
  int64_t uncertaintyNs = 0;  // the estimate's standard error (from the spread of the per-collective differences)
  int64_t spreadNs = 0;       // that spread (1.4826 x MAD): how far one collective's ends disagree
  int64_t appliedNs = 0;      // subtracted from this rank's times: the estimate where it stands out of its
                              // uncertainty (|estimate| > 3 x uncertainty), else 0
  int collectives = 0;        // matched collectives it came from
};

struct Clock {
  std::string method;  // in words
  int64_t referenceRank = -1;
  std::vector<RankClock> ranks;  // one per rank, in JobReport::ranks order
};

struct StepFigures {
  std::string step;
  int64_t startNs = 0;  // aligned
  int64_t stepNs = 0, computeNs = 0, commNs = 0, exposedCommNs = 0, overlappedCommNs = 0;
  int64_t waitForLastNs =
      0;                // time between this rank's arrival and the last rank's, merged over the step's collectives
  int arrivedLast = 0;  // collectives of the step it made the others wait for (straggled)
  int collectives = 0;  // matched collectives of the step it took part in
  std::string cause, causeLabel;
  int64_t causeNs = 0;
};

struct Straggler {
  int64_t rank = -1;
  std::vector<std::string> steps;  // the steps it made the others wait, as the trace names them
  int stepsWithCollectives = 0;    // of the steps with matched collectives
  bool persistent = false;         // most of those steps
  int64_t lateNs = 0;              // median over its straggled collectives: its arrival after the others' median
  int64_t totalLateNs = 0;         // added up over them
  std::string cause;               // "slow_region", "slow_work", "late_start", "unknown"
  std::string region;              // slow_region: the region's name
  int64_t regionNs = 0, othersRegionNs = 0;  // its time there and the others' median
  double workRatio = 0;                      // slow_work: its work before arriving / the others' median
  std::string text;
};

struct Hang {
  std::string collective, pg;
  int index = 0;
  std::vector<int64_t> missingRanks, waitingRanks;
  int64_t waitedNs = 0;   // the longest wait of the ranks that entered it
  std::string blockedIn;  // where the waiting ranks blocked: "metric_allreduce in ProfilerStep#8"
  std::string step;
  bool tracedPast = false;  // a missing rank's trace ran past the others' arrival: it never issued it
  std::string text;
};

struct JobReport {
  std::vector<RankSummary> ranks;  // sorted by rank
  int64_t worldSize = -1;
  std::string backend;
  std::vector<JobFinding> findings;
  std::vector<MatchedCollective> matched;
  std::vector<UnmatchedCollective> unmatched;
  std::string matchMethods;  // e.g. "order per process group (no Seq or Comms Id in these traces)"
  Clock clock;
  std::vector<std::vector<StepFigures>> figures;  // per rank (JobReport::ranks order), per step
  std::vector<Straggler> stragglers;              // ranked by the time they cost
  std::string stragglerRule;                      // in words
  std::vector<Hang> hangs;
  std::string headline;  // what costs the job most, one sentence
};

// The trace files PATHS name: files as given; a folder's *.json / *.json.gz whose name has "trace" in
// it (else every .json / .json.gz there but TRUTH.json and *.steps.json). Sets `error` (naming the path)
// and returns nothing when a path is missing or a folder holds no trace.
std::vector<std::string> jobFiles(const std::vector<std::string>& paths, std::string* error);

// Loads and summarises each file (one at a time: one trace's events in memory at once), then analyses
// the job. A file that cannot be read sets `error` (naming it) and returns an empty report.
JobReport openJob(const std::vector<std::string>& files, const ReaderLimits& limits, std::string* error,
                  std::vector<std::string>* warnings = nullptr);

// The analysis, from summaries alone.
JobReport analyzeJob(std::vector<RankSummary> summaries);

std::string jobText(const JobReport& r);
std::string jobJson(const JobReport& r);

}  // namespace attnscope::ranks
