// A request whose client went away (servesim serve), as vLLM's
// Scheduler.finish_requests(..., FINISHED_ABORTED) ends it: out of the
// waiting queue or the running set at once, its KV blocks freed (a
// registered prefix stays cached, as for a finished request). A step in
// flight that computes its tokens still runs; Deliver drops their output.
#include <algorithm>

#include "sim/core/check.h"
#include "sim/engine/scheduler.h"

namespace servesim {

bool Scheduler::Abort(SimTime now, int64_t id) {
  Request& r = (*requests_)[id];
  if (r.done()) return false;
  // A decode group member's counters live in the group: the caller turns
  // the group off (Replica::RequireExactCounters) before it aborts.
  SERVESIM_CHECK(!group_.on(), "request %lld aborted with the decode group on",
                 static_cast<long long>(id));
  if (r.status != RequestStatus::kWaiting) {  // (End takes it out of the queue)
    SERVESIM_CHECK(r.status == RequestStatus::kRunning,
                   "request %lld aborted in status %d, neither waiting nor running",
                   static_cast<long long>(id), static_cast<int>(r.status));
    const auto it = std::find(running_.begin(), running_.end(), id);
    SERVESIM_CHECK(it != running_.end(), "running request %lld is not in the running set",
                   static_cast<long long>(id));
    running_.erase(it);
  }
  End(now, r, RequestStatus::kAborted);
  return true;
}

}  // namespace servesim
