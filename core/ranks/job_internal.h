// The job analysis's pieces, in the order analyzeJob runs them (job.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <string>
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
// A pipeline's schedule (job_schedule.cpp): in a job with send/recv, a whole stage's usual lateness at a kind of
// collective, said as a "pipeline_schedule" finding; returns what to take off each (matched, rank index)'s
// readiness there. `rdy`: per matched collective, (aligned readiness, rank index); `virtuals`: the parallel
// instances read together, in the order they ran; `cutOf`: per kind of collective, how far a rank must stand out.
std::map<std::pair<size_t, size_t>, int64_t> pipelineSchedule(
    JobReport& r, const std::vector<std::vector<std::pair<int64_t, size_t>>>& rdy,
    const std::vector<const std::vector<size_t>*>& virtuals, const std::vector<std::string>& roleOf,
    const std::map<std::string, int64_t>& cutOf);
// Stragglers from the late sets, with their cause, cost and fix (job_stragglers.cpp).
void findStragglers(JobReport& r, const std::vector<LateSet>& sets);
// Hangs (only where the other ranks' waits show one), truncated traces said (job_faults.cpp).
void findHangs(JobReport& r);
void noteTruncations(JobReport& r);
// The headline (job_headline.cpp).
void writeHeadline(JobReport& r);

// Disjoint sets of rank indices.
struct Dsu {
  std::vector<size_t> p;
  explicit Dsu(size_t n) : p(n) { std::iota(p.begin(), p.end(), 0); }
  size_t find(size_t x) { return p[x] == x ? x : p[x] = find(p[x]); }
  void unite(size_t a, size_t b) { p[find(a)] = find(b); }
};

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
