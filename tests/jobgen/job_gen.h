// Generated distributed jobs with stragglers known by construction, for `attnscope-cli ranks` and its
// tests. One Kineto trace per rank, written as torch.profiler writes them: NCCL-shaped (record_param_comms
// ops launching NCCL kernels that carry Collective name, Process Group Name, Seq and, on some jobs,
// Comms Id) or gloo-shaped (c10d ops on the main thread, gloo:* spans on one worker thread per process
// group, no collective args). 2 to 64 ranks, 1 to 16 collectives a step of mixed names and sizes,
// TP x DP subgroups (process groups named as torch names them, each listed only on its members'
// distributedInfo.pg_config), hosts of 4 or 8 ranks, each host's clock shifted.
//
// The mechanism (the timeline is simulated, not drawn from the answer): each rank runs the same
// schedule of work segments and collectives; a collective starts on a rank when that rank reaches it
// (its arrival) and ends on every member when the last member has arrived plus the transfer time. NCCL
// shape: the stream runs compute and collectives in order, so after a collective the ranks are back in
// step and a rank that was late once a step makes the others wait once. gloo shape (DDP): gradient
// collectives run on a worker thread while the main thread computes on, so a late rank stays late for
// the step's later collectives (less the others' slack). Tensor-parallel collectives block the main
// thread. Jitter: every work segment varies by a Gaussian of the job's jitter scale, with rare longer
// hiccups; each rank's speed differs by a little. Stragglers: none; one rank; two ranks on different
// steps; the 4 ranks of one host together; a slow link inside a tensor-parallel group (its collectives
// take longer, so its ranks arrive late at the next cross-group collective). Each transient (at most
// half the steps) or persistent (all steps, or all but one), 2 to 50 ms late.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jobgen {

struct TrueStraggler {
  std::vector<int64_t> ranks;  // sorted
  std::vector<int> steps;      // indices into Job::stepNames
  int64_t lateNs = 0;
  bool persistent = false;
  std::string cause;  // "data_loading" or "forward" (a region took longer), "slow_link"
  std::string group;  // slow_link: the process group's name
};

struct Options {
  std::string form;      // "" random, else "none", "one", "two", "node", "link"
  std::string backend;   // "" random, else "nccl", "gloo"
  int world = 0;         // 0: random
  int collectives = 0;   // a step; 0: random
  int steps = 0;         // 0: random
  int tp = 0;            // 0: random; 1: no subgroups
  int persistent = -1;   // -1 random, 0 transient, 1 persistent
  int64_t lateNs = 0;    // 0: random (2-50 ms)
  int64_t jitterNs = 0;  // 0: random
  int clockShift = -1;   // -1 random, 0 none, 1 one host's clock shifted
  std::string hostIn;    // "" random, else "trace", "file name", "none"
  bool commsId = false;  // NCCL: always carry Comms Id (else on half the jobs)
  int shiftRank = -1;    // this rank's clock (alone) shifted by shiftNs more
  int64_t shiftNs = 0;
};

struct File {
  std::string name;
  std::string text;
};

struct Job {
  uint64_t seed = 0;
  std::string form, backend;
  int world = 0, tp = 1, dp = 1, ranksPerNode = 4, collectivesPerStep = 0;
  int64_t jitterNs = 0, medianStepNs = 0;
  std::vector<std::string> stepNames;
  std::vector<std::string> hosts;    // per rank
  std::string hostIn;                // where the traces say the host: "trace", "file name", "none"
  std::vector<int64_t> clockNs;      // per rank: added to its times (its host's clock)
  std::vector<std::string> pgNames;  // per collective of a step: its group kind ("world", "tp", "dp")
  std::vector<TrueStraggler> stragglers;
  std::vector<File> files;  // one trace per rank
  std::string truthJson() const;
};

Job generate(uint64_t seed, const Options& o = {});

// Writes the job's files and TRUTH.json into `dir` (created); false when a file cannot be written.
bool writeJob(const Job& job, const std::string& dir);

}  // namespace jobgen
