// Student-t confidence intervals (see confidence.h).
#include "sim/analysis/confidence.h"

#include <cmath>

namespace servesim {

double StudentT975(int dof) {
  // Exact table for small dof (where it matters), then the Cornish-Fisher
  // expansion around the normal quantile, accurate to ~1e-4 beyond 30.
  static const double kTable[] = {12.7062, 4.3027, 3.1824, 2.7764, 2.5706,
                                  2.4469,  2.3646, 2.3060, 2.2622, 2.2281,
                                  2.2010,  2.1788, 2.1604, 2.1448, 2.1314,
                                  2.1199,  2.1098, 2.1009, 2.0930, 2.0860,
                                  2.0796,  2.0739, 2.0687, 2.0639, 2.0595,
                                  2.0555,  2.0518, 2.0484, 2.0452, 2.0423};
  if (dof < 1) dof = 1;
  if (dof <= 30) return kTable[dof - 1];
  const double z = 1.959964, n = dof;
  return z + (z * z * z + z) / (4 * n) +
         (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * n * n);
}

Interval MeanInterval(const std::vector<double>& samples) {
  Interval r;
  r.n = static_cast<int>(samples.size());
  if (r.n == 0) return r;
  double sum = 0;
  for (double x : samples) sum += x;
  r.mean = sum / r.n;
  if (r.n == 1) {
    r.lo = r.hi = r.mean;
    return r;
  }
  double sq = 0;
  for (double x : samples) sq += (x - r.mean) * (x - r.mean);
  const double se = std::sqrt(sq / (r.n - 1) / r.n);
  const double half = StudentT975(r.n - 1) * se;
  r.lo = r.mean - half;
  r.hi = r.mean + half;
  return r;
}

}  // namespace servesim
