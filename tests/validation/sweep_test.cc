// Validation of `servesim sweep` against queueing theory. With the linear
// cost model (prefill only), max_num_seqs 1 and one output token, each
// request is one step of prefill_token_s x prompt tokens: an M/G/1 queue
// whose saturation throughput is 1 / E[S] exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sim/analysis/queueing.h"
#include "sim/analysis/sweep.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

Scenario OneAtATime(const std::string& input_len, int64_t requests) {
  return testing::MustParse(testing::LinearScenario(
      R"("prefill_token_s": 1e-5)",
      R"("arrival": {"process": "poisson", "rate": 50}, "input_len": )" +
          input_len +
          R"(, "output_len": {"dist": "fixed", "value": 1}, "num_requests": )" +
          std::to_string(requests),
      R"("max_num_seqs": 1, "max_num_batched_tokens": 1000000)"),
      {"metrics.warmup_requests=1000"});
}

struct Case {
  const char* name;
  const char* input_len;
  double scv;  // of the service time
};

class SweepVsMG1 : public ::testing::TestWithParam<Case> {};

TEST_P(SweepVsMG1, WaitsFollowPollaczekKhinchineBelow90Percent) {
  const Case c = GetParam();
  SweepOptions o;
  o.utilizations = {0.5, 0.7, 0.85, 0.95};
  o.replications = 5;
  o.progress = false;
  o.keep_representative = false;
  StatusOr<SweepResult> r = RunSweep(OneAtATime(c.input_len, 100000), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Mean prompt 1000 tokens at 10 us: S = 10 ms, mu = 100 req/s.
  EXPECT_NEAR(r->saturation.mu_rps, 100, 2) << "analytic capacity 100 req/s";
  EXPECT_NEAR(r->saturation.scv, c.scv, 0.02 + 0.03 * c.scv);
  for (const PointStats& p : r->points) {
    if (p.utilization >= 0.9) continue;
    const double theory = SweepMG1WaitMs(r->saturation, p.rate);
    EXPECT_NEAR(p.queue_ms.mean.mean, theory, 0.05 * theory)
        << c.name << " at utilization " << p.utilization;
    EXPECT_EQ(p.stable_fraction, 1);
  }
  // The tail grows far faster than the load.
  const PointStats& low = r->points.front();
  const PointStats& high = r->points.back();
  EXPECT_GT(high.ttft_ms.p99.mean, 3 * low.ttft_ms.p99.mean);
  ASSERT_TRUE(r->knee_rate.has_value());
}

INSTANTIATE_TEST_SUITE_P(
    LinearOneAtATime, SweepVsMG1,
    ::testing::Values(
        Case{"MD1", R"({"dist": "fixed", "value": 1000})", 0.0},
        // Integer uniform 200..1800: variance (1601^2 - 1) / 12.
        Case{"MG1uniform", R"({"dist": "uniform", "min": 200, "max": 1800})",
             (1601.0 * 1601 - 1) / 12 / 1e6}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Sweep, KneeOnMD1IsWhereTheoryPutsP99AtThreeTimesItsLightLoadValue) {
  // M/D/1 (S = 10 ms): the p99 of the response time W + S from Erlang's
  // formula at each grid point; the theory knee is the first grid point
  // whose p99 exceeds 3x the p99 at the lightest point (rho 0.3: 2.89 S).
  SweepOptions o;
  o.utilizations = {0.3, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9};
  o.replications = 3;
  o.progress = false;
  o.keep_representative = false;
  StatusOr<SweepResult> r = RunSweep(OneAtATime(R"({"dist": "fixed", "value": 1000})", 50000), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double base = MD1ResponseQuantile(0.3, 0.99);
  EXPECT_NEAR(r->baseline_p99_ms, 10 * base, 0.05 * 10 * base);
  size_t theory = o.utilizations.size();
  for (size_t i = 0; i < o.utilizations.size() && theory == o.utilizations.size(); ++i) {
    if (MD1ResponseQuantile(o.utilizations[i], 0.99) > 3 * base) theory = i;
  }
  ASSERT_LT(theory, o.utilizations.size());
  ASSERT_TRUE(r->knee_rate.has_value());
  size_t simulated = 0;
  while (simulated < r->points.size() && r->points[simulated].rate < *r->knee_rate) ++simulated;
  EXPECT_LE(std::abs(static_cast<int>(simulated) - static_cast<int>(theory)), 1)
      << "simulated knee at rho " << o.utilizations[simulated] << ", theory at rho "
      << o.utilizations[theory];
  // The old diagnostic (p99 > 3 x p50) fires at rho 0.5 already: it is no knee.
  EXPECT_TRUE(r->tail_separated[1]);
}

TEST(Sweep, RejectsClosedLoops) {
  Scenario sc = OneAtATime(R"({"dist": "fixed", "value": 1000})", 1000);
  StatusOr<Scenario> closed = ParseScenario(
      sc.json.dump(), "closed.json",
      {R"(workload.arrival={"process": "closed", "concurrency": 4})"});
  ASSERT_TRUE(closed.ok()) << closed.status().message();
  StatusOr<SweepResult> r = RunSweep(*closed, SweepOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("servesim loops"), std::string::npos);
}

}  // namespace
}  // namespace servesim
