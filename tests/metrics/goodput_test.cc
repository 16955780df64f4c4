// Goodput as vllm bench serve --goodput defines it: every given SLO met
// (limits inclusive), TPOT = (E2E - TTFT) / (tokens - 1) and 0 for a
// one-token answer; the run's request_goodput is the good requests over
// the same duration as request_throughput, counted here by hand from the
// per-request records rather than through the summary's own loop.
#include <gtest/gtest.h>

#include "sim/metrics/goodput.h"
#include "sim/report/writers.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

TEST(Goodput, EverySloGivenMustHoldAndLimitsAreInclusive) {
  GoodputSlo slo;
  slo.ttft_ms = 500;
  slo.tpot_ms = 50;
  // TTFT 500 (at the limit), TPOT (5450 - 500) / 99 = 50 (at the limit).
  EXPECT_TRUE(MeetsGoodput(slo, 500, 5450, 100));
  EXPECT_FALSE(MeetsGoodput(slo, 500.001, 5450, 100));
  EXPECT_FALSE(MeetsGoodput(slo, 500, 5451, 100));
  // E2E is not judged unless given.
  EXPECT_TRUE(MeetsGoodput(slo, 10, 1e9, 1));
  slo.e2el_ms = 2000;
  EXPECT_FALSE(MeetsGoodput(slo, 10, 2000.5, 1));
  EXPECT_TRUE(MeetsGoodput(slo, 10, 2000, 1));
}

TEST(Goodput, OneTokenAnswerHasTpotZero) {
  EXPECT_EQ(GoodputTpotMs(100, 900, 1), 0);
  EXPECT_EQ(GoodputTpotMs(100, 900, 0), 0);
  EXPECT_DOUBLE_EQ(GoodputTpotMs(100, 900, 3), 400);
  GoodputSlo slo;
  slo.tpot_ms = 0;  // vLLM allows 0: only a one-token answer meets it
  EXPECT_TRUE(MeetsGoodput(slo, 100, 900, 1));
  EXPECT_FALSE(MeetsGoodput(slo, 100, 900, 2));
}

TEST(Goodput, EmptyAndDescribed) {
  GoodputSlo slo;
  EXPECT_TRUE(slo.empty());
  slo.tpot_ms = 50;
  slo.e2el_ms = 2000;
  EXPECT_FALSE(slo.empty());
  EXPECT_EQ(DescribeGoodput(slo), "TPOT <= 50 ms, E2E <= 2000 ms");
}

TEST(Goodput, RunGoodputIsTheHandCountOverTheRunDuration) {
  const Scenario sc = testing::MustParse(testing::LinearScenario(
      R"("step_s": 0.004, "prefill_token_s": 0.00002, "decode_seq_s": 0.0002)",
      R"("arrival": {"process": "poisson", "rate": 30}, "num_requests": 1500,
         "input_len": {"dist": "uniform", "min": 100, "max": 900},
         "output_len": {"dist": "uniform", "min": 1, "max": 60})"),
      {R"(metrics.goodput={"ttft_ms": 40, "tpot_ms": 8})",
       "metrics.warmup_requests=100"});
  SimulationOutput out;
  const RunSummary s = testing::RunScenario(sc, &out);
  int64_t good = 0, completed = 0;
  SimTime first = kNever, last = 0;
  for (const Request& r : out.requests) {
    if (!r.measured || r.status != RequestStatus::kFinished) continue;
    ++completed;
    first = std::min(first, r.arrival);
    last = std::max(last, r.finish);
    const double ttft = (r.first_token - r.send) / 1e6;
    const double e2e = (r.finish - r.send) / 1e6;
    const double tpot = r.output_len > 1 ? (e2e - ttft) / (r.output_len - 1) : 0;
    good += ttft <= 40 && tpot <= 8;
  }
  ASSERT_EQ(completed, s.completed);
  // Neither all nor none: the SLOs bite.
  EXPECT_GT(good, completed / 10);
  EXPECT_LT(good, completed);
  EXPECT_EQ(s.good, good);
  const double duration_s = (last - first) / 1e9;
  EXPECT_NEAR(s.request_goodput, good / duration_s, 1e-9);
  EXPECT_NEAR(s.request_goodput / s.request_throughput,
              static_cast<double>(good) / completed, 1e-12);
  const nlohmann::json j = ResultJson(sc, s);
  EXPECT_DOUBLE_EQ(j["request_goodput"].get<double>(), s.request_goodput);
  EXPECT_EQ(j["servesim"]["goodput"]["good_requests"].get<int64_t>(), good);
}

TEST(Goodput, ResultJsonNullWithoutSlos) {
  const Scenario sc = testing::MustParse(testing::LinearScenario(
      R"("step_s": 0.004)",
      R"("arrival": {"process": "poisson", "rate": 5}, "num_requests": 20,
         "input_len": {"dist": "fixed", "value": 10},
         "output_len": {"dist": "fixed", "value": 5})"));
  const RunSummary s = testing::RunScenario(sc);
  const nlohmann::json j = ResultJson(sc, s);
  EXPECT_TRUE(j["request_goodput"].is_null());
  EXPECT_FALSE(j["servesim"].contains("goodput"));
}

}  // namespace
}  // namespace servesim
