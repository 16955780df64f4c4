// One serving replica (see replica.h).
#include "sim/engine/replica.h"

#include <algorithm>

#include "sim/core/check.h"

namespace servesim {

Replica::Replica(const EngineConfig& config,
                 std::unique_ptr<SchedulerPolicy> policy,
                 const CostModel* cost_model, RequestTable* requests,
                 Recorder* recorder)
    : scheduler_(config, std::move(policy), requests),
      cost_model_(cost_model),
      recorder_(recorder),
      async_(config.async_scheduling),
      holds_kv_(config.hold_kv_after_finish),
      spec_(config.spec),
      kv_block_bytes_(config.kv_block_bytes),
      pcie_bytes_per_s_(config.pcie_bytes_per_s),
      pcie_latency_s_(config.pcie_latency_s) {}

SimTime Replica::TransferStall(const TransferCounts& t) const {
  const auto one = [&](int64_t blocks) {
    return blocks == 0 ? 0
                       : FromSeconds(pcie_latency_s_ + static_cast<double>(blocks) *
                                                            kv_block_bytes_ / pcie_bytes_per_s_);
  };
  return one(t.swap_out) + one(t.swap_in + t.load);
}

StepCost Replica::DraftCost(const StepPlan& plan) {
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

bool Replica::Launch(SimTime now) {
  InFlight& f = InFlightAt(count_);
  StepPlan& plan = f.plan;
  // The GPU runs steps in launch order: this one starts when the previous
  // one ends, so steps of one replica never overlap.
  const SimTime start = std::max(now, gpu_free_);
  scheduler_.Schedule(start, &plan);
  if (observer_) observer_(now, plan);
  SimTime stall = 0;
  TransferCounts moved;
  if (pcie_bytes_per_s_ > 0) {
    pending_transfers_ += plan.transfers;
    if (!plan.batch.empty()) {
      moved = pending_transfers_;
      stall = TransferStall(moved);
      pending_transfers_ = TransferCounts{};
    }
  }
  if (plan.batch.empty()) {
    f.end = start;  // an empty batch: nothing runs, nothing to commit
    ++count_;
    return false;
  }
  StepCost cost = cost_model_->StepTime(plan.shape);
  if (spec_.on() && spec_.draft_cost_fraction > 0) {
    const StepCost draft = DraftCost(plan);
    cost += draft;
    scheduler_.AddDraftSeconds(draft.Total());
  }
  total_cost_ += cost;
  // A step always advances time, so the simulation cannot stall at an
  // instant even if a cost model returns 0.
  const SimTime d = std::max<SimTime>(1, FromSeconds(cost.Total()) + stall);
  transfer_stall_ += stall;
  f.end = start + d;
  gpu_free_ = f.end;
  ++steps_;
  busy_time_ += d;
  if (check_invariants_) CheckPlanCounts(plan);
  recorder_->RecordStep(static_cast<int64_t>(plan.num_seqs()), plan.tokens);
  if (work_counter_) {
    const StepWork w = work_counter_->Count(plan.shape);
    recorder_->RecordWork(w.flops, w.hbm_bytes);
  }
  if (step_sink_ != nullptr || on_step_) {
    const StepRecord rec = Record(now, start, plan, f.end, moved, stall, cost);
    if (step_sink_ != nullptr) step_sink_->push_back(rec);
    if (on_step_) on_step_(rec);
  }
  ++count_;
  return true;
}

void Replica::CheckPlanCounts(const StepPlan& plan) {
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

StepRecord Replica::Record(SimTime now, SimTime start, const StepPlan& plan, SimTime end,
                           const TransferCounts& moved, SimTime stall,
                           const StepCost& cost) const {
  const BatchShape& shape = plan.shape;
  int32_t prefill_seqs = 0;
  int32_t decode_seqs = static_cast<int32_t>(shape.decode_seqs);  // the group
  int64_t prefill_tokens = 0;
  int64_t context_tokens = shape.decode_context;
  for (const SeqWork& q : shape.seqs) {
    const bool decode = IsDecode(q);
    prefill_seqs += !decode;
    decode_seqs += decode;
    if (!decode) prefill_tokens += q.new_tokens;
    context_tokens += q.context_tokens;
  }
  // Every field named (in declaration order): a default-constructed
  // record would first be zeroed whole, a measurable cost per step.
  return StepRecord{
      .replica = index_,
      .scheduled = now,
      .start = start,
      .end = end,
      .num_seqs = static_cast<int32_t>(plan.num_seqs()),
      .num_prefill_seqs = prefill_seqs,
      .num_decode_seqs = decode_seqs,
      .num_tokens = plan.tokens,
      .prefill_tokens = prefill_tokens,
      .context_tokens = context_tokens,
      .num_admitted = plan.admitted,
      .num_preempted = static_cast<int32_t>(plan.preempted.size()),
      .num_finishing = plan.finishing,
      .cached_tokens = plan.cached_tokens,
      .kv_blocks_used = scheduler_.kv().num_used(),
      .kv_blocks_total = scheduler_.kv().num_blocks(),
      .num_running = static_cast<int32_t>(scheduler_.num_running()),
      .num_waiting = static_cast<int32_t>(scheduler_.num_waiting()),
      .swap_out_blocks = moved.swap_out,
      .store_blocks = moved.store,
      .swap_in_blocks = moved.swap_in,
      .load_blocks = moved.load,
      .transfer_stall = stall,
      .gemm_s = cost.gemm_s,
      .attn_prefill_s = cost.attn_prefill_s,
      .attn_decode_s = cost.attn_decode_s,
      .comm_s = cost.comm_s,
      .other_s = cost.other_s,
      .overhead_s = cost.overhead_s,
  };
}

SimTime Replica::StartStep(SimTime now) {
  const size_t depth = async_ ? 2 : 1;
  SERVESIM_CHECK(count_ < depth,
                 "replica asked to start a step at %lld ns with %zu steps in flight "
                 "(the oldest ends at %lld ns)",
                 static_cast<long long>(now), static_cast<size_t>(count_),
                 static_cast<long long>(InFlightAt(0).end));
  // The engine loop: schedule while the batch queue has room and there is
  // work; otherwise wait for the oldest batch.
  while (scheduler_.has_requests()) {
    const bool ran = Launch(now);
    if (!async_) {
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
  if (holds_kv_) {
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

void Replica::FinishStep(SimTime now, std::vector<int64_t>* finished) {
  SERVESIM_CHECK(count_ > 0 && now >= InFlightAt(0).end,
                 "step committed at %lld ns before it ended", static_cast<long long>(now));
  InFlight& f = InFlightAt(0);
  head_ ^= 1;
  --count_;
  scheduler_.Commit(now, f.plan.batch, recorder_, finished);
  if (check_invariants_) scheduler_.CheckInvariants();
}

}  // namespace servesim
