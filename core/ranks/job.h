// A distributed job's ranks read together: which files are which rank (and what to do with a rank
// claimed twice, or two jobs in one folder), the process groups merged across ranks, every collective
// matched across ranks, the ranks' clock offsets, and on the aligned clock the model of who waited for
// whom: per collective each rank's arrival and the wait it imposed on the others, per step what each
// rank or set of ranks late together made the others wait, the stragglers (a rank or a set whose
// imposed wait stands out from the job's own arrival jitter) with what they were doing, what they cost
// the job and the fix, and the hangs. The analysis reads RankSummary values only (rank_summary.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ranks/rank_summary.h"
#include "core/read/trace_reader.h"

namespace attnscope::ranks {

// Something about the job's files or collectives that is said, not guessed.
struct JobFinding {
  // "missing_ranks", "duplicate_rank", "unknown_rank", "mixed_job", "two_jobs", "truncated", "mismatch",
  // "missing_collective", "note"
  std::string kind;
  std::string text;  // plain words, naming the files or ranks
  std::vector<int64_t> ranks;
};

// A part: (index into JobReport::ranks, index into that rank's collectives).
using Part = std::pair<size_t, size_t>;

// A process group, merged over the ranks' distributedInfo.pg_config (torch lists a group only on its
// members) and the groups the collectives name.
struct GroupInfo {
  std::string name, desc;
  std::vector<int64_t> ranks;  // its members (rank numbers), from pg_config; else the ranks seen in it
  bool fromConfig = false;
};

struct MatchedCollective {
  std::string method;  // "comms_id", "pg_seq", "order"
  std::string pg;
  bool pgInferred = false;
  int index = 0;  // its place in its group (1-based), by the method's order
  int64_t seq = -1;
  std::string commsId;
  std::string name, dims;
  int64_t nelems = -1;
  std::string step;    // the step it was issued in on most ranks ("" none)
  int stepIndex = -1;  // into JobReport::steps
  int slot = -1;       // its place among its group's collectives of that step (0-based)
  std::vector<Part> parts;
  // On the aligned clock:
  int64_t firstArrivalNs = 0, lastArrivalNs = 0, medianEndNs = 0;
  int64_t lastRank = -1;
  int64_t lateNs = 0;  // the last arrival after the median arrival of the others
  int64_t gapNs = 0;   // the last arrival after the one before it
  // The model: the ranks that arrived late together, standing out of the jitter (their arrival after the
  // on-time ranks' last arrival is at least the job's threshold), and the wait they imposed on each
  // on-time rank of this collective (the last arrival minus the on-time ranks' last).
  std::vector<int64_t> lateRanks;
  int64_t imposedNs = 0;
  bool straggled = false;   // lateRanks is not empty
  int64_t endSpreadNs = 0;  // latest end - earliest end
};

struct UnmatchedCollective {
  std::string pg, name, dims;
  int index = 0;
  std::vector<int64_t> presentRanks, missingRanks;
  // "missing" (some ranks never issued it), "mismatch", "outside_window" (a missing rank's trace ends
  // before it), "truncated" (a missing rank's trace is cut before it)
  std::string reason;
  std::vector<Part> parts;
};

struct RankClock {
  int64_t rank = -1;
  int64_t estimateNs = 0;     // this rank's clock minus the reference clock
  int64_t uncertaintyNs = 0;  // the estimate's standard error (from the spread of the per-collective differences)
  int64_t spreadNs = 0;       // that spread (1.4826 x MAD): how far one collective's ends disagree
  int64_t appliedNs = 0;      // subtracted from this rank's times: the estimate where it stands out of its
                              // uncertainty (|estimate| > 3 x uncertainty), else 0
  int collectives = 0;        // matched collectives it came from
};

struct Clock {
  std::string method;  // in words
  // The rank whose clock the others are measured against: the lowest rank whose clock agrees with the
  // clock most ranks share (so an offset is said on the rank whose clock is off).
  int64_t referenceRank = -1;
  std::vector<RankClock> ranks;  // one per rank, in JobReport::ranks order
};

struct StepFigures {
  std::string step;
  int64_t startNs = 0;  // aligned
  int64_t stepNs = 0, computeNs = 0, commNs = 0, exposedCommNs = 0, overlappedCommNs = 0;
  int64_t waitForLastNs =
      0;                   // time between this rank's arrival and the last rank's, merged over the step's collectives
  int64_t imposedNs = 0;   // the wait this rank (late alone, or with the ranks late with it) imposed on
                           // the others in this step: added over the step's collectives where it was late
  int arrivedLast = 0;     // the step's collectives where it was among the late ranks
  int collectives = 0;     // matched collectives of the step it took part in
  bool beyondEnd = false;  // its trace is truncated before this step ends
  std::string cause, causeLabel;
  int64_t causeNs = 0;
};

struct Straggler {
  int64_t rank = -1;               // the first of `ranks`
  std::vector<int64_t> ranks;      // one rank, or the set of ranks late together
  std::string who;                 // "rank 5", "ranks 8-11 (one host: gpu-a19)", "ranks 4, 5 (process group '3')"
  std::string host;                // all its ranks' host, when they share one ("" unknown or several)
  bool wholeHost = false;          // its ranks are every rank of that host
  std::vector<std::string> steps;  // the steps it made the others wait, as the trace names them
  std::vector<int> stepIndexes;    // into JobReport::steps
  int stepsWithCollectives = 0;    // of the job's steps with matched collectives
  bool persistent = false;         // in more than half of those steps
  int64_t lateNs = 0;              // median over its steps of the wait it imposed on each other rank in the step
  int64_t minLateNs = 0, maxLateNs = 0;
  int64_t totalLateNs = 0;  // added over its steps: the time each other rank lost to it
  double stepShare = 0;     // lateNs over the median step time
  double jobShare = 0;      // totalLateNs over the job's time (the median step time x the steps)
  std::string cause;        // "slow_region", "untraced_host", "slow_work", "slow_collective", "late_start", "unknown"
  std::string region;       // slow_region: the region's name
  int64_t regionNs = 0, othersRegionNs = 0;  // its time there and the others' median (untraced_host: its host time
                                             // outside any recorded op before issuing, and the others')
  double workRatio = 0;                      // slow_work: its work before arriving / the others' median
  std::string group;                         // slow_collective: the group whose collectives ran long
  int64_t collectiveNs = 0, othersCollectiveNs = 0;  // that collective's time after its last arrival, and on
                                                     // the parallel groups (median)
  std::string fix;                                   // what to do, fitting the cause
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
  std::vector<GroupInfo> groups;
  std::vector<MatchedCollective> matched;
  std::vector<UnmatchedCollective> unmatched;
  std::string matchMethods;  // e.g. "order per process group (no Seq or Comms Id in these traces)"
  Clock clock;
  std::vector<std::string> steps;                 // the job's steps in the order they ran
  std::vector<std::vector<StepFigures>> figures;  // per rank (JobReport::ranks order), per step
  int64_t jitterNs = 0;               // the ranks' arrival jitter (a robust scale over ranks and collectives)
  int64_t thresholdNs = 0;            // how late a set must be to stand out (the least over the collectives)
  int64_t medianStepNs = 0;           // over ranks and steps
  std::vector<Straggler> stragglers;  // ranked by the time they cost
  std::string stragglerRule;          // in words
  std::vector<Hang> hangs;
  std::string headline;  // what costs the job most, one paragraph
  std::string fix;       // the headline's fix
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

// "0-3, 8, 10-11": ranks in order, runs joined.
std::string rankRuns(std::vector<int64_t> ranks);

}  // namespace attnscope::ranks
