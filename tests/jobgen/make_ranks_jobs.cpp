// Writes generated distributed jobs (job_gen.h) to disk, each in a folder of its own with its TRUTH.json:
//   make_ranks_jobs OUT_DIR [--seed N] [--count N] [--form none|one|two|node|link] [--backend nccl|gloo]
//                   [--world N] [--collectives N] [--steps N] [--tp N] [--persistent 0|1] [--late-ms X]
//                   [--jitter-us X] [--clock-shift 0|1] [--host-in trace|"file name"|none] [--comms-id]
//                   [--shift-rank R --shift-ms X]
// Job k is OUT_DIR/job-<seed+k>; the same seed and options always give the same files.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "job_gen.h"

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help") {
    std::fprintf(stderr,
                 "usage: make_ranks_jobs OUT_DIR [--seed N] [--count N] [--form F] [--backend B] [--world N] "
                 "[--collectives N] [--steps N] [--tp N] [--persistent 0|1] [--late-ms X] [--jitter-us X] "
                 "[--clock-shift 0|1] [--host-in H] [--comms-id]\n");
    return 2;
  }
  const std::string out = argv[1];
  uint64_t seed = 1;
  int count = 1;
  jobgen::Options o;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--comms-id") {
      o.commsId = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "make_ranks_jobs: %s needs a value\n", a.c_str());
      return 2;
    }
    const std::string v = argv[++i];
    if (a == "--seed")
      seed = std::strtoull(v.c_str(), nullptr, 10);
    else if (a == "--count")
      count = std::atoi(v.c_str());
    else if (a == "--form")
      o.form = v;
    else if (a == "--backend")
      o.backend = v;
    else if (a == "--world")
      o.world = std::atoi(v.c_str());
    else if (a == "--collectives")
      o.collectives = std::atoi(v.c_str());
    else if (a == "--steps")
      o.steps = std::atoi(v.c_str());
    else if (a == "--tp")
      o.tp = std::atoi(v.c_str());
    else if (a == "--persistent")
      o.persistent = std::atoi(v.c_str());
    else if (a == "--late-ms")
      o.lateNs = static_cast<int64_t>(std::atof(v.c_str()) * 1e6);
    else if (a == "--jitter-us")
      o.jitterNs = static_cast<int64_t>(std::atof(v.c_str()) * 1e3);
    else if (a == "--clock-shift")
      o.clockShift = std::atoi(v.c_str());
    else if (a == "--host-in")
      o.hostIn = v;
    else if (a == "--shift-rank")
      o.shiftRank = std::atoi(v.c_str());
    else if (a == "--shift-ms")
      o.shiftNs = static_cast<int64_t>(std::atof(v.c_str()) * 1e6);
    else {
      std::fprintf(stderr, "make_ranks_jobs: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  for (int k = 0; k < count; ++k) {
    const jobgen::Job j = jobgen::generate(seed + static_cast<uint64_t>(k), o);
    const std::string dir = out + "/job-" + std::to_string(seed + static_cast<uint64_t>(k));
    if (!jobgen::writeJob(j, dir)) {
      std::fprintf(stderr, "make_ranks_jobs: cannot write %s\n", dir.c_str());
      return 1;
    }
    std::printf("%s\n", dir.c_str());
  }
  return 0;
}
