// The statistics behind `servesim fit` (see log_fit.h).
#include "sim/report/log_fit.h"

#include <algorithm>
#include <cmath>

namespace servesim {
namespace {

// Standard normal CDF.
double Phi(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

}  // namespace

const std::vector<double>& FitPercentiles() {
  static const std::vector<double> kPercentiles = {50, 90, 95, 99, 99.9};
  return kPercentiles;
}

LognormalFit FitLognormal(const std::vector<double>& values) {
  LognormalFit f;
  if (values.empty()) return f;
  double sum = 0;
  for (double v : values) sum += std::log(v);
  f.mu = sum / static_cast<double>(values.size());
  double sq = 0;
  for (double v : values) {
    const double d = std::log(v) - f.mu;
    sq += d * d;
  }
  f.sigma = std::sqrt(sq / static_cast<double>(values.size()));
  return f;
}

double KsDistanceLognormal(const std::vector<double>& sorted,
                           const LognormalFit& fit) {
  const double n = static_cast<double>(sorted.size());
  double d = 0;
  // The empirical CDF is flat between distinct values and the model CDF is
  // monotone, so the supremum is at a jump: compare the model with the
  // empirical value just below (i/n) and at (j/n) each distinct value.
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    double model;
    if (fit.sigma > 0) {
      model = Phi((std::log(sorted[i]) - fit.mu) / fit.sigma);
    } else {
      // A point mass: its CDF jumps from 0 to 1 at exp(mu); any tie with
      // the data is at that very point, where both CDFs are right-continuous.
      const double at = std::exp(fit.mu);
      model = sorted[i] < at ? 0.0 : 1.0;
      if (std::fabs(sorted[i] - at) <= 1e-9 * at) model = 1.0;
    }
    const double below = static_cast<double>(i) / n;
    const double at_jump = static_cast<double>(j) / n;
    if (fit.sigma > 0) d = std::max(d, std::fabs(model - below));
    d = std::max(d, std::fabs(model - at_jump));
    i = j;
  }
  return d;
}

LengthFit FitLengths(std::vector<double> values) {
  LengthFit f;
  f.stats = Summarize(values, FitPercentiles());  // sorts values
  if (values.empty()) return f;
  const auto under = std::lower_bound(values.begin(), values.end(), 50.0);
  f.share_under_50 = static_cast<double>(under - values.begin()) /
                     static_cast<double>(values.size());
  f.lognormal = FitLognormal(values);
  f.ks_distance = KsDistanceLognormal(values, f.lognormal);
  f.sorted = std::move(values);
  return f;
}

std::optional<ArrivalFit> FitArrivals(const std::vector<double>& times_s) {
  if (times_s.size() < 2) return std::nullopt;
  ArrivalFit a;
  a.gaps = static_cast<int64_t>(times_s.size()) - 1;
  a.span_s = times_s.back() - times_s.front();
  if (!(a.span_s > 0)) return std::nullopt;
  const double n = static_cast<double>(a.gaps);
  const double mean = a.span_s / n;
  double sq = 0;
  for (size_t i = 1; i < times_s.size(); ++i) {
    const double d = (times_s[i] - times_s[i - 1]) - mean;
    sq += d * d;
  }
  a.rate = 1.0 / mean;
  a.cv = std::sqrt(sq / n) / mean;
  // Gamma shape by the method of moments: shape = mean^2 / variance.
  a.burstiness = a.cv > 0 ? 1.0 / (a.cv * a.cv) : INFINITY;
  return a;
}

void ReuseCounter::Add(const std::vector<uint64_t>& hash_ids) {
  // Prefix-chained ids name a whole prefix, so an id seen before is a block
  // an infinite cache would already hold.
  for (uint64_t id : hash_ids) {
    ++blocks_;
    if (!seen_.insert(id).second) ++reused_;
  }
}

ReuseFit ReuseCounter::Result(int32_t block_tokens) const {
  ReuseFit r;
  r.block_tokens = block_tokens;
  r.blocks = blocks_;
  r.reused = reused_;
  r.fraction = blocks_ ? static_cast<double>(reused_) / blocks_ : 0.0;
  return r;
}

LogFit FitTrace(TraceReader* reader) {
  std::vector<double> prompt, completion, times;
  ReuseCounter reuse;
  bool all_timed = true;
  TraceRecord rec;
  while (reader->Next(&rec)) {
    prompt.push_back(rec.input_tokens);
    completion.push_back(rec.output_tokens);
    if (std::isnan(rec.timestamp_s)) {
      all_timed = false;
    } else {
      times.push_back(rec.timestamp_s);
    }
    reuse.Add(rec.hash_ids);
  }
  reader->Finish();
  LogFit fit;
  fit.records = static_cast<int64_t>(prompt.size());
  fit.data_lines = reader->data_lines();
  fit.bad_lines = reader->bad_lines();
  fit.first_errors = reader->first_errors();
  fit.notes = reader->notes();
  fit.prompt = FitLengths(std::move(prompt));
  fit.completion = FitLengths(std::move(completion));
  if (all_timed) fit.arrival = FitArrivals(times);
  if (reader->block_tokens() > 0) {
    fit.reuse = reuse.Result(reader->block_tokens());
  }
  return fit;
}

}  // namespace servesim
