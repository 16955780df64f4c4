// Bisection on a monotone predicate (see bisection.h).
#include "sim/analysis/bisection.h"

namespace servesim {

BisectionResult BisectMaxFeasible(double lo, double hi,
                                  const std::function<bool(double)>& feasible,
                                  double rel_tol, int max_evaluations) {
  BisectionResult r;
  ++r.evaluations;
  if (feasible(hi)) {
    r.where = BisectionResult::Where::kAboveRange;
    r.value = hi;
    r.infeasible = hi;
    return r;
  }
  ++r.evaluations;
  if (!feasible(lo)) {
    r.where = BisectionResult::Where::kBelowRange;
    r.value = lo;
    r.infeasible = lo;
    return r;
  }
  // Invariant: feasible(lo) and !feasible(hi).
  while (hi - lo > rel_tol * hi && r.evaluations < max_evaluations) {
    const double mid = 0.5 * (lo + hi);
    ++r.evaluations;
    if (feasible(mid)) lo = mid; else hi = mid;
  }
  r.value = lo;
  r.infeasible = hi;
  return r;
}

}  // namespace servesim
