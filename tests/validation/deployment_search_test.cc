// `servesim search` finds the same cheapest deployment as evaluating every
// candidate, and its outputs parse.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/analysis/capacity_plan.h"
#include "sim/analysis/runs.h"
#include "sim/analysis/search.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

TEST(DeploymentSearch, PruningFindsTheExhaustiveCheapestAndOutputsParse) {
  StatusOr<Scenario> sc =
      LoadScenarioFile(std::string(SERVESIM_SOURCE_DIR) + "/scenarios/capacity_plan.json",
                       {"workload.num_requests=2000", "metrics.warmup_requests=200"});
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  StatusOr<PriceTable> prices = LoadPriceTable(DefaultPriceTablePath());
  ASSERT_TRUE(prices.ok());
  SearchSpace space;
  space.gpus = {"h100-sxm", "h200"};
  space.tps = {1};
  space.max_num_seqs = {32, 256};
  SearchOptions o;
  StatusOr<std::vector<SloTerm>> slo = ParseSlo("ttft_p99=2s,tpot_p99=100ms");
  ASSERT_TRUE(slo.ok());
  o.capacity.slo = *slo;
  o.capacity.progress = false;
  o.target_rate = 60;
  StatusOr<SearchResult> r = SearchDeployments(*sc, space, o, *prices);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 4u);
  ASSERT_TRUE(r->cheapest.has_value());
  // The cost bound prunes: max_num_seqs 32 cannot reach 60 req/s cheaply.
  EXPECT_GE(std::count_if(r->rows.begin(), r->rows.end(),
                          [](const SearchRow& x) { return x.status == SearchRow::Status::kPruned; }),
            1);

  // Exhaustive, by hand: every candidate's capacity, replicas and fleet $/h.
  double best = INFINITY;
  std::string best_name;
  for (const SearchRow& row : r->rows) {
    const SearchCandidate& c = row.candidate;
    StatusOr<Scenario> v = EditScenario(*sc, [&c](nlohmann::json& j) {
      j["hardware"]["gpu"] = c.gpu;
      j["engine"]["max_num_seqs"] = c.max_num_seqs;
    });
    ASSERT_TRUE(v.ok()) << v.status().message();
    StatusOr<CapacityResult> cap = FindCapacity(*v, o.capacity);
    ASSERT_TRUE(cap.ok()) << cap.status().message();
    const int replicas = ReplicasFor(o.target_rate, cap->max_rate);
    if (replicas == 0) continue;
    const double cost = replicas * c.tp * *prices->Price(c.gpu);
    if (cost < best) best = cost, best_name = c.Name();
    if (row.status == SearchRow::Status::kEvaluated) {
      // Same seeds, same answer: the search ran the same capacity search.
      EXPECT_DOUBLE_EQ(row.capacity.max_rate, cap->max_rate) << c.Name();
    }
  }
  const SearchRow& cheapest = r->rows[*r->cheapest];
  EXPECT_EQ(cheapest.candidate.Name(), best_name);
  EXPECT_DOUBLE_EQ(*cheapest.fleet_usd_per_hour, best);

  // JSON and CSV parse; the CSV has one row per candidate, every row as
  // wide as the header.
  const nlohmann::json j = nlohmann::json::parse(SearchJson(*sc, *r).dump());
  EXPECT_EQ(j["search"]["rows"].size(), 4u);
  EXPECT_EQ(j["search"]["cheapest"]["name"], best_name);
  std::istringstream csv(SearchCsv(*r));
  std::string line;
  std::getline(csv, line);
  const auto commas = std::count(line.begin(), line.end(), ',');
  int rows = 0;
  while (std::getline(csv, line)) {
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), commas) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 4);
  // The serve line carries the cheapest candidate's settings.
  const std::string serve = VllmServeCommand(*sc, cheapest.candidate);
  EXPECT_NE(serve.find("--max-num-seqs " + std::to_string(cheapest.candidate.max_num_seqs)),
            std::string::npos);
  EXPECT_NE(serve.find("meta-llama/Llama-3.1-8B"), std::string::npos);
}

TEST(DeploymentSearch, RouterCheckFindsAFleetThatMeetsTheSloAndOneFewerThatDoesNot) {
  StatusOr<Scenario> sc =
      LoadScenarioFile(std::string(SERVESIM_SOURCE_DIR) + "/scenarios/capacity_plan.json",
                       {"workload.num_requests=2000", "metrics.warmup_requests=200"});
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  StatusOr<PriceTable> prices = LoadPriceTable(DefaultPriceTablePath());
  ASSERT_TRUE(prices.ok());
  SearchSpace space;
  space.routers = {"round_robin", "least_outstanding"};
  SearchOptions o;
  StatusOr<std::vector<SloTerm>> slo = ParseSlo("ttft_p99=2s,tpot_p99=100ms");
  ASSERT_TRUE(slo.ok());
  o.capacity.slo = *slo;
  o.capacity.progress = false;
  o.target_rate = 70;  // above one H200's saturation (~47-57 req/s)
  StatusOr<SearchResult> r = SearchDeployments(*sc, space, o, *prices);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->cheapest.has_value());
  ASSERT_EQ(r->router_checks.size(), 2u);
  for (const RouterCheck& c : r->router_checks) {
    ASSERT_GE(c.replicas, 2) << c.router;  // one replica cannot carry 70 req/s
    // Independent judges: one long run of the fleet behind that router, at
    // the target rate, meets both limits; with one replica fewer the
    // fleet cannot keep up (its throughput falls short of the target).
    auto fleet = [&](int n) {
      return testing::MustParse(sc->json.dump(),
                                {"cluster.replicas=" + std::to_string(n),
                                 "cluster.router=" + c.router, "workload.arrival.rate=70",
                                 "workload.num_requests=" + std::to_string(20000 * n),
                                 "seed=99"});
    };
    const RunSummary ok = testing::RunScenario(fleet(c.replicas));
    EXPECT_FALSE(ok.unstable) << c.router;
    EXPECT_LE(PercentileValue(ok.ttft_ms, 99), 2000) << c.router;
    EXPECT_LE(PercentileValue(ok.tpot_ms, 99), 100) << c.router;
    const RunSummary fewer = testing::RunScenario(fleet(c.replicas - 1));
    EXPECT_TRUE(fewer.unstable || PercentileValue(fewer.ttft_ms, 99) > 2000) << c.router;
  }
  // The JSON carries the checks.
  const nlohmann::json j = nlohmann::json::parse(SearchJson(*sc, *r).dump());
  EXPECT_EQ(j["search"]["router_checks"].size(), 2u);
}

}  // namespace
}  // namespace servesim
