// The scheduler's decode group (see decode_group.h).
#include "sim/engine/decode_group.h"

#include <algorithm>

namespace servesim {

// std heaps are max-heaps: "greater" puts the earliest last step on top.
// Equal last steps (rare) are ordered by admission key, read from the
// slots. A function object, so the heap operations inline it.
struct DecodeGroup::Later {
  const Member* slots;
  bool operator()(const Entry& a, const Entry& b) const {
    if (a.last_step != b.last_step) return a.last_step > b.last_step;
    return slots[a.slot].key > slots[b.slot].key;
  }
};

int32_t DecodeGroup::PhaseOf(const Member& m) const {
  const int64_t p = (m.joined_context - m.joined) % block_size_;
  return static_cast<int32_t>(p < 0 ? p + block_size_ : p);
}

void DecodeGroup::Join(const Member& m) {
  const int32_t phase = PhaseOf(m);
  ++phase_[static_cast<size_t>(phase)];
  measured_ += m.measured;
  context_sum_ += m.joined_context + (step_ - m.joined);
  int32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<int32_t>(slots_.size());
    slots_.push_back(m);
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    slots_[static_cast<size_t>(slot)] = m;
  }
  heap_.push_back({m.last_step, slot, phase});
  std::push_heap(heap_.begin(), heap_.end(), Later{slots_.data()});
}

DecodeGroup::Member DecodeGroup::PopDue() {
  std::pop_heap(heap_.begin(), heap_.end(), Later{slots_.data()});
  const Entry e = heap_.back();
  heap_.pop_back();
  const Member m = slots_[static_cast<size_t>(e.slot)];
  free_slots_.push_back(e.slot);
  --phase_[static_cast<size_t>(e.phase)];
  measured_ -= m.measured;
  context_sum_ -= m.joined_context + (step_ - m.joined);
  return m;
}

std::vector<DecodeGroup::Member> DecodeGroup::members() const {
  std::vector<Member> all;
  all.reserve(heap_.size());
  for (const Entry& e : heap_) all.push_back(slots_[static_cast<size_t>(e.slot)]);
  return all;
}

std::vector<DecodeGroup::Member> DecodeGroup::TakeAll() {
  std::vector<Member> all = members();
  heap_.clear();
  slots_.clear();
  free_slots_.clear();
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
