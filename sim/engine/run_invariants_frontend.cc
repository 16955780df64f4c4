// Run-level invariants of the request path outside the scheduler (see
// run_invariants.cc's list, "frontend"), read from the requests' times.
#include <algorithm>
#include <utility>
#include <vector>

#include "sim/engine/run_invariants_violations.h"
#include "sim/engine/simulation.h"

namespace servesim {
namespace {
using ll = long long;
}  // namespace

void CheckFrontend(const SimulationInput& in, const SimulationOutput& out,
                   Violations* v) {
  const FrontendConfig& f = in.frontend;
  const bool stopped = out.stopped_at_queue_cap;
  std::vector<std::pair<SimTime, int>> busy;  // API-server work: +1 / -1
  for (const Request& r : out.requests) {
    if (r.send < 0 || r.status == RequestStatus::kRejected) continue;
    if (r.engine_arrival < 0) {
      if (!stopped) {
        v->Add("frontend", "request %lld sent at %lld ns never reached the engine",
               (ll)r.id, (ll)r.send);
      }
      continue;
    }
    if (!f.enabled) {
      if (r.engine_arrival != r.send) {
        v->Add("frontend", "request %lld: engine arrival %lld ns != send %lld ns "
               "without a frontend", (ll)r.id, (ll)r.engine_arrival, (ll)r.send);
      }
      continue;
    }
    // Its API-server work ended one hop before the engine had it, and began
    // no earlier than its send.
    const SimTime work = ApiWork(f, in.seed, r.id, r.prompt_len);
    const SimTime end = r.engine_arrival - FromSeconds(f.engine_hop_s);
    if (end - work < r.send) {
      v->Add("frontend", "request %lld: sent at %lld ns, at the engine at %lld ns: "
             "less than its API-server work (%lld ns) and the hop", (ll)r.id,
             (ll)r.send, (ll)r.engine_arrival, (ll)work);
    }
    busy.emplace_back(end - work, +1);
    busy.emplace_back(end, -1);
  }
  if (!f.enabled) return;
  // At most ApiServerCount requests in API-server work at once (an end
  // frees its server before a start at the same instant takes it).
  std::sort(busy.begin(), busy.end());
  int64_t now = 0, peak = 0;
  for (const auto& [t, d] : busy) peak = std::max(peak, now += d);
  if (peak > ApiServerCount(in)) {
    v->Add("frontend", "%lld requests in API-server work at once, %d API servers",
           (ll)peak, ApiServerCount(in));
  }
}

}  // namespace servesim
