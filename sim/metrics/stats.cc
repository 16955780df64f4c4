// Exact sample statistics (see stats.h).
#include "sim/metrics/stats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace servesim {
namespace {

// Sorts a sample into the sequence std::sort gives (equal doubles have
// equal bits, so the sorted sequence is unique; NaN and -0.0, whose place
// std::sort leaves open, go to std::sort). Samples of 4096 to 4M values
// take a least-significant-digit radix sort on a key that orders as the
// double (11-bit digits, passes whose digit is the same for every value
// skipped) through a second array of the sample's size; larger ones stay
// with std::sort, so that the peak memory of a 10 M-request summary does
// not grow by a second array.
void SortSample(std::vector<double>& v) {
  const size_t n = v.size();
  if (n < 4096 || n > (size_t{1} << 22)) {
    std::sort(v.begin(), v.end());
    return;
  }
  constexpr int kBits = 11, kPasses = 6;
  constexpr size_t kRadix = size_t{1} << kBits;
  auto key = [](double x) {
    const uint64_t b = std::bit_cast<uint64_t>(x);
    return (b >> 63) ? ~b : b | (uint64_t{1} << 63);
  };
  std::vector<size_t> counts(kPasses * kRadix, 0);
  for (double x : v) {
    if (std::isnan(x) || std::bit_cast<uint64_t>(x) == (uint64_t{1} << 63)) {
      std::sort(v.begin(), v.end());
      return;
    }
    const uint64_t k = key(x);
    for (int p = 0; p < kPasses; ++p) {
      ++counts[p * kRadix + ((k >> (p * kBits)) & (kRadix - 1))];
    }
  }
  std::vector<double> scratch(n);
  double* src = v.data();
  double* dst = scratch.data();
  for (int p = 0; p < kPasses; ++p) {
    size_t* c = &counts[p * kRadix];
    if (std::find(c, c + kRadix, n) != c + kRadix) continue;  // one digit
    size_t sum = 0;
    for (size_t d = 0; d < kRadix; ++d) {
      const size_t here = c[d];
      c[d] = sum;
      sum += here;
    }
    const int shift = p * kBits;
    for (size_t i = 0; i < n; ++i) {
      const double x = src[i];
      dst[c[(key(x) >> shift) & (kRadix - 1)]++] = x;
    }
    std::swap(src, dst);
  }
  if (src != v.data()) std::copy(src, src + n, v.data());
}

}  // namespace

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
  SortSample(values);
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
