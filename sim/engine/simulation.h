// The simulation driver: a clock and an event heap feeding one replica with
// traffic from the workload (open loop, open loop capped at max_concurrency,
// or closed loop), until the request/time bound or the queue cap.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/router.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/step_work.h"
#include "sim/engine/engine_config.h"
#include "sim/engine/request.h"
#include "sim/engine/step_record.h"
#include "sim/metrics/recorder.h"
#include "sim/workload/arrival_process.h"
#include "sim/workload/length_distribution.h"
#include "sim/workload/prefix_model.h"
#include "sim/workload/request_class.h"
#include "sim/workload/trace_reader.h"

namespace servesim {

struct WorkloadConfig {
  bool closed_loop = false;
  std::shared_ptr<const ArrivalProcess> arrival;  // open loop only
  int32_t concurrency = 0;                        // closed loop only
  double think_time_s = 0;                        // closed loop only
  // Lengths: from distributions (absent when a trace or a prefix model
  // that defines them supplies them).
  std::shared_ptr<const LengthDistribution> input_len, output_len;
  std::shared_ptr<const PrefixModel> prefix;  // shared prefixes; may be null
  std::optional<TraceOptions> trace;           // replay a log or trace
  // Multi-turn sessions: `arrival` then describes session arrivals; each
  // turn after the first is sent think_time_s after the previous answer
  // and its prompt is the whole history plus new input.
  struct Sessions {
    std::shared_ptr<const LengthDistribution> turns;
    double think_time_s = 0;
  };
  std::optional<Sessions> sessions;
  int64_t num_requests = 0;  // 0: bounded by duration_s alone
  double duration_s = 0;     // 0: bounded by num_requests alone
  int32_t max_concurrency = 0;  // open loop: in-flight cap, 0 = none
  // Request classes (workload.classes); empty: one anonymous class with
  // input_len/output_len, priority 0 and no SLO.
  RequestClasses classes;
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
  // Optional: model FLOPs and bytes of every step, summed over the
  // measurement window, with the GPU's peaks give MFU and MBU.
  const StepWorkCounter* work_counter = nullptr;
  double peak_flops_per_gpu = 0, peak_hbm_bytes_per_s = 0;
  MetricsConfig metrics;
  LimitsConfig limits;
  // A cluster of identical replicas behind a router (1: a single replica).
  int32_t num_replicas = 1;
  RouterConfig router;
  // Full KV/scheduler check after every step, and the run-level
  // invariants (sim/engine/run_invariants.h) at the end; aborts on a
  // violation with a description.
  bool check_invariants = false;
  bool record_steps = false;  // fill SimulationOutput::steps
  // Called with every step as it is launched (streamed per-step export);
  // may be empty.
  std::function<void(const StepRecord&)> on_step;
};

struct ReplicaStats {
  int64_t routed = 0;     // requests sent to this replica
  int64_t steps = 0;
  double busy_s = 0;      // time spent running steps
  int64_t cached_prompt_tokens = 0;  // prefix hits at first admission
  int64_t prompt_tokens = 0;
};

struct SimulationOutput {
  RequestTable requests;  // every request created, by id
  Recorder recorder;
  StepCost total_cost;
  SimTime end_time = 0;
  int64_t rejected = 0;
  int64_t incomplete = 0;  // created but not finished (run stopped early)
  bool stopped_at_queue_cap = false;
  std::string input_error;  // a trace's bad-line verdict at its end
  int64_t resume_cached_tokens = 0;  // recompute avoided after preemption
  int64_t evictions = 0;             // prefix-cache blocks evicted
  // Sessions traces: each request's parent request (-1 a first turn), by
  // id; empty otherwise. Turns never created because their parent was
  // rejected or the run's bound came first.
  std::vector<int64_t> parent_request;
  int64_t session_turns_dropped = 0;
  std::vector<ReplicaStats> replicas;
  std::vector<StepRecord> steps;  // in start order; only with record_steps
  bool unstable = false;
  std::string unstable_reason;
};

SimulationOutput RunSimulation(const SimulationInput& input);

}  // namespace servesim
