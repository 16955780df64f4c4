// Student-t confidence intervals (see confidence.h).
#include "sim/analysis/confidence.h"

#include <algorithm>
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

Interval PercentileInterval(const std::vector<double>& samples, double max_observed) {
  bool positive = !samples.empty();
  for (double x : samples) {
    if (std::isnan(x)) return MeanInterval(samples);  // a run measured nothing
    positive = positive && x > 0;
  }
  Interval r;
  if (!positive) {
    r = MeanInterval(samples);
    r.lo = std::max(0.0, r.lo);
  } else {
    std::vector<double> logs;
    for (double x : samples) logs.push_back(std::log(x));
    const Interval l = MeanInterval(logs);
    r = {std::exp(l.mean), std::exp(l.lo), std::exp(l.hi), l.n};
  }
  r.hi = std::min(r.hi, std::max(max_observed, r.mean));
  return r;
}

namespace {

// numpy's "linear" percentile of xs (reordered in place), O(n).
double PercentileInPlace(std::vector<double>& xs, double p) {
  const double pos = p / 100 * static_cast<double>(xs.size() - 1);
  const size_t k = static_cast<size_t>(pos);
  std::nth_element(xs.begin(), xs.begin() + k, xs.end());
  const double a = xs[k];
  if (k + 1 >= xs.size()) return a;
  const double b = *std::min_element(xs.begin() + k + 1, xs.end());
  return a + (pos - k) * (b - a);
}

std::vector<double> PoolExcept(const std::vector<std::vector<double>>& runs, size_t skip) {
  std::vector<double> pooled;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (i != skip) pooled.insert(pooled.end(), runs[i].begin(), runs[i].end());
  }
  return pooled;
}

}  // namespace

Interval PooledPercentileInterval(const std::vector<std::vector<double>>& runs, double p) {
  Interval r;
  r.n = static_cast<int>(runs.size());
  std::vector<double> all = PoolExcept(runs, runs.size());
  if (all.empty()) {
    r.mean = r.lo = r.hi = NAN;
    return r;
  }
  const double max = *std::max_element(all.begin(), all.end());
  r.mean = r.lo = r.hi = PercentileInPlace(all, p);
  if (r.n < 2 || !(r.mean > 0)) return r;
  std::vector<double> logs;
  for (size_t k = 0; k < runs.size(); ++k) {
    std::vector<double> rest = PoolExcept(runs, k);
    if (rest.empty()) return r;
    const double v = PercentileInPlace(rest, p);
    if (!(v > 0)) return r;
    logs.push_back(std::log(v));
  }
  double mean = 0;
  for (double x : logs) mean += x;
  mean /= logs.size();
  double ss = 0;
  for (double x : logs) ss += (x - mean) * (x - mean);
  const double se = std::sqrt((r.n - 1.0) / r.n * ss);
  const double half = StudentT975(r.n - 1) * se;
  r.lo = std::exp(std::log(r.mean) - half);
  r.hi = std::min(max, std::exp(std::log(r.mean) + half));
  return r;
}

double RelativeHalfWidth(const Interval& i) {
  if (i.n < 2 || !(i.mean > 0)) return INFINITY;
  return (i.hi - i.lo) / 2 / i.mean;
}

}  // namespace servesim
