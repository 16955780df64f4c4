// Bisection for the largest x at which a monotone predicate still holds
// (feasible below some threshold, infeasible above it).
#pragma once

#include <functional>

namespace servesim {

struct BisectionResult {
  enum class Where { kInside, kBelowRange, kAboveRange };
  Where where = Where::kInside;
  double value = 0;  // largest x known feasible (lo when kBelowRange)
  double infeasible = 0;  // smallest x known infeasible
  int evaluations = 0;
};

// Checks feasible(hi) (all of [lo, hi] feasible: kAboveRange, value = hi)
// and feasible(lo) (nothing feasible: kBelowRange), then halves [lo, hi]
// until (hi - lo) <= rel_tol * hi or max_evaluations is spent. Requires
// 0 <= lo < hi.
BisectionResult BisectMaxFeasible(double lo, double hi,
                                  const std::function<bool(double)>& feasible,
                                  double rel_tol, int max_evaluations = 40);

}  // namespace servesim
