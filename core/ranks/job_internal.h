// The job analysis's pieces, in the order analyzeJob runs them (job.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/ranks/job.h"

namespace attnscope::ranks {

// Matching (job_match.cpp): fills matched, unmatched, matchMethods and mismatch findings.
void matchCollectives(JobReport& r);
// Clock offsets from the matched collectives' ends (job_match.cpp).
void estimateClock(JobReport& r);
// Aligned arrivals, who arrived last, per rank and step figures, stragglers, hangs, headline (job_stragglers.cpp).
void findStragglers(JobReport& r);
void findHangs(JobReport& r);
void writeHeadline(JobReport& r);
void writeHeadlineText(JobReport& r);  // the headline without the clock sentence

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
