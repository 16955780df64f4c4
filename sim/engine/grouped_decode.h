// The decode group's protocol with the scheduler: the fast path that
// schedules every plain decoding request as one aggregate entry per step
// (DecodeGroup holds the members; this class keeps their tokens, blocks and
// deliveries exact). The scheduler calls it at five points of a step:
//   Prepare  before the running pass: members whose last step comes next
//            leave (with prefix caching), or all leave if the step could
//            not cover everyone; true if the group runs whole this step.
//   Append   after the running pass: the group's step (its blocks, its
//            share of the batch shape, who finishes in it).
//   Candidate / Join   a request whose step samples a token (not its last)
//            is noted while the batch is built and joins after it.
//   Commit   when the step's output arrives: one ITL sample for the
//            members, finishes, and tokens owed to former members.
//   Flush    at the end of a run: every member's own state rebuilt.
// A leaving member's Request is rebuilt exactly (Rebuild) from the group's
// counters, so results are byte-identical with the group off
// (tests/fuzz/reference_equivalence_test.cc). See scheduler.h for when a
// request joins and how its last step is handled.
// Speculative decoding (synchronous, no prefix caching) has its own mode
// behind the same five points: a SpecGroup (spec_group.h), whose members
// carry their own counters (a step delivers 1 + accepted drafts) and join
// when their candidate step commits (Committed).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "sim/cost/cost_model.h"
#include "sim/engine/block_math.h"
#include "sim/engine/decode_group.h"
#include "sim/engine/engine_config.h"
#include "sim/engine/request.h"
#include "sim/engine/spec_group.h"
#include "sim/kv/kv_cache.h"
#include "sim/metrics/recorder.h"

namespace servesim {

// What Commit needs from the scheduler: the request-level outcomes.
class GroupHost {
 public:
  // r's last token arrived: release it and list it as finished.
  virtual void FinishRequest(SimTime now, Request& r,
                             std::vector<int64_t>* finished) = 0;
  // Delivers one token of a former member's group step (its ITL gap is in
  // the group's sample); true if that finished it while running.
  virtual bool DeliverOrphanToken(SimTime now, int64_t id, Recorder* recorder,
                                  std::vector<int64_t>* finished) = 0;

 protected:
  ~GroupHost() = default;
};

class GroupedDecode {
 public:
  // on: the group is used at all (Scheduler decides which configurations
  // may use it; see EngineSupport). `running` is the scheduler's running
  // list, in admission-key order, which members leave and rejoin.
  // spec_stats: the scheduler's speculative decoding counters (the spec
  // mode adds its members' drafts to them).
  GroupedDecode(bool on, const EngineConfig& config, const BlockMath& blocks,
                RequestTable* requests, std::vector<int64_t>* running, KvCache* kv,
                SpecDecodeStats* spec_stats);

  bool on() const { return on_; }
  void Disable() {  // before the first step
    on_ = false;
    spec_.reset();
  }
  bool has_requests() const {
    return spec_ ? spec_->size() > 0 : !group_.empty() || !finishing_.empty();
  }
  // Members and those whose last step is in flight (counted as running).
  size_t num_running() const {
    if (spec_) return static_cast<size_t>(spec_->size());
    return static_cast<size_t>(group_.size()) + finishing_.size();
  }

  // Before a step; `fits(tokens, blocks)` says whether the running requests
  // and the group's `tokens` and `blocks` fit the step (budget, free blocks).
  // cap: the step's long-prefill cap (0: none; it cuts the spec mode's
  // drafts).
  bool Prepare(int32_t cap, StepFitsFn fits);
  // The group's step (Prepare returned true), after the running requests
  // (`batch`, so far); `budget` is what they left. Fills the shape's part.
  using Part = GroupStepPart;
  Part Append(int32_t budget, const std::vector<ScheduledSeq>& batch, BatchShape* shape);
  // A request whose token this step samples, not its last.
  void Candidate(int64_t id) {
    if (on_) candidates_.push_back(id);
  }
  // After the step is built: the candidates that qualify join (the spec
  // mode's when the step commits).
  void Join();
  // The group's part of a committed step (the last entry of its batch).
  // True if a former member finished while running.
  bool Commit(SimTime now, Recorder* recorder, std::vector<int64_t>* finished,
              GroupHost* host);
  // Every commit, the group's part or not: the time ITL gaps start from;
  // the spec mode's candidates join.
  void Committed(SimTime now) {
    last_commit_ = now;
    if (spec_ && !spec_candidates_.empty()) spec_->Absorb(&spec_candidates_);
  }
  void Flush();

  // Checks the members' state; `own` is called with every block list the
  // group and its members hold; aborts on a broken invariant.
  void CheckInvariants(const std::function<void(const BlockList&)>& own) const;

 private:
  // Rebuilds a leaving member's Request fields (counters, blocks, last
  // token) from the group's counters; notes the group steps in flight it
  // still has tokens in (orphans). `until`: the group steps it took part
  // in end there (group_.step() unless it left earlier).
  void Rebuild(const DecodeGroup::Member& m, int64_t until);
  void InsertRunning(int64_t id);  // into running_, by run_key
  // The finishing members back into running_ (before a step that runs
  // one by one, and at the end of a run).
  void RebuildFinishing();
  void LeaveAll();

  bool on_;
  std::unique_ptr<SpecGroup> spec_;  // the spec mode, or null
  // Without prefix caching a member stays in the group for its last step
  // and leaves right after it is batched, into finishing_ (counted as
  // running); when the group's part of that step commits it is rebuilt
  // with every token delivered and finished, merged into the step's
  // finishes by admission key, the place its own entry would have had. A
  // step that runs one by one first rebuilds these and puts them back in
  // running_ (where the running pass passes them over, as a request whose
  // last token is in flight, and a policy may choose them as victims);
  // their last token is then an orphan delivery that finishes them.
  bool finish_in_group_;
  bool async_;
  BlockMath blocks_;
  RequestTable* requests_;
  std::vector<int64_t>* running_;
  KvCache* kv_;
  std::vector<DecodeGroup::Member> finishing_;  // by last step, then key
  DecodeGroup group_;
  // KV blocks the members gained since joining, owned by the group (their
  // identity cannot matter: see scheduler.h); a leaving member takes what
  // it is owed.
  BlockList group_blocks_;
  struct InFlight {
    int64_t step;      // group step index
    int32_t measured;  // members whose ITL counts
  };
  std::deque<InFlight> in_flight_;  // scheduled, not committed
  int64_t commits_ = 0;             // group steps committed (all below it)
  SimTime last_commit_ = -1;        // time of the latest commit
  SimTime last_group_commit_ = -1;  // ... of the latest with a group part
  // Former members with tokens in group steps [first, until) still in
  // flight: delivered one by one when those steps commit.
  struct Orphan {
    int64_t id, first, until;
  };
  std::vector<Orphan> orphans_;
  std::vector<int64_t> joining_;  // scratch for Join
  // This step's sampling, not-last entries, in batch order (a preempted
  // one is no longer running: Join passes it over).
  std::vector<int64_t> candidates_;
  // The spec mode's: the scheduled step's candidates, joining when it
  // commits.
  std::vector<int64_t> spec_candidates_;
};

}  // namespace servesim
