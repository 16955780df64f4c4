// Exact sample statistics (see stats.h).
#include "sim/metrics/stats.h"

#include <algorithm>
#include <cmath>

namespace servesim {

double PercentileOfSorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

SampleStats Summarize(std::vector<double>& values,
                      const std::vector<double>& percentiles) {
  SampleStats s;
  s.count = static_cast<int64_t>(values.size());
  for (double p : percentiles) s.percentiles.emplace_back(p, 0.0);
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / values.size();
  double sq = 0;
  for (double v : values) sq += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(sq / values.size());
  s.median = PercentileOfSorted(values, 50);
  s.min = values.front();
  s.max = values.back();
  for (auto& [p, v] : s.percentiles) v = PercentileOfSorted(values, p);
  return s;
}

}  // namespace servesim
