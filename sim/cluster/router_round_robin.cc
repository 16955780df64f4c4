// Round-robin: replicas in turn, blind to load.
#include "sim/cluster/router.h"

namespace servesim {
namespace {

class RoundRobinRouter : public Router {
 public:
  size_t Choose(const RouteRequest&, const std::vector<ReplicaLoad>& replicas,
                Rng&) override {
    return next_++ % replicas.size();
  }

 private:
  size_t next_ = 0;
};

}  // namespace

std::unique_ptr<Router> MakeRoundRobinRouter() {
  return std::make_unique<RoundRobinRouter>();
}

}  // namespace servesim
