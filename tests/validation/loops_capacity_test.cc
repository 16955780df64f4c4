// Validation of `servesim loops` (a closed loop hides the queue an open
// population builds at the same throughput) and `servesim capacity` (the
// bisection finds a capacity computable by hand).
#include <gtest/gtest.h>

#include "sim/analysis/capacity.h"
#include "sim/analysis/loops.h"
#include "sim/analysis/runs.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

TEST(Loops, ClosedLoopHidesTheOpenLoopQueueAtHighLoad) {
  // The default chat deployment with max_num_seqs 256 (roofline). Where the
  // closed loop runs near saturation (>= 85% of mu) the open loop at its
  // throughput queues longer on average; at every N its TTFT tail is longer.
  // Below that the mean can go the other way, and that is real (README,
  // `servesim loops`): a closed-loop request is sent at the end of a step
  // and waits one whole step, while an open-loop arrival at light load
  // waits only the rest of one. With the kernels roofline N = 128 runs at
  // ~82% of mu (closed 22.8 ms vs Poisson 20.8 ms mean queue).
  StatusOr<Scenario> sc = ParseScenario(EmbeddedDefaultScenario(), "<default>",
                                        {"workload.num_requests=4000", "engine.max_num_seqs=256"});
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  LoopsOptions o;
  o.concurrency = {128, 256};
  o.replications = 2;
  o.progress = false;
  StatusOr<LoopsResult> r = RunLoops(*sc, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  int near_saturation = 0;
  for (const LoopsPoint& p : r->points) {
    EXPECT_GT(p.open_poisson.ttft_ms.p99.mean, p.closed.ttft_ms.p99.mean)
        << "N = " << p.concurrency;
    EXPECT_GT(p.open_gamma.ttft_ms.p99.mean, p.closed.ttft_ms.p99.mean)
        << "N = " << p.concurrency;
    if (p.closed.utilization >= 0.85) {
      ++near_saturation;
      EXPECT_LE(p.closed.queue_ms.mean.mean, p.open_poisson.queue_ms.mean.mean)
          << "N = " << p.concurrency;
      EXPECT_LE(p.closed.queue_ms.mean.mean, p.open_gamma.queue_ms.mean.mean)
          << "N = " << p.concurrency;
    }
    // The open loops are offered what the closed loop carried.
    EXPECT_EQ(p.open_poisson.rate, p.throughput_rps);
    EXPECT_EQ(p.open_gamma.rate, p.throughput_rps);
  }
  EXPECT_GE(near_saturation, 1);
  const LoopsPoint& top = r->points.back();
  EXPECT_GT(top.open_poisson.ttft_ms.p99.mean, 3 * top.closed.ttft_ms.p99.mean);
}

TEST(Capacity, DeterministicServiceMatchesHandAnswer) {
  // Constant arrivals, one request at a time, S = 1000 tokens x 10 us =
  // 10 ms: below 100 req/s nobody waits (TTFT = S), above it the queue
  // grows without bound. With ttft_p99 <= 15 ms the answer is 100 req/s.
  const Scenario sc = testing::MustParse(testing::LinearScenario(
      R"("prefill_token_s": 1e-5)",
      R"("arrival": {"process": "constant", "rate": 50},
         "input_len": {"dist": "fixed", "value": 1000},
         "output_len": {"dist": "fixed", "value": 1}, "num_requests": 20000)",
      R"("max_num_seqs": 1, "max_num_batched_tokens": 1000000)"));
  CapacityOptions o;
  auto slo = ParseSlo("ttft_p99=15ms");
  ASSERT_TRUE(slo.ok());
  o.slo = *slo;
  o.replications = 3;
  o.progress = false;
  o.validation.window_requests = 20000;
  StatusOr<CapacityResult> r = FindCapacity(sc, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Validation: every deterministic window meets the SLO right up to the
  // cap (mu's lower bound), so the answer is the cap.
  ASSERT_TRUE(r->validated);
  for (const WindowThreshold& w : r->validated->windows) EXPECT_TRUE(w.capped) << w.rate;
  EXPECT_DOUBLE_EQ(r->max_rate, std::min(r->saturation.mu.lo, r->saturation.mu_rps));
  // The SLO holds right up to saturation, so the search ends at mu's lower
  // bound: throughput, not latency, binds.
  EXPECT_EQ(r->where, BisectionResult::Where::kAboveRange);
  EXPECT_NEAR(r->max_rate, 100, 2);
  EXPECT_LE(r->max_rate, r->saturation.mu.lo);
  EXPECT_NEAR(r->saturation.mu_rps, 100, 0.5);
  // Every request meets the bound: goodput is the throughput, the
  // departures over the arrival window after its lead-in (no drain in the
  // denominator), which at a stable rate is the arrival rate to within one
  // departure over the counted span (deterministic arrivals and service
  // depart evenly; 2 allows for a warm-up truncated from the window).
  const RateEvaluation& a = r->at_max;
  EXPECT_NEAR(a.goodput_rps.mean, a.point.throughput_rps.mean, 1e-9);
  const double span_s = 0.9 * 20000 / r->max_rate;
  EXPECT_NEAR(a.goodput_rps.mean, r->max_rate, 2 / span_s);
  ASSERT_EQ(a.checks.size(), 1u);
  EXPECT_NEAR(a.checks[0].value_ms.mean, 10, 0.01);
}

}  // namespace
}  // namespace servesim
