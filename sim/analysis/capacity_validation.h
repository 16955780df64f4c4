// Validation of a capacity answer in long runs, as `servesim run` measures
// them. The question a planner asks is "at this rate, does the SLO hold
// over a window of W requests (a day of traffic, say)?": a window's p99 is
// what a dashboard shows, and near a full KV cache it is set by rare
// preemption episodes that short replications never see, so it varies a
// lot from window to window. The answer is therefore stated as a share:
// the rate at which a W-request window meets every SLO term with
// probability `share` (default 95%).
//
// Method (independent replications of the window, each its own seed from
// a stream the screening search does not use):
//  - each window k has a threshold rate r_k, the largest rate at which it
//    meets the SLO: with common random numbers (the same seed draws the
//    same lengths and unit inter-arrival gaps at every rate) a window's
//    latencies grow with the rate, so r_k is found by a bracketing search
//    on log rate (false position, Illinois rule) to `rate_tol`;
//  - the answer is the (1 - share) quantile of r_k. log r_k is taken as
//    normal (its spread comes from many independent episodes per window),
//    so the quantile is exp(m - z s) with m, s the sample mean and standard
//    deviation of log r_k and z the standard normal quantile of `share`;
//    its 95% interval uses the large-sample variance of a normal quantile
//    estimate, s^2 (1/n + z^2 / (2 (n - 1))) (Hahn & Meeker, Statistical
//    Intervals, 1991, sec. 4.4), with Student's t;
//  - windows are added in rounds until the interval's relative half-width
//    is within `rate_precision` or `max_windows` are spent;
//  - thresholds are searched between `floor_rate` and `cap_rate` (the
//    saturation throughput's lower bound): a window that passes at the cap
//    counts as the cap, so the answer never exceeds it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/analysis/confidence.h"
#include "sim/analysis/parallel.h"
#include "sim/analysis/slo.h"
#include "sim/core/status.h"
#include "sim/scenario/scenario.h"

namespace servesim {

struct ValidationOptions {
  int64_t window_requests = 200000;  // requests per window (one run)
  double share = 0.95;               // windows that must meet the SLO
  int min_windows = 10;              // first round (and round size)
  int max_windows = 40;
  double rate_precision = 0.03;  // relative 95% half-width of the answer
  double rate_tol = 0.01;        // relative bracket that ends a window's search
  // Seeds: scenario seed + seed_offset + k, apart from the screening
  // replications (seed + 0, 1, ...).
  uint64_t seed_offset = 1000000;
  int jobs = 0;
};

// One window's search.
struct WindowThreshold {
  uint64_t seed = 0;
  double rate = 0;       // largest rate seen to meet the SLO (r_k)
  double fails_at = 0;   // smallest rate seen to miss it (0: none, capped)
  int runs = 0;          // runs this window took
  bool capped = false;   // met the SLO at the cap
  bool floored = false;  // missed it even at the floor
};

struct ValidatedCapacity {
  Interval rate;      // mean = the answer, lo/hi = its 95% interval
  double log_sd = 0;  // spread of log r_k across windows
  double share = 0;
  int64_t window_requests = 0;
  double window_hours = 0;   // a window's span at the answer
  int64_t requests_simulated = 0;
  int runs = 0;
  std::string stopped;  // "precision" or "budget"
  std::vector<WindowThreshold> windows;
  // Windows whose threshold is at or above the answer (the empirical share
  // that meets the SLO at the answer) and at the lower end.
  double met_at_answer = 0, met_at_lower = 0;
};

// The window's verdict at one rate: max over terms of value / limit
// (<= 1 meets the SLO), +inf for an unstable run.
struct WindowProbe {
  double ratio = 0;
  int64_t requests = 0;
};

// Searches every window's threshold starting near `start_rate`, within
// [floor_rate, cap_rate]. `base` is one replica's scenario (open loop).
StatusOr<ValidatedCapacity> ValidateCapacity(const Scenario& base,
                                             const std::vector<SloTerm>& slo,
                                             double start_rate, double floor_rate,
                                             double cap_rate,
                                             const ValidationOptions& o,
                                             ProgressBar* bar);

// The (1 - share) quantile of normal log thresholds with its 95% interval
// (see the banner); exported for tests.
Interval LowerQuantileOfLogNormal(const std::vector<double>& rates, double share);

}  // namespace servesim
