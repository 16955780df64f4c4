// `servesim sweep`: the latency-vs-load curve of one replica. Estimates the
// saturation throughput mu (saturation.h), then runs the scenario at target
// utilizations of mu (or at explicit rates), R replications per point
// (replication k: seed = scenario seed + k), all on a thread pool.
#pragma once

#include <optional>
#include <vector>

#include "sim/analysis/point_stats.h"
#include "sim/analysis/saturation.h"
#include "sim/core/status.h"
#include "sim/scenario/scenario.h"

namespace servesim {

struct SweepOptions {
  std::vector<double> utilizations = {0.5, 0.7, 0.85, 0.9, 0.95, 1.0, 1.05};
  std::vector<double> rates;  // requests/s; when given, used instead
  int replications = 5;
  int jobs = 0;               // <= 0: all hardware threads
  bool progress = true;       // on stderr, after ~2 s (sim/core/progress.h)
  bool keep_representative = true;
};

struct SweepResult {
  SaturationEstimate saturation;
  std::vector<PointStats> points;  // by increasing rate
  // First rate whose TTFT p99 exceeds 3 x the p99 at the lightest point
  // (queueing.h FindKnee); per point, whether p99 > 3 x p50 there.
  std::optional<double> knee_rate;
  double baseline_p99_ms = 0;
  std::vector<bool> tail_separated;
  // Replication 0 of the point nearest 85% utilization, for CDFs, the
  // batch-size histogram and time series.
  std::optional<SimulationOutput> representative;
  RunSummary representative_summary;
  double representative_rate = 0;
  double timeseries_interval_s = 0;  // sampling of its step records
};

// Errors: a closed-loop scenario (use `loops`), traffic without an arrival
// rate (sessions, timestamped traces), a rate the scenario rejects.
StatusOr<SweepResult> RunSweep(const Scenario& base, const SweepOptions& o);

// Mean wait in queue predicted at `rate` from the saturation estimate, in
// ms (NaN at or beyond saturation).
double SweepMM1WaitMs(const SaturationEstimate& s, double rate);
double SweepMG1WaitMs(const SaturationEstimate& s, double rate);

}  // namespace servesim
