// One SGLang replica: SGLang's scheduler (sglang_scheduler.h) driven by
// its event loop, with each batch priced by the cost model like any other
// step. As SGLang 0.5.23's Scheduler runs them:
//  - normal loop (disable_overlap_schedule): receive requests, schedule a
//    batch, run it, process its result, repeat;
//  - overlap loop (the default): receive requests, schedule and launch a
//    batch while the previous one still runs, then process the previous
//    one's result (waiting for it), so each batch is scheduled one step
//    before the tokens of the batch ahead of it are known.
// An iteration that schedules nothing and has nothing to process calls
// on_idle; with nothing left at all the replica goes idle until a request
// arrives. Requests carry max_new_tokens = their output length.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "sim/engine/replica.h"
#include "sim/engine/sglang_scheduler.h"

namespace servesim {

class SglangReplica final : public Replica {
 public:
  SglangReplica(const EngineConfig& config, const CostModel* cost_model,
                RequestTable* requests, Recorder* recorder);

  // Refuses a request SGLang could never admit or finish in its pool.
  const char* CheckServable(const Request& r) const override;
  void Submit(int64_t id) override;
  void Abort(SimTime now, int64_t id) override;
  // Disaggregated roles are not modelled for SGLang (refused by the
  // scenario); aborts.
  void ReleaseHeld(int64_t id) override;
  SimTime StartStep(SimTime now) override;
  void FinishStep(SimTime now, std::vector<int64_t>* finished) override;
  bool step_running() const override { return count_ > 0; }
  // The `random` order's shuffles (SGLang's own draws; see SglangScheduler).
  void set_random_order(SglangWaitingOrder::RandomOrder f) { sched_.set_random_order(std::move(f)); }
  ReplicaLevels levels() const override;

 protected:
  int32_t kv_blocks_total() const override {
    return static_cast<int32_t>(sched_.pool_tokens() / sched_.page_size());
  }

 private:
  struct InFlight {
    SglangBatch batch;
    SimTime end = 0;
  };
  // Launches a scheduled batch at `now` (it starts when the GPU is free):
  // updates its requests and accounts the step.
  void Launch(SimTime now, SglangBatch&& batch);
  InFlight& InFlightAt(uint32_t i) { return ring_[(head_ + i) & 1]; }

  SglangScheduler sched_;
  RequestTable* requests_;
  bool overlap_;
  bool ignore_eos_;
  // Batches launched whose results are not processed, oldest first (at
  // most two: the overlap loop's current and previous batch).
  std::array<InFlight, 2> ring_;
  uint32_t head_ = 0, count_ = 0;
  bool last_ran_ = false;  // the loop's previous iteration launched a batch
  BatchShape shape_;       // scratch
  std::vector<int64_t> delivered_;  // scratch
};

}  // namespace servesim
