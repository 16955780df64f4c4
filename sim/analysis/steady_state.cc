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

WarmupTruncation TruncateWarmup(SimulationOutput* out) {
  RequestTable& reqs = out->requests;
  std::vector<const Request*> done;
  for (const Request& r : reqs) {
    if (r.measured && r.status == RequestStatus::kFinished) done.push_back(&r);
  }
  std::stable_sort(done.begin(), done.end(), [](const Request* a, const Request* b) {
    return a->arrival < b->arrival;
  });
  std::vector<double> ttft;
  ttft.reserve(done.size());
  for (const Request* r : done) ttft.push_back(ToSeconds(r->first_token - r->send));
  const Mser5Result m = Mser5(ttft);
  WarmupTruncation t;
  t.settled = m.settled;
  const size_t kept = ttft.size() - m.truncate, half = kept / 2;
  if (half >= 10) {
    double first = 0, second = 0;
    for (size_t i = 0; i < half; ++i) first += ttft[m.truncate + i];
    for (size_t i = half; i < 2 * half; ++i) second += ttft[m.truncate + i];
    if (first > 0 && second > 0) t.drift = std::log(second / first);
  }
  if (m.truncate == 0) return t;
  const SimTime cutoff = done[m.truncate]->arrival;
  for (Request& r : reqs) {
    if (r.measured && r.arrival < cutoff) {
      r.measured = false;
      ++t.requests;
    }
  }
  return t;
}

}  // namespace servesim
