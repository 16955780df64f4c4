// Queueing formulas and knee detection (see queueing.h).
#include "sim/analysis/queueing.h"

#include <algorithm>
#include <cmath>
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

double MD1WaitCdf(double rho, double t) {
  if (!(rho > 0 && rho < 1) || t < 0 || t > 30) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  long double sum = 0, fact = 1;
  for (int k = 0; k <= static_cast<int>(std::floor(t)); ++k) {
    if (k > 0) fact *= k;
    const long double x = static_cast<long double>(rho) * (k - t);
    sum += std::pow(x, k) / fact * std::exp(-x);
  }
  return static_cast<double>((1 - rho) * sum);
}

double MD1ResponseQuantile(double rho, double q) {
  double lo = 0, hi = 30;
  if (!(MD1WaitCdf(rho, hi) >= q)) return std::numeric_limits<double>::quiet_NaN();
  if (MD1WaitCdf(rho, 0) >= q) return 1;  // P(W = 0) = 1 - rho
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (MD1WaitCdf(rho, mid) >= q ? hi : lo) = mid;
  }
  return 1 + hi;
}

std::optional<double> FindKnee(std::vector<TailPoint> points, double ratio) {
  if (points.size() < 2) return std::nullopt;
  std::sort(points.begin(), points.end(),
            [](const TailPoint& a, const TailPoint& b) { return a.rate < b.rate; });
  const double baseline = points.front().p99;
  for (const TailPoint& p : points) {
    if (p.p99 > ratio * baseline) return p.rate;
  }
  return std::nullopt;
}

bool TailSeparated(const TailPoint& p, double ratio) { return p.p99 > ratio * p.p50; }

}  // namespace servesim
