// Tests for the `servesim fit` statistics: exact agreement with the Azure
// trace parsed independently here, the log-normal fit and its KS distance,
// burstiness recovered from synthetic gamma arrivals, and prefix reuse.
#include "sim/report/log_fit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/core/paths.h"
#include "sim/core/rng.h"

namespace servesim {
namespace {

double Phi(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// numpy's default percentile: linear between the two nearest ranks.
double NumpyPercentile(const std::vector<double>& sorted, double p) {
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(rank);
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * (rank - lo);
}

void ExpectMatches(const LengthFit& fit, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  ASSERT_EQ(fit.stats.count, static_cast<int64_t>(v.size()));
  ASSERT_EQ(fit.stats.percentiles.size(), 5u);
  const double ps[] = {50, 90, 95, 99, 99.9};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(fit.stats.percentiles[i].first, ps[i]);
    EXPECT_EQ(fit.stats.percentiles[i].second, NumpyPercentile(v, ps[i]))
        << "p" << ps[i];
  }
  EXPECT_EQ(fit.stats.max, v.back());
  double sum = 0, logs = 0;
  int64_t under = 0;
  for (double x : v) {
    sum += x;
    logs += std::log(x);
    under += x < 50;
  }
  EXPECT_NEAR(fit.stats.mean, sum / v.size(), 1e-9);
  EXPECT_EQ(fit.share_under_50, static_cast<double>(under) / v.size());
  const double mu = logs / v.size();
  double sq = 0;
  for (double x : v) sq += (std::log(x) - mu) * (std::log(x) - mu);
  EXPECT_NEAR(fit.lognormal.mu, mu, 1e-12);
  EXPECT_NEAR(fit.lognormal.sigma, std::sqrt(sq / v.size()), 1e-12);
}

TEST(LogFit, AzureTracePercentilesAreExact) {
  const std::string path =
      RepoRoot() + "/../shared/traces/AzureLLMInferenceTrace_conv.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " absent";
  // The reference: split each row at its commas, nothing more.
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<double> prompt, completion;
  while (std::getline(in, line)) {
    const size_t a = line.find(','), b = line.find(',', a + 1);
    prompt.push_back(std::stod(line.substr(a + 1, b - a - 1)));
    completion.push_back(std::stod(line.substr(b + 1)));
  }
  TraceOptions o;
  o.path = path;
  o.format = TraceFormat::kAzureCsv;
  auto reader = OpenTrace(o);
  const LogFit fit = FitTrace(reader.get());
  EXPECT_EQ(fit.records, 19366);
  ExpectMatches(fit.prompt, prompt);
  ExpectMatches(fit.completion, completion);
  // The README's rounded figures, as a sanity check on the reference.
  EXPECT_EQ(fit.prompt.stats.percentiles[0].second, 1020);
  EXPECT_EQ(fit.completion.stats.percentiles[3].second, 601);
  ASSERT_TRUE(fit.arrival.has_value());
  EXPECT_NEAR(fit.arrival->rate, 5.5, 0.1);
  EXPECT_FALSE(fit.reuse.has_value());
}

TEST(LogFit, KsDistanceOnBothSidesOfEveryJump) {
  // {1, 2, 4}: mu = ln 2, sigma = ln 2 * sqrt(2/3); the largest gaps are
  // F(1) against 1/3 (just after the jump) and F(4) against 2/3 (just
  // before it), both 1/3 - Phi(-sqrt(1.5)).
  LengthFit f = FitLengths({4, 1, 2});
  EXPECT_NEAR(f.lognormal.mu, std::log(2.0), 1e-15);
  EXPECT_NEAR(f.lognormal.sigma, std::log(2.0) * std::sqrt(2.0 / 3), 1e-15);
  EXPECT_NEAR(f.ks_distance, 1.0 / 3 - Phi(-std::sqrt(1.5)), 1e-12);
  // Ties jump together: {1, 1, 1, 10} is 3/4 - F(1) at the first jump.
  f = FitLengths({1, 10, 1, 1});
  EXPECT_NEAR(f.ks_distance, 0.75 - Phi(-1 / std::sqrt(3.0)), 1e-12);
  // A single value is its own point mass.
  f = FitLengths({7, 7, 7});
  EXPECT_EQ(f.lognormal.sigma, 0);
  EXPECT_EQ(f.ks_distance, 0);
}

TEST(LogFit, KsNearZeroForLognormalLargeForUniform) {
  Rng rng(42, "ks");
  std::vector<double> lognormal, uniform;
  for (int i = 0; i < 200000; ++i) {
    lognormal.push_back(std::exp(5.0 + 0.8 * rng.StandardNormal()));
    uniform.push_back(1 + static_cast<double>(rng.Below(1000)));
  }
  const LengthFit ln = FitLengths(lognormal);
  EXPECT_NEAR(ln.lognormal.mu, 5.0, 0.01);
  EXPECT_NEAR(ln.lognormal.sigma, 0.8, 0.01);
  EXPECT_LT(ln.ks_distance, 0.005);  // about 1/sqrt(n)
  EXPECT_GT(FitLengths(uniform).ks_distance, 0.1);
}

TEST(LogFit, BurstinessRecoveredFromGammaArrivals) {
  for (double burstiness : {0.25, 1.0, 4.0}) {
    SCOPED_TRACE(burstiness);
    const double rate = 8;
    Rng rng(7, "gaps");
    std::vector<double> t = {100.0};
    for (int i = 0; i < 400000; ++i) {
      t.push_back(t.back() + rng.Gamma(burstiness, 1 / (rate * burstiness)));
    }
    const auto a = FitArrivals(t);
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->gaps, 400000);
    EXPECT_NEAR(a->rate, rate, 0.02 * rate);
    EXPECT_NEAR(a->burstiness, burstiness, 0.05 * burstiness);
    EXPECT_NEAR(a->cv, 1 / std::sqrt(burstiness), 0.03 / std::sqrt(burstiness));
  }
}

TEST(LogFit, ArrivalEdgeCases) {
  EXPECT_FALSE(FitArrivals({}).has_value());
  EXPECT_FALSE(FitArrivals({3}).has_value());
  EXPECT_FALSE(FitArrivals({3, 3, 3}).has_value());
  const auto even = FitArrivals({0, 0.5, 1.0, 1.5});
  ASSERT_TRUE(even.has_value());
  EXPECT_EQ(even->rate, 2);
  EXPECT_EQ(even->cv, 0);
  EXPECT_TRUE(std::isinf(even->burstiness));
}

TEST(LogFit, ReuseCountsIdsSeenEarlier) {
  ReuseCounter c;
  c.Add({0, 1});
  c.Add({0, 1, 2});
  c.Add({});
  c.Add({3, 0});
  const ReuseFit r = c.Result(512);
  EXPECT_EQ(r.blocks, 7);
  EXPECT_EQ(r.reused, 3);
  EXPECT_DOUBLE_EQ(r.fraction, 3.0 / 7);
  EXPECT_EQ(ReuseCounter().Result(16).fraction, 0);
}

}  // namespace
}  // namespace servesim
