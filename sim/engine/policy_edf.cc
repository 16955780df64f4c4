// Earliest deadline first on TTFT deadlines: a what-if, not a vLLM policy.
// A request's deadline is its send time plus its class's TTFT SLO
// (workload.classes[].ttft_slo_ms); a request without one has none and
// comes after every request with one. It plugs into the mechanism exactly
// as vLLM's priority policy does, with the deadline in place of the
// priority value:
//  - admission: the waiting request with the earliest (deadline, send, id);
//  - preemption: the running request with the latest (deadline, send, id)
//    over the whole running list, requests
//    already scheduled this step and the one being scheduled included.
// So a request still waiting for its first token is admitted before a
// later-deadline one, and under KV pressure the request whose deadline is
// furthest away gives up its blocks. A request that already has its first
// token keeps its (past) deadline: it is among the first served again
// after a preemption, as its TTFT is already spent.
#include "sim/engine/scheduler_policy.h"

#include "sim/core/time.h"

namespace servesim {
namespace {

SimTime Deadline(const Request& r) {
  return r.ttft_slo >= 0 ? r.send + r.ttft_slo : kNever;
}

// Admission takes the smallest key, preemption the largest.
constexpr auto kKey = [](const Request& r) {
  return WaitingKey{Deadline(r), r.send, r.id};
};

}  // namespace

std::unique_ptr<SchedulerPolicy> MakeEdfPolicy() {
  return std::make_unique<KeyOrderedPolicy<decltype(kKey)>>(kKey);
}

}  // namespace servesim
