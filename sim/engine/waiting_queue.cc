// The waiting queue's two forms (see waiting_queue.h).
#include "sim/engine/waiting_queue.h"

#include <algorithm>

#include "sim/core/check.h"

namespace servesim {

WaitingQueue::WaitingQueue(const SchedulerPolicy* policy, const RequestTable* requests,
                           bool keyed)
    : policy_(policy), requests_(requests), keyed_(keyed) {
  SERVESIM_CHECK(!keyed || (policy->has_waiting_key() && !policy->orders_waiting()),
                 "a waiting queue ordered by key needs a policy with a key that "
                 "does not reorder the queue");
}

void WaitingQueue::Insert(int64_t id) {
  const bool fresh =
      by_key_.emplace(policy_->WaitingKeyOf((*requests_)[id]), id).second;
  // Equal keys would be chosen by queue order, which is not kept.
  SERVESIM_CHECK(fresh, "waiting request %lld has the key of another",
                 static_cast<long long>(id));
}

void WaitingQueue::PushBack(int64_t id) {
  ++size_;
  if (keyed_) {
    Insert(id);
  } else {
    queue_.push_back(id);
  }
}

void WaitingQueue::PushFront(int64_t id) {
  ++size_;
  if (keyed_) {
    Insert(id);
  } else {
    queue_.push_front(id);
  }
}

void WaitingQueue::Erase(int64_t id) {
  --size_;  // (a request not waiting aborts below)
  if (keyed_) {
    const size_t n = by_key_.erase(policy_->WaitingKeyOf((*requests_)[id]));
    SERVESIM_CHECK(n == 1, "request %lld is not waiting", static_cast<long long>(id));
    return;
  }
  const auto it = std::find(queue_.begin(), queue_.end(), id);
  SERVESIM_CHECK(it != queue_.end(), "request %lld is not waiting",
                 static_cast<long long>(id));
  queue_.erase(it);
}

int64_t WaitingQueue::Next() {
  if (keyed_) return by_key_.begin()->second;
  next_ = policy_->PickNext(queue_, *requests_);
  return queue_[next_];
}

void WaitingQueue::Take() {
  --size_;
  if (keyed_) {
    by_key_.erase(by_key_.begin());
  } else if (next_ == 0) {
    queue_.pop_front();  // (FCFS: the deque's general erase is slower)
  } else {
    queue_.erase(queue_.begin() + static_cast<ptrdiff_t>(next_));
  }
}

void WaitingQueue::PutBackSome(const std::vector<int64_t>& ids) {
  size_ += ids.size();
  if (keyed_) {
    for (int64_t id : ids) Insert(id);
  } else {
    queue_.insert(queue_.begin(), ids.begin(), ids.end());
  }
}

std::deque<int64_t>* WaitingQueue::queue() {
  SERVESIM_CHECK(!keyed_, "a waiting queue ordered by key has no queue order");
  return &queue_;
}

}  // namespace servesim
