// Per-class summary (workload.classes): each class's latencies, SLO
// attainment and goodput over the same window as the run's throughput, so
// a priority or deadline policy's gain for one class is read beside what it
// costs the others.
#pragma once

#include <string>
#include <vector>

#include "sim/engine/simulation.h"
#include "sim/metrics/stats.h"
#include "sim/report/request_digest.h"

namespace servesim {

struct ClassSummary {
  std::string name;
  double share = 0;  // normalised share of traffic
  int32_t priority = 0;
  double ttft_slo_ms = 0, tpot_slo_ms = 0;  // 0: none
  // Counts as the run's: created (warm-up included), completed (measured
  // and finished), rejected, unfinished; their sums over classes equal the
  // run's (checked in tests).
  int64_t created = 0, completed = 0, excluded_warmup = 0, rejected = 0,
          failed = 0, unfinished = 0;
  int64_t input_tokens = 0, output_tokens = 0;
  int64_t preemptions = 0;
  // Completed requests whose TTFT and TPOT are within the class's SLOs (a
  // request with one output token has no TPOT and passes it), as vllm
  // bench serve --goodput; goodput = good / the run's duration_s.
  int64_t good = 0;
  double slo_attainment = 0;  // good / completed
  double goodput_rps = 0;
  double request_throughput = 0;  // completed / duration_s
  SampleStats ttft_ms, tpot_ms, e2el_ms, queue_ms;
};

// One entry per class, in workload.classes order (empty without classes).
// `duration_s` is the run's measured window (RunSummary::duration_s).
std::vector<ClassSummary> SummarizeClasses(const SimulationOutput& out,
                                           const SimulationInput& in,
                                           double duration_s);
std::vector<ClassSummary> SummarizeClasses(const RequestDigest& digest,
                                           const SimulationInput& in,
                                           double duration_s);

}  // namespace servesim
