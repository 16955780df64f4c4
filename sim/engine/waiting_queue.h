// The scheduler's waiting queue. In queue order (a deque: new requests at
// the back, preempted ones at the front), from which the policy's PickNext
// chooses; or, for a policy with a waiting key (priority, edf) on the fast
// engine, ordered by that key, so that the next request -- the one with
// the smallest key, which PickNext's scan over the deque would choose --
// costs O(log n) instead of a scan of the whole queue (issue 35). The
// keys are unique and fixed while a request waits, so where a request
// stands in queue order cannot matter to such a policy: both forms admit
// the same requests in the same order (reference_equivalence_test).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "sim/engine/request.h"
#include "sim/engine/scheduler_policy.h"

namespace servesim {

class WaitingQueue {
 public:
  // keyed: ordered by policy->WaitingKeyOf (the policy must have one).
  WaitingQueue(const SchedulerPolicy* policy, const RequestTable* requests, bool keyed);

  // (Counted: the scheduler asks several times a step, the driver every
  // event, and a deque's size is a computation.)
  size_t size() const { return size_; }
  bool empty() const { return size() == 0; }
  void PushBack(int64_t id);   // a new request
  void PushFront(int64_t id);  // a preempted one
  // Removes a request that is waiting (a stale output finished it).
  void Erase(int64_t id);

  // The waiting pass: Next() is the request to try next (the queue is not
  // empty); Take() removes it. PutBack returns requests taken but passed
  // over, in the order taken (queue order: to the front).
  int64_t Next();
  void Take();
  void PutBack(const std::vector<int64_t>& ids) {
    if (!ids.empty()) PutBackSome(ids);  // (most passes skip none)
  }

  // Queue order, for a policy that reorders it (OrderWaiting); not keyed.
  std::deque<int64_t>* queue();

  template <typename F>
  void ForEach(F f) const {
    if (keyed_) {
      for (const auto& [key, id] : by_key_) f(id);
    } else {
      for (int64_t id : queue_) f(id);
    }
  }

 private:
  void Insert(int64_t id);  // keyed
  void PutBackSome(const std::vector<int64_t>& ids);

  const SchedulerPolicy* policy_;
  const RequestTable* requests_;
  bool keyed_;
  std::deque<int64_t> queue_;  // not keyed
  size_t next_ = 0;            // not keyed: Next()'s index into queue_
  std::map<WaitingKey, int64_t> by_key_;  // keyed
  size_t size_ = 0;
};

}  // namespace servesim
