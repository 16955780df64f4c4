// The max_concurrency slots (vllm bench serve --max-concurrency: an
// asyncio.Semaphore around each request): beside the cap itself
// (CheckClients), the semaphore's other two promises, so that a request's
// wait is the benchmark's and its TTFT counts from when it was sent:
//  - first come, first served: requests are sent in arrival order;
//  - work conserving: a request waits (send > arrival) only when every
//    slot was taken at its arrival, and is sent the instant one is freed
//    (a request finishing, as its client reads it, or one rejected).
#include <algorithm>
#include <vector>

#include "sim/engine/run_invariants_violations.h"

namespace servesim {

void CheckSlotWaits(const SimulationInput& in, const SimulationOutput& out, Violations* v) {
  const WorkloadConfig& w = in.workload;
  // Sessions create turns as earlier ones finish: not one arrival stream.
  const bool sessions = w.sessions || (w.trace && w.trace->format == TraceFormat::kSessions);
  if (w.max_concurrency <= 0 || w.closed_loop || sessions) return;
  using ll = long long;
  const SimTime lag = ClientLag(in);
  std::vector<const Request*> sent;
  std::vector<SimTime> holding_sends, frees, releases;
  for (const Request& r : out.requests) {
    if (r.send < 0) continue;
    sent.push_back(&r);
    if (r.status == RequestStatus::kRejected) {
      releases.push_back(r.finish);  // never held its slot
      continue;
    }
    holding_sends.push_back(r.send);
    if (r.status == RequestStatus::kFinished) {
      frees.push_back(r.finish + lag);
      releases.push_back(r.finish + lag);
    }
  }
  std::sort(holding_sends.begin(), holding_sends.end());
  std::sort(frees.begin(), frees.end());
  std::sort(releases.begin(), releases.end());
  std::stable_sort(sent.begin(), sent.end(), [](const Request* a, const Request* b) {
    return a->arrival < b->arrival;
  });
  SimTime last_send = 0;
  for (const Request* r : sent) {
    if (r->send < last_send) {
      v->Add("slots", "request %lld arrived at %lld ns but was sent at %lld ns, before one "
             "that arrived earlier (sent at %lld ns)",
             (ll)r->id, (ll)r->arrival, (ll)r->send, (ll)last_send);
    }
    last_send = std::max(last_send, r->send);
    if (r->send <= r->arrival) continue;
    // Slots held at its arrival (a slot freed at that instant is free).
    const auto held =
        (std::upper_bound(holding_sends.begin(), holding_sends.end(), r->arrival) -
         holding_sends.begin()) -
        (std::upper_bound(frees.begin(), frees.end(), r->arrival) - frees.begin());
    if (held < w.max_concurrency) {
      v->Add("slots", "request %lld waited for a slot from %lld ns with only %lld of %d "
             "slots taken", (ll)r->id, (ll)r->arrival, (ll)held, w.max_concurrency);
    }
    if (!std::binary_search(releases.begin(), releases.end(), r->send)) {
      v->Add("slots", "request %lld waited and was sent at %lld ns, when no slot was freed",
             (ll)r->id, (ll)r->send);
    }
  }
}

}  // namespace servesim
