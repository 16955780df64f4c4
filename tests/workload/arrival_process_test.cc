// Tests for the open-loop arrival processes: rate and gap variability
// against theory, unclipped tails, and configuration errors.
#include "sim/workload/arrival_process.h"

#include <gtest/gtest.h>

#include "tests/text_assertions.h"

#include <cmath>
#include <string>
#include <string_view>

#include "sim/core/status.h"

namespace servesim {
namespace {

std::unique_ptr<ArrivalProcess> Make(const std::string& json) {
  const nlohmann::json j = nlohmann::json::parse(json);
  return MakeArrivalProcess(JsonView(j, "s.json", "/workload/arrival"));
}

std::string ErrorOf(const std::string& json) {
  try {
    Make(json);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

using testing::Contains;

struct GapStats {
  double rate;    // n / total time
  double cv2;     // variance / mean^2 of the gaps
  double tail_3;  // fraction of gaps longer than 3 / rate
};

GapStats Measure(const ArrivalProcess& p, int n, uint64_t seed = 21) {
  Rng rng(seed, "arrivals");
  double mean = 0, m2 = 0;
  int tail = 0;
  for (int i = 1; i <= n; ++i) {
    const double g = p.NextGapSeconds(rng);
    tail += g > 3.0 / p.rate();
    const double d = g - mean;
    mean += d / i;
    m2 += d * (g - mean);
  }
  const double var = m2 / (n - 1);
  return {1.0 / mean, var / (mean * mean), static_cast<double>(tail) / n};
}

TEST(ArrivalProcessTest, PoissonHasItsRateUnitCv2AndAnUnclippedTail) {
  auto p = Make(R"({"process": "poisson", "rate": 8})");
  const GapStats s = Measure(*p, 400000);
  // Relative sd of the mean gap is 1/sqrt(n) = 0.16%; of the CV^2 it is
  // sqrt(4/n) = 0.32% (delta method, exponential gaps).
  EXPECT_NEAR(s.rate / 8, 1.0, 0.01);
  EXPECT_NEAR(s.cv2, 1.0, 0.03);
  // P(gap > 3/rate) = e^-3 = 4.98%; clipping gaps at 3/rate would give 0.
  EXPECT_NEAR(s.tail_3, std::exp(-3.0), 0.002);
  EXPECT_EQ(p->Describe(), "poisson(rate=8/s)");
}

// Gamma gaps with shape k = b have CV^2 = 1/b. By the delta method the
// relative sd of the sample CV^2 is sqrt((2 + 2/k) / n) and that of the
// sample mean gap is sqrt(1/(k n)); the test checks that its tolerances are
// several sd wide, and that a 10% wrong shape would fall outside them.
TEST(ArrivalProcessTest, GammaHasItsRateAndCv2OfOneOverBurstiness) {
  const int n = 1000000;
  for (double b : {0.25, 0.5, 1.0, 2.0}) {
    SCOPED_TRACE("burstiness " + std::to_string(b));
    const double rate = 20;
    const std::string cfg = R"({"process": "gamma", "rate": 20,
                                "burstiness": )" +
                            std::to_string(b) + "}";
    const GapStats s = Measure(*Make(cfg), n);
    ASSERT_GT(0.01, 4 * std::sqrt(1 / (b * n)));
    ASSERT_GT(0.05, 4 * std::sqrt((2 + 2 / b) / n));
    EXPECT_NEAR(s.rate / rate, 1.0, 0.01);
    EXPECT_NEAR(s.cv2 * b, 1.0, 0.05);

    // Power check: the same band rejects a process with shape 1.1 b.
    const std::string wrong = R"({"process": "gamma", "rate": 20,
                                  "burstiness": )" +
                              std::to_string(1.1 * b) + "}";
    EXPECT_GT(std::fabs(Measure(*Make(wrong), n).cv2 * b - 1.0), 0.05);
  }
}

TEST(ArrivalProcessTest, GammaOfBurstinessOneIsPoisson) {
  auto p = Make(R"({"process": "gamma", "rate": 5, "burstiness": 1})");
  EXPECT_NEAR(Measure(*p, 400000).tail_3, std::exp(-3.0), 0.002);
  EXPECT_EQ(p->Describe(), "gamma(rate=5/s, burstiness=1)");
}

TEST(ArrivalProcessTest, ConstantGapsAreExact) {
  auto p = Make(R"({"process": "constant", "rate": 4})");
  Rng rng(1, "arrivals");
  for (int i = 0; i < 100; ++i) ASSERT_EQ(p->NextGapSeconds(rng), 0.25);
  EXPECT_EQ(p->rate(), 4);
  EXPECT_EQ(p->Describe(), "constant(rate=4/s)");
}

TEST(ArrivalProcessTest, SameSeedGivesTheSameGaps) {
  auto p = Make(R"({"process": "gamma", "rate": 3, "burstiness": 0.5})");
  Rng a(4, "arrivals"), b(4, "arrivals");
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(p->NextGapSeconds(a), p->NextGapSeconds(b));
  }
}

TEST(ArrivalProcessTest, RateMustBePositiveAndBounded) {
  EXPECT_EQ(ErrorOf(R"({"process": "poisson", "rate": -3})"),
            "s.json: /workload/arrival/rate: expected a number in [1e-06, "
            "1e+09], got -3");
  // A mean gap beyond 1e6 s would sum past int64 nanoseconds.
  EXPECT_TRUE(Contains(ErrorOf(R"({"process": "poisson", "rate": 1e-9})"),
                       {"/workload/arrival/rate", "[1e-06, 1e+09]", "got 1e-09"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"process": "constant", "rate": 0})"),
                       {"/workload/arrival/rate", "got 0"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"process": "poisson"})"),
                       {"/workload/arrival/rate", "got nothing"}));
}

TEST(ArrivalProcessTest, BurstinessBelongsToGammaOnly) {
  EXPECT_TRUE(Contains(
      ErrorOf(R"({"process": "poisson", "rate": 1, "burstiness": 0.5})"),
      {"/workload/arrival/burstiness", "only a gamma process"}));
  EXPECT_TRUE(Contains(
      ErrorOf(R"({"process": "constant", "rate": 1, "burstiness": 1})"),
      {"/workload/arrival/burstiness"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"process": "gamma", "rate": 1})"),
                       {"/workload/arrival/burstiness", "got nothing"}));
  EXPECT_TRUE(
      Contains(ErrorOf(R"({"process": "gamma", "rate": 1, "burstiness": 0})"),
               {"/workload/arrival/burstiness", "in [0.001, 1000]", "got 0"}));
  EXPECT_TRUE(Contains(
      ErrorOf(R"({"process": "gamma", "rate": 1, "burstiness": 1e308})"),
      {"/workload/arrival/burstiness", "in [0.001, 1000]", "got 1e+308"}));
}

TEST(ArrivalProcessTest, UnknownKeysAndProcessesGetSuggestions) {
  EXPECT_TRUE(Contains(
      ErrorOf(R"({"process": "gamma", "rate": 1, "burstyness": 2})"),
      {"/workload/arrival/burstyness", "did you mean \"burstiness\""}));
  EXPECT_TRUE(
      Contains(ErrorOf(R"({"process": "poison", "rate": 1})"),
               {"/workload/arrival/process", "did you mean \"poisson\""}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"rate": 1})"),
                       {"/workload/arrival/process", "got nothing"}));
}

TEST(ArrivalProcessTest, ClosedLoopIsNotAnArrivalProcess) {
  EXPECT_TRUE(Contains(ErrorOf(R"({"process": "closed", "clients": 8})"),
                       {"/workload/arrival/process", "closed-loop"}));
}

}  // namespace
}  // namespace servesim
