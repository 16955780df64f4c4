// The simulation driver: a clock and an event heap feeding one replica with
// traffic from the workload (open loop, open loop capped at max_concurrency,
// or closed loop), until the request/time bound or the queue cap.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/cost/cost_model.h"
#include "sim/engine/engine_config.h"
#include "sim/engine/request.h"
#include "sim/metrics/recorder.h"
#include "sim/workload/arrival_process.h"
#include "sim/workload/length_distribution.h"

namespace servesim {

struct WorkloadConfig {
  bool closed_loop = false;
  std::shared_ptr<const ArrivalProcess> arrival;  // open loop only
  int32_t concurrency = 0;                        // closed loop only
  double think_time_s = 0;                        // closed loop only
  std::shared_ptr<const LengthDistribution> input_len, output_len;
  int64_t num_requests = 0;  // 0: bounded by duration_s alone
  double duration_s = 0;     // 0: bounded by num_requests alone
  int32_t max_concurrency = 0;  // open loop: in-flight cap, 0 = none
};

struct MetricsConfig {
  double warmup_s = 0;
  int64_t warmup_requests = 0;
  std::vector<double> percentiles = {50, 90, 95, 99, 99.9};
};

struct LimitsConfig {
  int64_t max_queued = 100000;  // waiting + pending; beyond it: stop, unstable
};

struct SimulationInput {
  uint64_t seed = 1;
  WorkloadConfig workload;
  EngineConfig engine;
  const CostModel* cost_model = nullptr;
  MetricsConfig metrics;
  LimitsConfig limits;
  bool check_invariants = false;  // full KV/scheduler check after every step
};

struct SimulationOutput {
  RequestTable requests;  // every request created, by id
  Recorder recorder;
  StepCost total_cost;
  SimTime end_time = 0;
  int64_t rejected = 0;
  int64_t incomplete = 0;  // created but not finished (run stopped early)
  bool stopped_at_queue_cap = false;
  bool unstable = false;
  std::string unstable_reason;
};

SimulationOutput RunSimulation(const SimulationInput& input);

}  // namespace servesim
