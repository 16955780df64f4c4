// Capacity answers that do not move with the seed or the run length, never
// exceed what the replica can serve, and hold up in a long run (issue 12).
// Each FindCapacity on the default chat deployment costs ~5-20 s of CPU.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/core/paths.h"
#include "sim//analysis/capacity.h"
#include "sim/analysis/confidence.h"
#include "sim/analysis/runs.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

Scenario Chat(const std::vector<std::string>& sets) {
  StatusOr<Scenario> sc = ParseScenario(EmbeddedDefaultScenario(), "<default>", sets);
  EXPECT_TRUE(sc.ok()) << sc.status().message();
  return *sc;
}

CapacityOptions Slo(const std::string& text) {
  CapacityOptions o;
  StatusOr<std::vector<SloTerm>> slo = ParseSlo(text);
  EXPECT_TRUE(slo.ok());
  o.slo = *slo;
  o.progress = false;
  // The screening stage alone (capacity.h); the validated answer has its
  // own test (capacity_validated_test.cc).
  o.validation.window_requests = 0;
  return o;
}

TEST(CapacitySteadyState, AnswerHoldsAcrossSeedsAndRunLengthsAndInALongRun) {
  const CapacityOptions o = Slo("ttft_p99=500ms");
  std::vector<double> answers;
  for (const std::vector<std::string>& sets :
       {std::vector<std::string>{"seed=1"}, {"seed=2"}, {"seed=3"},
        {"seed=1", "workload.num_requests=5000"}}) {
    StatusOr<CapacityResult> r = FindCapacity(Chat(sets), o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->where, BisectionResult::Where::kInside);
    EXPECT_LE(r->max_rate, r->saturation.mu.lo);
    answers.push_back(r->max_rate);
  }
  const auto [lo, hi] = std::minmax_element(answers.begin(), answers.end());
  // The stated precision (CapacityOptions::precision, 5%).
  EXPECT_LE(*hi / *lo - 1, o.precision) << "answers " << answers[0] << ", " << answers[1]
                                        << ", " << answers[2] << ", " << answers[3];
  // 200,000-request runs at the highest answer meet the SLO. One such run
  // is itself a noisy judge near saturation (its p99 TTFT at ~43.5 req/s
  // ranged 204-746 ms over four seeds), so three are pooled.
  std::vector<std::vector<double>> ttft;
  for (int seed : {11, 12, 13}) {
    const Scenario sc = Chat({"seed=" + std::to_string(seed), "workload.num_requests=200000",
                              "workload.arrival.rate=" + std::to_string(*hi)});
    SimulationOutput out = RunSimulation(sc.ToSimulationInput());
    EXPECT_FALSE(out.unstable) << out.unstable_reason;
    ttft.push_back(SloSamples(out.requests, o.slo)[0]);
  }
  EXPECT_LE(PooledPercentileInterval(ttft, 99).mean, 500) << "at " << *hi << " req/s";
}

TEST(CapacitySteadyState, ShippedPlanStaysBelowSaturationWithSaneIntervals) {
  StatusOr<Scenario> sc =
      LoadScenarioFile(RepoRoot() + "/scenarios/capacity_plan.json", {});
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  const CapacityOptions o = Slo("ttft_p99=2s,tpot_p99=100ms");
  StatusOr<CapacityResult> r = FindCapacity(*sc, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r->max_rate, 0);
  EXPECT_LE(r->max_rate, r->saturation.mu.lo);
  EXPECT_LT(r->saturation.mu.lo, r->saturation.mu_rps);
  ASSERT_FALSE(r->trail.empty());
  for (const RateEvaluation& e : r->trail) {
    EXPECT_GE(e.point.replications, 3);
    for (const SloCheck& c : e.checks) {
      EXPECT_GE(c.value_ms.lo, 0) << c.name << " at " << e.point.rate;
      EXPECT_LE(c.value_ms.lo, c.value_ms.mean);
      EXPECT_LE(c.value_ms.mean, c.value_ms.hi);
    }
    const Interval& p99 = e.point.ttft_ms.p99;
    EXPECT_GE(p99.lo, 0);
  }
  const RateEvaluation& a = r->at_max;
  ASSERT_TRUE(a.feasible);
  for (const SloCheck& c : a.checks) EXPECT_LE(c.value_ms.hi, c.limit_ms);
}

}  // namespace
}  // namespace servesim
