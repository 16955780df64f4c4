// The stability rules of open-loop points (stability.h), and a small sweep
// through and past saturation: throughput never above mu's upper bound,
// rho >= 1 UNSTABLE in the table, the CSV and the report data, rho = 0.95
// stable. (Before, an overloaded point read its offered rate as throughput,
// counting requests that finished after arrivals stopped, and rho = 1.0 and
// 1.05 passed as stable.)
#include "sim/analysis/stability.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "sim/analysis/point_stats.h"
#include "sim/analysis/sweep.h"
#include "sim/analysis/sweep_output.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

Interval Mu(double mean, double lo, double hi) { return {mean, lo, hi, 10}; }

TEST(Stability, LoadRuleFiresAtOrAboveMusLowerBound) {
  const Interval mu = Mu(100, 98, 102);
  EXPECT_EQ(LoadInstability(95, mu), "");   // rho 0.95: can be stable
  EXPECT_EQ(LoadInstability(97.9, mu), "");
  // At the lower bound, between it and mu, at mu and beyond: overload
  // cannot be excluded.
  for (double rate : {98.0, 99.0, 100.0, 105.0}) {
    const std::string why = LoadInstability(rate, mu);
    EXPECT_NE(why.find("at or above mu's lower 95% bound"), std::string::npos) << rate;
  }
  EXPECT_NE(LoadInstability(105, mu).find("rho = 1.050 of mu = 100.000 [98.000, 102.000]"),
            std::string::npos);
  // Mu not estimated: the rule cannot say anything.
  EXPECT_EQ(LoadInstability(1e9, Interval{}), "");
  // One sample: its mean is the bound.
  EXPECT_EQ(LoadInstability(99, Interval{100, 0, 0, 1}), "");
  EXPECT_NE(LoadInstability(100, Interval{100, 0, 0, 1}), "");
}

TEST(Stability, BacklogRuleFiresWhenTheBacklogDoublesAndOutgrowsNoise) {
  // 100 req/s served over a 100 s window: 9,000 departures after the
  // lead-in, so 2% of them is a growth of 90 between the halves' means.
  RunSummary s;
  s.steady_request_throughput = 100;
  s.arrival_window_s = 100;
  s.backlog_first_half = 100;
  s.backlog_second_half = 150;  // noise near saturation: stable
  EXPECT_EQ(RunInstability(s), "");
  s.backlog_second_half = 200;  // doubled, not more
  EXPECT_EQ(RunInstability(s), "");
  s.backlog_second_half = 201;
  EXPECT_NEAR(BacklogGrowth(s), 2 * 101.0 / 9000, 1e-12);
  const std::string why = RunInstability(s);
  EXPECT_NE(why.find("the backlog more than doubled: 100.0 requests in system"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("growing at 2.2% of the throughput (rho about 1.022)"),
            std::string::npos)
      << why;
  // A long run's small queue may double by chance: 10 -> 50 is 0.9%.
  s.backlog_first_half = 10;
  s.backlog_second_half = 50;
  EXPECT_EQ(RunInstability(s), "");
  // So may a short run's, in a burst: 6 -> 13 is 3 x 4.4 short of three
  // Poisson standard deviations, however fast it grew (24%).
  s.arrival_window_s = 1;
  s.backlog_first_half = 6;
  s.backlog_second_half = 13;
  EXPECT_GT(BacklogGrowth(s), 0.1);
  EXPECT_EQ(RunInstability(s), "");
  s.backlog_second_half = 20;  // 14 < 3 sqrt(26) = 15.3: still noise
  EXPECT_EQ(RunInstability(s), "");
  s.backlog_second_half = 22;  // 16 > 3 sqrt(28) = 15.9
  EXPECT_NE(RunInstability(s), "");
  s.arrival_window_s = 100;
  // Nothing served and a backlog that grew: nothing but growth.
  s.steady_request_throughput = 0;
  EXPECT_NE(RunInstability(s), "");
  // The engine's hard stop comes first; its growth flag alone is not used.
  s.steady_request_throughput = 100;
  s.unstable = true;
  s.unstable_reason = "requests in system kept growing (7 seen by ...)";
  EXPECT_EQ(RunInstability(s), "");
  s.cut_short = true;
  s.unstable_reason = "queue exceeded limits.max_queued = 10";
  EXPECT_EQ(RunInstability(s), "queue exceeded limits.max_queued = 10");
}

TEST(Stability, PointIsUnstableWhenAnyReplicationIsOrTheLoadRuleFires) {
  RunSummary calm;
  for (SampleStats* m :
       {&calm.ttft_ms, &calm.tpot_ms, &calm.e2el_ms, &calm.queue_ms}) {
    m->count = 1;
    m->percentiles = {{50, 1.0}, {90, 1.0}, {99, 1.0}};
  }
  calm.offered_rate = calm.steady_request_throughput = 90;
  calm.arrival_window_s = 100;
  calm.backlog_first_half = calm.backlog_second_half = 10;
  RunSummary growing = calm;
  growing.backlog_second_half = 100;  // 2 x 90 / 8,100: 2.2%
  PointStats p = AggregatePoint({&calm, &calm});
  EXPECT_EQ(p.stable_fraction, 1);
  EXPECT_EQ(p.unstable_reason, "");
  ApplyLoadRule(Mu(100, 98, 102), &p);  // 90 < 98
  EXPECT_EQ(p.stable_fraction, 1);
  p = AggregatePoint({&calm, &growing});
  EXPECT_EQ(p.stable_fraction, 0.5);
  EXPECT_EQ(p.unstable_reason.rfind("1 of 2 replications unstable, e.g. the backlog", 0), 0u)
      << p.unstable_reason;
  // No run at rho >= 1 is stable, whatever its backlog did in one run.
  p = AggregatePoint({&calm, &calm});
  ApplyLoadRule(Mu(89, 88, 90), &p);
  EXPECT_EQ(p.stable_fraction, 0);
  EXPECT_NE(p.unstable_reason.find("the offered 90.000 req/s"), std::string::npos);
  const nlohmann::json j = PointJson(p);
  EXPECT_EQ(j["unstable"], true);
  EXPECT_EQ(j["unstable_reason"], p.unstable_reason);
}

// M/D/1 from the engine: one request at a time, S = 10 ms, mu = 100 req/s.
Scenario MD1(int64_t requests) {
  return testing::MustParse(
      testing::LinearScenario(
          R"("prefill_token_s": 1e-5)",
          R"("arrival": {"process": "poisson", "rate": 50},
             "input_len": {"dist": "fixed", "value": 1000},
             "output_len": {"dist": "fixed", "value": 1}, "num_requests": )" +
              std::to_string(requests),
          R"("max_num_seqs": 1)"),
      {"metrics.warmup_requests=200"});
}

TEST(Stability, SweepThroughSaturation) {
  SweepOptions o;
  o.utilizations = {0.5, 0.95, 1.0, 1.05};
  o.replications = 3;
  o.progress = false;
  o.keep_representative = false;
  o.jobs = 1;
  const Scenario sc = MD1(10000);
  StatusOr<SweepResult> r = RunSweep(sc, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Interval& mu = r->saturation.mu;
  ASSERT_NEAR(mu.mean, 100, 1);
  ASSERT_EQ(r->points.size(), 4u);
  for (const PointStats& p : r->points) {
    // A deterministic server departs every 10 ms: a count over a window of
    // about 85 s may hold one more, 0.012 req/s (mu's interval is as narrow).
    EXPECT_LE(p.throughput_rps.mean, mu.hi + 0.02) << "rho " << p.utilization;
    const bool saturated = p.utilization >= 1;
    EXPECT_EQ(p.stable_fraction < 1, saturated) << "rho " << p.utilization;
    EXPECT_EQ(p.unstable_reason.empty(), !saturated) << p.unstable_reason;
  }
  // At rho = 0.95 the point carries its offered rate; past mu it carries mu.
  EXPECT_NEAR(r->points[1].throughput_rps.mean, r->points[1].rate, 0.03 * r->points[1].rate);
  EXPECT_NEAR(r->points[3].throughput_rps.mean, mu.mean, 0.01 * mu.mean);

  // The table, the CSV and the report data say the same.
  std::ostringstream table, csv;
  WriteSweepTable(sc, *r, table);
  WriteSweepCsv(*r, csv);
  std::istringstream rows(table.str());
  std::string line;
  int unstable_rows = 0;
  while (std::getline(rows, line)) {
    if (line.size() > 12 && line.find("  1.00 ") != std::string::npos) {
      EXPECT_NE(line.find("0/3"), std::string::npos) << line;
    }
    unstable_rows += line.size() > 9 && line.substr(line.size() - 9) == " UNSTABLE";
  }
  EXPECT_EQ(unstable_rows, 2) << table.str();
  EXPECT_NE(table.str().find("at or above mu's lower 95% bound"), std::string::npos);
  std::istringstream csv_rows(csv.str());
  std::getline(csv_rows, line);
  EXPECT_NE(line.find(",unstable,unstable_reason"), std::string::npos) << line;
  int row = 0;
  while (std::getline(csv_rows, line)) {
    const bool flagged = line.find(",1,\"") != std::string::npos;
    EXPECT_EQ(flagged, row >= 2) << line;
    ++row;
  }
  const nlohmann::json data = SweepReportJson(sc, *r);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(data["sweep"]["points"][i]["unstable"], i >= 2) << i;
  }
}

}  // namespace
}  // namespace servesim
