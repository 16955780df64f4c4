// The scheduling mechanism of one replica, step for step as vLLM v1's
// scheduler (v1/core/sched/scheduler.py, version in README) with its
// default FCFS policy, checked against golden traces of the real scheduler
// (tests/conformance):
//  1. Running requests first, in order, each taking the tokens it still
//     needs (its prefill chunk or 1 decode token) from the step's token
//     budget max_num_batched_tokens. If its KV blocks cannot be allocated,
//     running requests are preempted by recompute (victim chosen by the
//     policy; FCFS: newest first) until they can, or until it is itself the
//     victim, which ends the running pass. A policy may choose a victim
//     already scheduled this step (vLLM's priority policy does): it is
//     unscheduled, its tokens go back to the budget.
//  2. Then, only if nothing was preempted this step, waiting requests in
//     policy order while budget and max_num_seqs allow. With chunked prefill
//     off a prompt must fit in the remaining budget whole; the first
//     request that does not fit (tokens or KV blocks) stops admission. With
//     reserve_full_prompt the free blocks must hold the request's whole known
//     sequence (minus cache hits), not only this step's chunk.
// Token counts advance when a step is scheduled (num_computed), as in vLLM;
// full blocks are registered in the prefix cache at that moment too, so a
// request admitted later in the same step can already hit them.
// With prefix caching, a request admitted from the waiting queue (first
// time or after preemption) starts from its longest run of cached full
// blocks — never its whole prompt: the last token is always computed.
// Commit() applies a finished step's sampled tokens: tokens delivered,
// requests finished, blocks released.
// Decode group (grouped_decode.h): a running request whose token this step
// samples, not its last (nor the one before: its next step would be its
// last), joins the group -- after its prefill or any later step -- and
// later steps schedule all members at once: one aggregate entry at the
// end of the batch (id kGroupEntry, new_tokens = members) and in the
// BatchShape. A member's own state is rebuilt exactly when it leaves:
// right after its last step is batched (that step's token is delivered
// with the group's part, which finishes it) or, with prefix caching,
// before its last step (then scheduled one by one). Every member's is
// rebuilt before a step whose budget or free blocks could not cover
// everyone (the step then runs one by one, preempting as usual), and at
// the end of a run (FlushDecodeGroup). With prefix caching only requests
// whose blocks are private from then on join (own stream, never
// preempted): block identity cannot change an output there (the group
// allocates the same blocks from the free queue's head as the members
// would have, one permutation of them; their registration, private, is
// done when they leave). Speculative decoding (synchronous; without prefix
// caching) has the group's spec mode (spec_group.h): members verify their
// drafts in the group's step, their verify entries merged into the shape
// by admission key. Results are byte-identical with the group off
// (tests/fuzz/reference_equivalence_test.cc).
// Async scheduling (EngineConfig::async_scheduling): a step may be
// scheduled while the previous one is in flight; a request whose token is
// still being sampled carries a placeholder for it, and a request preempted
// with a step in flight still receives that step's token (stale output) and
// is not readmitted before it arrives.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "sim/cost/cost_model.h"
#include "sim/engine/block_hashing.h"
#include "sim/engine/block_math.h"
#include "sim/engine/engine_config.h"
#include "sim/engine/grouped_decode.h"
#include "sim/engine/kv_manager.h"
#include "sim/engine/request.h"
#include "sim/engine/scheduler_policy.h"
#include "sim/engine/spec_decode.h"
#include "sim/engine/waiting_queue.h"
#include "sim/kv/cpu_tier.h"
#include "sim/kv/kv_cache.h"
#include "sim/metrics/recorder.h"

namespace servesim {

struct ScheduledSeq {
  int64_t id;  // kGroupEntry: the decode group (new_tokens = its members)
  int32_t new_tokens;
  bool samples;  // the step samples a token for it (not a mid-prompt chunk)
  bool last;     // ... and that token is its last
  int32_t spec = 0;  // of new_tokens, draft tokens to verify (speculative
                     // decoding; `last` then assumes every one is rejected)
};

inline constexpr int64_t kGroupEntry = -1;


// One step as the scheduler built it: the batch, its shape for the cost
// model, and what building it did. The caller owns it (one per step in
// flight) and its buffers are reused from step to step.
struct StepPlan {
  std::vector<ScheduledSeq> batch;  // the decode group's entry, if any, last
  BatchShape shape;
  std::vector<int64_t> preempted;   // in order
  int32_t admitted = 0;             // from the waiting queue
  int64_t cached_tokens = 0;        // of those, tokens the prefix cache served
  int64_t tokens = 0;               // the sum of new_tokens
  int32_t finishing = 0;            // sequences whose last token it samples
  int32_t group_finishing = 0;      // of them, decode group members
  // Speculative decoding: sequences it samples for that do not finish (the
  // proposer drafts for their next step), and the sum of their contexts
  // before this step's drafts (VllmReplica::DraftCost prices them).
  int32_t draft_seqs = 0;
  int64_t draft_context = 0;
  TransferCounts transfers;         // KV blocks moved (engine.kv_offload)
  size_t num_seqs() const { return shape.size(); }
};

// final: it implements GroupHost privately, and is owned and deleted as a
// Scheduler.
class Scheduler final : private GroupHost {
 public:
  // vLLM reserves one block of the cache as its null block.
  static constexpr int32_t kReservedBlocks = 1;

  Scheduler(const EngineConfig& config, std::unique_ptr<SchedulerPolicy> policy,
            RequestTable* requests);

  // Why a request can never be served, or nullptr if it can.
  const char* CheckServable(const Request& r) const;
  void AddWaiting(int64_t id);
  // As vLLM's has_requests(): unfinished requests, or finished ones not yet
  // reported by a following schedule (which then runs, possibly empty).
  // (The decode group first: in a steady run it is seldom empty, where
  // the waiting queue's emptiness varies from step to step.)
  bool has_requests() const {
    return group_.has_requests() || !running_.empty() || !waiting_.empty() ||
           finished_unreported_;
  }
  // Turns the decode group off (before the first step): every sequence is
  // then scheduled one by one (schedule observers see each).
  void DisableDecodeGroup() { group_.Disable(); }
  // Rebuilds every member's own state (the end of a run: requests still
  // running show their exact counters).
  void FlushDecodeGroup() { group_.Flush(); }
  // Builds the next step into *plan (cleared first).
  void Schedule(SimTime now, StepPlan* plan);
  // Applies a completed step's output at `now`; appends finished ids.
  void Commit(SimTime now, const std::vector<ScheduledSeq>& batch,
              Recorder* recorder, std::vector<int64_t>* finished);

  // The client of request `id` went away (scheduler_abort.cc): it leaves
  // the waiting queue or the running set now, its blocks freed, with
  // status kAborted; a step in flight still computes its tokens and their
  // output is dropped. False if it had already ended. Needs the decode
  // group off.
  bool Abort(SimTime now, int64_t id);

  // hold_kv_after_finish: frees the blocks of a finished request that the
  // scheduler kept (its KV transfer has ended).
  void ReleaseHeld(int64_t id);
  size_t num_held() const { return held_.size(); }

  size_t num_waiting() const { return waiting_.size(); }
  size_t num_running() const { return running_.size() + group_.num_running(); }
  const KvCache& kv() const { return kvm_.cache(); }
  const BlockPool& pool() const { return kvm_.cache().pool(); }
  // Prompt tokens served from cache when admitting preempted requests again
  // (recompute avoided); first admissions are counted per request.
  int64_t resume_cached_tokens() const { return resume_cached_tokens_; }
  // KV offload: blocks moved in all.
  const TransferCounts& transfers() const { return transfers_; }
  // Swap preemptions, and those that found no room in the CPU tier and
  // recomputed instead.
  int64_t swap_preemptions() const { return kvm_.swap_preemptions(); }
  int64_t swap_fallbacks() const { return kvm_.swap_fallbacks(); }
  const CpuTier* cpu_tier() const { return kvm_.cpu_tier(); }
  const SpecDecodeStats& spec_stats() const { return spec_stats_; }
  void AddDraftSeconds(double s) { spec_stats_.draft_s += s; }
  // Full invariant check (blocks owned exactly once, counts agree); aborts
  // (scheduler_checks.cc).
  void CheckInvariants() const;

 private:
  // The passes of Schedule: running requests first, then (if nothing was
  // preempted) waiting ones; both return the budget left.
  int32_t RunningPass(SimTime now, int32_t budget, int32_t cap, bool group_step,
                      StepPlan* plan);
  int32_t WaitingPass(SimTime now, int32_t budget, int32_t cap, StepPlan* plan);
  // Tokens a running request asks for this step before the budget (its
  // prefill chunk or decode token, with its draft tokens in *drafts); 0
  // when its last token is already in flight (async).
  int32_t RunningAsk(const Request& r, int32_t cap, int32_t* drafts) const;
  // Whether every running request's ask plus `tokens` and `blocks` more
  // (the decode group's) fit this step's budget and free blocks.
  bool StepFits(int32_t cap, int64_t tokens, int64_t blocks) const;
  // Admission of a waiting request with at most `budget` new tokens: its
  // prefix lookup and blocks (the KV manager's), the tokens and the budget
  // (the scheduler's). Returns the tokens scheduled, 0 if it does not fit
  // (nothing changed).
  int32_t Admit(Request& r, int32_t budget, int32_t cap, StepPlan* plan);
  void Preempt(size_t running_index, StepPlan* plan);
  void CheckCpuTier() const;
  void CheckRunning(const Request& r) const;  // one running request's state
  // Takes a request scheduled earlier in this step's running pass out of
  // the batch (vLLM: priority preemption of a scheduled request). Returns
  // its tokens, 0 if it was not scheduled this step.
  int32_t Unschedule(int64_t id, StepPlan* plan);
  // Adds r's next n tokens to the batch and advances its counters.
  void Add(SimTime now, Request& r, int32_t n, StepPlan* plan, int32_t spec = 0);
  // Speculative decoding: draft tokens a running request verifies this
  // step when it would compute n tokens (0 when it has no drafts).
  int32_t DraftTokens(const Request& r, int32_t n) const;
  // Accepts s's drafts (a prefix of them), rolls the rejected ones' KV
  // back; returns the tokens the step delivers (accepted + 1).
  int32_t Verify(const ScheduledSeq& s, Request& r);
  void Finish(SimTime now, Request& r, std::vector<int64_t>* finished);
  // What finishing and aborting share: out of the waiting queue (not the
  // running set), status, KV freed (or held: a prefill role's finish), and
  // vLLM's finished-requests report.
  void End(SimTime now, Request& r, RequestStatus status);
  // Delivers a step's tokens to one request (Commit's per-sequence part);
  // records its ITL gap unless record_itl is false. True if it finished
  // while running.
  bool Deliver(SimTime now, const ScheduledSeq& s, bool record_itl,
               Recorder* recorder, std::vector<int64_t>* finished);
  // GroupHost: what the decode group's commit needs.
  void FinishRequest(SimTime now, Request& r, std::vector<int64_t>* finished) override {
    Finish(now, r, finished);
  }
  bool DeliverOrphanToken(SimTime now, int64_t id, Recorder* recorder,
                          std::vector<int64_t>* finished) override {
    return Deliver(now, {id, 1, true, false}, false, recorder, finished);
  }

  EngineConfig config_;
  std::unique_ptr<SchedulerPolicy> policy_;
  bool orders_waiting_;  // policy_->orders_waiting(), asked once
  RequestTable* requests_;
  int32_t watermark_blocks_;
  BlockMath blocks_;
  KvManager kvm_;  // the request-level KV manager (kv_manager.h)
  int64_t resume_cached_tokens_ = 0;
  WaitingQueue waiting_;  // ordered by the policy's key if it has one
  std::vector<int64_t> running_;
  std::vector<int64_t> skipped_;  // scratch: waiting requests passed over
  // EngineConfig::pipeline_decode_balance: the decoding requests this
  // step may still take (-1: no cap).
  int32_t decode_slots_ = -1;
  int32_t DecodeCap() const;
  bool finished_unreported_ = false;
  int64_t next_run_key_ = 0;
  GroupedDecode group_;
  std::vector<int64_t> held_;  // finished, blocks kept (prefill role)

  TransferCounts transfers_;  // KV offload: blocks moved in all
  SpecDecodeStats spec_stats_;
  BlockList rejected_blocks_;  // scratch for Verify
};

// Whether a configuration's plain decodes may run as the decode group (the
// fast path): not where it is not proven byte-identical to the one-by-one
// path (the reference engine, disaggregated roles, the CPU tier,
// speculative decoding with prefix caching or async steps) or was turned
// off.
bool UsesDecodeGroup(const EngineConfig& config);

}  // namespace servesim
