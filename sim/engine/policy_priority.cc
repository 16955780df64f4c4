// vLLM v1's `priority` policy (--scheduling-policy priority), as vLLM 0.33.0
// runs it (vllm/v1/core/sched/request_queue.py PriorityRequestQueue,
// request.py Request.__lt__, scheduler.py schedule()), checked step for step
// by the prio_* fixtures of tests/engine/vllm_conformance_test.cc:
//  - the waiting queue is a heap ordered by (priority, arrival_time,
//    request_id): lower priority value first, then earlier arrival; a
//    preempted request goes back into the heap, not to the front;
//  - when a running request cannot get its KV blocks, the victim is
//    max(running, key=(priority, arrival_time)) over the WHOLE running
//    list -- requests already scheduled this step included (the mechanism
//    gives their tokens back), and the request being scheduled itself
//    (then it is not scheduled, and the pass goes on with the next
//    running request, which may still fit).
// arrival_time is when the engine received the request: servesim's send
// time, with ties (requests sent at one simulated instant, e.g. a closed
// loop's first ones) broken by creation order, the order the engine would
// receive them in; a real server's float timestamps never tie. (Broken by
// running order instead, as max() would on exact ties, the first running
// request preempts itself whenever it needs a block, and two tied requests
// too big to share the cache preempt each other forever: a livelock of the
// simulated tie, not of vLLM; the fuzzer found it.) request_id is a string
// in vLLM (random for `vllm bench serve`); here the creation order too.
#include "sim/engine/scheduler_policy.h"

namespace servesim {
namespace {

// Admission takes the smallest key, preemption the largest.
constexpr auto kKey = [](const Request& r) {
  return WaitingKey{r.priority, r.send, r.id};
};

}  // namespace

std::unique_ptr<SchedulerPolicy> MakePriorityPolicy() {
  return std::make_unique<KeyOrderedPolicy<decltype(kKey)>>(kKey);
}

}  // namespace servesim
