// Statistics of a request log, as `servesim fit` reports them: the length
// distributions a capacity planner looks at first, a log-normal fit with its
// Kolmogorov-Smirnov distance, the arrival rate and burstiness when the log
// has timestamps, and the prefix reuse when it has block hashes.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_set>
#include <string>
#include <vector>

#include "sim/metrics/stats.h"
#include "sim/workload/trace_reader.h"

namespace servesim {

// The percentiles every length summary reports.
const std::vector<double>& FitPercentiles();

struct LognormalFit {
  double mu = 0;     // mean of log(tokens)
  double sigma = 0;  // population standard deviation of log(tokens)
};

struct LengthFit {
  SampleStats stats;          // count, mean, min, max, FitPercentiles()
  double share_under_50 = 0;  // share of requests with fewer than 50 tokens
  LognormalFit lognormal;
  double ks_distance = 0;      // sup |F_empirical - F_lognormal|
  std::vector<double> sorted;  // the sample, ascending (for the histogram)
};

struct ArrivalFit {
  int64_t gaps = 0;       // inter-arrival gaps measured (records - 1)
  double span_s = 0;      // last timestamp - first
  double rate = 0;        // requests/s = gaps / span
  double cv = 0;          // coefficient of variation of the gaps
  double burstiness = 0;  // gamma shape by moments, 1/CV^2 (1 = Poisson)
};

struct ReuseFit {
  int32_t block_tokens = 0;
  int64_t blocks = 0;   // hash ids in the whole trace
  int64_t reused = 0;   // ids already seen earlier in the trace
  double fraction = 0;  // infinite-cache block hit rate
};

struct LogFit {
  int64_t records = 0, data_lines = 0, bad_lines = 0;
  std::vector<std::string> first_errors;  // "file:line: what", the first few
  TraceNotes notes;  // timestamp unit, 0-token rows, rows filtered out
  LengthFit prompt, completion;
  std::optional<ArrivalFit> arrival;  // absent without >= 2 timestamps
  std::optional<ReuseFit> reuse;      // absent without hash ids
};

// Maximum likelihood on log(x): the sample must be positive and non-empty.
LognormalFit FitLognormal(const std::vector<double>& values);
// KS distance between a sorted sample and LogNormal(mu, sigma), taken on
// both sides of every jump of the empirical CDF. sigma == 0 is the point
// mass at exp(mu).
double KsDistanceLognormal(const std::vector<double>& sorted,
                           const LognormalFit& fit);
// Summary, log-normal fit and KS distance of a positive sample.
LengthFit FitLengths(std::vector<double> values);
// Rate, CV and burstiness of arrival times in order; nullopt when there are
// fewer than two or they span no time.
std::optional<ArrivalFit> FitArrivals(const std::vector<double>& times_s);

// Counts hash ids seen before, streaming through a trace.
class ReuseCounter {
 public:
  void Add(const std::vector<uint64_t>& hash_ids);
  ReuseFit Result(int32_t block_tokens) const;

 private:
  std::unordered_set<uint64_t> seen_;
  int64_t blocks_ = 0, reused_ = 0;
};

// Reads the whole trace and fits it; calls reader->Finish(), so it throws
// ConfigError when too many lines were bad.
LogFit FitTrace(TraceReader* reader);

}  // namespace servesim
