// The load side of `servesim compare` (compare.h): each variant's
// saturation throughput, the rate --utilization sets, and the overload
// verdict (stability.h) that comes before any metric's.
#pragma once

#include <string>

#include "sim/analysis/compare.h"
#include "sim/core/status.h"
#include "sim/scenario/scenario.h"

namespace servesim {

// Each variant's saturation throughput and its interval, for rho = rate /
// mu; left empty when the saturating run cannot be made. (Mu does not
// depend on the rate: the saturating run is a closed loop.)
void EstimateLoads(const Scenario& a, const Scenario& b, int jobs,
                   Comparison* c);

// With --utilization U: both variants at rate U x A's mu.
Status SetRateFromUtilization(double utilization, const std::string& a_label,
                              Scenario* a, Scenario* b, Comparison* c);

// Sets each variant's overload_reason (its rate against its own mu, else
// its replications' backlog) and c->overload; true when either variant is
// overloaded.
bool JudgeOverload(Comparison* c);

}  // namespace servesim
