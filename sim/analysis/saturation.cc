// The saturating run and its estimates (see saturation.h).
#include "sim/analysis/saturation.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "sim/analysis/runs.h"

namespace servesim {
namespace {

struct Departure {
  SimTime t;
  int32_t tokens;
};

}  // namespace

SaturationEstimate SaturationFromRequests(const RequestTable& requests) {
  SaturationEstimate e;
  std::vector<Departure> deps;
  SimTime last_send = 0;
  for (const Request& r : requests) {
    if (r.send >= 0) last_send = std::max(last_send, r.send);
    if (r.status == RequestStatus::kFinished) {
      deps.push_back({r.finish, r.num_output});
    }
  }
  if (deps.size() < 2) return e;
  std::sort(deps.begin(), deps.end(),
            [](const Departure& a, const Departure& b) { return a.t < b.t; });
  SimTime t_a = deps[deps.size() / 10].t;
  SimTime t_b = last_send;
  if (t_b <= t_a) {  // too short to have a steady part: use everything
    t_a = 0;
    t_b = deps.back().t;
  }
  std::vector<double> gaps;
  SimTime prev = t_a;
  int64_t tokens = 0;
  for (const Departure& d : deps) {
    if (d.t <= t_a || d.t > t_b) continue;
    gaps.push_back(ToSeconds(d.t - prev));
    prev = d.t;
    tokens += d.tokens;
  }
  e.departures = static_cast<int64_t>(gaps.size());
  e.window_s = ToSeconds(t_b - t_a);
  if (e.departures == 0 || e.window_s <= 0) return e;
  e.mu_rps = e.departures / e.window_s;
  // Batch means over 10 equal sub-windows, and the two halves.
  constexpr int kBatches = 10;
  std::vector<double> counts(kBatches, 0);
  for (const Departure& d : deps) {
    if (d.t <= t_a || d.t > t_b) continue;
    const double x = static_cast<double>(d.t - t_a) / static_cast<double>(t_b - t_a);
    counts[std::min(kBatches - 1, static_cast<int>(x * kBatches))] += 1;
  }
  std::vector<double> rates;
  double first = 0, second = 0;
  for (int i = 0; i < kBatches; ++i) {
    rates.push_back(counts[i] * kBatches / e.window_s);
    (i < kBatches / 2 ? first : second) += counts[i];
  }
  e.mu = MeanInterval(rates);
  e.mu.mean = e.mu_rps;
  e.settled = e.departures >= 100 && std::abs(first - second) <= 0.05 * (first + second) / 2;
  e.mean_service_s = 1 / e.mu_rps;
  e.output_tokens_per_s = tokens / e.window_s;
  double mean = 0, sq = 0;
  for (double g : gaps) mean += g;
  mean /= gaps.size();
  for (double g : gaps) sq += (g - mean) * (g - mean);
  e.scv = gaps.size() > 1 ? sq / (gaps.size() - 1) / (mean * mean) : 0;
  return e;
}

int SaturatingClients(const Scenario& s) {
  int clients = 2 * s.engine.max_num_seqs;
  // (Disaggregated, num_replicas counts both pools: two clients for each
  // instance, more than the API servers need, never fewer.)
  if (s.frontend.enabled) clients += 2 * ApiServerCount(s.frontend, s.num_replicas);
  return clients;
}

StatusOr<SaturationEstimate> EstimateSaturation(const Scenario& base) {
  const int clients = SaturatingClients(base);
  constexpr int kRequestsPerClient = 50, kDoublings = 2;
  // A trace is replayed as it is: its length is its own.
  int64_t n = base.workload.trace ? 0 : base.workload.num_requests;
  if (n > 0) n = std::max<int64_t>(n, int64_t{kRequestsPerClient} * clients);
  SaturationEstimate e;
  for (int attempt = 0; attempt <= kDoublings; ++attempt, n *= 2) {
    StatusOr<Scenario> sc = WithSaturatingLoop(base, clients);
    if (sc.ok() && n > 0) {
      sc = WithNumRequests(*sc, n);
    }
    if (!sc.ok()) return sc.status();
    RunSpec spec;
    spec.scenario = std::make_shared<const Scenario>(std::move(sc.value()));
    spec.saturation = true;  // estimated where the run runs (runs.h)
    RunResult r = RunOne(spec);
    e = *r.saturation;
    e.clients = clients;
    // A run bounded by time alone cannot be lengthened here.
    if (e.settled || n == 0) break;
  }
  if (e.mu_rps <= 0) {
    return Status::Error(base.file +
                         ": the saturating run finished no requests; "
                         "expected a deployment that can serve this workload");
  }
  return e;
}

}  // namespace servesim
