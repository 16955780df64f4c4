// MSER-5 warm-up truncation (see steady_state.h).
#include "sim/analysis/steady_state.h"

#include <algorithm>
#include <cmath>

namespace servesim {

Mser5Result Mser5(const std::vector<double>& series) {
  constexpr int64_t kBatch = 5;
  const int64_t m = static_cast<int64_t>(series.size()) / kBatch;
  Mser5Result r;
  if (m < 4) return r;  // too few batches to tell a transient from noise
  std::vector<double> z(m);
  for (int64_t j = 0; j < m; ++j) {
    double sum = 0;
    for (int64_t i = 0; i < kBatch; ++i) sum += series[j * kBatch + i];
    z[j] = sum / kBatch;
  }
  // Suffix sums: the statistic for every d in one pass from the back.
  std::vector<double> s1(m + 1, 0), s2(m + 1, 0);
  for (int64_t j = m - 1; j >= 0; --j) {
    s1[j] = s1[j + 1] + z[j];
    s2[j] = s2[j + 1] + z[j] * z[j];
  }
  double best = INFINITY;
  int64_t best_d = 0;
  for (int64_t d = 0; d <= m / 2; ++d) {
    const double k = static_cast<double>(m - d);
    const double ss = std::max(0.0, s2[d] - s1[d] * s1[d] / k);
    const double stat = ss / (k * k);
    if (stat < best) {
      best = stat;
      best_d = d;
    }
  }
  r.truncate = best_d * kBatch;
  r.settled = best_d < m / 2;
  return r;
}

namespace {

// One metric's values over the finished, measured requests in arrival
// order (TPOT only for answers of more than one token), with the index in
// `done` of each.
struct Series {
  std::vector<double> values;
  std::vector<size_t> at;
};

Series SeriesOf(const std::vector<const Request*>& done, SloMetric m) {
  Series s;
  s.values.reserve(done.size());
  s.at.reserve(done.size());
  for (size_t i = 0; i < done.size(); ++i) {
    const Request& r = *done[i];
    const double ttft = ToSeconds(r.first_token - r.send);
    double v = ttft;
    if (m == SloMetric::kE2el) v = ToSeconds(r.finish - r.send);
    if (m == SloMetric::kTpot) {
      if (r.output_len <= 1) continue;
      v = (ToSeconds(r.finish - r.send) - ttft) / (r.output_len - 1);
    }
    s.values.push_back(v);
    s.at.push_back(i);
  }
  return s;
}

// log(mean of the second half / mean of the first half) of the values from
// index `from` on (0 with fewer than 10 a half).
double Drift(const std::vector<double>& v, size_t from) {
  const size_t kept = v.size() - from, half = kept / 2;
  if (half < 10) return 0;
  double first = 0, second = 0;
  for (size_t i = 0; i < half; ++i) first += v[from + i];
  for (size_t i = half; i < 2 * half; ++i) second += v[from + i];
  return first > 0 && second > 0 ? std::log(second / first) : 0;
}

}  // namespace

WarmupTruncation TruncateWarmup(SimulationOutput* out, const std::vector<SloMetric>& metrics) {
  RequestTable& reqs = out->requests;
  std::vector<const Request*> done;
  for (const Request& r : reqs) {
    if (r.measured && r.status == RequestStatus::kFinished) done.push_back(&r);
  }
  std::stable_sort(done.begin(), done.end(), [](const Request* a, const Request* b) {
    return a->arrival < b->arrival;
  });
  std::vector<SloMetric> ms = {SloMetric::kTtft};
  for (SloMetric m : metrics) {
    if (std::find(ms.begin(), ms.end(), m) == ms.end()) ms.push_back(m);
  }
  // Each metric's MSER-5 cut, as an index into `done`; the latest one wins.
  std::vector<Series> series;
  std::vector<size_t> cut(ms.size(), 0);
  size_t first_kept = 0;
  WarmupTruncation t;
  for (size_t k = 0; k < ms.size(); ++k) {
    series.push_back(SeriesOf(done, ms[k]));
    const Mser5Result m = Mser5(series[k].values);
    t.settled = t.settled && m.settled;
    cut[k] = m.truncate;
    if (m.truncate > 0) first_kept = std::max(first_kept, series[k].at[m.truncate]);
  }
  // Drift of what each metric keeps: from its own cut when that one binds
  // (TTFT alone: exactly its MSER cut), else from the first kept request.
  for (size_t k = 0; k < ms.size(); ++k) {
    const Series& s = series[k];
    size_t from = cut[k];
    if (first_kept > 0 && (cut[k] == 0 || s.at[cut[k]] < first_kept)) {
      from = std::lower_bound(s.at.begin(), s.at.end(), first_kept) - s.at.begin();
    }
    const double d = Drift(s.values, from);
    t.drift = k == 0 ? d : std::max(t.drift, d);
  }
  if (first_kept == 0) return t;
  const SimTime cutoff = done[first_kept]->arrival;
  for (Request& r : reqs) {
    if (r.measured && r.arrival < cutoff) {
      r.measured = false;
      ++t.requests;
    }
  }
  return t;
}

}  // namespace servesim
