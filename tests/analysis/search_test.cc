// Bisection on synthetic monotone predicates, knee detection, queueing
// formulas and the saturation estimator on a hand-built request table.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

#include "sim/analysis/bisection.h"
#include "sim/analysis/parallel.h"
#include "sim/analysis/queueing.h"
#include "sim/analysis/saturation.h"

namespace servesim {
namespace {

TEST(Bisection, FindsThresholdWithinTolerance) {
  for (double threshold : {0.37, 5.0, 9.99}) {
    int calls = 0;
    auto r = BisectMaxFeasible(0.1, 10, [&](double x) {
      ++calls;
      return x * x <= threshold * threshold;  // monotone, not linear
    }, 1e-3);
    EXPECT_EQ(r.where, BisectionResult::Where::kInside);
    EXPECT_LE(r.value, threshold);
    EXPECT_GE(r.value, threshold - 1e-3 * 10);
    EXPECT_GT(r.infeasible, threshold);
    EXPECT_EQ(r.evaluations, calls);
    EXPECT_LE(calls, 20);
  }
}

TEST(Bisection, ReportsOutOfRange) {
  auto all = BisectMaxFeasible(1, 2, [](double) { return true; }, 1e-3);
  EXPECT_EQ(all.where, BisectionResult::Where::kAboveRange);
  EXPECT_EQ(all.value, 2);
  auto none = BisectMaxFeasible(1, 2, [](double) { return false; }, 1e-3);
  EXPECT_EQ(none.where, BisectionResult::Where::kBelowRange);
  auto capped = BisectMaxFeasible(0, 1, [](double x) { return x < 0.5; }, 1e-9, 5);
  EXPECT_EQ(capped.evaluations, 5);
  EXPECT_LT(capped.value, 0.5);
}

TEST(Knee, FirstRateWithP99AboveThreeTimesTheLightestLoads) {
  // Baseline: p99 20 at rate 10 (the lightest); 61 > 3 x 20 first at 30.
  std::vector<TailPoint> pts = {{30, 10, 61}, {10, 10, 20}, {20, 10, 59}, {40, 10, 90}};
  EXPECT_EQ(FindKnee(pts).value(), 30);
  // Heavy-tailed prompts: p99 > 3 x p50 everywhere, yet no knee.
  EXPECT_FALSE(FindKnee({{10, 10, 40}, {20, 10, 45}}).has_value());
  EXPECT_TRUE(TailSeparated({10, 10, 40}));
  EXPECT_FALSE(TailSeparated({10, 10, 29}));
  EXPECT_FALSE(FindKnee({}).has_value());
  EXPECT_FALSE(FindKnee({{10, 10, 20}}).has_value());
}

TEST(Queueing, MD1WaitDistributionByErlangsFormula) {
  // P(W = 0) = 1 - rho; below one service time only the k = 0 term:
  // P(W <= t) = (1 - rho) e^{rho t}.
  EXPECT_NEAR(MD1WaitCdf(0.8, 0), 0.2, 1e-12);
  EXPECT_NEAR(MD1WaitCdf(0.8, 0.5), 0.2 * std::exp(0.4), 1e-12);
  // Mean from the CDF (integral of the tail) matches Pollaczek-Khinchine:
  // rho / (2 (1 - rho)) service times.
  for (double rho : {0.3, 0.6, 0.8}) {
    double mean = 0;
    const double dt = 1e-3;
    for (double t = 0; t < 25; t += dt) mean += (1 - MD1WaitCdf(rho, t + dt / 2)) * dt;
    EXPECT_NEAR(mean, MG1Wait(rho, 1, 0), 2e-3) << "rho " << rho;
  }
  // The CDF rises to 1 and quantiles grow with the load.
  EXPECT_NEAR(MD1WaitCdf(0.5, 20), 1, 1e-9);
  EXPECT_LT(MD1ResponseQuantile(0.5, 0.99), MD1ResponseQuantile(0.8, 0.99));
  EXPECT_TRUE(std::isnan(MD1WaitCdf(1.0, 1)));
}

TEST(Queueing, MM1AndMG1) {
  EXPECT_NEAR(MM1Wait(0.9, 1.0), 9.0, 1e-12);  // the lesson's figure
  EXPECT_NEAR(MG1Wait(0.9, 1.0, 1.0), 9.0, 1e-12);  // exponential: M/M/1
  EXPECT_NEAR(MG1Wait(0.8, 0.01, 0.0), 0.02, 1e-12);  // md1_teaching: 20 ms
  EXPECT_TRUE(std::isnan(MM1Wait(1.0, 1.0)));
}

TEST(Saturation, BackToBackServiceTimes) {
  // Two clients, one at a time: service times 1, 3, 1, 3, ... seconds; each
  // resend happens at a finish. The window skips the first 10%.
  RequestTable t;
  SimTime now = 0;
  for (int i = 0; i < 100; ++i) {
    Request r;
    r.status = RequestStatus::kFinished;
    r.send = now;
    now += FromSeconds(i % 2 == 0 ? 1.0 : 3.0);
    r.finish = now;
    t.push_back(r);
  }
  const SaturationEstimate e = SaturationFromRequests(t);
  EXPECT_NEAR(e.mean_service_s, 2.0, 0.03);
  EXPECT_NEAR(e.mu_rps, 0.5, 0.01);
  EXPECT_NEAR(e.scv, 0.25, 0.02);  // var 1 / mean^2 4
}

TEST(ParallelFor, RunsEveryIndexOnce) {
  std::vector<std::atomic<int>> hits(257);
  ParallelFor(257, 4, [&](int i) { hits[i]++; }, nullptr);
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

}  // namespace
}  // namespace servesim
