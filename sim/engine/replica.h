// One serving replica as the simulation driver sees it, whatever engine
// runs it: requests go in, steps (batches) run on its GPU one at a time,
// finished requests come out. The engines behind this seam:
//  - VllmReplica (vllm_replica.h): vLLM v1's engine core and scheduler;
//  - SglangReplica (sglang_replica.h): SGLang's event loop and scheduler.
// MakeReplica picks one from EngineConfig::kind.
// The base keeps what every engine shares: the step accounting (busy time,
// the cost breakdown, the step records the invariants and exports read).
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "sim/cost/cost_model.h"
#include "sim/cost/step_work.h"
#include "sim/engine/engine_config.h"
#include "sim/engine/request.h"
#include "sim/engine/step_record.h"
#include "sim/engine/transfer_counts.h"
#include "sim/metrics/recorder.h"

namespace servesim {

class KvCache;
class Scheduler;

// The replica's state after its last schedule, for the fleet's levels.
struct ReplicaLevels {
  int64_t waiting = 0;
  int64_t running = 0;
  int64_t kv_blocks_used = 0;
  int64_t kv_blocks_cached = 0;  // free but holding reusable prefix KV
};

class Replica {
 public:
  Replica(const CostModel* cost_model, Recorder* recorder)
      : cost_model_(cost_model), recorder_(recorder) {}
  virtual ~Replica() = default;
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  // Why the request can never be served, or nullptr.
  virtual const char* CheckServable(const Request& r) const = 0;
  // The request (in the table) joins the waiting queue.
  virtual void Submit(int64_t id) = 0;
  // serve: the client of request `id` went away at `now` (the caller has
  // set its abort_at). vLLM ends it now (status kAborted, finish now, its
  // KV freed); SGLang at the next result that names it, when FinishStep
  // lists it with the finished ones. Nothing if it had already ended. The
  // caller reads the request's status to tell which.
  virtual void Abort(SimTime now, int64_t id) = 0;
  // Prefill role (EngineConfig::hold_kv_after_finish): the KV transfer of
  // finished request `id` has ended; its blocks are freed.
  virtual void ReleaseHeld(int64_t id) = 0;
  // Runs the engine loop at `now`: schedules and launches steps until it
  // must wait for the oldest step in flight. Returns the time that step
  // ends (call FinishStep then), or -1 when there is nothing to run (idle).
  // Aborts if called while it should be waiting.
  virtual SimTime StartStep(SimTime now) = 0;
  // Commits the oldest step in flight, which ends at `now`; appends
  // finished request ids. The replica stays busy until the next StartStep.
  virtual void FinishStep(SimTime now, std::vector<int64_t>* finished) = 0;
  // A batch is executing or waiting to execute.
  virtual bool step_running() const = 0;
  virtual ReplicaLevels levels() const = 0;
  // Adds levels() to the fleet's totals `l`, and 1 to l->busy while a step
  // runs: what the driver asks after every event. (Not through levels():
  // the driver's 16-byte loads of the struct just stored 8 bytes at a time
  // waited for those stores, perf's hottest spot in the driver.)
  virtual void AddLevels(Levels* l) const {
    const ReplicaLevels r = levels();
    l->waiting += r.waiting;
    l->running += r.running;
    l->kv_blocks_used += r.kv_blocks_used;
    l->kv_blocks_cached += r.kv_blocks_cached;
    l->busy += step_running() ? 1 : 0;
  }
  // The KV cache a prefix-aware router looks up (null: none to look up).
  virtual const KvCache* routing_kv() const { return nullptr; }
  // vLLM's scheduler, for the counters only it keeps (prefix-cache
  // resumes, speculative decoding, offload); null for other engines.
  virtual const Scheduler* vllm_scheduler() const { return nullptr; }
  // Every request's counters exact after each step (the live server reads
  // them): turns aggregated fast paths off. Before the first step.
  virtual void RequireExactCounters() {}
  // End of a run: requests still running get their exact counters.
  virtual void EndRun() {}

  // True from StartStep until the engine loop goes idle, including between
  // FinishStep and the StartStep that follows it: requests submitted then
  // join the next step, they never start one of their own.
  bool busy() const { return busy_; }
  // Sum of every step's cost breakdown (where the time went).
  const StepCost& total_cost() const { return total_cost_; }
  int64_t steps() const { return steps_; }
  SimTime busy_time() const { return busy_time_; }  // sum of step durations
  // Of busy_time, the part before `t`: steps never overlap and those
  // launched but not ended run back to back until gpu_free_. (A pipeline:
  // a batch's busy share counts in proportion to its span before `t`.)
  SimTime busy_time_before(SimTime t) const {
    if (!stage_free_.empty()) return PipelineBusyBefore(t);
    return busy_time_ - std::max<SimTime>(0, gpu_free_ - t);
  }
  // KV offload: time steps spent waiting for transfers to and from the CPU
  // tier (in busy_time).
  SimTime transfer_stall() const { return transfer_stall_; }
  // Counts each step's model FLOPs and bytes into the recorder (may be null).
  void set_work_counter(const StepWorkCounter* c) { work_counter_ = c; }
  // Abort on any broken invariant after every step (tests, debugging).
  void set_check_invariants(bool on) { check_invariants_ = on; }
  // Appends a record of every step launched to *sink (null: none), with
  // `index` as its replica number.
  void set_step_sink(std::vector<StepRecord>* sink, int32_t index) {
    step_sink_ = sink;
    index_ = index;
  }
  // Called with the record of every step launched (streamed exports).
  using StepCallback = std::function<void(const StepRecord&)>;
  void set_step_callback(StepCallback f) { on_step_ = std::move(f); }

 protected:
  // What a launched step did, beyond its shape, for its record.
  struct StepFacts {
    int32_t num_seqs = 0;
    int64_t tokens = 0;
    int32_t admitted = 0;
    int32_t preempted = 0;
    int32_t finishing = 0;
    int64_t cached_tokens = 0;
    TransferCounts moved;
    SimTime stall = 0;
  };
  // Accounts a step scheduled at `now` that starts at `start` and runs
  // `shape` (its time: `cost` plus `stall`, at least 1 ns so the clock
  // always advances); returns when it ends. Steps of one replica run in
  // launch order, never overlapping (start >= the previous end).
  SimTime AccountStep(SimTime now, SimTime start, const BatchShape& shape,
                      const StepCost& cost, const StepFacts& facts);
  // Pipeline parallelism (before the first step): `stages` stages, each
  // running one batch at a time, batches in launch order.
  void set_pipeline_stages(int stages) {
    stage_free_.assign(static_cast<size_t>(stages), 0);
    recent_.assign(static_cast<size_t>(stages), StepSpan{});
  }
  int pipeline_stages() const { return stage_free_.empty() ? 1 : static_cast<int>(stage_free_.size()); }
  // AccountStep for a pipeline: the batch enters stage 0 at `start` (when
  // it is free), each later stage when the batch's activations arrived
  // (send_s after it left the one before) and the stage is free; each
  // stage takes stage_s[i] (at least 1 ns). Returns when it leaves the last.
  SimTime AccountPipelineStep(SimTime now, SimTime start, const BatchShape& shape,
                              const StepCost& cost, const double* stage_s, double send_s,
                              const StepFacts& facts);
  // When the GPU is free (the last launched step ends; a pipeline: when
  // its first stage is).
  SimTime gpu_free() const { return gpu_free_; }
  // For the step record: levels right after scheduling, and the cache size.
  virtual int32_t kv_blocks_total() const = 0;

  const CostModel* cost_model_;
  Recorder* recorder_;
  const StepWorkCounter* work_counter_ = nullptr;
  bool check_invariants_ = false;
  bool busy_ = false;

 private:
  // Where and how long a step ran.
  struct StepSpan {
    SimTime start = 0, end = 0, first_stage_end = 0, last_stage_start = 0, busy = 0;
  };
  StepRecord Record(SimTime now, const StepSpan& span, const BatchShape& shape,
                    const StepCost& cost, const StepFacts& facts) const;
  // The step's counts, work and record (both AccountSteps).
  void Note(SimTime now, const StepSpan& span, const BatchShape& shape, const StepCost& cost,
            const StepFacts& facts);
  SimTime PipelineBusyBefore(SimTime t) const;

  StepCost total_cost_;
  SimTime gpu_free_ = 0;  // when the last launched step ends
  int64_t steps_ = 0;
  SimTime busy_time_ = 0;
  SimTime transfer_stall_ = 0;
  std::vector<StepRecord>* step_sink_ = nullptr;
  StepCallback on_step_;
  int32_t index_ = 0;
  // Pipeline: when each stage is free, and the last spans launched (a ring
  // of one per stage: no more are in flight).
  std::vector<SimTime> stage_free_;
  std::vector<StepSpan> recent_;
  size_t next_recent_ = 0;
};

// The replica of the engine `config.kind` names (a policy for vLLM's
// scheduler is made from config.policy).
std::unique_ptr<Replica> MakeReplica(const EngineConfig& config, const CostModel* cost_model,
                                     RequestTable* requests, Recorder* recorder);

}  // namespace servesim
