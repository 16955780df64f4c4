// One operating point (a rate) summarised over its replications: the mean
// and 95% interval of every percentile (log-scale, see
// PercentileInterval), steady-state throughput (over the arrival window,
// RunSummary::steady_request_throughput) and the stability verdict
// (stability.h).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "sim/analysis/confidence.h"
#include "sim/report/summary.h"

namespace servesim {

// Percentiles every sweep/loops/capacity run computes, besides its own.
inline const std::vector<double> kPointPercentiles = {50, 90, 99};

struct MetricIntervals {
  Interval mean, p50, p90, p99;
};

struct PointStats {
  double rate = 0;         // offered requests/s (0: closed loop)
  double utilization = 0;  // rate / saturation throughput
  int replications = 0;
  // Share of replications that pass the backlog rule (stability.h); 0 when
  // the load rule fires, since no run at rho >= 1 is stable. Below 1 the
  // point is UNSTABLE and unstable_reason says why.
  double stable_fraction = 0;
  std::string unstable_reason;
  Interval throughput_rps, output_tokens_per_s, input_tokens_per_s, gpu_busy;
  // Model FLOPs / memory-bandwidth utilization; mean NaN when unknown (a
  // cost model without a FLOP basis, RunSummary::mfu < 0).
  Interval mfu, mbu;
  // Summed over replications: measured requests rejected (vLLM's
  // "failed") and left unfinished when the run ended.
  int64_t rejected = 0, unfinished = 0;
  MetricIntervals ttft_ms, tpot_ms, e2el_ms, queue_ms;
};

MetricIntervals AggregateMetric(const std::vector<const SampleStats*>& runs);
PointStats AggregatePoint(const std::vector<const RunSummary*>& runs);
// The load rule (stability.h) at p.rate against the saturation
// throughput's interval: when it fires, no replication counts as stable.
void ApplyLoadRule(const Interval& mu, PointStats* p);

// {"mean", "lo", "hi"}; NaN (a run with nothing measured) becomes null.
nlohmann::json IntervalJson(const Interval& i);
// The report's point object: rate, utilization, replications,
// stable_fraction, unstable (bool), unstable_reason (when unstable),
// throughput_rps, metrics{ttft_ms, tpot_ms, e2el_ms:
// p50/p90/p99, queue_ms: mean}.
nlohmann::json PointJson(const PointStats& p);

}  // namespace servesim
