// The scheduler's decode group (see decode_group.h).
#include "sim/engine/decode_group.h"

#include <algorithm>

namespace servesim {
namespace {

// std heaps are max-heaps: "greater" puts the earliest last step on top.
// A function object, so the heap operations inline it.
struct Later {
  bool operator()(const DecodeGroup::Member& a,
                  const DecodeGroup::Member& b) const {
    if (a.last_step != b.last_step) return a.last_step > b.last_step;
    return a.key > b.key;
  }
};

}  // namespace

int32_t DecodeGroup::PhaseOf(const Member& m) const {
  const int64_t p = (m.joined_context - m.joined) % block_size_;
  return static_cast<int32_t>(p < 0 ? p + block_size_ : p);
}

void DecodeGroup::Join(const Member& m) {
  ++phase_[static_cast<size_t>(PhaseOf(m))];
  measured_ += m.measured;
  context_sum_ += m.joined_context + (step_ - m.joined);
  heap_.push_back(m);
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

void DecodeGroup::Remove(const Member& m) {
  --phase_[static_cast<size_t>(PhaseOf(m))];
  measured_ -= m.measured;
  context_sum_ -= m.joined_context + (step_ - m.joined);
}

DecodeGroup::Member DecodeGroup::PopDue() {
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  const Member m = heap_.back();
  heap_.pop_back();
  Remove(m);
  return m;
}

std::vector<DecodeGroup::Member> DecodeGroup::TakeAll() {
  std::vector<Member> all;
  all.swap(heap_);
  std::fill(phase_.begin(), phase_.end(), 0);
  measured_ = 0;
  context_sum_ = 0;
  return all;
}

int32_t DecodeGroup::BlocksNeeded() const {
  // (p + step) % bs == 0  <=>  p == (bs - step % bs) % bs.
  // step_phase_ == step_ % bs, kept by Advance (no division per step).
  const int32_t s = step_phase_;
  return phase_[static_cast<size_t>(s == 0 ? 0 : block_size_ - s)];
}

}  // namespace servesim
