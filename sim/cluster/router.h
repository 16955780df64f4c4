// Routers: which replica of a cluster serves a request. One small file per
// policy behind this interface; a router object belongs to one run (it may
// keep state, e.g. the round-robin cursor), so runs never share one.
//
// Layering note: routers see replicas only through ReplicaLoad (counts and
// a read-only KV cache), so they sit below the engine; the simulation driver
// composes replicas and a router into a cluster.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/rng.h"
#include "sim/kv/kv_cache.h"

namespace servesim {

struct RouteRequest {
  int64_t id = 0;
  int32_t prompt_len = 0;
  // Chained hashes of the prompt's full blocks (only for routers that ask
  // for them via wants_block_hashes()).
  const uint64_t* block_hashes = nullptr;
  int32_t num_block_hashes = 0;
};

struct ReplicaLoad {
  int64_t outstanding = 0;  // routed here and not finished
  int64_t waiting = 0;      // in its scheduler's waiting queue
  const KvCache* kv = nullptr;
};

struct RouterConfig {
  std::string name = "round_robin";
  // prefix_affinity: a replica is eligible while its outstanding count is
  // at most (1 + load_slack) x the least loaded replica's, plus 1.
  double load_slack = 0.25;
};

class Router {
 public:
  virtual ~Router() = default;
  virtual size_t Choose(const RouteRequest& request,
                        const std::vector<ReplicaLoad>& replicas, Rng& rng) = 0;
  virtual bool wants_block_hashes() const { return false; }
};

std::unique_ptr<Router> MakeRoundRobinRouter();
std::unique_ptr<Router> MakeLeastOutstandingRouter();
std::unique_ptr<Router> MakePowerOfTwoRouter();
std::unique_ptr<Router> MakePrefixAffinityRouter(double load_slack);

// By name; nullptr for an unknown name.
std::unique_ptr<Router> MakeRouter(const RouterConfig& config);
std::vector<std::string> RouterNames();

}  // namespace servesim
