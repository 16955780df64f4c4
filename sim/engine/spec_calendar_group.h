// The speculative decode group for cost models that price runs
// (EngineConfig::verify_runs): the step's verifies go to the shape as one
// run per token count (members and summed context), in no order, so the
// group needs sums, never the members one by one. A member's steps depend
// on nothing but itself (its draws are stateless, its drafts are
// min(k, left - 1) -- no cap cuts them here), so they are worked out ahead,
// each into a calendar of per-step sums:
//   word    accepted drafts, fresh blocks and rejected drafts' blocks,
//           packed into one 64-bit sum;
//   tail    members asking for fewer than k + 1 tokens (their last k
//           steps), by token count: how many and their summed context;
//   finish  who delivers its last token.
// The rest is two running totals, the members and their summed context
// (every member's context grows by its accepted drafts + 1 a step). A
// step's plan and commit then cost O(k) plus its finishers, whatever the
// number of members.
// Work ahead is bounded: steps are walked an epoch at a time (kEpoch
// steps, all members at each epoch's start; a joiner to its epoch's end),
// so the calendar is a ring of kEpoch slots and a member's state at any
// step is at most kEpoch - 1 steps of replay from where its epoch started
// -- what leaving, finishing with a step in flight and the invariant
// check use. The one-by-one rules (Scheduler::RunningAsk, DraftTokens,
// Add, Verify, Deliver) are Walk's, step for step, with the draws'
// positions read from a bit buffer 32 at a time (SpecMemberDraws::Rejects).
// A member's steps are a serial chain (where a step ends decides where the
// next one's draws start), so an epoch's walks go two members at a time,
// side by side (ScheduleInLanes, FullStepsLanes): their chains overlap.
// Joining, leaving, ITL and blocks are as in SpecEntriesGroup.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/engine/block_math.h"
#include "sim/engine/engine_config.h"
#include "sim/engine/request.h"
#include "sim/engine/spec_decode.h"
#include "sim/engine/spec_group.h"
#include "sim/kv/kv_cache.h"
#include "sim/metrics/recorder.h"

namespace servesim {

class SpecCalendarGroup final : public SpecGroup {
 public:
  // Whether `config` can use it: runs priced, no long-prefill cap that cuts
  // drafts, k small enough for the bit buffer and the packed sums.
  static bool Fits(const EngineConfig& config);

  SpecCalendarGroup(const EngineConfig& config, const BlockMath& blocks,
                    RequestTable* requests, std::vector<int64_t>* running, KvCache* kv,
                    SpecDecodeStats* stats);

  // SpecGroup:
  int32_t size() const override { return active_; }
  void Absorb(std::vector<int64_t>* candidates) override;
  bool Prepare(int32_t cap, StepFitsFn fits) override;
  GroupStepPart Append(int32_t budget, const std::vector<ScheduledSeq>& batch,
                       BatchShape* shape) override;
  void Commit(SimTime now, SimTime last_commit, Recorder* recorder,
              std::vector<int64_t>* finished, GroupHost* host) override;
  void LeaveAll() override;
  void CheckInvariants(const std::function<void(const BlockList&)>& own) const override;

 private:
  static constexpr int64_t kEpoch = 64;  // a power of two

  // A member's counters before a step, and its draws from there on.
  struct State {
    int32_t computed, output, blocks, deliveries;
    uint8_t max_delivered;
    bool verified;  // a draft verified (its rate is then the request's)
    // Bit i set if a draft for position output + i would be rejected
    // (SpecMemberDraws::Rejects), up to position 32 * next_word; zeros
    // above, never read.
    int32_t next_word;
    uint64_t rejects;
  };
  struct Member {
    int64_t key;  // admission order (run_key)
    int64_t id;
    SpecMemberDraws draws;
    int32_t output_len;
    float rate;
    bool measured;
    bool done;           // finished (its place is reused at the next epoch)
    int64_t join_step;   // the first group step it took part in
    int64_t base_step;   // `base` is its state before this step
    State base;
    State ahead;         // ... at its epoch's end, or when it finished
  };
  // One step's sums, as the calendar keeps them.
  struct StepSums {
    int64_t tokens = 0, fresh = 0;
    int64_t full = 0, full_context = 0;  // members asking for k + 1 tokens
  };

  // Where a walk's steps go (spec_calendar_group.cc), and its moving state.
  struct CalendarSink;
  struct NoSink;
  struct Cursor;
  // Member m's steps [from, until) from state s (before step `from`), or
  // until it finishes, into `sink`: a step of k + 1 tokens adds its packed
  // sums to sink.words[Slot(step)] (FullSteps), one of fewer calls
  // Tail(step, n, context, accepted, fresh blocks, rejected blocks)
  // (TailSteps), the last calls Finish(step). Returns its state after them.
  template <class Sink>
  State Walk(const Member& m, State s, int64_t from, int64_t until, Sink& sink) const;
  // Walk in parts: its cursor at `from` (Start), and the walk on from a
  // cursor that may have moved past `from` (WalkOn).
  static Cursor Start(const State& s, int64_t from);
  template <class Sink>
  State WalkOn(const Member& m, State s, int64_t from, int64_t until, Sink& sink,
               Cursor x) const;
  // A full step's packed sums by (computed, accepted): from FullSums'
  // table (Table), or computed.
  struct TableSums;
  struct ComputedSums;
  TableSums Table() const;
  template <class SumsOf>
  void FullSteps(const SpecMemberDraws& draws, int32_t done, int64_t until, uint64_t* words,
                 Cursor* x, SumsOf sums_of) const;
  // A member's walk in ScheduleInLanes, kLanes of them side by side.
  struct Lane;
  static constexpr int kLanes = 2;  // (3 and 4 ran slower: registers)
  template <int N, class SumsOf>
  void FullStepsLanes(Lane* lanes, int64_t until, uint64_t* words, SumsOf sums_of) const;
  // Its computed count at its last token.
  static int32_t Done(const Member& m, const State& s) {
    return m.output_len + s.computed - s.output;
  }
  template <class Sink>
  void TailSteps(const SpecMemberDraws& draws, int32_t done, int64_t until, Sink& sink,
                 Cursor* x) const;
  // Walks member `index` from its base to `until`, into the calendar.
  void Schedule(size_t index, int64_t until);
  // Schedule for every member from step_ (an epoch's start), FullSums'
  // table at hand: two at a time, side by side.
  void ScheduleInLanes(int64_t until);
  State StateAt(const Member& m, int64_t step) const;  // by replay
  int32_t Ask(const Member& m, const State& s) const;  // n, uncapped
  // A full step's packed sums by (computed % block size, accepted): the
  // table Walk reads for power-of-two block sizes up to 512 (else empty:
  // it computes them).
  static std::vector<uint64_t> FullSums(const BlockMath& blocks, int32_t k);
  StepSums Sums(size_t slot) const;
  void ClearSlot(size_t slot);
  void NewEpoch();  // at a step that starts one: finished members go, all walk
  // Writes a member's counters back into its Request, with the blocks the
  // group owes it (with the step in flight: its n tokens too).
  void Rebuild(const Member& m, const State& s);
  size_t Slot(int64_t step) const { return static_cast<size_t>(step & (kEpoch - 1)); }

  SpecDecodeConfig spec_config_;
  int32_t k_;
  int32_t max_num_seqs_;
  BlockMath blocks_;
  RequestTable* requests_;
  std::vector<int64_t>* running_;
  KvCache* kv_;
  SpecDecodeStats* stats_;
  std::vector<Member> members_;  // joined in epoch order; done ones until the next
  int32_t active_ = 0;           // members not done
  int64_t context_ = 0;          // their summed context (num_computed)
  int32_t measured_ = 0;         // ... whose ITL counts
  int64_t step_ = 0;             // the next group step
  // The calendar, kEpoch slots: a step's packed word, its tail members by
  // token count (slot * (k + 1) + n, n = 1 .. k), who finishes in it.
  std::vector<uint64_t> word_;
  std::vector<int32_t> tail_count_;
  std::vector<int64_t> tail_context_;
  std::vector<std::vector<uint32_t>> finish_;
  std::vector<uint64_t> full_sums_;  // FullSums
  BlockList group_blocks_;  // counted: what the members gained
  BlockList scratch_blocks_;
  SimTime last_group_commit_ = -1;
  bool step_in_flight_ = false;  // Append ran, Commit not yet
  StepSums step_sums_;           // the step Prepare passed
  std::vector<uint32_t> finishing_;  // scratch: a commit's finishers
  std::vector<int64_t> joining_ids_;
};

}  // namespace servesim
