// Exact summary statistics of a sample (per-request metrics are kept
// exactly; only per-token gaps go through LogHistogram).
#pragma once

#include <cstddef>
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
// In place, into the sequence std::sort gives: a radix sort from 4096
// values, in runs of at most max_run values merged one by one (so the
// second array holds one run; see radix_sort.h). NaN or -0.0: std::sort.
constexpr size_t kMaxSortRun = size_t{1} << 22;
void SortSample(std::vector<double>& v, size_t max_run = kMaxSortRun);
void SortTimes(std::vector<int64_t>& v, size_t max_run = kMaxSortRun);
// Sorts `values` in place and summarises them.
SampleStats Summarize(std::vector<double>& values,
                      const std::vector<double>& percentiles);
// Durations in ns, summarised in ms. Order statistics (min, max, median,
// percentiles) are Summarize's of ToMillis of each value, to the bit; the
// mean and standard deviation come from exact integer sums (Summarize's,
// summed in sorted order, differ in the last bits). No sort: the ranks the
// percentiles read are selected (a histogram of the values, then a sort of
// the few values in the buckets that hold those ranks). May reorder `ns`.
SampleStats SummarizeMillis(std::vector<int64_t>& ns,
                            const std::vector<double>& percentiles);
// Summarize for the doubles whose bits are `bits`, every one >= +0.0 and
// not NaN (their bits then order as the values do): its order statistics
// to the bit, by selection as SummarizeMillis; mean and standard deviation
// summed in long double (within an ulp or two of its sorted-order sums).
// May reorder `bits`.
SampleStats SummarizeNonNegative(std::vector<int64_t>& bits,
                                 const std::vector<double>& percentiles);

}  // namespace servesim
