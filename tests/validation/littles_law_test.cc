// Little's law, L = lambda W, on a continuous-batching run with the roofline
// cost model: the recorder's time-average number in system (integrated from
// the engine's counters) against the arrival rate times the mean time in
// system computed from per-request timestamps, within 2%.
#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace servesim {
namespace {

TEST(LittlesLaw, TimeAverageInSystemEqualsRateTimesSojourn) {
  const Scenario sc = testing::MustParse(R"({
    "seed": 11, "model": "llama-3.1-8b", "hardware": {"gpu": "h200"},
    "workload": {"arrival": {"process": "poisson", "rate": 20},
                 "input_len": {"dist": "lognormal", "median": 120, "p99": 2048},
                 "output_len": {"dist": "lognormal", "median": 200, "p99": 1500},
                 "num_requests": 40000},
    "metrics": {"warmup_s": 100}})");
  SimulationOutput out;
  const RunSummary s = testing::RunScenario(sc, &out);
  ASSERT_FALSE(s.unstable);
  ASSERT_GT(s.completed, 30000);
  const double lambda = s.completed / s.window_s;  // measured arrivals / window
  const double w_s = s.e2el_ms.mean / 1e3;
  EXPECT_GT(s.mean_in_system, 5.0) << "load too light to be a real check";
  EXPECT_NEAR(s.mean_in_system, lambda * w_s, 0.02 * s.mean_in_system);
}

}  // namespace
}  // namespace servesim
