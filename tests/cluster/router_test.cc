// Router conformance: every router places every request on a real replica;
// round-robin balances counts exactly; load-aware routers keep outstanding
// work more even than round-robin under heavy-tailed lengths; and prefix
// affinity raises the fleet's hit rate over round-robin on shared prefixes.
#include "sim/cluster/router.h"

#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace servesim {
namespace {

std::string ClusterScenario(const std::string& router, bool prefixes,
                            double rate = 60, int max_num_seqs = 256) {
  return R"({"seed": 4, "model": "llama-3.1-8b", "hardware": {"gpu": "h200"},
    "engine": {"prefix_caching": true, "num_gpu_blocks": 6000, "max_num_seqs": )" +
         std::to_string(max_num_seqs) + R"(},
    "cluster": {"replicas": 4, "router": ")" + router + R"("},
    "workload": {"arrival": {"process": "poisson", "rate": )" + std::to_string(rate) + R"(},
      "input_len": {"dist": "lognormal", "median": 120, "p99": 2048},
      "output_len": {"dist": "lognormal", "median": 200, "p99": 1500},)" +
         (prefixes ? R"("prefix": {"model": "zipf", "num_prefixes": 400, "prefix_len": 1500, "s": 0.8},)"
                   : "") +
         R"("num_requests": 6000}})";
}

class EveryRouter : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryRouter, SendsEveryRequestToAReplicaAndAllFinish) {
  SimulationOutput out;
  const RunSummary s = testing::RunScenario(
      testing::MustParse(ClusterScenario(GetParam(), true)), &out, true);
  EXPECT_EQ(s.completed, 6000);
  int64_t routed = 0;
  for (const ReplicaStats& r : out.replicas) routed += r.routed;
  EXPECT_EQ(routed, 6000);
  for (const Request& r : out.requests) {
    ASSERT_GE(r.replica, 0);
    ASSERT_LT(r.replica, 4);
  }
}

INSTANTIATE_TEST_SUITE_P(AllRouters, EveryRouter, ::testing::ValuesIn(RouterNames()));

TEST(Routers, RoundRobinBalancesCountsExactly) {
  SimulationOutput out;
  testing::RunScenario(testing::MustParse(ClusterScenario("round_robin", false)), &out);
  for (const ReplicaStats& r : out.replicas) EXPECT_EQ(r.routed, 1500);
  // Without the frontend requests reach the router in send order, so the
  // rotation is the request id's (with it, in the API servers' order).
  testing::RunScenario(
      testing::MustParse(ClusterScenario("round_robin", false), {"frontend.enabled=false"}),
      &out);
  for (const Request& r : out.requests) EXPECT_EQ(r.replica, r.id % 4);
}

TEST(Routers, LoadAwareRoutersEvenOutTheWorkNearSaturation) {
  // Each replica runs at most 8 sequences, so it queues like an 8-server
  // station; with heavy-tailed outputs, blind rotation lets queues build on
  // some replicas while others idle, and joining the shortest queue (or the
  // shorter of two) waits far less -- the classic JSQ result.
  const RunSummary rr = testing::RunScenario(
      testing::MustParse(ClusterScenario("round_robin", false, 18, 8)));
  ASSERT_GT(rr.queue_ms.mean, 50.0) << "the load must make requests queue";
  for (const char* name : {"least_outstanding", "power_of_two"}) {
    const RunSummary s =
        testing::RunScenario(testing::MustParse(ClusterScenario(name, false, 18, 8)));
    EXPECT_LT(s.queue_ms.mean, 0.8 * rr.queue_ms.mean) << name << " vs round-robin";
  }
}

TEST(Routers, PrefixAffinityRaisesTheFleetHitRate) {
  const RunSummary rr = testing::RunScenario(
      testing::MustParse(ClusterScenario("round_robin", true)));
  const RunSummary pa = testing::RunScenario(
      testing::MustParse(ClusterScenario("prefix_affinity", true)));
  EXPECT_GT(pa.token_hit_rate, rr.token_hit_rate + 0.05)
      << "round-robin " << rr.token_hit_rate << ", affinity " << pa.token_hit_rate;
  EXPECT_LT(pa.routed_imbalance, 1.5);  // the load bound holds
}

}  // namespace
}  // namespace servesim
