// `servesim capacity`, the latency-constrained experiment: the highest
// arrival rate at which one replica meets an SLO, found by bisection on
// the rate. A rate passes when every replication is stable and, for every
// SLO term, the upper end of the 95% interval of that percentile across
// replications (replication k: seed = scenario seed + k) is within the
// limit. The search runs over [2%, 110%] of the saturation throughput mu
// (the throughput-saturation experiment, reported beside it, never in its
// place) to within 0.5% of the rate.
#pragma once

#include <string>
#include <vector>

#include "sim/analysis/bisection.h"
#include "sim/analysis/point_stats.h"
#include "sim/analysis/saturation.h"
#include "sim/analysis/slo.h"
#include "sim/core/status.h"
#include "sim/scenario/scenario.h"

namespace servesim {

struct CapacityOptions {
  std::vector<SloTerm> slo;
  int replications = 5;
  int jobs = 0;
  double rel_tol = 0.005;
  double lo_fraction = 0.02, hi_fraction = 1.1;  // of mu
  bool progress = true;
};

struct SloCheck {
  std::string name;
  double limit_ms = 0;
  Interval value_ms;  // the percentile across replications
};

struct CapacityResult {
  SaturationEstimate saturation;       // throughput-saturation experiment
  double max_rate = 0;                 // latency-constrained answer
  BisectionResult::Where where = BisectionResult::Where::kInside;
  int evaluations = 0;
  PointStats at_max;                   // the replications at max_rate
  Interval goodput_rps;                // vLLM --goodput semantics
  std::vector<SloCheck> checks;        // at max_rate
};

StatusOr<CapacityResult> FindCapacity(const Scenario& base,
                                      const CapacityOptions& o);

}  // namespace servesim
