// One serving replica: scheduler + paged KV cache + cost model. It runs one
// iteration at a time: StartStep schedules a batch and prices it with the
// cost model; FinishStep applies it when the simulated step time has passed.
#pragma once

#include <memory>
#include <vector>

#include "sim/cost/cost_model.h"
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
  // True from StartStep until the replica goes idle: while a step runs,
  // and between FinishStep and the StartStep that follows it (the driver
  // may send new requests then; they join the next step, they never start
  // one of their own).
  bool busy() const { return busy_; }
  // Schedules the next batch at `now`; returns its duration, or -1 when
  // there is nothing to run (the replica goes idle). Aborts if a step is
  // still running: one step at a time per replica, by construction.
  SimTime StartStep(SimTime now);
  // Applies the running step at `now`; appends finished request ids. The
  // replica stays busy until the next StartStep.
  void FinishStep(SimTime now, std::vector<int64_t>* finished);
  bool step_running() const { return step_running_; }
  // The step most recently started (replica index left 0 for the caller).
  const StepRecord& last_step() const { return last_step_; }

  const Scheduler& scheduler() const { return scheduler_; }
  // Sum of every step's cost breakdown (where the time went).
  const StepCost& total_cost() const { return total_cost_; }
  // Abort on any broken invariant after every step (tests, debugging).
  void set_check_invariants(bool on) { check_invariants_ = on; }

 private:
  Scheduler scheduler_;
  const CostModel* cost_model_;
  Recorder* recorder_;
  std::vector<ScheduledSeq> batch_;
  BatchShape shape_;
  StepCost total_cost_;
  bool busy_ = false;
  bool step_running_ = false;
  SimTime step_start_ = 0, step_end_ = 0;
  StepRecord last_step_;
  bool check_invariants_ = false;
};

}  // namespace servesim
