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
  // 64 B for each retired request, 350 B for each of up to max_queued
  // (100000 by default) held whole while queued.
  EXPECT_EQ(e.queued, 100000);
  EXPECT_NEAR(e.bytes, 1e6 * 64 + 1e5 * 350 + 50000 * 44.0 + 64 * 1024, 1);
}

// Issue 35: limits.max_queued=1e9 at 5000 req/s grew the queue until the
// allocator failed; the queue's worst case is part of the estimate.
TEST(RunMemory, ALongQueueIsBlamedWhenItDominates) {
  const Scenario sc = testing::MustParse(
      EmbeddedDefaultScenario(), {"workload.num_requests=10000000",
                                  "limits.max_queued=1000000000",
                                  "workload.arrival.rate=5000"});
  const RunMemoryEstimate e = EstimateRunMemory(sc, /*keeps_requests=*/false);
  EXPECT_EQ(e.queued, 1e7);  // no more than the run's requests
  EXPECT_EQ(e.json_path, "/limits/max_queued");
  EXPECT_GT(e.bytes, 1e7 * 350);
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
