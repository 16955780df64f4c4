// Warm-up truncation chosen from the data: MSER-5 (White 1997; White,
// Cobb & Spratt 2000; Hoad, Robinson & Davies 2010 found it the most
// reliable of the automatic rules). The series is cut into batches of 5
// and the truncation point d (in batches) minimises
//   MSER(d) = sum_{j>d} (z_j - mean_{j>d} z)^2 / (m - d)^2
// over d in [0, m/2]: it trades the bias of keeping the transient against
// the variance of keeping fewer observations. A minimum at the far end of
// that range means the series never settled (too short, or overloaded).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/analysis/slo.h"
#include "sim/engine/simulation.h"

namespace servesim {

struct Mser5Result {
  int64_t truncate = 0;  // raw observations to drop from the front
  bool settled = true;   // false: the minimum was at the end of the range
};

Mser5Result Mser5(const std::vector<double>& series);

struct WarmupTruncation {
  int64_t requests = 0;  // measured requests dropped as warm-up
  bool settled = true;   // every metric's MSER-5 minimum inside its range
  // The largest over the metrics of log(mean of the second half / mean of
  // the first half) of the kept requests in arrival order: near 0 in
  // steady state, clearly positive while a queue is still building (0 with
  // too few requests).
  double drift = 0;
};

// MSER-5 on each metric's series over the run's measured, finished
// requests in arrival order: TTFT always, plus each of `metrics` (the SLO's:
// TPOT settles later than TTFT when decode batches are still filling). The
// latest cut wins: every measured request that arrived before the first
// kept one is marked unmeasured (on top of the scenario's own warm-up).
// Latencies and counts summarised afterwards leave them out; the
// recorder's time averages (KV use, busy time) keep the scenario's own
// window.
WarmupTruncation TruncateWarmup(SimulationOutput* out,
                                const std::vector<SloMetric>& metrics = {});

}  // namespace servesim
