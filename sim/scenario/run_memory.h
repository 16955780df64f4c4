// How much host memory a run will need, estimated from the scenario before
// it starts, so that a run too big for the machine is refused with the
// estimate instead of exhausting memory hours in (issue: num_requests=1e9,
// cluster.replicas=4096 x a large KV cache).
//
// A run that keeps its requests to the end (the analyses, the timeline,
// invariant checks, disaggregation and sessions traces read them) holds one
// record per request and, per replica, a few arrays over its KV blocks; one
// that does not (servesim run otherwise: SimulationInput::keep_requests)
// holds the summary's 48-byte outcome of each completed request and, at the
// end, an 8-byte sample buffer -- plus, whole, every request still queued:
// up to limits.max_queued when arrivals outpace service. The per-item
// figures are upper bounds measured on this code: 1M requests of the chat benchmark peak at ~330 MiB
// kept (so ~350 B a request with its block table and report vectors) and
// 64.6 MiB not kept (so 64 B), and the KV arrays hold ~44 B a block (ref
// count, free-list links, hash, duplicate chain, hash-map slot).
#pragma once

#include <cstdint>
#include <string>

#include "sim/core/status.h"
#include "sim/scenario/scenario.h"

namespace servesim {

struct RunMemoryEstimate {
  double requests = 0;  // expected request records
  double queued = 0;    // worst-case queued requests held whole (not kept runs)
  double bytes = 0;
  std::string json_path;  // the setting that dominates, e.g. /workload/num_requests
};

RunMemoryEstimate EstimateRunMemory(const Scenario& sc, bool keeps_requests = true);
// Whether `servesim run` keeps the scenario's requests to the end (with
// --save-timeline or --check-invariants it always does).
bool RunKeepsRequests(const Scenario& sc);

// Ok when the estimate fits in 80% of this machine's physical memory (or of
// a smaller address-space or data limit: ulimit -v, ulimit -d), or when
// SERVESIM_ALLOW_LARGE_MEMORY=1; else a one-line error with the estimate,
// naming the file and the dominant setting.
Status CheckRunMemory(const Scenario& sc, bool keeps_requests = true);

}  // namespace servesim
