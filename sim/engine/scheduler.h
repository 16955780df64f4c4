// The scheduling mechanism of one replica, with vLLM v1 semantics:
//  1. Running requests first, in order, each taking the tokens it still
//     needs (its prefill chunk or 1 decode token) from the step's token
//     budget max_num_batched_tokens. If its KV blocks cannot be allocated,
//     running requests are preempted by recompute (victim chosen by the
//     policy; FCFS: newest first) until they can, or until it is itself the
//     victim.
//  2. Then, only if nothing was preempted this step, waiting requests in
//     policy order while budget and max_num_seqs allow. With chunked prefill
//     off a prompt must fit in the remaining budget whole; the first
//     request that does not fit (tokens or KV blocks) stops admission.
// Commit() applies a finished step: tokens computed, tokens sampled,
// requests finished and their blocks released.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "sim/cost/cost_model.h"
#include "sim/engine/engine_config.h"
#include "sim/engine/request.h"
#include "sim/engine/scheduler_policy.h"
#include "sim/kv/block_pool.h"
#include "sim/metrics/recorder.h"

namespace servesim {

struct ScheduledSeq {
  int64_t id;
  int32_t new_tokens;
};

class Scheduler {
 public:
  Scheduler(const EngineConfig& config, std::unique_ptr<SchedulerPolicy> policy,
            RequestTable* requests);

  // Why a request can never be served, or nullptr if it can.
  const char* CheckServable(const Request& r) const;
  void AddWaiting(int64_t id);
  // Builds the next batch into *batch and its shape into *shape (both
  // cleared first). Returns the number of sequences scheduled.
  size_t Schedule(SimTime now, std::vector<ScheduledSeq>* batch,
                  BatchShape* shape);
  // Applies a completed step at `now`; appends finished request ids.
  void Commit(SimTime now, const std::vector<ScheduledSeq>& batch,
              Recorder* recorder, std::vector<int64_t>* finished);

  size_t num_waiting() const { return waiting_.size(); }
  size_t num_running() const { return running_.size(); }
  const BlockPool& pool() const { return pool_; }
  // Full invariant check (blocks owned exactly once, counts agree); aborts.
  void CheckInvariants() const;

 private:
  // Grows r's block list to cover `tokens` cached tokens; false if the pool
  // is short.
  bool EnsureBlocks(Request& r, int32_t tokens);
  void Preempt(size_t running_index);

  EngineConfig config_;
  std::unique_ptr<SchedulerPolicy> policy_;
  RequestTable* requests_;
  BlockPool pool_;
  std::deque<int64_t> waiting_;
  std::vector<int64_t> running_;
};

}  // namespace servesim
