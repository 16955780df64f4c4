// Paired-difference intervals and Student's t quantile (see compare_stats.h).
#include "sim/analysis/compare_stats.h"

#include <cmath>
#include <limits>

namespace servesim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Continued fraction of the incomplete beta (modified Lentz), converging
// for x < (a + 1) / (a + b + 2).
double BetaContinuedFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    for (int half = 0; half < 2; ++half) {
      d = 1 + aa * d;
      if (std::abs(d) < kTiny) d = kTiny;
      c = 1 + aa / c;
      if (std::abs(c) < kTiny) c = kTiny;
      d = 1 / d;
      const double del = d * c;
      h *= del;
      if (half == 1 && std::abs(del - 1) < 1e-15) return h;
      aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    }
  }
  return h;
}

// Regularized incomplete beta I_x(a, b).
double IncompleteBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
               a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2))
    return front * BetaContinuedFraction(a, b, x) / a;
  return 1 - front * BetaContinuedFraction(b, a, 1 - x) / b;
}

double StudentTCdf(double t, int dof) {
  const double v = dof;
  const double tail = 0.5 * IncompleteBeta(v / 2, 0.5, v / (v + t * t));
  return t >= 0 ? 1 - tail : tail;
}

double Mean(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v;
  return s / static_cast<double>(x.size());
}

double SampleSd(const std::vector<double>& x, double mean) {
  double sq = 0;
  for (double v : x) sq += (v - mean) * (v - mean);
  return std::sqrt(sq / static_cast<double>(x.size() - 1));
}

}  // namespace

double StudentTQuantile(double p, int dof) {
  if (dof < 1) dof = 1;
  if (p == 0.5) return 0;
  if (p < 0.5) return -StudentTQuantile(1 - p, dof);
  double lo = 0, hi = 1;
  while (StudentTCdf(hi, dof) < p && hi < 1e12) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (StudentTCdf(mid, dof) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

PairedInterval PairedDifference(const std::vector<double>& a,
                                const std::vector<double>& b,
                                double confidence) {
  std::vector<double> xa, xb, d;
  for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
    if (!std::isfinite(a[k]) || !std::isfinite(b[k])) continue;
    xa.push_back(a[k]);
    xb.push_back(b[k]);
    d.push_back(b[k] - a[k]);
  }
  PairedInterval r;
  r.n = static_cast<int>(d.size());
  if (r.n == 0) {
    r.a_mean = r.b_mean = r.diff = r.ratio = kNaN;
    r.diff_lo = r.diff_hi = r.ratio_lo = r.ratio_hi = kNaN;
    return r;
  }
  r.a_mean = Mean(xa);
  r.b_mean = Mean(xb);
  r.diff = Mean(d);
  r.ratio = r.a_mean != 0 ? r.b_mean / r.a_mean : kNaN;
  if (r.n < 2) {
    r.diff_lo = r.diff_hi = r.ratio_lo = r.ratio_hi = kNaN;
    return r;
  }
  const double t = StudentTQuantile(0.5 + confidence / 2, r.n - 1);
  const double root_n = std::sqrt(static_cast<double>(r.n));
  const double half = t * SampleSd(d, r.diff) / root_n;
  r.diff_lo = r.diff - half;
  r.diff_hi = r.diff + half;
  bool positive = true;
  std::vector<double> log_ratio(xa.size());
  for (size_t k = 0; k < xa.size(); ++k) {
    positive = positive && xa[k] > 0 && xb[k] > 0;
    if (positive) log_ratio[k] = std::log(xb[k] / xa[k]);
  }
  if (positive) {
    const double m = Mean(log_ratio);
    const double log_half = t * SampleSd(log_ratio, m) / root_n;
    r.ratio = std::exp(m);
    r.ratio_lo = std::exp(m - log_half);
    r.ratio_hi = std::exp(m + log_half);
  } else {
    r.ratio_lo = r.ratio_hi = kNaN;
  }
  return r;
}

}  // namespace servesim
