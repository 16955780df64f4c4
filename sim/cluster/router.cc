// The table of routers by name.
#include "sim/cluster/router.h"

namespace servesim {

std::unique_ptr<Router> MakeRouter(const RouterConfig& c) {
  if (c.name == "round_robin") return MakeRoundRobinRouter();
  if (c.name == "least_outstanding") return MakeLeastOutstandingRouter();
  if (c.name == "power_of_two") return MakePowerOfTwoRouter();
  if (c.name == "prefix_affinity") return MakePrefixAffinityRouter(c.load_slack);
  return nullptr;
}

std::vector<std::string> RouterNames() {
  return {"round_robin", "least_outstanding", "power_of_two", "prefix_affinity"};
}

}  // namespace servesim
