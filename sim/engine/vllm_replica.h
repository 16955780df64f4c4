// One vLLM replica: scheduler + paged KV cache + cost model, driven like
// vLLM's engine core. Its GPU runs one step (batch) at a time; the engine
// loop schedules steps and commits their sampled tokens:
//  - synchronous scheduling (EngineCore.step): schedule, run, commit, repeat;
//  - async scheduling (EngineCore.step_with_batch_queue, batch queue of 2):
//    the next step is scheduled as soon as the current one is launched, so
//    a step is scheduled before the previous step's tokens are known, and
//    the engine blocks only when two steps are in flight;
//  - pipeline parallelism (hardware.pp, the same loop with a queue of one
//    batch per stage): batches are scheduled while the queue has room and
//    the last one computed tokens; a request whose token is in flight is
//    not scheduled again until it arrives (its prompt's next chunk may be:
//    vLLM's scheduler leaves such a request no new tokens, and with async
//    scheduling bans two of its tokens in flight, PR #32359), so the
//    running requests spread over the micro-batches in flight.
// StartStep runs the loop at `now` until it must wait for a step to end and
// returns that time; FinishStep commits that step when the time comes.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <vector>

#include "sim/cost/pipeline_cost_model.h"
#include "sim/engine/replica.h"
#include "sim/engine/scheduler.h"

namespace servesim {

class VllmReplica final : public Replica {
 public:
  VllmReplica(const EngineConfig& config, std::unique_ptr<SchedulerPolicy> policy,
              const CostModel* cost_model, RequestTable* requests, Recorder* recorder);

  const char* CheckServable(const Request& r) const override {
    return scheduler_.CheckServable(r);
  }
  void Submit(int64_t id) override { scheduler_.AddWaiting(id); }
  void Abort(SimTime now, int64_t id) override { scheduler_.Abort(now, id); }
  void ReleaseHeld(int64_t id) override { scheduler_.ReleaseHeld(id); }
  SimTime StartStep(SimTime now) override;
  void FinishStep(SimTime now, std::vector<int64_t>* finished) override;
  bool step_running() const override { return count_ > 0; }
  ReplicaLevels levels() const override {  // (AddLevels' fields)
    Levels l;
    AddLevels(&l);
    return {l.waiting, l.running, l.kv_blocks_used, l.kv_blocks_cached};
  }
  void AddLevels(Levels* l) const override {
    l->waiting += static_cast<int64_t>(scheduler_.num_waiting());
    l->running += static_cast<int64_t>(scheduler_.num_running());
    l->kv_blocks_used += scheduler_.kv().num_used();
    l->kv_blocks_cached += scheduler_.kv().num_cached_free();
    l->busy += count_ > 0 ? 1 : 0;
  }
  const KvCache* routing_kv() const override { return &scheduler_.kv(); }
  const Scheduler* vllm_scheduler() const override { return &scheduler_; }
  // (An observer that sees every sequence does it too.)
  void RequireExactCounters() override { scheduler_.DisableDecodeGroup(); }
  void EndRun() override { scheduler_.FlushDecodeGroup(); }

  const Scheduler& scheduler() const { return scheduler_; }
  // Called after every schedule (empty ones too) with the time the engine
  // scheduled it and its plan: conformance tests compare these with the
  // real engine's steps.
  using ScheduleObserver = std::function<void(SimTime, const StepPlan&)>;
  // (Turns the decode group off: the observer sees every sequence.)
  void set_schedule_observer(ScheduleObserver f) {
    observer_ = std::move(f);
    scheduler_.DisableDecodeGroup();
  }

 protected:
  int32_t kv_blocks_total() const override { return scheduler_.kv().num_blocks(); }

 private:
  struct InFlight {
    StepPlan plan;
    SimTime end = 0;
  };
  // Schedules one batch at `now` and queues it; false if it is empty.
  bool Launch(SimTime now);
  // How long a step waits for the transfers it needs (engine.kv_offload):
  // the copies to the CPU tier a swap preemption makes and the copies back
  // (swap-in, CPU prefix hits) run before its compute, each direction one
  // transfer of latency + bytes / bandwidth on each GPU's own link; the
  // copies of evicted prefix blocks overlap compute.
  SimTime TransferStall(const TransferCounts& t) const;
  // Speculative decoding: the proposer's k passes after this step, over
  // every sequence it samples for that does not finish (drafts for its next
  // step), each priced as draft_cost_fraction of the target's one-token
  // decode pass over the same sequences, component by component.
  StepCost DraftCost(const StepPlan& plan);
  // --check-invariants: the plan's token and finishing counts agree with
  // its batch.
  static void CheckPlanCounts(const StepPlan& plan);
  // The plan's counts added to `facts` (its transfers).
  static StepFacts Facts(const StepPlan& plan, StepFacts facts);

  Scheduler scheduler_;
  bool async_;
  bool holds_kv_;  // EngineConfig::hold_kv_after_finish
  // Pipeline parallelism: the stages' cost model (null: one stage), and
  // each stage's seconds for the step being launched.
  const PipelineCostModel* pipeline_ = nullptr;
  std::vector<double> stage_s_;
  // The batch queue's depth: 1 (synchronous), 2 (async scheduling) or the
  // pipeline's stages (vLLM's max_concurrent_batches).
  uint32_t depth_ = 1;
  // Steps in flight, oldest first from ring_[head_] (never more than
  // depth_; the ring's size is a power of two). Their plans' vectors stay
  // in place and are reused (a deque of moved vectors was ~2% of a chat
  // run).
  InFlight& InFlightAt(uint32_t i) { return ring_[(head_ + i) & mask_]; }
  std::vector<InFlight> ring_;
  uint32_t head_ = 0, count_ = 0, mask_ = 1;
  BatchShape draft_shape_;
  SpecDecodeConfig spec_;
  // Transfers scheduled by empty batches: the next step waits for them.
  TransferCounts pending_transfers_;
  double kv_block_bytes_, pcie_bytes_per_s_, pcie_latency_s_;
  ScheduleObserver observer_;
};

}  // namespace servesim
