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

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/request.h"

namespace servesim {

class SchedulerPolicy {
 public:
  virtual ~SchedulerPolicy() = default;
  // Index into `waiting` of the request to try next (waiting is non-empty).
  // Preempted requests are pushed to the front of the queue.
  virtual size_t PickNext(const std::deque<int64_t>& waiting,
                          const RequestTable& requests) const = 0;
  // Index into running[first, running.size()) of the request to preempt.
  // Requests before `first` are already scheduled this step.
  virtual size_t PickVictim(const std::vector<int64_t>& running, size_t first,
                            const RequestTable& requests) const = 0;
};

// Factories, one per policy file.
std::unique_ptr<SchedulerPolicy> MakeFcfsPolicy();
std::unique_ptr<SchedulerPolicy> MakeShortestPromptFirstPolicy();
std::unique_ptr<SchedulerPolicy> MakeShortestPromptFirstOraclePolicy();

// Shared by the shortest-prompt-first policies: the waiting request with the
// fewest tokens left to prefill, ties by queue order.
size_t PickShortestPrompt(const std::deque<int64_t>& waiting,
                          const RequestTable& requests);

// By name; nullptr for an unknown name.
std::unique_ptr<SchedulerPolicy> MakeSchedulerPolicy(const std::string& name);
std::vector<std::string> SchedulerPolicyNames();

}  // namespace servesim

