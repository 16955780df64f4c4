// Run memory estimate (see run_memory.h).
#include "sim/scenario/run_memory.h"
#include "sim/core/units.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace servesim {
namespace {

constexpr double kBytesPerRequest = 350;
constexpr double kBytesPerRetiredRequest = 64;
// Disaggregated: a prefill copy of each request, and its path (the digest
// keeps 40 bytes of each completed request).
constexpr double kBytesPerDisaggRequest = 300;
constexpr double kBytesPerRetiredDisaggRequest = 40;
constexpr double kBytesPerBlock = 44;
constexpr double kBytesPerReplica = 64 * 1024;  // scheduler, queues, policy

double PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<double>(pages) * size : 0;
}

// What the run may use: physical memory, or less where an address-space or
// data limit (ulimit -v, ulimit -d) would make allocations fail sooner.
struct MemoryBound {
  double bytes = 0;  // 0: unknown
  std::string what;
};
MemoryBound AvailableMemory() {
  MemoryBound b{PhysicalMemoryBytes(), "this machine's"};
  const std::pair<int, const char*> limits[] = {
      {RLIMIT_AS, "the address-space limit (ulimit -v) of"},
      {RLIMIT_DATA, "the data-segment limit (ulimit -d) of"}};
  for (const auto& [resource, what] : limits) {
    struct rlimit rl;
    if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) continue;
    const double cap = static_cast<double>(rl.rlim_cur);
    if (b.bytes <= 0 || cap < b.bytes) b = {cap, what};
  }
  return b;
}

}  // namespace

bool RunKeepsRequests(const Scenario& sc) {
  return sc.workload.trace && sc.workload.trace->format == TraceFormat::kSessions;
}

RunMemoryEstimate EstimateRunMemory(const Scenario& sc, bool keeps_requests) {
  const WorkloadConfig& w = sc.workload;
  RunMemoryEstimate e;
  e.json_path = "/workload/num_requests";
  if (w.trace) {
    e.requests = static_cast<double>(sc.trace_data_lines);
    e.json_path = "/workload/trace";
  } else if (w.num_requests > 0) {
    e.requests = static_cast<double>(w.num_requests);
  } else {
    // Bounded by time alone: what arrives in duration_s (a closed loop
    // sends no faster than it is served; bound it by the open-loop rate
    // where there is one).
    e.requests = std::max(1.0, sc.OfferedRate()) * w.duration_s;
    e.json_path = "/workload/duration_s";
  }
  const double kv = static_cast<double>(sc.num_replicas) *
                    (static_cast<double>(sc.engine.num_gpu_blocks) * kBytesPerBlock +
                     kBytesPerReplica);
  const double per_request =
      keeps_requests ? kBytesPerRequest + (sc.disagg ? kBytesPerDisaggRequest : 0)
                     : kBytesPerRetiredRequest + (sc.disagg ? kBytesPerRetiredDisaggRequest : 0);
  const double reqs = e.requests * per_request;
  // A run that retires its requests still holds every queued one whole: up
  // to limits.max_queued of them when arrivals outpace service.
  e.queued = keeps_requests ? 0
                            : std::min(e.requests,
                                       static_cast<double>(sc.limits.max_queued));
  const double queue = e.queued * kBytesPerRequest;
  e.bytes = reqs + queue + kv;
  if (queue > reqs && queue >= kv) e.json_path = "/limits/max_queued";
  if (kv > reqs && kv > queue) {
    e.json_path = sc.num_replicas > 1 ? "/cluster/replicas" : "/engine/num_gpu_blocks";
  }
  return e;
}

Status CheckRunMemory(const Scenario& sc, bool keeps_requests) {
  const char* allow = std::getenv("SERVESIM_ALLOW_LARGE_MEMORY");
  if (allow != nullptr && std::string(allow) == "1") return Status::Ok();
  const MemoryBound have = AvailableMemory();
  const RunMemoryEstimate e = EstimateRunMemory(sc, keeps_requests);
  if (have.bytes <= 0 || e.bytes <= 0.8 * have.bytes) return Status::Ok();
  char n[32], q[64] = "";
  std::snprintf(n, sizeof n, "%.3g", e.requests);
  if (e.queued > 0) std::snprintf(q, sizeof q, ", a queue of up to %.3g", e.queued);
  return Status::Error(sc.file + ": " + e.json_path + ": the run would need about " +
                       FormatGib(e.bytes) + " of memory (" + n + " requests" + q + ", " +
                       std::to_string(sc.num_replicas) + " replica(s) of " +
                       std::to_string(sc.engine.num_gpu_blocks) +
                       " KV blocks), more than 80% of " + have.what + " " +
                       FormatGib(have.bytes) + "; expected a smaller run (or set "
                       "SERVESIM_ALLOW_LARGE_MEMORY=1 to run it anyway)");
}

}  // namespace servesim
