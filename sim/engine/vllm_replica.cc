// One vLLM replica (see vllm_replica.h).
#include "sim/engine/vllm_replica.h"

#include <algorithm>

#include "sim/core/check.h"

namespace servesim {
namespace {

EngineConfig WithVerifyRuns(EngineConfig c, const CostModel* cost_model) {
  c.verify_runs = cost_model != nullptr && cost_model->PricesRuns();
  return c;
}

}  // namespace

VllmReplica::VllmReplica(const EngineConfig& config,
                         std::unique_ptr<SchedulerPolicy> policy,
                         const CostModel* cost_model, RequestTable* requests,
                         Recorder* recorder)
    : Replica(cost_model, recorder),
      scheduler_(WithVerifyRuns(config, cost_model), std::move(policy), requests),
      async_(config.async_scheduling),
      holds_kv_(config.hold_kv_after_finish),
      spec_(config.spec),
      kv_block_bytes_(config.kv_block_bytes),
      pcie_bytes_per_s_(config.pcie_bytes_per_s),
      pcie_latency_s_(config.pcie_latency_s) {
  pipeline_ = AsPipeline(cost_model);
  // The scheduler's stages (its decode cap) and the cost model's are one
  // scenario key, hardware.pp.
  SERVESIM_CHECK((pipeline_ != nullptr ? pipeline_->num_stages() : 1) == config.pipeline_stages,
                 "engine of %d pipeline stages priced by a cost model of %d",
                 config.pipeline_stages, pipeline_ != nullptr ? pipeline_->num_stages() : 1);
  depth_ = async_ ? 2 : 1;
  if (pipeline_ != nullptr) {
    SERVESIM_CHECK(!async_ && !spec_.on() && !holds_kv_ && pcie_bytes_per_s_ == 0,
                   "pipeline stages with async scheduling, speculative decoding, a "
                   "disaggregated role or KV offload (the scenario refuses them)");
    depth_ = static_cast<uint32_t>(pipeline_->num_stages());
    stage_s_.assign(depth_, 0.0);
    set_pipeline_stages(pipeline_->num_stages());
    // The decode group schedules every member each step: a pipeline's
    // decodes wait for their token, one micro-batch in flight each.
    scheduler_.DisableDecodeGroup();
  }
  uint32_t size = 2;
  while (size < depth_) size *= 2;
  ring_.resize(size);
  mask_ = size - 1;
}

SimTime VllmReplica::TransferStall(const TransferCounts& t) const {
  const auto one = [&](int64_t blocks) {
    return blocks == 0 ? 0
                       : FromSeconds(pcie_latency_s_ + static_cast<double>(blocks) *
                                                            kv_block_bytes_ / pcie_bytes_per_s_);
  };
  return one(t.swap_out) + one(t.swap_in + t.load);
}

StepCost VllmReplica::DraftCost(const StepPlan& plan) {
  // The scheduler counted the sequences it drafts for and their contexts
  // (the decode group's members included).
  draft_shape_.seqs.clear();
  draft_shape_.decode_seqs = plan.draft_seqs;
  draft_shape_.decode_context = plan.draft_context;
  if (draft_shape_.decode_seqs == 0) return {};
  const StepCost one = cost_model_->StepTime(draft_shape_);
  const double scale = spec_.num_speculative_tokens * spec_.draft_cost_fraction;
  StepCost c;
  c.gemm_s = one.gemm_s * scale;
  c.attn_prefill_s = one.attn_prefill_s * scale;
  c.attn_decode_s = one.attn_decode_s * scale;
  c.comm_s = one.comm_s * scale;
  c.other_s = one.other_s * scale;
  c.overhead_s = one.overhead_s * scale;
  return c;
}

bool VllmReplica::Launch(SimTime now) {
  InFlight& f = InFlightAt(count_);
  StepPlan& plan = f.plan;
  // The GPU runs steps in launch order: this one starts when the previous
  // one ends, so steps of one replica never overlap.
  const SimTime start = std::max(now, gpu_free());
  scheduler_.Schedule(start, &plan);
  if (observer_) observer_(now, plan);
  StepFacts facts;
  if (pcie_bytes_per_s_ > 0) {
    pending_transfers_ += plan.transfers;
    if (!plan.batch.empty()) {
      facts.moved = pending_transfers_;
      facts.stall = TransferStall(facts.moved);
      pending_transfers_ = TransferCounts{};
    }
  }
  if (plan.batch.empty()) {
    // An empty batch: nothing runs, nothing to commit (a pipeline's is
    // done at once, though its first stage may still be busy).
    f.end = pipeline_ != nullptr ? now : start;
    ++count_;
    return false;
  }
  if (pipeline_ != nullptr) {
    double send_s = 0;
    const StepCost cost = pipeline_->Stages(plan.shape, stage_s_.data(), &send_s);
    if (check_invariants_) CheckPlanCounts(plan);
    f.end = AccountPipelineStep(now, start, plan.shape, cost, stage_s_.data(), send_s,
                                Facts(plan, facts));
    ++count_;
    return true;
  }
  StepCost cost = cost_model_->StepTime(plan.shape);
  if (spec_.on() && spec_.draft_cost_fraction > 0) {
    const StepCost draft = DraftCost(plan);
    cost += draft;
    scheduler_.AddDraftSeconds(draft.Total());
  }
  if (check_invariants_) CheckPlanCounts(plan);
  f.end = AccountStep(now, start, plan.shape, cost, Facts(plan, facts));
  ++count_;
  return true;
}

Replica::StepFacts VllmReplica::Facts(const StepPlan& plan, StepFacts facts) {
  facts.num_seqs = static_cast<int32_t>(plan.num_seqs());
  facts.tokens = plan.tokens;
  facts.admitted = plan.admitted;
  facts.preempted = static_cast<int32_t>(plan.preempted.size());
  facts.finishing = plan.finishing;
  facts.cached_tokens = plan.cached_tokens;
  return facts;
}

void VllmReplica::CheckPlanCounts(const StepPlan& plan) {
  int64_t t = 0;
  int32_t l = plan.group_finishing;
  for (const ScheduledSeq& s : plan.batch) {
    t += s.new_tokens;
    l += s.last;
  }
  SERVESIM_CHECK(t == plan.tokens && l == plan.finishing,
                 "step of %lld tokens, %d finishing counted as %lld, %d",
                 static_cast<long long>(t), l, static_cast<long long>(plan.tokens),
                 plan.finishing);
}

SimTime VllmReplica::StartStep(SimTime now) {
  const size_t depth = depth_;
  SERVESIM_CHECK(count_ < depth,
                 "replica asked to start a step at %lld ns with %zu steps in flight "
                 "(the oldest ends at %lld ns)",
                 static_cast<long long>(now), static_cast<size_t>(count_),
                 static_cast<long long>(InFlightAt(0).end));
  // The engine loop: schedule while the batch queue has room and there is
  // work; otherwise wait for the oldest batch.
  while (scheduler_.has_requests()) {
    const bool ran = Launch(now);
    if (!async_ && pipeline_ == nullptr) {
      if (!ran) {
        count_ = 0;  // sync: nothing to wait for
        // vLLM's engine loop schedules again at once after an empty step.
        // One that preempted changed the state (a policy may preempt the
        // request it was scheduling first, vLLM's priority policy does),
        // so the next may run; each such pass shrinks the running set.
        if (!InFlightAt(0).plan.preempted.empty()) continue;
      }
      break;
    }
    if (count_ >= depth || !(ran || scheduler_.has_requests())) break;
  }
  // A prefill instance whose free blocks are all held for KV transfers may
  // have waiting requests and nothing it can run: it goes idle (an empty
  // batch in flight would end at `now` and be scheduled again at `now`,
  // forever) until a transfer ends and the driver starts it again.
  // A pipeline whose queue holds only empty batches has nothing to run
  // either (its requests wait for blocks or arrivals).
  if (holds_kv_ || pipeline_ != nullptr) {
    bool all_empty = true;
    for (uint32_t i = 0; i < count_; ++i) all_empty &= InFlightAt(i).plan.batch.empty();
    if (all_empty) count_ = 0;
  }
  if (count_ == 0) {
    busy_ = false;
    return -1;
  }
  busy_ = true;
  return std::max(now, InFlightAt(0).end);
}

void VllmReplica::FinishStep(SimTime now, std::vector<int64_t>* finished) {
  SERVESIM_CHECK(count_ > 0 && now >= InFlightAt(0).end,
                 "step committed at %lld ns before it ended", static_cast<long long>(now));
  InFlight& f = InFlightAt(0);
  head_ = (head_ + 1) & mask_;
  --count_;
  scheduler_.Commit(now, f.plan.batch, recorder_, finished);
  if (check_invariants_) scheduler_.CheckInvariants();
}

}  // namespace servesim
