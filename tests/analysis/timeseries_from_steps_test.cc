// The report's time series is read off the step records, the same rows the
// step export writes (issue 17: no second computation).
#include <gtest/gtest.h>

#include "sim/analysis/report_data.h"
#include "tests/report/step_output_util.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

TEST(TimeseriesFromSteps, SamplesTheLatestStepOfTheGoldenRun) {
  // Steps start at 0, 2, 4.5 and 6.5 ms with 1, 2, 2, 1 running and 1, 2,
  // 2, 1 KV blocks used (step_export_test.cc works them by hand).
  const Scenario sc = testing::MustParse(testing::GoldenTwoRequestScenario());
  SimulationInput in = sc.ToSimulationInput();  // points into sc: keep it alive
  in.record_steps = true;
  const SimulationOutput out = RunSimulation(in);
  ASSERT_EQ(out.steps.size(), 4u);
  const nlohmann::json ts = TimeseriesJson(out, 1e-3);
  const std::vector<double> t = ts["t_s"];
  const std::vector<int64_t> running = ts["running"], waiting = ts["waiting"];
  const std::vector<double> kv = ts["kv_usage"];
  ASSERT_EQ(t.size(), 7u);  // 0, 1, ..., 6 ms: the last step starts at 6.5
  const std::vector<int64_t> want_running = {1, 1, 2, 2, 2, 2, 2};
  EXPECT_EQ(running, want_running);
  EXPECT_EQ(waiting, std::vector<int64_t>(7, 0));
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_NEAR(kv[i], want_running[i] / static_cast<double>(out.steps[0].kv_blocks_total), 1e-12)
        << "at " << t[i];
  }
  // No recorded steps: no series (the report leaves the chart out).
  EXPECT_TRUE(TimeseriesJson(SimulationOutput{}, 1e-3).is_null());
}

}  // namespace
}  // namespace servesim
