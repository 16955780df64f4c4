// Exact summary statistics of a sample (per-request metrics are kept
// exactly; only per-token gaps go through LogHistogram).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace servesim {

struct SampleStats {
  int64_t count = 0;
  double mean = 0, stddev = 0, median = 0, min = 0, max = 0;
  std::vector<std::pair<double, double>> percentiles;  // (p, value)
};

// Percentile with numpy's default "linear" interpolation (what vllm bench
// serve uses), on a sorted sample.
double PercentileOfSorted(const std::vector<double>& sorted, double p);
// Sorts `values` in place and summarises them.
SampleStats Summarize(std::vector<double>& values,
                      const std::vector<double>& percentiles);

}  // namespace servesim
