// Scheduler policies: the narrow, swappable part of scheduling. The
// mechanism (budgets, chunking, KV allocation, preemption) lives in
// scheduler.cc; a policy only picks which waiting request to admit next and
// which running request to preempt. A new policy is one small file with a
// factory function, listed once in scheduler_policy.cc's table. (A table,
// not static self-registration: a static library drops unreferenced objects.)
// A policy sees only what a real server knows (prompt length, tokens
// generated so far) unless its name ends in "-oracle": the true output
// length is the workload's secret.
#pragma once

#include <compare>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/request.h"

namespace servesim {

// What the prefix cache says of a waiting request, for cache-aware
// policies: the tokens it would be served from the cache if admitted now,
// and the chained hashes of its leading full blocks that another request
// may share (equal hash k <=> equal first k + 1 blocks).
struct PrefixMatch {
  int32_t cached_tokens = 0;
  const uint64_t* hashes = nullptr;
  int32_t num_hashes = 0;
};
using PrefixProbe = std::function<PrefixMatch(int64_t id)>;

// A waiting request's rank for a policy that admits the smallest first
// (SchedulerPolicy::has_waiting_key): compared field by field.
struct WaitingKey {
  int64_t first = 0, second = 0, third = 0;
  auto operator<=>(const WaitingKey&) const = default;
};

class SchedulerPolicy {
 public:
  virtual ~SchedulerPolicy() = default;
  // Index into `waiting` of the request to try next (waiting is non-empty).
  // Preempted requests are pushed to the front of the queue.
  virtual size_t PickNext(const std::deque<int64_t>& waiting,
                          const RequestTable& requests) const = 0;
  // Index into `running` of the request to preempt so that running[first],
  // the request being scheduled, gets its KV blocks; it may be
  // running[first] itself, which then is not scheduled and ends the
  // running pass (vLLM). Requests before `first` were visited this step
  // (scheduled, or passed over); most policies choose from [first, end),
  // vLLM's priority policy from all of them, and the mechanism then
  // unschedules a victim already scheduled.
  virtual size_t PickVictim(const std::vector<int64_t>& running, size_t first,
                            const RequestTable& requests) const = 0;
  // Called once per step, before waiting requests are admitted (only in a
  // step that preempted nothing); may reorder `waiting`. `probe` is valid
  // during the call only. Most policies do nothing here.
  virtual void OrderWaiting(std::deque<int64_t>* /*waiting*/,
                            const RequestTable& /*requests*/,
                            const PrefixProbe& /*probe*/,
                            int32_t /*block_size*/) const {}
  virtual bool orders_waiting() const { return false; }
  // A policy whose PickNext is "the waiting request with the smallest
  // WaitingKeyOf" says so here: the fast engine then keeps the waiting
  // queue ordered by it (O(log n) an admission, not a scan; waiting_queue.h)
  // and calls PickNext no more; the reference engine still scans. The keys
  // must be unique (the request id last) and fixed while a request waits.
  virtual bool has_waiting_key() const { return false; }
  virtual WaitingKey WaitingKeyOf(const Request& /*r*/) const { return {}; }
};

// Factories, one per policy file.
std::unique_ptr<SchedulerPolicy> MakeFcfsPolicy();
std::unique_ptr<SchedulerPolicy> MakeShortestPromptFirstPolicy();
std::unique_ptr<SchedulerPolicy> MakeShortestPromptFirstOraclePolicy();
std::unique_ptr<SchedulerPolicy> MakePriorityPolicy();
std::unique_ptr<SchedulerPolicy> MakeEdfPolicy();
std::unique_ptr<SchedulerPolicy> MakeLongestPrefixMatchPolicy();

// Shared by the shortest-prompt-first policies: the waiting request with the
// fewest tokens left to prefill, ties by queue order.
size_t PickShortestPrompt(const std::deque<int64_t>& waiting,
                          const RequestTable& requests);

// A policy that admits the waiting request with the smallest key(request)
// and preempts the running request with the largest, over the whole
// running list (the request being scheduled and those already scheduled
// this step included): vLLM v1's priority policy, and EDF with the
// deadline as the key. Key returns a WaitingKey, unique (the id last), so
// ties cannot arise in admission; in preemption they go to the first.
template <typename Key>
class KeyOrderedPolicy : public SchedulerPolicy {
 public:
  explicit KeyOrderedPolicy(Key key) : key_(key) {}
  size_t PickNext(const std::deque<int64_t>& waiting,
                  const RequestTable& requests) const override {
    size_t best = 0;
    for (size_t i = 1; i < waiting.size(); ++i) {
      if (key_(requests[waiting[i]]) < key_(requests[waiting[best]])) best = i;
    }
    return best;
  }
  size_t PickVictim(const std::vector<int64_t>& running, size_t,
                    const RequestTable& requests) const override {
    size_t worst = 0;
    for (size_t i = 1; i < running.size(); ++i) {
      if (key_(requests[running[i]]) > key_(requests[running[worst]])) worst = i;
    }
    return worst;
  }
  bool has_waiting_key() const override { return true; }
  WaitingKey WaitingKeyOf(const Request& r) const override { return key_(r); }

 private:
  Key key_;
};

// By name; nullptr for an unknown name.
std::unique_ptr<SchedulerPolicy> MakeSchedulerPolicy(const std::string& name);
std::vector<std::string> SchedulerPolicyNames();

}  // namespace servesim

