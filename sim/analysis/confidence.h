// Confidence intervals across independent replications (seeds): the mean
// and a two-sided 95% Student-t interval, so a sweep point's percentile is
// reported with its run-to-run uncertainty.
#pragma once

#include <vector>

namespace servesim {

struct Interval {
  double mean = 0, lo = 0, hi = 0;
  int n = 0;
};

// Two-sided 95% Student-t quantile t_{0.975, dof}; dof >= 1.
double StudentT975(int dof);
// Mean and 95% interval of independent samples; a single sample has a
// zero-width interval (and n = 1 says so).
Interval MeanInterval(const std::vector<double>& samples);

}  // namespace servesim
