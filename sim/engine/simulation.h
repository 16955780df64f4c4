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
#include "sim/core/chunked_vector.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/step_work.h"
#include "sim/engine/engine_config.h"
#include "sim/engine/frontend.h"
#include "sim/engine/request.h"
#include "sim/engine/spec_decode.h"
#include "sim/engine/step_record.h"
#include "sim/metrics/goodput.h"
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
  GoodputSlo goodput;  // metrics.goodput (vllm bench serve --goodput); empty: none
};

struct LimitsConfig {
  int64_t max_queued = 100000;  // waiting + pending; beyond it: stop, unstable
};

// Disaggregated prefill/decode (vLLM's disaggregated prefill: a proxy sends
// each request to a prefill instance with max_tokens=1, then to a decode
// instance, which pulls the prompt's KV over a link and generates every
// output token the client sees; README "Disaggregation"). Replicas
// [0, prefill.num_replicas) form the prefill pool, the rest the decode pool.
struct PoolConfig {
  EngineConfig engine;
  const CostModel* cost_model = nullptr;
  const StepWorkCounter* work_counter = nullptr;
  int32_t num_replicas = 1;
  RouterConfig router;
};

struct DisaggConfig {
  PoolConfig prefill, decode;
  // One link per decode instance, FIFO; one NIC per decode GPU, each
  // receiving its shard of the KV: a transfer of a p-token prompt takes
  // latency + p * kv_bytes_per_token_per_gpu / bytes_per_s.
  double link_bytes_per_s = 0;
  double link_latency_s = 0;
  double kv_bytes_per_token_per_gpu = 0;  // at the decode pool's tp
  int32_t decode_gpus = 1;                // decode tp (links per instance)
};

// Where a run is, for a progress line (SimulationInput::on_progress).
struct RunProgress {
  SimTime now = 0;     // simulated time reached
  int64_t done = 0;    // requests finished or rejected
  int64_t created = 0;
};

struct DisaggRequest;  // below

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
  // Called once for every request created, in id order: when it is done
  // (finished or rejected) and no step in flight refers to it, or at the
  // end of the run; may be empty.
  std::function<void(const Request&)> on_request;
  // Disaggregated runs: called with each request and its path through the
  // pools right after on_request; may be empty.
  std::function<void(const Request&, const DisaggRequest&)> on_disagg_request;
  // Called every kProgressEvents events with where the run is; may be
  // empty. Cheaper than on_step, which builds a record of every step.
  std::function<void(const RunProgress&)> on_progress;
  static constexpr int64_t kProgressEvents = 1 << 14;
  // false: each request's memory is freed once on_request has seen it, so
  // a run holds only the requests in flight and SimulationOutput::requests
  // is empty at the end (with disaggregation, the prefill copies and
  // DisaggOutput::requests too). Ignored (the requests are kept) with
  // sessions traces and check_invariants, which read finished requests
  // later.
  bool keep_requests = true;
  // Disaggregated prefill/decode; when set, num_replicas is the total of
  // both pools and engine / cost_model / router are the decode pool's.
  std::optional<DisaggConfig> disagg;
  // The request path outside the scheduler (API server, output streaming,
  // client turnaround); off: requests reach the engine as sent.
  FrontendConfig frontend;
};

// The API servers of in.frontend: as given, else one per replica that
// requests enter (the prefill pool's when disaggregated).
int32_t ApiServerCount(const SimulationInput& in);
// How long after the engine made a token the client has it: the
// frontend's output_s, 0 without a frontend.
SimTime ClientLag(const SimulationInput& in);

// The engine settings of replica k (its pool's, when disaggregated).
const EngineConfig& EngineOfReplica(const SimulationInput& in, int32_t k);
class Replica;
struct ReplicaStats;
struct SimulationOutput;
// At the end of a run (both drivers: RunSimulation's and serve's): replica
// `rep`'s counts into *st, and its cost, cache, speculative decoding and
// KV offload counters added to *out. `end`: the run's end.
void CollectReplicaStats(const Replica& rep, const EngineConfig& e, SimTime end,
                         ReplicaStats* st, SimulationOutput* out);

struct ReplicaStats {
  int64_t routed = 0;     // requests sent to this replica
  int64_t steps = 0;
  double busy_s = 0;      // time spent running steps
  // Of busy_s, the part before SimulationOutput::end_time: a run stopped
  // early (limits.max_queued) ends with steps still in flight.
  double busy_in_run_s = 0;
  int64_t cached_prompt_tokens = 0;  // prefix hits at first admission
  int64_t prompt_tokens = 0;
};

// One request's path through a disaggregated deployment; -1: not yet.
struct DisaggRequest {
  int32_t prefill_replica = -1;
  SimTime prefill_end = -1;     // its prompt's KV complete (token discarded)
  SimTime transfer_start = -1;  // the decode instance's link took it
  SimTime transfer_end = -1;    // the KV arrived; submitted to decode
  double bytes = 0;             // moved, over all of the decode GPUs' links
};

struct DisaggOutput {
  int32_t num_prefill = 0;  // replicas [0, num_prefill) are the prefill pool
  // The prefill instances' copies of the requests (same ids, output_len 1).
  RequestTable prefill_requests;
  // By request id, chunked as the request tables (a run that retires its
  // requests frees them with theirs).
  ChunkedVector<DisaggRequest, RequestTable::kShift> requests;
  int64_t transfers = 0;                // ended
  double bytes_moved = 0;               // by ended transfers
  std::vector<SimTime> link_busy;       // per decode instance
  // Of link_busy, the part before end_time (a run cut short ends with
  // transfers still queued on the link).
  std::vector<SimTime> link_busy_in_run;
};

// KV offload (engine.kv_offload), summed over replicas. Bytes count every
// GPU's shard (blocks x block bytes x GPUs of the instance).
struct OffloadStats {
  int64_t swap_preemptions = 0;  // preemptions that swapped out
  int64_t swap_fallbacks = 0;    // swap found no room: recomputed instead
  int64_t swap_out_blocks = 0, swap_in_blocks = 0;
  int64_t load_blocks = 0;   // CPU-tier prefix hits copied to the GPU
  int64_t store_blocks = 0;  // GPU prefix evictions copied to the CPU tier
  int64_t cpu_evictions = 0;  // prefix blocks the CPU tier dropped
  double bytes_to_cpu = 0, bytes_to_gpu = 0;
  SimTime stall = 0;  // step time spent waiting for transfers
};

struct SimulationOutput {
  RequestTable requests;  // every request created, by id (empty when
                          // SimulationInput::keep_requests was false)
  Recorder recorder;
  StepCost total_cost;
  SimTime end_time = 0;
  int64_t rejected = 0;
  int64_t incomplete = 0;  // created but not finished (run stopped early)
  int64_t aborted = 0;     // ended because their clients went away (serve)
  bool stopped_at_queue_cap = false;
  std::string input_error;  // a trace's bad-line verdict at its end
  int64_t resume_cached_tokens = 0;  // recompute avoided after preemption
  int64_t evictions = 0;             // prefix-cache blocks evicted
  double api_busy_s = 0;  // frontend: API-server work (each server's busier
                          // thread), summed over servers
  SimTime client_lag = 0;  // ClientLag of the run's input
  OffloadStats offload;
  SpecDecodeStats spec;  // speculative decoding, all replicas, whole run
  // Sessions traces: each request's parent request (-1 a first turn), by
  // id; empty otherwise.
  std::vector<int64_t> parent_request;
  // Sessions traces: turns read but never created, by why (a turn dropped
  // takes its own later turns with it, counted under the same reason).
  struct SessionTurnDrops {
    int64_t parent_rejected = 0;  // an earlier turn of it was rejected
    int64_t past_bound = 0;       // due after the run's bound (requests, time)
    int64_t waiting_at_end = 0;   // not yet sent when the run ended
    int64_t total() const { return parent_rejected + past_bound + waiting_at_end; }
  };
  SessionTurnDrops session_turns_dropped;
  int64_t session_turns_read = 0;  // records of a sessions trace read
  std::vector<ReplicaStats> replicas;
  std::vector<StepRecord> steps;  // in start order; only with record_steps
  bool unstable = false;
  std::string unstable_reason;
  std::optional<DisaggOutput> disagg;  // with SimulationInput::disagg
};

// The event loop alone (simulation.cc).
SimulationOutput Simulate(const SimulationInput& input);
// Simulate, then with check_invariants the run-level invariants
// (run_invariants.h) on its output: the driver does not check itself.
SimulationOutput RunSimulation(const SimulationInput& input);

}  // namespace servesim
