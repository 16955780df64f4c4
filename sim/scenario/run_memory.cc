// Run memory estimate (see run_memory.h).
#include "sim/scenario/run_memory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace servesim {
namespace {

constexpr double kBytesPerRequest = 350;
constexpr double kBytesPerRetiredRequest = 64;
constexpr double kBytesPerBlock = 44;
constexpr double kBytesPerReplica = 64 * 1024;  // scheduler, queues, policy

double PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<double>(pages) * size : 0;
}

std::string Gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

}  // namespace

bool RunKeepsRequests(const Scenario& sc) {
  return sc.disagg.has_value() ||
         (sc.workload.trace && sc.workload.trace->format == TraceFormat::kSessions);
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
  const double reqs =
      e.requests * (keeps_requests ? kBytesPerRequest : kBytesPerRetiredRequest);
  e.bytes = reqs + kv;
  if (kv > reqs) e.json_path = sc.num_replicas > 1 ? "/cluster/replicas" : "/engine/num_gpu_blocks";
  return e;
}

Status CheckRunMemory(const Scenario& sc, bool keeps_requests) {
  const char* allow = std::getenv("SERVESIM_ALLOW_LARGE_MEMORY");
  if (allow != nullptr && std::string(allow) == "1") return Status::Ok();
  const double have = PhysicalMemoryBytes();
  const RunMemoryEstimate e = EstimateRunMemory(sc, keeps_requests);
  if (have <= 0 || e.bytes <= 0.8 * have) return Status::Ok();
  char n[32];
  std::snprintf(n, sizeof n, "%.3g", e.requests);
  return Status::Error(sc.file + ": " + e.json_path + ": the run would need about " +
                       Gib(e.bytes) + " of memory (" + n + " requests, " +
                       std::to_string(sc.num_replicas) + " replica(s) of " +
                       std::to_string(sc.engine.num_gpu_blocks) +
                       " KV blocks), more than 80% of this machine's " + Gib(have) +
                       "; expected a smaller run (or set SERVESIM_ALLOW_LARGE_MEMORY=1 "
                       "to run it anyway)");
}

}  // namespace servesim
