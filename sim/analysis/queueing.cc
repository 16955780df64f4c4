// Queueing formulas and knee detection (see queueing.h).
#include "sim/analysis/queueing.h"

#include <algorithm>
#include <limits>

namespace servesim {

double MM1Wait(double rho, double es) {
  if (rho >= 1) return std::numeric_limits<double>::quiet_NaN();
  return rho / (1 - rho) * es;
}

double MG1Wait(double rho, double es, double scv) {
  if (rho >= 1) return std::numeric_limits<double>::quiet_NaN();
  return rho * (1 + scv) / (2 * (1 - rho)) * es;
}

std::optional<double> FindKnee(std::vector<TailPoint> points, double ratio) {
  std::sort(points.begin(), points.end(),
            [](const TailPoint& a, const TailPoint& b) { return a.rate < b.rate; });
  for (const TailPoint& p : points) {
    if (p.p99 > ratio * p.p50) return p.rate;
  }
  return std::nullopt;
}

}  // namespace servesim
