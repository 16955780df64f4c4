// The run-memory estimate: per-request and per-block terms, and which
// setting it blames.
#include "sim/scenario/run_memory.h"

#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace servesim {
namespace {

TEST(RunMemory, RequestsAndKvBlocksByHand) {
  const Scenario sc = testing::MustParse(EmbeddedDefaultScenario(),
                                         {"workload.num_requests=1000000", "engine.num_gpu_blocks=50000"});
  const RunMemoryEstimate e = EstimateRunMemory(sc);
  EXPECT_EQ(e.requests, 1e6);
  EXPECT_NEAR(e.bytes, 1e6 * 350 + 50000 * 44.0 + 64 * 1024, 1);
  EXPECT_EQ(e.json_path, "/workload/num_requests");
  EXPECT_TRUE(CheckRunMemory(sc).ok());  // 350 MB fits any test machine
}

TEST(RunMemory, RunsThatDoNotKeepTheirRequestsNeedLess) {
  const Scenario sc = testing::MustParse(EmbeddedDefaultScenario(),
                                         {"workload.num_requests=1000000", "engine.num_gpu_blocks=50000"});
  EXPECT_FALSE(RunKeepsRequests(sc));
  const RunMemoryEstimate e = EstimateRunMemory(sc, /*keeps_requests=*/false);
  EXPECT_NEAR(e.bytes, 1e6 * 64 + 50000 * 44.0 + 64 * 1024, 1);
}

TEST(RunMemory, ManyReplicasAreBlamedWhenTheyDominate) {
  const Scenario sc = testing::MustParse(
      EmbeddedDefaultScenario(), {"workload.num_requests=300", "cluster.replicas=4096"});
  const RunMemoryEstimate e = EstimateRunMemory(sc);
  EXPECT_EQ(e.json_path, "/cluster/replicas");
  EXPECT_GT(e.bytes, 4096.0 * sc.engine.num_gpu_blocks * 44);
}

TEST(RunMemory, DurationBoundRunsCountTheirArrivals) {
  const Scenario sc = testing::MustParse(
      EmbeddedDefaultScenario(),
      {"workload.num_requests=0", "workload.duration_s=1000", "workload.arrival.rate=50"});
  const RunMemoryEstimate e = EstimateRunMemory(sc);
  EXPECT_EQ(e.requests, 50000);
  EXPECT_EQ(e.json_path, "/workload/duration_s");
}

}  // namespace
}  // namespace servesim
