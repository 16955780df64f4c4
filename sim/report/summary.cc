// Builds a RunSummary from a finished simulation (see summary.h).
#include "sim/report/summary.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "sim/cost/pipeline_cost_model.h"
#include "sim/report/arrival_window.h"
#include "sim/report/peak_concurrency.h"

namespace servesim {
namespace {

// What Summarize gives for n zeros, without the array.
SampleStats Zeros(int64_t n, const std::vector<double>& ps) {
  SampleStats s;
  s.count = n;
  for (double p : ps) s.percentiles.emplace_back(p, 0.0);
  return s;
}

// vLLM's TPOT: time after the first token per remaining token. Durations
// are >= 0, so the doubles are sorted by their bits in `buf` (a negative,
// which no run makes, would take a double buffer).
SampleStats TpotStats(const OutcomeTable& done, const std::vector<double>& ps,
                      std::vector<int64_t>* buf) {
  buf->clear();
  bool non_negative = true;
  done.ForEachChunk([&](const OutcomeTable::Chunk& c, size_t m) {
    for (size_t j = 0; j < m; ++j) {
      if (c.output_len[j] <= 1) continue;
      const double tpot = ToMillis(c.finish[j] - c.first_token[j]) / (c.output_len[j] - 1);
      non_negative &= !std::signbit(tpot) && !std::isnan(tpot);
      buf->push_back(std::bit_cast<int64_t>(tpot));
    }
  });
  if (non_negative) return SummarizeNonNegative(*buf, ps);
  std::vector<double> values;
  for (const int64_t b : *buf) values.push_back(std::bit_cast<double>(b));
  return Summarize(values, ps);
}

}  // namespace

RequestDigest DigestRequests(const SimulationOutput& out, const SimulationInput& in) {
  RequestDigest d(in);
  for (const Request& r : out.requests) d.Add(r);
  return d;
}

RunSummary Summarize(const SimulationOutput& out, const SimulationInput& in,
                     const std::string& arrival_description,
                     double offered_rate) {
  return Summarize(out, in, arrival_description, offered_rate, DigestRequests(out, in));
}

RunSummary Summarize(const SimulationOutput& out, const SimulationInput& in,
                     const std::string& arrival_description, double offered_rate,
                     const RequestDigest& d) {
  RunSummary s;
  s.seed = in.seed;
  s.arrival = arrival_description;
  s.offered_rate = offered_rate;
  s.max_concurrency = in.workload.max_concurrency;
  s.percentiles = in.metrics.percentiles;
  s.warmup_s = in.metrics.warmup_s;
  s.warmup_requests = in.metrics.warmup_requests;
  s.created = d.created;
  s.rejected = out.rejected;
  s.incomplete = out.incomplete;
  s.aborted = out.aborted;
  s.sessions_trace = in.workload.trace && in.workload.trace->format == TraceFormat::kSessions;
  s.session_turns_read = out.session_turns_read;
  s.session_turns_dropped = out.session_turns_dropped;
  // A run cut short is unstable whatever stopped it (the engine flags the
  // queue cap but not the rejection cap), so the flags always agree.
  s.cut_short = out.stopped_at_queue_cap;
  s.unstable =
      out.unstable || out.stopped_at_queue_cap || !out.unstable_reason.empty();
  s.unstable_reason = out.unstable_reason;
  s.total_cost = out.total_cost;
  s.num_gpu_blocks = in.engine.num_gpu_blocks;
  s.block_size = in.engine.block_size;
  s.prefix_caching = in.engine.prefix_caching;
  s.resume_cached_tokens = out.resume_cached_tokens;
  s.evictions = out.evictions;
  s.kv_offload = in.engine.cpu_blocks > 0;
  s.swap_preemption = in.engine.swap_preemption;
  s.cpu_blocks = in.engine.cpu_blocks;
  const OffloadStats& o = out.offload;
  s.swap_preemptions = o.swap_preemptions;
  s.swap_fallbacks = o.swap_fallbacks;
  s.swap_out_blocks = o.swap_out_blocks;
  s.swap_in_blocks = o.swap_in_blocks;
  s.load_blocks = o.load_blocks;
  s.store_blocks = o.store_blocks;
  s.cpu_evictions = o.cpu_evictions;
  s.bytes_to_cpu = o.bytes_to_cpu;
  s.bytes_to_gpu = o.bytes_to_gpu;
  s.transfer_stall_s = ToSeconds(o.stall);
  s.spec_tokens = in.engine.spec.num_speculative_tokens;
  if (in.disagg) s.spec_tokens = in.disagg->decode.engine.spec.num_speculative_tokens;
  s.spec_drafts = out.spec.drafts;
  s.spec_draft_tokens = out.spec.draft_tokens;
  s.spec_accepted_tokens = out.spec.accepted;
  if (out.spec.draft_tokens > 0) {
    s.spec_acceptance_rate =
        static_cast<double>(out.spec.accepted) / out.spec.draft_tokens;
  }
  if (out.spec.drafts > 0) {
    s.spec_mean_acceptance_length =
        1.0 + static_cast<double>(out.spec.accepted) / out.spec.drafts;
  }
  s.spec_draft_s = out.spec.draft_s;
  if (d.frontend) {
    RunSummary::Frontend& f = s.frontend;
    f.enabled = true;
    f.api_servers = ApiServerCount(in);
    f.output_ms = in.frontend.output_s * 1e3;
    std::vector<int64_t> ns = d.EngineTtfts();
    f.engine_ttft_ms = SummarizeMillis(ns, in.metrics.percentiles);
    ns.assign(d.api_waits.begin(), d.api_waits.end());
    f.to_engine_ms = SummarizeMillis(ns, in.metrics.percentiles);
    if (out.end_time > 0) {
      f.api_busy_fraction = out.api_busy_s / (f.api_servers * ToSeconds(out.end_time));
    }
  }

  s.failed = d.failed;
  s.reject_reasons = d.reject_reasons;
  s.prompt_tokens_admitted = d.prompt_tokens_admitted;
  s.cached_prompt_tokens = d.cached_prompt_tokens;
  s.cpu_cached_prompt_tokens = d.cpu_cached_prompt_tokens;
  s.prompt_full_blocks = d.prompt_full_blocks;
  s.cached_blocks = d.cached_blocks;
  s.excluded_warmup = d.excluded_warmup;
  s.completed = d.completed;
  s.total_input_tokens = d.total_input_tokens;
  s.total_output_tokens = d.total_output_tokens;
  s.preemptions = d.preemptions;
  s.preempted_requests = d.preempted_requests;
  const SimTime first_arrival = d.first_arrival, last_finish = d.last_finish;
  const SimTime first_measured = d.first_measured, last_measured = d.last_measured;
  const int64_t measured = d.measured;

  // One metric at a time in one buffer of integers, its ranks selected in
  // place: durations in ns (SummarizeMillis), TPOT's doubles by their bits.
  const OutcomeTable& done = d.outcomes;
  const size_t count = done.size();
  std::vector<int64_t> buf;
  buf.reserve(count);
  // A metric from two columns, chunk by chunk (the loops vectorise).
  using Col = SimTime (OutcomeTable::Chunk::*)[OutcomeTable::kChunk];
  auto stats = [&](Col to, Col from) {
    buf.resize(count);
    int64_t* out = buf.data();
    done.ForEachChunk([&](const OutcomeTable::Chunk& c, size_t m) {
      const SimTime* a = c.*to;
      const SimTime* b = c.*from;
      for (size_t j = 0; j < m; ++j) out[j] = a[j] - b[j];
      out += m;
    });
    return SummarizeMillis(buf, s.percentiles);
  };
  using C = OutcomeTable::Chunk;
  s.ttft_ms = stats(&C::first_token, &C::send);
  s.tpot_ms = TpotStats(done, s.percentiles, &buf);
  s.e2el_ms = stats(&C::finish, &C::send);
  s.queue_ms = stats(&C::first_scheduled, &C::send);
  const auto& ps = s.percentiles;
  if (d.slot_waits) {
    s.ttft_from_arrival_ms = stats(&C::first_token, &C::arrival);
    s.e2el_from_arrival_ms = stats(&C::finish, &C::arrival);
    s.slot_wait_ms = stats(&C::send, &C::arrival);
  } else {  // the same samples: no need to sort them again
    s.ttft_from_arrival_ms = s.ttft_ms;
    s.e2el_from_arrival_ms = s.e2el_ms;
    s.slot_wait_ms = Zeros(s.completed, ps);
  }
  buf = std::vector<int64_t>();
  // After the sorts: its arrays then take the memory their second array
  // held (allocated first, they would keep the heap that much higher).
  s.max_concurrent_requests = PeakConcurrency(done);
  s.itl_ms = SummarizeHistogram(out.recorder.itl_ns(), ps, 1e-6);

  const Recorder& recorder = out.recorder;
  if (recorder.output_tokens() > 0 || s.completed == 0) {
    s.max_output_tokens_per_s = recorder.max_output_tokens_per_s();
  }
  s.goodput_slo = in.metrics.goodput;
  if (!s.goodput_slo.empty()) {
    for (size_t i = 0; i < count; ++i) {
      const RequestOutcome o = done[i];
      s.good += MeetsGoodput(s.goodput_slo, ToMillis(o.first_token - o.send),
                             ToMillis(o.finish - o.send), o.output_len);
    }
  }
  if (s.completed > 0 && last_finish > first_arrival) {
    s.duration_s = ToSeconds(last_finish - first_arrival);
    s.request_throughput = s.completed / s.duration_s;
    s.request_goodput = s.good / s.duration_s;
    s.input_throughput = s.total_input_tokens / s.duration_s;
    s.output_throughput = s.total_output_tokens / s.duration_s;
    s.total_token_throughput = s.input_throughput + s.output_throughput;
  }

  if (measured > 1 && last_measured > first_measured) {
    s.arrival_window_s = ToSeconds(last_measured - first_measured);
    const WindowFlow f = MeasureWindowFlow(done, d.unfinished_arrivals,
                                           first_measured, last_measured);
    s.backlog_first_half = f.backlog_first_half;
    s.backlog_second_half = f.backlog_second_half;
    if (f.span_s > 0) {
      s.steady_request_throughput =
          static_cast<double>(f.departures) / f.span_s;
      s.steady_output_throughput =
          static_cast<double>(f.output_tokens) / f.span_s;
    }
    if (s.completed > 0) {
      s.steady_input_throughput = s.steady_request_throughput *
                                  static_cast<double>(s.total_input_tokens) /
                                  static_cast<double>(s.completed);
    }
  }

  const Recorder& rec = out.recorder;
  const LevelIntegrals avg = rec.WindowAverages();
  s.window_s =
      ToSeconds(std::max<SimTime>(0, rec.window_end() - rec.window_start()));
  const double replicas = std::max(1, in.num_replicas);
  s.gpu_busy_fraction = avg.busy / replicas;  // mean over replicas
  double blocks = 0;  // of every replica (a disaggregated run's pools differ)
  for (int32_t k = 0; k < static_cast<int32_t>(replicas); ++k) {
    blocks += std::max(1, EngineOfReplica(in, k).num_gpu_blocks);
  }
  s.kv_usage_mean = avg.kv_blocks_used / blocks;
  s.kv_usage_max = rec.WindowMax().kv_blocks_used / blocks;
  s.mean_in_system = avg.in_system;
  s.mean_waiting = avg.waiting;
  s.mean_running = avg.running;
  s.max_waiting = rec.WindowMax().waiting;
  s.cached_block_occupancy = avg.kv_blocks_cached / blocks;
  if (s.prompt_tokens_admitted > 0) {
    s.token_hit_rate =
        static_cast<double>(s.cached_prompt_tokens) / s.prompt_tokens_admitted;
  }
  if (s.prompt_tokens_admitted > 0) {
    s.cpu_tier_hit_rate = static_cast<double>(s.cpu_cached_prompt_tokens) /
                          static_cast<double>(s.prompt_tokens_admitted);
    s.gpu_tier_hit_rate = s.token_hit_rate - s.cpu_tier_hit_rate;
  }
  if (s.prompt_full_blocks > 0) {
    s.block_hit_rate =
        static_cast<double>(s.cached_blocks) / s.prompt_full_blocks;
  }
  const StepStats& st = rec.steps();
  s.steps = st.steps;
  if (st.steps > 0) {
    s.mean_batch_size = static_cast<double>(st.seqs) / st.steps;
    s.mean_tokens_per_step = static_cast<double>(st.tokens) / st.steps;
    s.batch_size_p50 = st.batch_size.Percentile(50);
    s.batch_size_p99 = st.batch_size.Percentile(99);
  }
  s.max_batch_size = st.max_batch;
  s.num_replicas = std::max(1, in.num_replicas);
  // Model FLOPs and bytes per GPU over the window, against the peaks of
  // every GPU of every replica's step (steps of a replica do not overlap).
  if (s.window_s > 0 && in.peak_flops_per_gpu > 0 && in.peak_hbm_bytes_per_s > 0) {
    s.mfu = st.flops / (s.window_s * s.num_replicas * in.peak_flops_per_gpu);
    s.mbu = st.hbm_bytes / (s.window_s * s.num_replicas * in.peak_hbm_bytes_per_s);
  }
  s.replicas = out.replicas;
  double routed_max = 0, routed_sum = 0, busy_max = 0, busy_sum = 0;
  for (const ReplicaStats& r : out.replicas) {
    routed_max = std::max(routed_max, static_cast<double>(r.routed));
    routed_sum += static_cast<double>(r.routed);
    busy_max = std::max(busy_max, r.busy_s);
    busy_sum += r.busy_s;
  }
  const double n =
      static_cast<double>(std::max<size_t>(1, out.replicas.size()));
  if (routed_sum > 0) s.routed_imbalance = routed_max / (routed_sum / n);
  if (busy_sum > 0) s.busy_imbalance = busy_max / (busy_sum / n);
  if (busy_sum > 0) s.transfer_stall_fraction = s.transfer_stall_s / busy_sum;
  if (const PipelineCostModel* p = AsPipeline(in.cost_model)) {
    s.pipeline_stages = p->num_stages();
    double in_run = 0;
    for (const ReplicaStats& r : out.replicas) in_run += r.busy_in_run_s;
    const double run_s = ToSeconds(out.end_time) * n;
    if (run_s > 0) s.stage_busy_fraction = in_run / run_s;
  }
  s.classes = SummarizeClasses(d, in, s.duration_s);
  return s;
}

}  // namespace servesim
