// One serving replica (see replica.h).
#include "sim/engine/replica.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace servesim {

Replica::Replica(const EngineConfig& config,
                 std::unique_ptr<SchedulerPolicy> policy,
                 const CostModel* cost_model, RequestTable* requests,
                 Recorder* recorder)
    : scheduler_(config, std::move(policy), requests),
      cost_model_(cost_model),
      recorder_(recorder) {}

SimTime Replica::StartStep(SimTime now) {
  if (step_running_ || now < step_end_) {
    std::fprintf(stderr,
                 "servesim: replica asked to start a step at %lld ns while its "
                 "step [%lld, %lld] ns is running\n",
                 static_cast<long long>(now), static_cast<long long>(step_start_),
                 static_cast<long long>(step_end_));
    std::abort();
  }
  const int64_t preempted_before = scheduler_.num_preemptions();
  if (scheduler_.Schedule(now, &batch_, &shape_) == 0) {
    busy_ = false;
    return -1;
  }
  busy_ = true;
  const StepCost cost = cost_model_->StepTime(shape_);
  total_cost_.gemm_s += cost.gemm_s;
  total_cost_.attn_prefill_s += cost.attn_prefill_s;
  total_cost_.attn_decode_s += cost.attn_decode_s;
  total_cost_.comm_s += cost.comm_s;
  total_cost_.other_s += cost.other_s;
  total_cost_.overhead_s += cost.overhead_s;
  int64_t tokens = 0;
  for (const ScheduledSeq& s : batch_) tokens += s.new_tokens;
  recorder_->RecordStep(static_cast<int64_t>(batch_.size()), tokens);
  last_step_.num_seqs = static_cast<int32_t>(batch_.size());
  last_step_.num_prefill_seqs = 0;
  for (const SeqWork& q : shape_.seqs) last_step_.num_prefill_seqs += !IsDecode(q);
  last_step_.num_tokens = tokens;
  last_step_.num_preempted =
      static_cast<int32_t>(scheduler_.num_preemptions() - preempted_before);
  last_step_.kv_blocks_used = scheduler_.kv().num_used();
  last_step_.kv_blocks_total = scheduler_.kv().num_blocks();
  // A step always advances time, so the simulation cannot stall at an
  // instant even if a cost model returns 0.
  const SimTime d = std::max<SimTime>(1, FromSeconds(cost.Total()));
  step_running_ = true;
  step_start_ = now;
  step_end_ = now + d;
  last_step_.start = now;
  last_step_.end = step_end_;
  return d;
}

void Replica::FinishStep(SimTime now, std::vector<int64_t>* finished) {
  if (!step_running_ || now != step_end_) {
    std::fprintf(stderr, "servesim: step finished at %lld ns, expected %lld ns\n",
                 static_cast<long long>(now), static_cast<long long>(step_end_));
    std::abort();
  }
  step_running_ = false;
  scheduler_.Commit(now, batch_, recorder_, finished);
  batch_.clear();
  if (check_invariants_) scheduler_.CheckInvariants();
}

}  // namespace servesim
