// `servesim capacity`, the latency-constrained experiment: the highest
// arrival rate at which one replica meets an SLO. Two stages:
//
// 1. Screening: bisection on the rate over [2%, 100%] of the LOWER 95%
//    bound of the saturation throughput mu (the throughput-saturation
//    experiment, reported beside it, never in its place), so the answer can
//    never exceed what the replica can serve. Each rate is a steady-state
//    estimate from short replications (README, "Methodology"):
//    - warm-up: the scenario's own, then MSER-5 on each replication, on
//      every SLO metric's series (the largest cut of TTFT, TPOT, E2E);
//    - replications k = 0, 1, ... (seed = scenario seed + k: common random
//      numbers across rates and candidates), at least `replications`
//      (>= 3), added in rounds until the rate is decided or a budget runs
//      out;
//    - a rate FAILS as soon as a replication is unstable or some SLO
//      percentile's 95% interval lies wholly above its limit;
//    - it PASSES only when every term's upper 95% bound is within its limit
//      and no SLO metric drifts upward (the mean of the second half of each
//      run's kept requests < 10% above the first's); a drifting run has not
//      reached steady state, so the run length doubles (up to
//      max_length_doublings times) and the rate starts over;
//    - otherwise replications continue until each SLO percentile's
//      interval is within `precision` (relative half-width) or
//      max_replications is spent; then it fails.
//    Short replications miss the rare episodes (preemption storms near a
//    full KV cache) that set a long run's tail, so this answer is biased
//    upward: it is only the starting point of stage 2.
// 2. Validation in long windows (capacity_validation.h): the rate at which
//    a window of W requests (200,000 by default), measured as `servesim
//    run` measures it, meets every SLO term with probability `share`, with
//    its 95% interval; the replica count uses the interval's lower end.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/analysis/bisection.h"
#include "sim/analysis/capacity_validation.h"
#include "sim/analysis/point_stats.h"
#include "sim/analysis/saturation.h"
#include "sim/analysis/slo.h"
#include "sim/core/status.h"
#include "sim/scenario/scenario.h"

namespace servesim {

struct CapacityOptions {
  std::vector<SloTerm> slo;
  int replications = 3;        // minimum per rate; >= 3
  int max_replications = 20;   // budget per rate (and run length)
  double precision = 0.05;     // relative half-width that settles a percentile
  int max_length_doublings = 4;
  int jobs = 0;
  double rel_tol = 0.005;
  double lo_fraction = 0.02, hi_fraction = 1.0;  // of mu's lower bound
  bool progress = true;  // on stderr, after ~2 s (sim/core/progress.h)
  // Where this search sits in a larger one ("candidate 2/5"), for the
  // progress line; empty: alone.
  std::string progress_context;
  // The saturating run's estimate when the caller already has it (search).
  std::optional<SaturationEstimate> saturation;
  // Long-window validation of the screening answer (capacity_validation.h);
  // window_requests 0 (or a trace workload) keeps the screening answer.
  ValidationOptions validation;
};

struct SloCheck {
  std::string name;
  double limit_ms = 0;
  Interval value_ms;  // the percentile across replications (log-scale CI)
};

// Why a rate's replications stopped.
enum class RateStop {
  kUnstable,   // a replication was unstable: fail
  kDecided,    // the intervals settled the verdict (pass or fail)
  kPrecision,  // every SLO percentile within the precision: verdict by bound
  kBudget,     // max_replications or the run-length budget ran out: fail
};
const char* RateStopName(RateStop r);

struct RateEvaluation {
  bool feasible = false;
  RateStop stop = RateStop::kDecided;
  PointStats point;
  Interval goodput_rps;           // vLLM --goodput, over the arrival window
  std::vector<SloCheck> checks;
  int64_t requests_per_run = 0;   // run length used (after doublings)
  double mean_truncated = 0;      // MSER-5 warm-up requests, per run
  Interval drift;                 // log(mean TTFT 2nd half / 1st half)
  int64_t rejected = 0, incomplete = 0;  // summed over replications
};

struct CapacityResult {
  SaturationEstimate saturation;       // throughput-saturation experiment
  // The latency-constrained answer (<= mu.lo): the validated rate when
  // validated, else the screening bisection's. max_rate_lo is the lower
  // end of its 95% interval (replica counts use it; = max_rate when not
  // validated).
  double max_rate = 0, max_rate_lo = 0;
  double screening_rate = 0;           // the bisection's answer
  std::optional<ValidatedCapacity> validated;
  BisectionResult::Where where = BisectionResult::Where::kInside;
  int evaluations = 0;
  double infeasible_rate = 0;          // smallest rate seen to fail
  // The screening replications at max_rate (point figures: throughput,
  // goodput, latencies); when validated, re-run at the validated answer.
  RateEvaluation at_max;
  std::vector<RateEvaluation> trail;   // every rate evaluated, in order
};

StatusOr<CapacityResult> FindCapacity(const Scenario& base,
                                      const CapacityOptions& o);

// Stage 2 on a screening result (FindCapacity does it when
// o.validation.window_requests > 0; search calls it only for candidates
// that could still be the cheapest): max_rate, max_rate_lo, validated and
// at_max are replaced.
Status ValidateAnswer(const Scenario& base, const CapacityOptions& o, CapacityResult* res);

// One rate judged by the rules above (replications, drift doubling,
// intervals): the verdict capacity would give it. `base` may be a cluster
// (search's router check runs the fleet this way).
StatusOr<RateEvaluation> EvaluateRate(const Scenario& base, double rate,
                                      const CapacityOptions& o);

// The SLO max if every step took (1 + slower) times as long, from the
// rates already evaluated, with no new run. Time scaling is exact in this
// simulator: with every step cost multiplied by s and the arrival rate
// divided by s, each request's timestamps are the same run's times s (the
// same seeds draw the same lengths and unit gaps), so every latency is
// s times its value at the original rate. A rate r that passed with each
// SLO percentile's upper bound times s still within its limit therefore
// passes at r / s with slower steps; the answer is the largest such r / s
// (0 when none). Exact for open-loop arrivals; a time-based warm-up
// (warmup_s) or think time does not scale with it. A validated answer
// scales the same way: max_rate / s.
double MaxRateIfStepsSlower(const CapacityResult& r, double slower);

}  // namespace servesim
