// One serving replica (see replica.h).
#include "sim/engine/replica.h"

#include <algorithm>

namespace servesim {

Replica::Replica(const EngineConfig& config,
                 std::unique_ptr<SchedulerPolicy> policy,
                 const CostModel* cost_model, RequestTable* requests,
                 Recorder* recorder)
    : scheduler_(config, std::move(policy), requests),
      cost_model_(cost_model),
      recorder_(recorder) {}

SimTime Replica::StartStep(SimTime now) {
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
  // A step always advances time, so the simulation cannot stall at an
  // instant even if a cost model returns 0.
  return std::max<SimTime>(1, FromSeconds(cost.Total()));
}

void Replica::FinishStep(SimTime now, std::vector<int64_t>* finished) {
  scheduler_.Commit(now, batch_, recorder_, finished);
  batch_.clear();
  busy_ = false;
  if (check_invariants_) scheduler_.CheckInvariants();
}

}  // namespace servesim
