// `servesim loops`, the lesson: the same deployment driven by a closed loop
// of N clients and by open-loop Poisson and gamma arrivals at exactly the
// throughput the closed loop achieved. A closed loop throttles itself (a
// client cannot send while it waits), so it never sees the queue an open
// population of users builds at the same load.
#pragma once

#include <string>
#include <vector>

#include "sim/analysis/point_stats.h"
#include "sim/analysis/saturation.h"
#include "sim/core/status.h"
#include "sim/scenario/scenario.h"

namespace servesim {

struct LoopsOptions {
  // Empty: DefaultConcurrencies, refined where the closed loop's
  // utilization jumps by more than 10 points between neighbours.
  std::vector<int> concurrency;
  double burstiness = 0.5;       // gamma shape of the bursty open loop
  int replications = 3;          // replication k: seed = scenario seed + k
  int jobs = 0;
  bool progress = true;  // on stderr, after ~2 s (sim/core/progress.h)
};

struct LoopsPoint {
  int concurrency = 0;
  double throughput_rps = 0;  // the closed loop's, the open loops' rate
  PointStats closed, open_poisson, open_gamma;
};

struct LoopsResult {
  SaturationEstimate saturation;
  double burstiness = 0.5;
  std::vector<LoopsPoint> points;  // by concurrency
};

// 1, 2, 4, ... up to max_num_seqs (and max_num_seqs itself).
std::vector<int> DefaultConcurrencies(int max_num_seqs);

StatusOr<LoopsResult> RunLoops(const Scenario& base, const LoopsOptions& o);

// The plain-language lesson, with the M/M/1 figure and this run's numbers.
std::string LoopsExplanation(const LoopsResult& r);

}  // namespace servesim
