// The decode group under speculative decoding (GroupedDecode's spec mode;
// synchronous scheduling, no prefix caching): running requests in steady
// speculative decode, scheduled and committed as a group, each with its
// own counters (a step delivers 1 + the accepted drafts, so contexts do not
// grow in step). Two ways to keep them, one per kind of cost model:
//   SpecEntriesGroup (spec_entries_group.h): every member's verify is an
//     entry of the batch, in admission order, as cost models that price
//     each sequence read it; one pass over the members a step.
//   SpecCalendarGroup (spec_calendar_group.h): for cost models that price
//     runs (EngineConfig::verify_runs: a count and a summed context per
//     token count), where the order cannot matter; members' steps are
//     worked out ahead into a per-step calendar of sums, so a step costs
//     O(1), not a pass over the members.
// Both follow the one-by-one rules (Scheduler::RunningAsk, DraftTokens,
// Add, Verify, Deliver) exactly; tests/engine/spec_group_test.cc runs each
// against the reference engine step by step.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sim/core/function_ref.h"
#include "sim/cost/cost_model.h"
#include "sim/engine/block_math.h"
#include "sim/engine/engine_config.h"
#include "sim/engine/request.h"
#include "sim/engine/spec_decode.h"
#include "sim/kv/kv_cache.h"
#include "sim/metrics/recorder.h"

namespace servesim {

class GroupHost;

// Prepare's question to the scheduler: do the running requests' own tokens
// and blocks and the group's `tokens` and `blocks` fit the step?
using StepFitsFn = FunctionRef<bool(int64_t tokens, int64_t blocks)>;
struct ScheduledSeq;

// What a group step adds to the plan.
struct GroupStepPart {
  int32_t tokens = 0;     // scheduled (one per member without drafts)
  int32_t finishing = 0;  // members whose last token it samples
  // Members that get drafts for their next step (VllmReplica::DraftCost), and
  // the sum of their contexts before their drafts.
  int32_t draft_seqs = 0;
  int64_t draft_context = 0;
};

class SpecGroup {
 public:
  virtual ~SpecGroup() = default;

  virtual int32_t size() const = 0;  // members
  // After a step's commit (its deliveries made the counters exact):
  // `candidates`, its sampling entries in batch order, join if they still
  // run; the list is cleared.
  virtual void Absorb(std::vector<int64_t>* candidates) = 0;
  // Before a step: true if every member's step fits (`fits(tokens,
  // blocks)`), else all leave. cap: the step's long-prefill cap (0: none).
  virtual bool Prepare(int32_t cap, StepFitsFn fits) = 0;
  // The group's step (Prepare returned true), after the running pass whose
  // entries are `batch`; `budget` is what they left. Fills the shape's part.
  virtual GroupStepPart Append(int32_t budget, const std::vector<ScheduledSeq>& batch,
                               BatchShape* shape) = 0;
  // The group's part of the committed step: one ITL sample, acceptance,
  // rollback, deliveries; finished members appended to *finished (by key).
  virtual void Commit(SimTime now, SimTime last_commit, Recorder* recorder,
                      std::vector<int64_t>* finished, GroupHost* host) = 0;
  // Every member rebuilt exactly and back in running_ (by key).
  virtual void LeaveAll() = 0;
  // `own` is called with every block list the group and its members hold;
  // aborts on a broken invariant.
  virtual void CheckInvariants(const std::function<void(const BlockList&)>& own) const = 0;
};

// Whether a candidate joins either mode's group once its step committed:
// it drafts from now on (spec_ready), every token it computed is known
// (sync: nothing in flight) and one is left to feed. Aborts if it is
// running with counters that do not say so.
bool SpecJoins(const Request& r, const BlockMath& blocks);
// The rate a member's draws use: the request's, or -- stateless -- the
// one its first verify will draw (the Request gets it then, as one by one).
float SpecDrawRate(const SpecDecodeConfig& c, const Request& r);

// The mode for `config` (see above). `running`: the scheduler's running
// list, in admission-key order, which members leave and rejoin; `stats`:
// its speculative decoding counters, which members' steps add to.
std::unique_ptr<SpecGroup> MakeSpecGroup(const EngineConfig& config, const BlockMath& blocks,
                                         RequestTable* requests,
                                         std::vector<int64_t>* running, KvCache* kv,
                                         SpecDecodeStats* stats);

}  // namespace servesim
