// Least outstanding requests: the replica with the fewest routed-and-
// unfinished requests (lowest index on ties).
#include "sim/cluster/router.h"

namespace servesim {
namespace {

class LeastOutstandingRouter : public Router {
 public:
  size_t Choose(const RouteRequest&, const std::vector<ReplicaLoad>& replicas,
                Rng&) override {
    size_t best = 0;
    for (size_t i = 1; i < replicas.size(); ++i) {
      if (replicas[i].outstanding < replicas[best].outstanding) best = i;
    }
    return best;
  }
};

}  // namespace

std::unique_ptr<Router> MakeLeastOutstandingRouter() {
  return std::make_unique<LeastOutstandingRouter>();
}

}  // namespace servesim
