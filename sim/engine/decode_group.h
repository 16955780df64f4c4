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
//  - the members by last step (the step that samples their last token):
//    members leave the group right after it is batched (or, with prefix
//    caching, before it: the scheduler then schedules it one by one).
// A member's own fields (Request) are left as they were when it joined;
// the scheduler rebuilds them (Scheduler::Rebuild) from the group's step
// and commit counters when it leaves.
//
// Invariants: size() == members on the wheel and the far heap == sum of
// the phase counters; context_sum() == sum over members of their context
// at step(); a member on the wheel is due in [step(), step() + kWheel), one
// on the far heap later.
// Members by last step: a timing wheel of kWheel buckets, one per step of
// the next kWheel group steps (a bucket lists its members by admission
// key, the order they leave in), and a min-heap for members due later,
// moved onto the wheel as the group steps come within reach. Joining and
// leaving are O(1) for all but the long-lived few (a heap pop per member
// was 6% of a chat run).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/engine/block_math.h"

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
      : blocks_(block_size),
        phase_(static_cast<size_t>(block_size), 0),
        head_(static_cast<size_t>(kWheel), -1) {}

  bool empty() const { return size_ == 0; }
  int32_t size() const { return size_; }
  int32_t measured() const { return measured_; }
  int64_t context_sum() const { return context_sum_; }
  // Index of the next group step.
  int64_t step() const { return step_; }
  // Members (in no particular order), for checks.
  std::vector<Member> members() const;

  // m.last_step >= step().
  void Join(const Member& m);
  // True if some member's last step is step() (none is earlier).
  bool Due() const { return head_[Bucket(step_)] >= 0; }
  // A member whose last step is step(), the lowest key first.
  Member PopDue();
  std::vector<Member> TakeAll();  // every member; the group is left empty
  // Members whose context at step() is a multiple of the block size.
  int32_t BlocksNeeded() const;
  // After the scheduler scheduled group step step(): contexts grow by one.
  void Advance() {
    context_sum_ += size();
    ++step_;
    if (++step_phase_ == blocks_.size()) step_phase_ = 0;
    if (!far_.empty() && far_.front().last_step < step_ + kWheel) PullNear();
  }

 private:
  static constexpr int64_t kWheel = 4096;  // a power of two
  struct Slot {
    Member m;
    int32_t phase;  // (joined_context - joined) mod block size
    int32_t next;   // next in its bucket, -1: none; -2: free slot
  };
  struct Far {  // a member due kWheel or more steps ahead
    int64_t last_step;
    int32_t slot;
    // The heap's order: std heaps are max-heaps, so with std::greater the
    // earliest last step is on top (ties: PutOnWheel orders them by key).
    bool operator>(const Far& o) const { return last_step > o.last_step; }
  };
  static size_t Bucket(int64_t step) {
    return static_cast<size_t>(step & (kWheel - 1));
  }
  void PutOnWheel(int32_t slot);  // into its bucket, by key
  void PullNear();  // far members now due within kWheel steps: onto the wheel

  BlockMath blocks_;  // (its Phase: a member's (joined_context - joined) mod bs)
  std::vector<int32_t> phase_;  // members by (joined_context - joined) mod bs
  std::vector<int32_t> head_;   // kWheel buckets: first slot, -1: empty
  std::vector<Far> far_;        // min-heap on last_step
  std::vector<Slot> slots_;     // members by slot; free ones listed below
  std::vector<int32_t> free_slots_;
  int32_t size_ = 0;
  int32_t measured_ = 0;
  int64_t context_sum_ = 0;
  int64_t step_ = 0;
  int32_t step_phase_ = 0;  // step_ % block size
};

}  // namespace servesim
