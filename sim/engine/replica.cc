// What every replica shares (see replica.h), and the choice of engine.
#include "sim/engine/replica.h"

#include "sim/core/check.h"

#include "sim/engine/scheduler_policy.h"
#include "sim/engine/sglang_replica.h"
#include "sim/engine/vllm_replica.h"

namespace servesim {

SimTime Replica::AccountStep(SimTime now, SimTime start, const BatchShape& shape,
                             const StepCost& cost, const StepFacts& facts) {
  // A step always advances time, so the simulation cannot stall at an
  // instant even if a cost model returns 0.
  const SimTime d = std::max<SimTime>(1, FromSeconds(cost.Total()) + facts.stall);
  transfer_stall_ += facts.stall;
  const SimTime end = start + d;
  gpu_free_ = end;
  busy_time_ += d;
  Note(now, {start, end, end, start, d}, shape, cost, facts);
  // Last: the cost model has just stored `cost` 8 bytes at a time, and
  // this sum's 16-byte loads of it waited for those stores when it came
  // first (perf's hottest spot in this function).
  total_cost_ += cost;
  return end;
}

SimTime Replica::AccountPipelineStep(SimTime now, SimTime start, const BatchShape& shape,
                                     const StepCost& cost, const double* stage_s,
                                     double send_s, const StepFacts& facts) {
  SERVESIM_CHECK(!stage_free_.empty() && start >= stage_free_[0] && facts.stall == 0,
                 "pipeline step at %lld ns while its first stage is busy until %lld ns",
                 static_cast<long long>(start),
                 static_cast<long long>(stage_free_.empty() ? 0 : stage_free_[0]));
  total_cost_ += cost;
  const SimTime send = FromSeconds(send_s);
  const size_t n = stage_free_.size();
  StepSpan span{.start = start};
  SimTime at = start, stages_sum = 0;  // the batch reaches the next stage at `at`
  for (size_t i = 0; i < n; ++i) {
    const SimTime enter = std::max(at, stage_free_[i]);
    const SimTime d = std::max<SimTime>(1, FromSeconds(stage_s[i]));
    stage_free_[i] = enter + d;
    stages_sum += d;
    if (i + 1 == n) span.last_stage_start = enter;
    at = stage_free_[i] + send;
  }
  span.first_stage_end = stage_free_[0];
  span.end = stage_free_[n - 1];
  // Its share of the stages' GPU time, rounded up (so its stages' sum is
  // at most busy x n).
  const SimTime stages = static_cast<SimTime>(n);
  span.busy = (stages_sum + stages - 1) / stages;
  gpu_free_ = stage_free_[0];
  busy_time_ += span.busy;
  recent_[next_recent_] = span;
  next_recent_ = (next_recent_ + 1) % n;
  Note(now, span, shape, cost, facts);
  return span.end;
}

SimTime Replica::PipelineBusyBefore(SimTime t) const {
  // Only the batches in flight (at most one per stage) can end after t.
  double after = 0;
  for (const StepSpan& s : recent_) {
    if (s.end <= t || s.end <= s.start) continue;
    const SimTime from = std::max(s.start, t);
    after += static_cast<double>(s.busy) * static_cast<double>(s.end - from) /
             static_cast<double>(s.end - s.start);
  }
  return busy_time_ - static_cast<SimTime>(after + 0.5);
}

void Replica::Note(SimTime now, const StepSpan& span, const BatchShape& shape,
                   const StepCost& cost, const StepFacts& facts) {
  ++steps_;
  recorder_->RecordStep(facts.num_seqs, facts.tokens);
  if (work_counter_) {
    // A pipeline's GPUs each hold 1/stages of the model.
    const StepWork w = work_counter_->Count(shape);
    const double share = 1.0 / pipeline_stages();
    recorder_->RecordWork(w.flops * share, w.hbm_bytes * share);
  }
  if (step_sink_ != nullptr || on_step_) {
    const StepRecord rec = Record(now, span, shape, cost, facts);
    if (step_sink_ != nullptr) step_sink_->push_back(rec);
    if (on_step_) on_step_(rec);
  }
}

StepRecord Replica::Record(SimTime now, const StepSpan& span, const BatchShape& shape,
                           const StepCost& cost, const StepFacts& facts) const {
  int32_t prefill_seqs = 0;
  int32_t decode_seqs = static_cast<int32_t>(shape.decode_seqs);  // aggregated
  int64_t prefill_tokens = 0;
  int64_t context_tokens = shape.decode_context;
  for (const SeqWork& q : shape.seqs) {
    const bool decode = IsDecode(q);
    prefill_seqs += !decode;
    decode_seqs += decode;
    if (!decode) prefill_tokens += q.new_tokens;
    context_tokens += q.context_tokens;
  }
  for (const SeqRun& r : shape.runs) {
    prefill_seqs += static_cast<int32_t>(r.count);
    prefill_tokens += r.new_tokens * r.count;
    context_tokens += r.context_sum;
  }
  const ReplicaLevels l = levels();
  // Every field named (in declaration order): a default-constructed
  // record would first be zeroed whole, a measurable cost per step.
  return StepRecord{
      .replica = index_,
      .scheduled = now,
      .start = span.start,
      .end = span.end,
      .first_stage_end = span.first_stage_end,
      .last_stage_start = span.last_stage_start,
      .busy = span.busy,
      .pipeline_stages = pipeline_stages(),
      .num_seqs = facts.num_seqs,
      .num_prefill_seqs = prefill_seqs,
      .num_decode_seqs = decode_seqs,
      .num_tokens = facts.tokens,
      .prefill_tokens = prefill_tokens,
      .context_tokens = context_tokens,
      .num_admitted = facts.admitted,
      .num_preempted = facts.preempted,
      .num_finishing = facts.finishing,
      .cached_tokens = facts.cached_tokens,
      .kv_blocks_used = static_cast<int32_t>(l.kv_blocks_used),
      .kv_blocks_total = kv_blocks_total(),
      .num_running = static_cast<int32_t>(l.running),
      .num_waiting = static_cast<int32_t>(l.waiting),
      .swap_out_blocks = facts.moved.swap_out,
      .store_blocks = facts.moved.store,
      .swap_in_blocks = facts.moved.swap_in,
      .load_blocks = facts.moved.load,
      .transfer_stall = facts.stall,
      .gemm_s = cost.gemm_s,
      .attn_prefill_s = cost.attn_prefill_s,
      .attn_decode_s = cost.attn_decode_s,
      .comm_s = cost.comm_s,
      .other_s = cost.other_s,
      .overhead_s = cost.overhead_s,
  };
}

std::unique_ptr<Replica> MakeReplica(const EngineConfig& config, const CostModel* cost_model,
                                     RequestTable* requests, Recorder* recorder) {
  if (config.kind == EngineKind::kSglang) {
    return std::make_unique<SglangReplica>(config, cost_model, requests, recorder);
  }
  return std::make_unique<VllmReplica>(config, MakeSchedulerPolicy(config.policy), cost_model,
                                       requests, recorder);
}

}  // namespace servesim
