// Prefix affinity with a load bound: among replicas not much busier than
// the least loaded one, the one whose prefix cache holds the longest run of
// the request's leading blocks; ties (and no hit anywhere) go to the least
// loaded. The bound keeps a popular prefix from piling onto one replica.
#include <algorithm>

#include "sim/cluster/router.h"

namespace servesim {
namespace {

class PrefixAffinityRouter : public Router {
 public:
  explicit PrefixAffinityRouter(double slack) : slack_(slack) {}
  bool wants_block_hashes() const override { return true; }

  size_t Choose(const RouteRequest& req, const std::vector<ReplicaLoad>& replicas,
                Rng&) override {
    int64_t least = replicas[0].outstanding;
    for (const auto& r : replicas) least = std::min(least, r.outstanding);
    const double bound = (1.0 + slack_) * static_cast<double>(least) + 1.0;
    size_t best = 0;
    int32_t best_hits = -1;
    for (size_t i = 0; i < replicas.size(); ++i) {
      const ReplicaLoad& r = replicas[i];
      if (static_cast<double>(r.outstanding) > bound) continue;
      const int32_t hits = r.kv->CountHits(req.block_hashes, req.num_block_hashes);
      if (hits > best_hits ||
          (hits == best_hits && r.outstanding < replicas[best].outstanding)) {
        best = i;
        best_hits = hits;
      }
    }
    return best;
  }

 private:
  double slack_;
};

}  // namespace

std::unique_ptr<Router> MakePrefixAffinityRouter(double load_slack) {
  return std::make_unique<PrefixAffinityRouter>(load_slack);
}

}  // namespace servesim
