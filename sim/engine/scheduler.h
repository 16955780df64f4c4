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
// With prefix caching, a request admitted from the waiting queue (first
// time or after preemption) starts from its longest run of cached full
// blocks — never its whole prompt: the last token is always computed, as in
// vLLM — and the cost model sees those tokens as context, not new work.
// Commit() applies a finished step: tokens computed, full blocks registered
// in the prefix cache, tokens sampled, requests finished, blocks released.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "sim/cost/cost_model.h"
#include "sim/engine/engine_config.h"
#include "sim/engine/request.h"
#include "sim/engine/scheduler_policy.h"
#include "sim/kv/kv_cache.h"
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
  const KvCache& kv() const { return kv_; }
  const BlockPool& pool() const { return kv_.pool(); }
  // Prompt tokens served from cache when admitting preempted requests again
  // (recompute avoided); first admissions are counted per request.
  int64_t resume_cached_tokens() const { return resume_cached_tokens_; }
  int64_t num_preemptions() const { return num_preemptions_; }  // so far
  // Full invariant check (blocks owned exactly once, counts agree); aborts.
  void CheckInvariants() const;

 private:
  // Grows r's block list to cover `tokens` cached tokens; false if the pool
  // is short.
  bool EnsureBlocks(Request& r, int32_t tokens);
  // Admission of a waiting request with at most `budget` new tokens: prefix
  // lookup and block allocation. Returns the tokens scheduled, 0 if it does
  // not fit (nothing changed).
  int32_t Admit(Request& r, int32_t budget);
  void RegisterFullBlocks(Request& r);
  void Preempt(size_t running_index);

  EngineConfig config_;
  std::unique_ptr<SchedulerPolicy> policy_;
  RequestTable* requests_;
  KvCache kv_;
  int64_t resume_cached_tokens_ = 0;
  int64_t num_preemptions_ = 0;
  std::deque<int64_t> waiting_;
  std::vector<int64_t> running_;
};

}  // namespace servesim
