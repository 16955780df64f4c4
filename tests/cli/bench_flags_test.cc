// vllm bench serve's flags on `servesim run`: each becomes the scenario
// keys it aliases (applied after --set, before validation), conflicting
// flags and bad goodput specs are one-line errors, and a bad value is the
// loader's error like any scenario value.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/cli/bench_flags.h"
#include "sim/core/rng.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

// The embedded default with the flags (and --set edits) applied.
StatusOr<Scenario> WithFlags(const BenchFlags& f, const std::vector<std::string>& sets = {}) {
  ScenarioParseOptions o;
  o.edit = [&f](nlohmann::json* j) { return ApplyBenchFlags(f, j); };
  return ParseScenario(EmbeddedDefaultScenario(), "<default>", sets, o);
}

Scenario MustWith(const BenchFlags& f, const std::vector<std::string>& sets = {}) {
  StatusOr<Scenario> sc = WithFlags(f, sets);
  if (!sc.ok()) ADD_FAILURE() << sc.status().message();
  return std::move(sc.value());
}

std::string ErrorOf(const BenchFlags& f) {
  StatusOr<Scenario> sc = WithFlags(f);
  return sc.ok() ? "" : sc.status().message();
}

// A flag and a --set of the key it aliases would silently override one
// another: an error naming both. A --set of another key is fine.
TEST(BenchFlags, FlagAndSetOfTheSameKeyConflict) {
  BenchFlags f;
  f.request_rate = "20";
  f.random_range_ratio = 0.5;
  const Status st = CheckBenchFlagsAgainstSets(f, {"workload.arrival.rate=5"});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            "--request-rate and --set workload.arrival.rate=5 both set "
            "workload.arrival; expected one of them");
  EXPECT_FALSE(CheckBenchFlagsAgainstSets(f, {"workload.input_len={}"}).ok());
  EXPECT_TRUE(CheckBenchFlagsAgainstSets(f, {"workload.arrivals_x=1"}).ok());
  EXPECT_TRUE(CheckBenchFlagsAgainstSets(f, {"workload.num_requests=7"}).ok());
  EXPECT_TRUE(CheckBenchFlagsAgainstSets(BenchFlags{}, {"workload.arrival.rate=5"}).ok());
}

TEST(BenchFlags, RateIsPoissonAndBurstinessIsVllmGamma) {
  BenchFlags f;
  f.request_rate = "20";
  Scenario sc = MustWith(f);
  EXPECT_EQ(sc.json["workload"]["arrival"],
            nlohmann::json({{"process", "poisson"}, {"rate", 20.0}}));
  EXPECT_EQ(sc.ArrivalDescription(), "poisson(rate=20/s)");
  f.burstiness = "1";  // vLLM's default: Poisson
  EXPECT_EQ(MustWith(f).json["workload"]["arrival"]["process"], "poisson");
  f.burstiness = "inf";  // vLLM: constant gaps of 1 / rate
  EXPECT_EQ(MustWith(f).ArrivalDescription(), "constant(rate=20/s)");
  f.burstiness = "0.25";
  sc = MustWith(f);
  EXPECT_EQ(sc.ArrivalDescription(), "gamma(rate=20/s, burstiness=0.25)");
  // vLLM draws gamma(shape = b, scale = 1 / (rate b)): mean 1/rate, CV^2 1/b.
  Rng rng(3, "gaps");
  double sum = 0, sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double g = sc.workload.arrival->NextGapSeconds(rng);
    sum += g;
    sq += g * g;
  }
  const double mean = sum / n, var = sq / n - mean * mean;
  EXPECT_NEAR(mean, 1.0 / 20, 0.02 / 20);
  EXPECT_NEAR(var / (mean * mean), 1 / 0.25, 0.15);
}

TEST(BenchFlags, BurstinessAloneShapesTheScenarioRate) {
  BenchFlags f;
  f.burstiness = "0.5";
  EXPECT_EQ(MustWith(f).ArrivalDescription(), "gamma(rate=10/s, burstiness=0.5)");
}

TEST(BenchFlags, InfSendsEveryRequestAtOnce) {
  BenchFlags f;
  f.request_rate = "inf";
  f.num_prompts = 300;
  Scenario sc = MustWith(f);
  EXPECT_TRUE(sc.workload.closed_loop);
  EXPECT_EQ(sc.workload.concurrency, 300);
  EXPECT_EQ(sc.workload.think_time_s, 0);
  EXPECT_EQ(sc.workload.num_requests, 300);
  SimulationOutput out;
  testing::RunScenario(sc, &out);
  ASSERT_EQ(out.requests.size(), 300u);
  for (const Request& r : out.requests) EXPECT_EQ(r.send, 0);
  // Without --num-prompts the scenario's num_requests says how many.
  f.num_prompts.reset();
  EXPECT_EQ(MustWith(f).workload.concurrency, 10000);
}

TEST(BenchFlags, InfWithoutABoundIsAnError) {
  BenchFlags f;
  f.request_rate = "inf";
  StatusOr<Scenario> sc =
      WithFlags(f, {"workload.num_requests=0", "workload.duration_s=30"});
  ASSERT_FALSE(sc.ok());
  EXPECT_NE(sc.status().message().find("--request-rate inf sends every request at t = 0"),
            std::string::npos);
}

TEST(BenchFlags, MaxConcurrency) {
  BenchFlags f;
  f.request_rate = "30";
  f.max_concurrency = 8;
  Scenario sc = MustWith(f);
  EXPECT_FALSE(sc.workload.closed_loop);
  EXPECT_EQ(sc.workload.max_concurrency, 8);
  // With inf: vLLM's semaphore over requests all sent at once is a closed
  // loop of 8 clients with no think time.
  f.request_rate = "inf";
  sc = MustWith(f);
  EXPECT_TRUE(sc.workload.closed_loop);
  EXPECT_EQ(sc.workload.concurrency, 8);
  EXPECT_EQ(sc.workload.max_concurrency, 0);
  // Alone it caps the scenario's own open loop.
  f.request_rate.reset();
  sc = MustWith(f);
  EXPECT_EQ(sc.ArrivalDescription(), "poisson(rate=10/s), capped at max_concurrency 8");
}

TEST(BenchFlags, FiniteRateWithCapWaitsForSlotsAndTimesFromTheSend) {
  BenchFlags f;
  f.request_rate = "40";
  f.max_concurrency = 4;
  f.num_prompts = 400;
  f.isl = 512;
  f.osl = 64;
  const Scenario sc = MustWith(f);
  SimulationOutput out;
  const RunSummary s = testing::RunScenario(sc, &out, /*check_invariants=*/true);
  int64_t waited = 0;
  for (const Request& r : out.requests) waited += r.send > r.arrival;
  EXPECT_GT(waited, 100);
  EXPECT_LE(s.max_concurrent_requests, 4);
  // TTFT from the send (vLLM starts its timer inside the semaphore); the
  // wait is reported beside it.
  EXPECT_LT(s.ttft_ms.mean, s.ttft_from_arrival_ms.mean);
  EXPECT_NEAR(s.ttft_ms.mean + s.slot_wait_ms.mean, s.ttft_from_arrival_ms.mean, 1e-6);
}

TEST(BenchFlags, LengthsFixedOrVllmUniform) {
  BenchFlags f;
  f.random_input_len = 1024;
  f.osl = 128;
  Scenario sc = MustWith(f);
  EXPECT_EQ(sc.json["workload"]["input_len"],
            nlohmann::json({{"dist", "fixed"}, {"value", 1024}}));
  EXPECT_EQ(sc.json["workload"]["output_len"],
            nlohmann::json({{"dist", "fixed"}, {"value", 128}}));
  // vLLM's RandomDataset: [floor(L(1-r)), ceil(L(1+r))], output at least 1:
  // floor(1024 x 0.667) = 683, ceil(1024 x 1.333) = 1365, ceil(1 x 1.333) = 2.
  f.random_range_ratio = 0.333;
  f.osl = 1;
  sc = MustWith(f);
  EXPECT_EQ(sc.json["workload"]["input_len"],
            nlohmann::json({{"dist", "uniform"}, {"min", 683}, {"max", 1365}}));
  EXPECT_EQ(sc.json["workload"]["output_len"],
            nlohmann::json({{"dist", "uniform"}, {"min", 1}, {"max", 2}}));
  Rng rng(5, "lengths");
  int32_t lo = 1 << 30, hi = 0;
  for (int i = 0; i < 100000; ++i) {
    const int32_t x = sc.workload.input_len->Sample(rng);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  EXPECT_EQ(lo, 683);
  EXPECT_EQ(hi, 1365);
}

// SGLang's bench_serving (and vLLM's benchmark_serving.py before 0.9, the
// client InferenceMAX runs) draws [max(floor(L r), 1), L]: r = 0.8 on
// 1024 is 819..1024, r = 1 is fixed, r = 0 (its default) is 1..L; r = 1
// is refused in vLLM's style, where it would reach length 0.
TEST(BenchFlags, SglangRangeRatioIsBelowTheLength) {
  BenchFlags f;
  f.isl = 1024;
  f.osl = 1024;
  f.random_range_ratio = 0.8;
  f.range_ratio_style = "sglang";
  Scenario sc = MustWith(f);
  EXPECT_EQ(sc.json["workload"]["input_len"],
            nlohmann::json({{"dist", "uniform"}, {"min", 819}, {"max", 1024}}));
  EXPECT_EQ(sc.json["workload"]["output_len"], sc.json["workload"]["input_len"]);
  Rng rng(7, "lengths");
  int32_t lo = 1 << 30, hi = 0;
  double sum = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const int32_t x = sc.workload.output_len->Sample(rng);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  EXPECT_EQ(lo, 819);
  EXPECT_EQ(hi, 1024);
  EXPECT_NEAR(sum / n, (819 + 1024) / 2.0, 1.0);  // sd 59 / sqrt(n) = 0.19
  f.random_range_ratio = 1;
  EXPECT_EQ(MustWith(f).json["workload"]["input_len"],
            nlohmann::json({{"dist", "fixed"}, {"value", 1024}}));
  f.random_range_ratio.reset();
  f.osl = 1;
  sc = MustWith(f);
  EXPECT_EQ(sc.json["workload"]["input_len"],
            nlohmann::json({{"dist", "uniform"}, {"min", 1}, {"max", 1024}}));
  EXPECT_EQ(sc.json["workload"]["output_len"], nlohmann::json({{"dist", "fixed"}, {"value", 1}}));
  f.range_ratio_style = "vllm";
  f.random_range_ratio = 1;
  EXPECT_NE(CheckBenchFlags(f).message().find("--random-range-ratio 1: expected a number in [0, 1)"),
            std::string::npos);
  BenchFlags alone;
  alone.range_ratio_style = "sglang";
  EXPECT_NE(CheckBenchFlags(alone).message().find("--range-ratio-style: expected"),
            std::string::npos);
}

TEST(BenchFlags, NumPromptsAndGoodputAfterSet) {
  BenchFlags f;
  f.num_prompts = 1000;
  f.goodput = {"ttft:500", "tpot:50"};
  const Scenario sc = MustWith(f, {"workload.num_requests=5"});
  EXPECT_EQ(sc.workload.num_requests, 1000);
  EXPECT_EQ(sc.metrics.goodput.ttft_ms, 500);
  EXPECT_EQ(sc.metrics.goodput.tpot_ms, 50);
  EXPECT_FALSE(sc.metrics.goodput.e2el_ms);
}

TEST(BenchFlags, GoodputSpecs) {
  auto slo = ParseGoodputFlag({"e2el:2000", "ttft:0.5"});
  ASSERT_TRUE(slo.ok());
  EXPECT_EQ(slo->e2el_ms, 2000);
  EXPECT_EQ(slo->ttft_ms, 0.5);
  auto error = [](std::vector<std::string> specs) {
    auto s = ParseGoodputFlag(specs);
    return s.ok() ? std::string() : s.status().message();
  };
  EXPECT_EQ(error({"ttft:abc"}),
            "--goodput ttft:abc: expected a number of milliseconds >= 0, got \"abc\"");
  EXPECT_EQ(error({"ttft:-1"}),
            "--goodput ttft:-1: expected a number of milliseconds >= 0, got \"-1\"");
  EXPECT_EQ(error({"ttfts:5"}),
            "--goodput ttfts:5: unknown key \"ttfts\" (did you mean \"ttft\"?); expected one "
            "of ttft, tpot, e2el");
  EXPECT_EQ(error({"ttft"}), "--goodput ttft: expected KEY:VALUE, e.g. ttft:500 (milliseconds)");
  EXPECT_EQ(error({"ttft:1", "ttft:2"}), "--goodput ttft:2: ttft given twice");
  EXPECT_EQ(error({"ttft:nan"}),
            "--goodput ttft:nan: expected a number of milliseconds >= 0, got \"nan\"");
}

TEST(BenchFlags, ConflictsAreErrors) {
  BenchFlags f;
  f.isl = 10;
  f.random_input_len = 10;
  EXPECT_EQ(CheckBenchFlags(f).message(),
            "--isl and --random-input-len both given: expected one (synonyms)");
  f = {};
  f.osl = 10;
  f.random_output_len = 10;
  EXPECT_FALSE(CheckBenchFlags(f).ok());
  f = {};
  f.random_range_ratio = 0.5;
  EXPECT_NE(CheckBenchFlags(f).message().find("--random-range-ratio: expected"),
            std::string::npos);
  f = {};
  f.request_rate = "inf";
  f.burstiness = "2";
  EXPECT_NE(CheckBenchFlags(f).message().find("--burstiness with --request-rate inf"),
            std::string::npos);
  f = {};
  f.isl = 1;
  f.random_range_ratio = 0.5;
  EXPECT_NE(ErrorOf(f).find("the shortest prompt would be 0 tokens"), std::string::npos);
}

TEST(BenchFlags, BadValuesAreTheLoadersErrors) {
  BenchFlags f;
  f.request_rate = "2e9";
  EXPECT_EQ(ErrorOf(f),
            "<default>: /workload/arrival/rate: expected a number in [1e-06, 1e+09], got 2e+09");
  f.request_rate = "5";
  f.burstiness = "0.0001";
  EXPECT_EQ(ErrorOf(f),
            "<default>: /workload/arrival/burstiness: expected a number in [0.001, 1000], got "
            "0.0001");
}

}  // namespace
}  // namespace servesim
