// Builds a RunSummary from a finished simulation (see summary.h).
#include "sim/report/summary.h"

#include <algorithm>

namespace servesim {
namespace {

// ITL percentiles come from the streaming histogram (in ns), the rest
// exactly.
SampleStats FromHistogram(const LogHistogram& h, const std::vector<double>& ps,
                          double scale) {
  SampleStats s;
  s.count = h.count();
  s.mean = h.mean() * scale;
  s.stddev = h.stddev() * scale;
  s.median = h.Percentile(50) * scale;
  s.min = static_cast<double>(h.min()) * scale;
  s.max = static_cast<double>(h.max()) * scale;
  for (double p : ps) s.percentiles.emplace_back(p, h.Percentile(p) * scale);
  return s;
}

// The most requests whose [send, finish) intervals overlap at one instant:
// sends and finishes each sorted and merged, a finish before a send at the
// same instant.
int64_t PeakConcurrency(std::vector<SimTime>& sends, std::vector<SimTime>& finishes) {
  std::sort(sends.begin(), sends.end());
  std::sort(finishes.begin(), finishes.end());
  int64_t now = 0, peak = 0;
  size_t j = 0;
  for (SimTime t : sends) {
    while (j < finishes.size() && finishes[j] <= t) ++j, --now;
    peak = std::max(peak, ++now);
  }
  return peak;
}

// What Summarize gives for n zeros, without the array.
SampleStats Zeros(int64_t n, const std::vector<double>& ps) {
  SampleStats s;
  s.count = n;
  for (double p : ps) s.percentiles.emplace_back(p, 0.0);
  return s;
}

// Whether any completed, measured request waited for a concurrency slot
// (else the from-arrival latencies equal the from-send ones).
bool AnySlotWait(const std::vector<Request>& requests) {
  for (const Request& r : requests) {
    if (r.measured && r.status == RequestStatus::kFinished && r.send != r.arrival) {
      return true;
    }
  }
  return false;
}

}  // namespace

RunSummary Summarize(const SimulationOutput& out, const SimulationInput& in,
                     const std::string& arrival_description,
                     double offered_rate) {
  RunSummary s;
  s.seed = in.seed;
  s.arrival = arrival_description;
  s.offered_rate = offered_rate;
  s.max_concurrency = in.workload.max_concurrency;
  s.percentiles = in.metrics.percentiles;
  s.warmup_s = in.metrics.warmup_s;
  s.warmup_requests = in.metrics.warmup_requests;
  s.created = static_cast<int64_t>(out.requests.size());
  s.rejected = out.rejected;
  s.incomplete = out.incomplete;
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

  std::vector<double> ttft, ttft_arr, tpot, e2el, e2el_arr, queue, slot;
  std::vector<SimTime> sends, finishes;  // of completed requests
  const bool slot_waits = AnySlotWait(out.requests);
  SimTime first_arrival = kNever, last_finish = 0;
  SimTime first_measured = kNever, last_measured = 0;
  int64_t measured = 0;
  for (const Request& r : out.requests) {
    if (r.measured) {
      ++measured;
      first_measured = std::min(first_measured, r.arrival);
      last_measured = std::max(last_measured, r.arrival);
    }
    if (r.status == RequestStatus::kRejected) {
      s.failed += r.measured;
      if (std::find(s.reject_reasons.begin(), s.reject_reasons.end(),
                    r.reject_reason) == s.reject_reasons.end()) {
        s.reject_reasons.emplace_back(r.reject_reason);
      }
      continue;
    }
    if (r.measured && r.cached_tokens >= 0) {
      s.prompt_tokens_admitted += r.prompt_len;
      s.cached_prompt_tokens += r.cached_tokens;
      s.prompt_full_blocks += r.prompt_len / in.engine.block_size;
      s.cached_blocks += r.cached_tokens / in.engine.block_size;
    }
    if (r.status != RequestStatus::kFinished) continue;
    if (!r.measured) {
      ++s.excluded_warmup;
      continue;
    }
    ++s.completed;
    s.total_input_tokens += r.prompt_len;
    s.total_output_tokens += r.output_len;
    s.preemptions += r.preemptions;
    s.preempted_requests += r.preemptions > 0;
    first_arrival = std::min(first_arrival, r.arrival);
    last_finish = std::max(last_finish, r.finish);
    ttft.push_back(ToMillis(r.first_token - r.send));
    e2el.push_back(ToMillis(r.finish - r.send));
    if (slot_waits) {
      ttft_arr.push_back(ToMillis(r.first_token - r.arrival));
      e2el_arr.push_back(ToMillis(r.finish - r.arrival));
      slot.push_back(ToMillis(r.send - r.arrival));
    }
    queue.push_back(ToMillis(r.first_scheduled - r.send));
    sends.push_back(r.send);
    finishes.push_back(r.finish);
    // vLLM's TPOT: time after the first token per remaining token.
    if (r.output_len > 1) {
      tpot.push_back(ToMillis(r.finish - r.first_token) / (r.output_len - 1));
    }
  }
  const auto& ps = s.percentiles;
  s.ttft_ms = Summarize(ttft, ps);
  s.tpot_ms = Summarize(tpot, ps);
  s.e2el_ms = Summarize(e2el, ps);
  s.queue_ms = Summarize(queue, ps);
  if (slot_waits) {
    s.ttft_from_arrival_ms = Summarize(ttft_arr, ps);
    s.e2el_from_arrival_ms = Summarize(e2el_arr, ps);
    s.slot_wait_ms = Summarize(slot, ps);
  } else {  // the same samples: no need to sort them again
    s.ttft_from_arrival_ms = s.ttft_ms;
    s.e2el_from_arrival_ms = s.e2el_ms;
    s.slot_wait_ms = Zeros(s.completed, ps);
  }
  s.itl_ms = FromHistogram(out.recorder.itl_ns(), ps, 1e-6);

  s.max_concurrent_requests = PeakConcurrency(sends, finishes);
  const Recorder& recorder = out.recorder;
  if (recorder.output_tokens() > 0 || s.completed == 0) {
    s.max_output_tokens_per_s = recorder.max_output_tokens_per_s();
  }
  if (s.completed > 0 && last_finish > first_arrival) {
    s.duration_s = ToSeconds(last_finish - first_arrival);
    s.request_throughput = s.completed / s.duration_s;
    s.input_throughput = s.total_input_tokens / s.duration_s;
    s.output_throughput = s.total_output_tokens / s.duration_s;
    s.total_token_throughput = s.input_throughput + s.output_throughput;
  }

  if (measured > 1 && last_measured > first_measured) {
    s.arrival_window_s = ToSeconds(last_measured - first_measured);
    const double per_s = static_cast<double>(measured - 1) / measured / s.arrival_window_s;
    s.steady_request_throughput = s.completed * per_s;
    s.steady_output_throughput = s.total_output_tokens * per_s;
    s.steady_input_throughput = s.total_input_tokens * per_s;
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
  s.classes = SummarizeClasses(out, in, s.duration_s);
  return s;
}

}  // namespace servesim
