// The scheduler's decode group: running requests in steady decode (no
// prompt left, one token per step until their last) kept as an aggregate,
// so that a step costs O(1) for them instead of O(batch).
//
// Every group step schedules one token for each member. A member joins at
// group step `joined` with `joined_context` tokens computed; at group step
// g its context is joined_context + (g - joined). What a step needs from
// the members is then a few counters:
//  - size and the sum of their contexts (the cost model's inputs);
//  - block-phase counters: a member needs a fresh KV block at step g when
//    its context is a multiple of the block size, i.e. when
//    (joined_context - joined + g) % block_size == 0, so the members
//    needing a block at a step are one counter, by that phase;
//  - a min-heap on each member's last step (the step that samples its last
//    token): members leave the group before it (the scheduler schedules
//    that step one by one, as its finish must be).
// A member's own fields (Request) are left as they were when it joined;
// the scheduler rebuilds them (Scheduler::Rebuild) from the group's step
// and commit counters when it leaves.
//
// Invariants: size() == heap entries == sum of the phase counters;
// context_sum() == sum over members of their context at step().
// The heap holds 16-byte entries (last step, slot, phase) and the members
// sit in slots beside it: a pop moves a third of the bytes it would move
// with whole members, and the phase is not recomputed (no division).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace servesim {

class DecodeGroup {
 public:
  struct Member {
    int64_t last_step;  // group step that samples its last token
    int64_t key;        // admission order (the running queue's order)
    int64_t id;
    int64_t joined;          // first group step it takes part in
    int32_t joined_context;  // num_computed when it joined
    bool measured;
  };

  explicit DecodeGroup(int32_t block_size)
      : block_size_(block_size), phase_(static_cast<size_t>(block_size), 0) {}

  bool empty() const { return heap_.empty(); }
  int32_t size() const { return static_cast<int32_t>(heap_.size()); }
  int32_t measured() const { return measured_; }
  int64_t context_sum() const { return context_sum_; }
  // Index of the next group step.
  int64_t step() const { return step_; }
  // Members (heap order), for checks.
  std::vector<Member> members() const;

  void Join(const Member& m);
  // True if some member's last step is `step` or earlier.
  bool DueAt(int64_t step) const {
    return !heap_.empty() && heap_.front().last_step <= step;
  }
  Member PopDue();              // the member with the earliest last step
  std::vector<Member> TakeAll();  // every member; the group is left empty
  // Members whose context at step() is a multiple of the block size.
  int32_t BlocksNeeded() const;
  // After the scheduler scheduled group step step(): contexts grow by one.
  void Advance() {
    context_sum_ += size();
    ++step_;
    if (++step_phase_ == block_size_) step_phase_ = 0;
  }

 private:
  // A heap entry: the member's last step, where it sits, its phase.
  struct Entry {
    int64_t last_step;
    int32_t slot;
    int32_t phase;
  };
  struct Later;  // the heap's order, (last_step, key) smallest on top

  int32_t PhaseOf(const Member& m) const;

  int32_t block_size_;
  std::vector<int32_t> phase_;  // members by (joined_context - joined) mod bs
  std::vector<Entry> heap_;     // min-heap on (last_step, key)
  std::vector<Member> slots_;   // members by slot; free ones listed below
  std::vector<int32_t> free_slots_;
  int32_t measured_ = 0;
  int64_t context_sum_ = 0;
  int64_t step_ = 0;
  int32_t step_phase_ = 0;  // step_ % block_size_
};

}  // namespace servesim
