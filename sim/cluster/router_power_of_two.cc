// Power of two choices (Mitzenmacher): sample two distinct replicas at
// random, send to the less loaded. Nearly the balance of least-outstanding
// with only two load probes per request.
#include "sim/cluster/router.h"

namespace servesim {
namespace {

class PowerOfTwoRouter : public Router {
 public:
  size_t Choose(const RouteRequest&, const std::vector<ReplicaLoad>& replicas,
                Rng& rng) override {
    const size_t n = replicas.size();
    if (n == 1) return 0;
    const size_t a = rng.Below(n);
    size_t b = rng.Below(n - 1);
    if (b >= a) ++b;
    return replicas[b].outstanding < replicas[a].outstanding ? b : a;
  }
};

}  // namespace

std::unique_ptr<Router> MakePowerOfTwoRouter() {
  return std::make_unique<PowerOfTwoRouter>();
}

}  // namespace servesim
