// A figure's median and spread over several values (a run's iterations, a trace's steps).
// Percentiles interpolate linearly between the sorted values (numpy's default), so p10/p90 of 2
// values lie between them. core/run/engine_run.h computes it (spreadOf) and writes it.
#pragma once

namespace attnscope {

struct StepSpread {
  int n = 0;  // values (0: no figure)
  double medianNs = -1, minNs = -1, maxNs = -1, p10Ns = -1, p90Ns = -1;
};

}  // namespace attnscope
