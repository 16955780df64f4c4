// Statistics of a paired comparison: replication k of variant A and of
// variant B share their random numbers, so the per-replication differences
// b_k - a_k are independent samples whose mean is the effect of the change
// and whose spread excludes the noise both variants share.
#pragma once

#include <vector>

namespace servesim {

// Quantile p in (0, 1) of Student's t with dof >= 1 degrees of freedom
// (bisection on the CDF, itself from the regularized incomplete beta).
double StudentTQuantile(double p, int dof);

// Two-sided interval at `confidence` of the mean paired difference B - A,
// and of the ratio of means B/A. NaN pairs (a run that measured nothing)
// are left out; n counts the pairs used. With n < 2 the bounds are NaN.
struct PairedInterval {
  int n = 0;
  double a_mean = 0, b_mean = 0;
  double diff = 0, diff_lo = 0, diff_hi = 0;  // B - A
  // B/A: the geometric mean of the per-replication ratios b_k / a_k, with
  // the interval of the mean log ratio mapped back, so it is never negative
  // however skewed the ratios are. With a value <= 0 in any pair (a
  // goodput of 0) there is no log: the ratio of means and NaN bounds.
  double ratio = 0, ratio_lo = 0, ratio_hi = 0;
};

PairedInterval PairedDifference(const std::vector<double>& a,
                                const std::vector<double>& b,
                                double confidence);

}  // namespace servesim
