// Every registered scheduler policy runs the same randomized, cache-starved
// workload with invariant checks after every step: blocks owned exactly
// once, free + used = total, preemption happens, every request finishes.
#include <gtest/gtest.h>

#include "sim/engine/scheduler_policy.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

class PolicyConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(PolicyConformance, StarvedCacheRunKeepsInvariantsAndFinishesAll) {
  const Scenario sc = testing::MustParse(
      testing::LinearScenario(
          R"("step_s": 0.001, "prefill_token_s": 0.00002, "decode_seq_s": 0.00005)",
          R"("arrival": {"process": "gamma", "rate": 150, "burstiness": 0.3},
             "input_len": {"dist": "lognormal", "median": 60, "p99": 700},
             "output_len": {"dist": "lognormal", "median": 40, "p99": 400},
             "num_requests": 1500)",
          R"("num_gpu_blocks": 120, "max_num_batched_tokens": 512,
             "max_num_seqs": 32)"),
      {"engine.policy=" + GetParam()});
  SimulationOutput out;
  const RunSummary s = testing::RunScenario(sc, &out, /*check_invariants=*/true);
  EXPECT_GT(s.preemptions, 0) << "the workload must exercise preemption";
  EXPECT_EQ(s.completed + s.rejected, 1500);
  EXPECT_EQ(s.incomplete, 0);
  for (const Request& r : out.requests) {
    if (r.status != RequestStatus::kFinished) continue;
    EXPECT_EQ(r.num_output, r.output_len);
    EXPECT_TRUE(r.blocks.empty());
    EXPECT_LE(r.send, r.first_scheduled);
    EXPECT_LE(r.first_scheduled, r.first_token);
    EXPECT_LE(r.first_token, r.finish);
  }
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, PolicyConformance,
                         ::testing::ValuesIn(SchedulerPolicyNames()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace servesim
