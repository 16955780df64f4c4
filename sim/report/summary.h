// Summary of one run: per-request latencies (warm-up excluded) with their
// percentiles, throughput, and the time-averaged state of the replica, all
// with the context needed to read them.
#pragma once

#include <string>
#include <vector>

#include "sim/engine/simulation.h"
#include "sim/metrics/stats.h"
#include "sim/report/class_summary.h"
#include "sim/report/request_digest.h"

namespace servesim {

struct RunSummary {
  // Context.
  uint64_t seed = 0;
  std::string arrival;      // arrival process, described
  double offered_rate = 0;  // requests/s, 0 for closed loop
  int32_t max_concurrency = 0;
  int32_t block_size = 16;
  std::vector<double> percentiles;
  double warmup_s = 0;
  int64_t warmup_requests = 0;

  // Counts.
  int64_t created = 0;
  int64_t completed = 0;        // measured and finished
  int64_t excluded_warmup = 0;  // finished but inside the warm-up
  int64_t rejected = 0;
  int64_t failed = 0;  // measured and rejected (vLLM's "failed")
  int64_t incomplete = 0;
  int64_t aborted = 0;  // serve: ended because their clients went away
  int64_t total_input_tokens = 0, total_output_tokens = 0;  // completed only
  int64_t preemptions = 0, preempted_requests = 0;

  // Throughput over the measured window (first measured arrival to last
  // measured finish), in the units vllm bench serve uses.
  double duration_s = 0;
  double request_throughput = 0, input_throughput = 0, output_throughput = 0,
         total_token_throughput = 0;
  // Steady-state throughput (what sweep, loops and capacity use): measured
  // requests finished per second of the arrival window (first to last
  // measured arrival) after its lead-in, the window's first tenth
  // (arrival_window.h). Requests finishing after the last arrival are not
  // counted, so an overloaded run reads its service capacity, never its
  // offered rate; a stable run reads its arrival rate. Input tokens are
  // those departures times the mean prompt of the completed requests.
  double arrival_window_s = 0;
  double steady_request_throughput = 0, steady_output_throughput = 0,
         steady_input_throughput = 0;
  // Measured requests in system, time-averaged over the first and the
  // second half of the arrival window after its lead-in (the window's
  // first tenth, arrival_window.h): a backlog that grows between them
  // is a queue still building when arrivals stopped
  // (sim/analysis/stability.h judges it).
  double backlog_first_half = 0, backlog_second_half = 0;
  // As vllm bench serve: most completed requests in flight at one instant
  // ([send, finish) intervals, a finish before a send at the same instant),
  // and most output tokens delivered in one second counted from the start of
  // the window (-1 when the engine did not report its tokens to the
  // recorder).
  int64_t max_concurrent_requests = 0;
  int64_t max_output_tokens_per_s = -1;

  // vllm bench serve --goodput (metrics.goodput; empty: not asked for):
  // completed requests meeting every SLO (sim/metrics/goodput.h), and
  // request_goodput = good / duration_s, the window request_throughput
  // divides by (vLLM divides both by its benchmark duration).
  GoodputSlo goodput_slo;
  int64_t good = 0;
  double request_goodput = 0;

  // Latencies in milliseconds. TTFT and E2E are from the actual send time
  // (what a load generator measures); *_from_arrival include the wait for
  // a max_concurrency slot, from the intended arrival time.
  SampleStats ttft_ms, ttft_from_arrival_ms, tpot_ms, itl_ms, e2el_ms,
      e2el_from_arrival_ms, queue_ms, slot_wait_ms;

  // Replica state, time-averaged over the window [first, last measured
  // arrival].
  double window_s = 0;
  // Engine busy: share of time a step runs (any batch), not a utilization
  // of the GPU (the JSON key keeps its first name).
  double gpu_busy_fraction = 0;
  // Model FLOPs utilization and memory-bandwidth utilization over the
  // window (sim/cost/step_work.h): how loaded the GPU is, where busy time
  // is 100% whenever any request is in flight. -1: unknown (a cost model
  // without a FLOP basis, CostModel::HasHardwareBasis; pools of two GPU
  // kinds).
  double mfu = -1, mbu = -1;
  // Pipeline stages (hardware.pp): how many, and the share of the run
  // their GPUs were busy, averaged over stages and replicas (one batch in
  // flight at a time keeps it at most 1 / stages).
  int32_t pipeline_stages = 1;
  double stage_busy_fraction = 0;
  double kv_usage_mean = 0, kv_usage_max = 0;  // fraction of blocks in use
  int32_t num_gpu_blocks = 0;
  double mean_in_system = 0, mean_waiting = 0, mean_running = 0;
  int64_t max_waiting = 0;
  int64_t steps = 0;
  double mean_batch_size = 0, mean_tokens_per_step = 0;
  int64_t max_batch_size = 0;
  double batch_size_p50 = 0, batch_size_p99 = 0;
  StepCost total_cost;

  // Prefix caching, over measured requests at their first admission.
  bool prefix_caching = false;
  int64_t prompt_tokens_admitted = 0;  // prompt tokens of admitted requests
  int64_t cached_prompt_tokens = 0;    // of those, served from cache
  int64_t prompt_full_blocks = 0;      // full prompt blocks looked up
  int64_t cached_blocks = 0;           // of those, hits
  double token_hit_rate = 0, block_hit_rate = 0;
  int64_t resume_cached_tokens = 0;  // recompute avoided after preemption
  int64_t evictions = 0;
  double cached_block_occupancy = 0;  // time-avg share of blocks cached-free

  // KV offload (engine.kv_offload, engine.preemption swap). Tier hit rates
  // are shares of the measured requests' prompt tokens at first admission
  // (gpu + cpu = token_hit_rate); transfers, bytes (all GPUs) and stall
  // are over the whole run, stall also as a share of the replicas' busy
  // time.
  bool kv_offload = false, swap_preemption = false;
  int64_t cpu_blocks = 0;  // CPU tier of one replica
  int64_t cpu_cached_prompt_tokens = 0;
  double gpu_tier_hit_rate = 0, cpu_tier_hit_rate = 0;
  int64_t swap_preemptions = 0, swap_fallbacks = 0;
  int64_t swap_out_blocks = 0, swap_in_blocks = 0, load_blocks = 0,
          store_blocks = 0, cpu_evictions = 0;
  double bytes_to_cpu = 0, bytes_to_gpu = 0;
  double transfer_stall_s = 0, transfer_stall_fraction = 0;
  // Speculative decoding (engine.speculative_decoding), over every step of
  // the run, as vLLM's spec decode metrics: k (0: off), drafts (sequence-
  // steps that verified >= 1 draft token), draft and accepted tokens;
  // acceptance rate = accepted / draft tokens, mean acceptance length =
  // 1 + accepted / drafts (tokens a verify step delivers, the target's own
  // token included); proposer seconds priced into the steps.
  int32_t spec_tokens = 0;
  int64_t spec_drafts = 0, spec_draft_tokens = 0, spec_accepted_tokens = 0;
  double spec_acceptance_rate = 0, spec_mean_acceptance_length = 0;
  double spec_draft_s = 0;

  // The frontend (sim/engine/frontend.h): with it on, TTFT and E2E above
  // are what the client sees; here the part before the engine core had each
  // request, the constant output delay, TTFT as the engine sees it, and how
  // busy the API servers were over the run.
  struct Frontend {
    bool enabled = false;
    int32_t api_servers = 0;
    double output_ms = 0;
    SampleStats to_engine_ms, engine_ttft_ms;
    double api_busy_fraction = 0;
  } frontend;

  // Cluster: per-replica share of requests and busy time, and imbalance
  // (max over mean of routed requests; 1 = perfectly even).
  int32_t num_replicas = 1;
  std::vector<ReplicaStats> replicas;
  double routed_imbalance = 1, busy_imbalance = 1;

  // The run stopped before its request/time bound (limits.max_queued
  // waiting or rejected requests); such a run is always unstable.
  bool cut_short = false;
  bool unstable = false;
  std::string unstable_reason;
  std::vector<std::string> reject_reasons;  // distinct, for the report
  // Sessions traces (sessions_trace): turns read, and those never created
  // by why (SimulationOutput::SessionTurnDrops).
  bool sessions_trace = false;
  int64_t session_turns_read = 0;
  SimulationOutput::SessionTurnDrops session_turns_dropped;

  // Per request class (workload.classes); empty without classes.
  std::vector<ClassSummary> classes;
};

RunSummary Summarize(const SimulationOutput& out, const SimulationInput& in,
                     const std::string& arrival_description,
                     double offered_rate);
// The same from a digest of the requests (all of out.requests, or what a
// run that did not keep them streamed to it, in id order); out's other
// fields as above.
RunSummary Summarize(const SimulationOutput& out, const SimulationInput& in,
                     const std::string& arrival_description, double offered_rate,
                     const RequestDigest& digest);
RequestDigest DigestRequests(const SimulationOutput& out, const SimulationInput& in);

}  // namespace servesim
