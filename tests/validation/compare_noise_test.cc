// `servesim compare` on pure noise: two scenarios identical except for
// their base seed (so their streams are independent and every difference is
// noise) must report no difference on the primary metric in at least 95%
// of seeded trials. The looks and the two intervals of each look (B - A,
// B/A: either may decide) share the 5% error (compare.h), so false alarms
// stay under 5% although every look may stop early; the rate is measured
// over 400 trials (SERVESIM_COMPARE_TRIALS), since over only 100 a
// procedure whose true rate is 3% shows more than 5 alarms about one time
// in twelve (trials 0-99 alone give 94 of 100; all 400 give 390, 97.5%:
// 8 resolved, 2 called overloaded by the backlog rule).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "sim/analysis/compare.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

// Small and quick (about a millisecond a run): bursty arrivals at moderate
// load, log-normal lengths, 300 requests; the linear cost model.
std::string NoiseScenario(int seed) {
  nlohmann::json j = nlohmann::json::parse(testing::LinearScenario(
      R"("step_s": 0.002, "prefill_token_s": 0.00001, "decode_seq_s": 0.0002)",
      R"("arrival": {"process": "gamma", "rate": 40, "burstiness": 0.5},
         "input_len": {"dist": "lognormal", "median": 100, "p99": 1000},
         "output_len": {"dist": "lognormal", "median": 30, "p99": 300},
         "num_requests": 300)",
      R"("max_num_seqs": 32)"));
  j["seed"] = seed;
  return j.dump();
}

TEST(CompareNoise, NoDifferenceInAtLeast95PercentOfTrials) {
  // The command's defaults: looks at 3, 6, 12, 24 and 30 replications.
  CompareOptions o;
  o.estimate_saturation = false;
  const int trials = std::getenv("SERVESIM_COMPARE_TRIALS")
                         ? std::atoi(std::getenv("SERVESIM_COMPARE_TRIALS"))
                         : 400;
  int quiet_primary = 0, quiet_all = 0, stops[4] = {0, 0, 0, 0};
  for (int trial = 0; trial < trials; ++trial) {
    // Seeds 1000 apart: replication k uses seed + k, so no stream is shared.
    const Scenario a = testing::MustParse(NoiseScenario(1 + 2000 * trial));
    const Scenario b = testing::MustParse(NoiseScenario(1001 + 2000 * trial));
    auto c = ComparePaired(a, "a", b, "b", o);
    ASSERT_TRUE(c.ok()) << c.status().message();
    ++stops[static_cast<int>(c->stop)];
    const bool primary_quiet =
        c->metrics.front().verdict == CompareVerdict::kNoDifference;
    bool all_quiet = true;
    for (const MetricComparison& m : c->metrics) {
      all_quiet = all_quiet && m.verdict == CompareVerdict::kNoDifference;
    }
    quiet_primary += primary_quiet;
    quiet_all += all_quiet;
  }
  std::printf(
      "no difference: primary %d/%d, every metric %d/%d; stops: "
      "resolved %d, precision %d, budget %d, overloaded %d\n",
      quiet_primary, trials, quiet_all, trials, stops[0], stops[1], stops[2],
      stops[3]);
  EXPECT_GE(quiet_primary, trials * 95 / 100);
}

}  // namespace
}  // namespace servesim
