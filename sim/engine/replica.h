// One serving replica: scheduler + paged KV cache + cost model, driven like
// vLLM's engine core. Its GPU runs one step (batch) at a time; the engine
// loop schedules steps and commits their sampled tokens:
//  - synchronous scheduling (EngineCore.step): schedule, run, commit, repeat;
//  - async scheduling (EngineCore.step_with_batch_queue, batch queue of 2):
//    the next step is scheduled as soon as the current one is launched, so
//    a step is scheduled before the previous step's tokens are known, and
//    the engine blocks only when two steps are in flight.
// StartStep runs the loop at `now` until it must wait for a step to end and
// returns that time; FinishStep commits that step when the time comes.
#pragma once

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <vector>

#include "sim/cost/cost_model.h"
#include "sim/cost/step_work.h"
#include "sim/engine/scheduler.h"
#include "sim/engine/step_record.h"

namespace servesim {

class Replica {
 public:
  Replica(const EngineConfig& config, std::unique_ptr<SchedulerPolicy> policy,
          const CostModel* cost_model, RequestTable* requests,
          Recorder* recorder);

  // Why the request can never be served, or nullptr.
  const char* CheckServable(const Request& r) const {
    return scheduler_.CheckServable(r);
  }
  void Submit(int64_t id) { scheduler_.AddWaiting(id); }
  // Prefill role (EngineConfig::hold_kv_after_finish): the KV transfer of
  // finished request `id` has ended; its blocks are freed.
  void ReleaseHeld(int64_t id) { scheduler_.ReleaseHeld(id); }
  // True from StartStep until the engine loop goes idle, including between
  // FinishStep and the StartStep that follows it: requests submitted then
  // join the next step, they never start one of their own.
  bool busy() const { return busy_; }
  // Runs the engine loop at `now`: schedules and launches steps until it
  // must wait for the oldest step in flight. Returns the time that step
  // ends (call FinishStep then), or -1 when there is nothing to run (idle).
  // Aborts if called while it should be waiting.
  SimTime StartStep(SimTime now);
  // Commits the oldest step in flight, which ends at `now`; appends
  // finished request ids. The replica stays busy until the next StartStep.
  void FinishStep(SimTime now, std::vector<int64_t>* finished);
  // A batch is executing or waiting to execute.
  bool step_running() const { return count_ > 0; }

  const Scheduler& scheduler() const { return scheduler_; }
  // Sum of every step's cost breakdown (where the time went).
  const StepCost& total_cost() const { return total_cost_; }
  int64_t steps() const { return steps_; }
  SimTime busy_time() const { return busy_time_; }  // sum of step durations
  // Of busy_time, the part before `t`: steps never overlap and those
  // launched but not ended run back to back until gpu_free_.
  SimTime busy_time_before(SimTime t) const {
    return busy_time_ - std::max<SimTime>(0, gpu_free_ - t);
  }
  // KV offload: time steps spent waiting for transfers to and from the CPU
  // tier (in busy_time), and the blocks those transfers moved.
  SimTime transfer_stall() const { return transfer_stall_; }
  // Abort on any broken invariant after every step (tests, debugging).
  // Counts each step's model FLOPs and bytes into the recorder (may be null).
  void set_work_counter(const StepWorkCounter* c) { work_counter_ = c; }
  void set_check_invariants(bool on) { check_invariants_ = on; }
  // Appends a record of every step launched to *sink (null: none), with
  // `index` as its replica number.
  void set_step_sink(std::vector<StepRecord>* sink, int32_t index) {
    step_sink_ = sink;
    index_ = index;
  }
  // Called after every schedule (empty ones too) with the time the engine
  // scheduled it and its plan: conformance tests compare these with the
  // real engine's steps.
  using ScheduleObserver = std::function<void(SimTime, const StepPlan&)>;
  // (Turns the decode group off: the observer sees every sequence.)
  void set_schedule_observer(ScheduleObserver f) {
    observer_ = std::move(f);
    scheduler_.DisableDecodeGroup();
  }
  // End of a run: requests still running get their exact counters.
  void FlushDecodeGroup() { scheduler_.FlushDecodeGroup(); }
  // Called with the record of every step launched (streamed exports).
  using StepCallback = std::function<void(const StepRecord&)>;
  void set_step_callback(StepCallback f) { on_step_ = std::move(f); }

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
  // The step's record for exports and step callbacks.
  StepRecord Record(SimTime now, SimTime start, const StepPlan& plan, SimTime end,
                    const TransferCounts& moved, SimTime stall, const StepCost& cost) const;

  Scheduler scheduler_;
  const StepWorkCounter* work_counter_ = nullptr;
  const CostModel* cost_model_;
  Recorder* recorder_;
  bool async_;
  bool holds_kv_;  // EngineConfig::hold_kv_after_finish
  // Steps in flight, oldest first: ring_[head_], then ring_[head_ ^ 1]
  // (never more than two: the batch queue's depth). Their plans' vectors
  // stay in place and are reused (a deque of moved vectors was ~2% of a
  // chat run).
  InFlight& InFlightAt(uint32_t i) { return ring_[(head_ + i) & 1]; }
  std::array<InFlight, 2> ring_;
  uint32_t head_ = 0, count_ = 0;
  BatchShape draft_shape_;
  SpecDecodeConfig spec_;
  StepCost total_cost_;
  SimTime gpu_free_ = 0;  // when the last launched step ends
  int64_t steps_ = 0;
  SimTime busy_time_ = 0;
  SimTime transfer_stall_ = 0;
  // Transfers scheduled by empty batches: the next step waits for them.
  TransferCounts pending_transfers_;
  double kv_block_bytes_, pcie_bytes_per_s_, pcie_latency_s_;
  bool busy_ = false;
  bool check_invariants_ = false;
  std::vector<StepRecord>* step_sink_ = nullptr;
  ScheduleObserver observer_;
  StepCallback on_step_;
  int32_t index_ = 0;
};

}  // namespace servesim
