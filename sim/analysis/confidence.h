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

// For a latency percentile across replications: a Student-t interval on
// the logarithms, mapped back (mean = the geometric mean), so the interval
// is never negative and is skewed the way a percentile's spread is. The
// upper end is capped at `max_observed` (the largest latency any
// replication saw: a percentile cannot exceed it). Samples <= 0 (a
// percentile of zero TPOTs) fall back to MeanInterval clamped to
// [0, max_observed].
Interval PercentileInterval(const std::vector<double>& samples, double max_observed);

// A latency percentile of the POOLED requests of independent replications
// (runs[k] = replication k's per-request values), with a 95% interval from
// the grouped jackknife over replications (delete one replication at a
// time; Efron & Tibshirani 1993, ch. 11), on the log scale, capped at the
// largest value seen. The pooled percentile, not the mean of per-run
// percentiles: near saturation a tail percentile is set by rare long
// excursions, which most short runs miss, so per-run p99s average low.
Interval PooledPercentileInterval(const std::vector<std::vector<double>>& runs, double p);

// Half-width of the interval relative to its mean ((hi - lo) / 2 / mean);
// infinite for fewer than 2 samples or a mean of 0.
double RelativeHalfWidth(const Interval& i);

}  // namespace servesim
