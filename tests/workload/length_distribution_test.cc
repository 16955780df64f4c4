// Tests for the parametric length distributions: sample statistics against
// the configured parameters, clamps, truncation, and configuration errors.
#include "sim/workload/length_distribution.h"

#include <gtest/gtest.h>

#include "tests/text_assertions.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/status.h"

namespace servesim {
namespace {

std::unique_ptr<LengthDistribution> Make(const std::string& json) {
  const nlohmann::json j = nlohmann::json::parse(json);
  return MakeLengthDistribution(JsonView(j, "s.json", "/workload/input_len"));
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

std::vector<int32_t> Draw(const LengthDistribution& d, int n,
                          uint64_t seed = 11) {
  Rng rng(seed, "input_len");
  std::vector<int32_t> out(n);
  for (auto& x : out) x = d.Sample(rng);
  return out;
}

double Mean(const std::vector<int32_t>& v) {
  double s = 0;
  for (int32_t x : v) s += x;
  return s / v.size();
}

// The q-quantile of a sample (nearest rank).
double Quantile(std::vector<int32_t> v, double q) {
  const size_t k = static_cast<size_t>(q * (v.size() - 1));
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

TEST(LengthDistributionTest, FixedAlwaysReturnsItsValue) {
  auto d = Make(R"({"dist": "fixed", "value": 512})");
  for (int32_t x : Draw(*d, 1000)) ASSERT_EQ(x, 512);
  EXPECT_EQ(d->Describe(), "fixed(512), clamp [1, 1000000]");
}

TEST(LengthDistributionTest, FixedOutsideItsClampIsAnError) {
  EXPECT_TRUE(
      Contains(ErrorOf(R"({"dist": "fixed", "value": 512, "max": 256})"),
               {"/workload/input_len/value", "[1, 256]", "got 512"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "fixed", "value": 0})"),
                       {"/workload/input_len/value", "got 0"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "fixed", "value": 12.5})"),
                       {"expected an integer", "got 12.5"}));
}

TEST(LengthDistributionTest, UniformCoversItsInclusiveRangeEvenly) {
  auto d = Make(R"({"dist": "uniform", "min": 3, "max": 7})");
  const int n = 100000;
  std::map<int32_t, int> counts;
  for (int32_t x : Draw(*d, n)) ++counts[x];
  ASSERT_EQ(counts.size(), 5u);
  EXPECT_EQ(counts.begin()->first, 3);
  EXPECT_EQ(counts.rbegin()->first, 7);
  // Each count is Binomial(n, 1/5): sd 126, so 1000 is ~8 sd.
  for (auto [value, count] : counts) EXPECT_NEAR(count, n / 5, 1000) << value;
  EXPECT_TRUE(Contains(d->Describe(), {"3..7"}));
}

TEST(LengthDistributionTest, UniformNeedsBothEndsInOrder) {
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "uniform", "max": 7})"),
                       {"/workload/input_len/min", "got nothing"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "uniform", "min": 9, "max": 7})"),
                       {"/workload/input_len/min", "must not exceed max"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "uniform", "min": 1, "max": 7,
                                   "mean": 3})"),
                       {"/workload/input_len/mean", "unknown key"}));
}

// The truncated normal is redrawn, not clamped: compare with the exact law
// of round(X) conditioned on landing in [min, max].
TEST(LengthDistributionTest, NormalIsTruncatedByResampling) {
  auto d = Make(R"({"dist": "normal", "mean": 100, "std": 50,
                    "min": 50, "max": 200})");
  const std::vector<int32_t> xs = Draw(*d, 400000);
  double mass = 0, weighted = 0;
  std::vector<double> p(201, 0.0);
  for (int k = 50; k <= 200; ++k) {
    p[k] = NormalCdf((k + 0.5 - 100) / 50) - NormalCdf((k - 0.5 - 100) / 50);
    mass += p[k];
    weighted += k * p[k];
  }
  int at_min = 0;
  for (int32_t x : xs) {
    ASSERT_GE(x, 50);
    ASSERT_LE(x, 200);
    at_min += (x == 50);
  }
  // The truncated sd is ~35, so the sd of the mean is ~0.06.
  EXPECT_NEAR(Mean(xs), weighted / mass, 0.4);
  // About 0.58% land on 50; clamping instead would put ~16% there.
  const double frac_at_min = static_cast<double>(at_min) / xs.size();
  EXPECT_NEAR(frac_at_min, p[50] / mass, 0.001);
  EXPECT_TRUE(
      Contains(d->Describe(), {"normal(mean=100, std=50", "truncated"}));
}

TEST(LengthDistributionTest, NormalWithAlmostNoMassInRangeIsAnError) {
  EXPECT_TRUE(
      Contains(ErrorOf(R"({"dist": "normal", "mean": -500, "std": 100})"),
               {"s.json: /workload/input_len:", "of its mass"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "normal", "mean": 100, "std": 0})"),
                       {"/workload/input_len/std", "> 0", "got 0"}));
}

TEST(LengthDistributionTest, LognormalMatchesItsMedianAndP99) {
  auto d = Make(R"({"dist": "lognormal", "median": 120, "p99": 2048})");
  const std::vector<int32_t> xs = Draw(*d, 1000000);
  // The sd of the sample p99 is ~0.45% here (sigma * sqrt(.0099/n) /
  // phi(2.326)), so 2% is > 4 sd; the median's is smaller still.
  EXPECT_NEAR(Quantile(xs, 0.5) / 120.0, 1.0, 0.02);
  EXPECT_NEAR(Quantile(xs, 0.99) / 2048.0, 1.0, 0.02);
  // mu = ln 120, sigma = (ln 2048 - ln 120) / z_0.99.
  EXPECT_EQ(d->Describe(),
            "lognormal(median=120, p99=2048 => mu=4.787, sigma=1.220), "
            "clamp [1, 1000000]");
}

TEST(LengthDistributionTest, LognormalFromMuAndSigma) {
  auto d = Make(R"({"dist": "lognormal", "mu": 5, "sigma": 0.5})");
  const std::vector<int32_t> xs = Draw(*d, 400000);
  EXPECT_NEAR(Quantile(xs, 0.5) / std::exp(5.0), 1.0, 0.02);
  EXPECT_NEAR(Quantile(xs, 0.99) / std::exp(5.0 + 0.5 * 2.3263478740408408),
              1.0, 0.02);
  EXPECT_TRUE(
      Contains(d->Describe(), {"mu=5.000, sigma=0.500 => median=148.4"}));
}

TEST(LengthDistributionTest, LognormalNeedsExactlyOneCompleteForm) {
  const char* both = R"({"dist": "lognormal", "median": 120, "p99": 2048,
                         "mu": 4, "sigma": 1})";
  EXPECT_TRUE(Contains(ErrorOf(both), {"not both"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "lognormal", "median": 120})"),
                       {"/workload/input_len/p99", "got nothing"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "lognormal", "mu": 4})"),
                       {"/workload/input_len/sigma", "got nothing"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "lognormal", "median": 120,
                                   "sigma": 1})"),
                       {"not both"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "lognormal"})"),
                       {"median and p99, or mu and sigma"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "lognormal", "median": 120,
                                   "p99": 100})"),
                       {"/workload/input_len/p99", "> median", "got 100"}));
}

TEST(LengthDistributionTest, ClampsAreRespectedAndReached) {
  auto d = Make(R"({"dist": "lognormal", "median": 120, "p99": 2048,
                    "min": 50, "max": 500})");
  const std::vector<int32_t> xs = Draw(*d, 100000);
  const auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
  EXPECT_EQ(*lo, 50);
  EXPECT_EQ(*hi, 500);
  EXPECT_TRUE(Contains(d->Describe(), {"clamp [50, 500]"}));
}

TEST(LengthDistributionTest, HugeDrawsClampWithoutOverflow) {
  auto d = Make(R"({"dist": "lognormal", "mu": 30, "sigma": 1,
                    "max": 16777216})");
  for (int32_t x : Draw(*d, 1000)) ASSERT_GE(x, 1);
}

TEST(LengthDistributionTest, ExponentialHasItsMean) {
  auto d = Make(R"({"dist": "exponential", "mean": 1000})");
  const std::vector<int32_t> xs = Draw(*d, 400000);
  // sd of the mean is 1000/sqrt(n) = 1.6, so 1% is ~6 sd.
  EXPECT_NEAR(Mean(xs) / 1000.0, 1.0, 0.01);
  EXPECT_GE(*std::min_element(xs.begin(), xs.end()), 1);
  EXPECT_EQ(d->Describe(), "exponential(mean=1000), clamp [1, 1000000]");
}

TEST(LengthDistributionTest, ClampBoundsAreChecked) {
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "exponential", "mean": 10,
                                   "min": 0})"),
                       {"/workload/input_len/min", "got 0"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "exponential", "mean": 10,
                                   "min": 20, "max": 10})"),
                       {"/workload/input_len/min", "must not exceed max"}));
}

TEST(LengthDistributionTest, UnknownFamilyGetsASuggestion) {
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "lognromal"})"),
                       {"/workload/input_len/dist",
                        "did you mean \"lognormal\"", "got \"lognromal\""}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"median": 3})"),
                       {"/workload/input_len/dist", "got nothing"}));
  EXPECT_TRUE(Contains(ErrorOf(R"(512)"),
                       {"/workload/input_len: expected a length distribution "
                        "object, got 512"}));
}

TEST(LengthDistributionTest, EachFamilyRejectsOtherFamiliesKeys) {
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "exponential", "mean": 10,
                                   "std": 3})"),
                       {"/workload/input_len/std", "unknown key"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "lognormal", "median": 10,
                                   "p99": 30, "mena": 3})"),
                       {"/workload/input_len/mena", "unknown key"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"dist": "fixed", "value": 10,
                                   "vaule": 3})"),
                       {"did you mean \"value\""}));
}

TEST(LengthDistributionTest, SameSeedGivesTheSameLengths) {
  auto d = Make(R"({"dist": "lognormal", "median": 120, "p99": 2048})");
  EXPECT_EQ(Draw(*d, 1000, 5), Draw(*d, 1000, 5));
  EXPECT_NE(Draw(*d, 1000, 5), Draw(*d, 1000, 6));
}

}  // namespace
}  // namespace servesim
