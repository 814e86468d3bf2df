// The job analysis's pieces, in the order analyzeJob runs them (job.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/ranks/job.h"

namespace attnscope::ranks {

// Matching (job_match.cpp): fills matched, unmatched, matchMethods and mismatch findings.
void matchCollectives(JobReport& r);
// Clock offsets from the matched collectives' ends (job_clock.cpp).
void estimateClock(JobReport& r);
// A set of ranks late together in one step (job_waits.cpp -> job_stragglers.cpp).
struct LateSet {
  int step = -1;                    // into JobReport::steps
  std::vector<size_t> members;      // rank indices, sorted
  int64_t lateNs = 0;               // the most it was late at one collective of the step (above the on-time ranks)
  int64_t imposedNs = 0;            // the wait it imposed on each on-time rank, added over the step's collectives
  size_t origin = 0;                // index into matched: the first collective of the step where it was late
  std::vector<size_t> collectives;  // indexes into matched where it was late
};
// The model of who waited for whom (job_waits.cpp): the job's steps, aligned arrivals, per collective the
// late ranks and the wait they imposed, the jitter, per rank and step figures; returns the late sets of
// each step, for findStragglers.
std::vector<LateSet> modelWaits(JobReport& r);
// Stragglers from the late sets, with their cause, cost and fix (job_stragglers.cpp).
void findStragglers(JobReport& r, const std::vector<LateSet>& sets);
// Hangs (only where the other ranks' waits show one), truncated traces said (job_faults.cpp).
void findHangs(JobReport& r);
void noteTruncations(JobReport& r);
// The headline (job_headline.cpp).
void writeHeadline(JobReport& r);

inline int64_t medianOf(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

// The offset subtracted from rank index i's times.
inline int64_t appliedOffset(const JobReport& r, size_t i) {
  return i < r.clock.ranks.size() ? r.clock.ranks[i].appliedNs : 0;
}
inline const Collective& collectiveOf(const JobReport& r, const Part& p) {
  return r.ranks[p.first].collectives[p.second];
}
inline int64_t alignedArrival(const JobReport& r, const Part& p) {
  return collectiveOf(r, p).arrivalNs - appliedOffset(r, p.first);
}
inline int64_t alignedEnd(const JobReport& r, const Part& p) {
  return collectiveOf(r, p).endNs - appliedOffset(r, p.first);
}

}  // namespace attnscope::ranks
