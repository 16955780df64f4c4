// The scheduler's decode group (see decode_group.h).
#include "sim/engine/decode_group.h"

#include <algorithm>
#include <functional>

#include "sim/core/check.h"

namespace servesim {

void DecodeGroup::PutOnWheel(int32_t slot) {
  const Member& m = slots_[static_cast<size_t>(slot)].m;
  int32_t* at = &head_[Bucket(m.last_step)];
  while (*at >= 0 && slots_[static_cast<size_t>(*at)].m.key < m.key) {
    at = &slots_[static_cast<size_t>(*at)].next;
  }
  slots_[static_cast<size_t>(slot)].next = *at;
  *at = slot;
}

void DecodeGroup::PullNear() {
  while (!far_.empty() && far_.front().last_step < step_ + kWheel) {
    std::pop_heap(far_.begin(), far_.end(), std::greater<>{});
    const int32_t slot = far_.back().slot;
    far_.pop_back();
    PutOnWheel(slot);
  }
}

void DecodeGroup::Join(const Member& m) {
  SERVESIM_CHECK(m.last_step >= step_, "decode group member %lld joins after its last step",
                 static_cast<long long>(m.id));
  const int32_t phase = blocks_.Phase(m.joined_context - m.joined);
  ++phase_[static_cast<size_t>(phase)];
  measured_ += m.measured;
  context_sum_ += m.joined_context + (step_ - m.joined);
  ++size_;
  int32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<int32_t>(slots_.size());
    slots_.push_back({m, phase, -1});
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    slots_[static_cast<size_t>(slot)] = {m, phase, -1};
  }
  if (m.last_step < step_ + kWheel) {
    PutOnWheel(slot);
  } else {
    far_.push_back({m.last_step, slot});
    std::push_heap(far_.begin(), far_.end(), std::greater<>{});
  }
}

DecodeGroup::Member DecodeGroup::PopDue() {
  int32_t& head = head_[Bucket(step_)];
  const int32_t slot = head;
  Slot& s = slots_[static_cast<size_t>(slot)];
  head = s.next;
  s.next = -2;
  free_slots_.push_back(slot);
  --phase_[static_cast<size_t>(s.phase)];
  measured_ -= s.m.measured;
  context_sum_ -= s.m.joined_context + (step_ - s.m.joined);
  --size_;
  return s.m;
}

std::vector<DecodeGroup::Member> DecodeGroup::members() const {
  std::vector<Member> all;
  all.reserve(static_cast<size_t>(size_));
  for (const Slot& s : slots_) {
    if (s.next != -2) all.push_back(s.m);
  }
  return all;
}

std::vector<DecodeGroup::Member> DecodeGroup::TakeAll() {
  std::vector<Member> all = members();
  for (const Member& m : all) head_[Bucket(m.last_step)] = -1;
  far_.clear();
  slots_.clear();
  free_slots_.clear();
  std::fill(phase_.begin(), phase_.end(), 0);
  size_ = 0;
  measured_ = 0;
  context_sum_ = 0;
  return all;
}

int32_t DecodeGroup::BlocksNeeded() const {
  // (p + step) % bs == 0  <=>  p == (bs - step % bs) % bs.
  // step_phase_ == step_ % bs, kept by Advance (no division per step).
  const int32_t s = step_phase_;
  return phase_[static_cast<size_t>(s == 0 ? 0 : blocks_.size() - s)];
}

}  // namespace servesim
