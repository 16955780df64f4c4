// `servesim search` finds the same cheapest deployment as evaluating every
// candidate, and its outputs parse.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/core/paths.h"
#include "sim//analysis/capacity_plan.h"
#include "sim/analysis/runs.h"
#include "sim/analysis/search.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

TEST(DeploymentSearch, PruningFindsTheExhaustiveCheapestAndOutputsParse) {
  StatusOr<Scenario> sc =
      LoadScenarioFile(RepoRoot() + "/scenarios/capacity_plan.json",
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
  o.capacity.validation.window_requests = 0;  // screening answers, compared by hand
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
    StatusOr<Scenario> v = testing::Reloaded(*sc, [&c](nlohmann::json& j) {
      j["hardware"]["gpu"] = c.gpu;
      j["engine"]["max_num_seqs"] = c.max_num_seqs;
    });
    ASSERT_TRUE(v.ok()) << v.status().message();
    StatusOr<CapacityResult> cap = FindCapacity(*v, o.capacity);
    ASSERT_TRUE(cap.ok()) << cap.status().message();
    const int64_t replicas = ReplicasFor(o.target_rate, cap->max_rate);
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
  const std::string serve = VllmServeCommand(*sc, cheapest);
  EXPECT_NE(serve.find("--max-num-seqs " + std::to_string(cheapest.candidate.max_num_seqs)),
            std::string::npos);
  EXPECT_NE(serve.find("vllm serve meta-llama/Llama-3.1-8B-Instruct "), std::string::npos);
}

TEST(DeploymentSearch, RouterCheckFindsAFleetThatMeetsTheSloAndOneFewerThatDoesNot) {
  StatusOr<Scenario> sc =
      LoadScenarioFile(RepoRoot() + "/scenarios/capacity_plan.json",
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
  o.capacity.validation.window_requests = 0;  // screening answers, compared by hand
  o.target_rate = 70;  // above one H200's saturation (~47-57 req/s)
  StatusOr<SearchResult> r = SearchDeployments(*sc, space, o, *prices);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->cheapest.has_value());
  const SearchRow& best = r->rows[*r->cheapest];
  ASSERT_EQ(best.routed.size(), 2u);
  for (const RouterCheck& c : best.routed) {
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
  // The JSON carries the checks and the router the answer is ranked by.
  const nlohmann::json j = nlohmann::json::parse(SearchJson(*sc, *r).dump());
  EXPECT_EQ(j["search"]["rows"][*r->cheapest]["routers"].size(), 2u);
  EXPECT_EQ(j["search"]["cheapest"]["router"], r->CheapestRouter());
  EXPECT_EQ(j["search"]["cheapest"]["replicas"], r->CheapestReplicas());
}

// Routers as a ranking axis: the pruned search (bound ceil(target / mu.hi)
// replicas) names the same candidate, router and fleet as judging every
// candidate behind every router, and the answer is the cheapest of those.
TEST(DeploymentSearch, RoutedRankingPrunesToTheExhaustiveAnswer) {
  StatusOr<Scenario> sc =
      LoadScenarioFile(RepoRoot() + "/scenarios/capacity_plan.json",
                       {"workload.num_requests=2000", "metrics.warmup_requests=200"});
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  StatusOr<PriceTable> prices = LoadPriceTable(DefaultPriceTablePath());
  ASSERT_TRUE(prices.ok());
  SearchSpace space;
  space.gpus = {"h100-sxm", "h200"};
  space.max_num_seqs = {32, 256};
  space.routers = {"round_robin", "least_outstanding"};
  SearchOptions o;
  StatusOr<std::vector<SloTerm>> slo = ParseSlo("ttft_p99=2s,tpot_p99=100ms");
  ASSERT_TRUE(slo.ok());
  o.capacity.slo = *slo;
  o.capacity.progress = false;
  o.capacity.validation.window_requests = 0;  // screening answers, compared by hand
  o.target_rate = 70;
  StatusOr<SearchResult> pruned = SearchDeployments(*sc, space, o, *prices);
  ASSERT_TRUE(pruned.ok()) << pruned.status().message();
  o.exhaustive = true;
  StatusOr<SearchResult> all = SearchDeployments(*sc, space, o, *prices);
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_TRUE(pruned->cheapest.has_value());
  ASSERT_TRUE(all->cheapest.has_value());
  EXPECT_EQ(*pruned->cheapest, *all->cheapest);
  EXPECT_EQ(pruned->CheapestRouter(), all->CheapestRouter());
  EXPECT_EQ(pruned->CheapestReplicas(), all->CheapestReplicas());
  // Exhaustive: every evaluated candidate was judged behind both routers,
  // and no candidate x router fleet that passed is cheaper than the answer.
  const SearchRow& best = all->rows[*all->cheapest];
  const double best_usd =
      all->CheapestReplicas() * best.candidate.tp * *prices->Price(best.candidate.gpu);
  EXPECT_DOUBLE_EQ(*best.routed_fleet_usd_per_hour, best_usd);
  int judged = 0;
  for (const SearchRow& row : all->rows) {
    if (row.status != SearchRow::Status::kEvaluated || row.replicas == 0) continue;
    ASSERT_EQ(row.routed.size(), 2u) << row.candidate.Name();
    for (const RouterCheck& c : row.routed) {
      ++judged;
      if (c.replicas == 0) continue;
      EXPECT_GE(c.replicas * row.candidate.tp * *prices->Price(row.candidate.gpu), best_usd)
          << row.candidate.Name() << " " << c.router;
      // The fewest that pass: one fewer was tried and failed (or is 0).
      if (c.replicas > 1) {
        EXPECT_NE(std::find(c.tried.begin(), c.tried.end(), std::make_pair(c.replicas - 1, false)),
                  c.tried.end())
            << row.candidate.Name() << " " << c.router;
      }
    }
  }
  EXPECT_GE(judged, 4);
  // The manifest deploys the routed fleet.
  const std::string yaml = KubernetesManifest(*sc, *all);
  EXPECT_NE(yaml.find("replicas: " + std::to_string(all->CheapestReplicas()) + "\n"),
            std::string::npos);
  EXPECT_NE(yaml.find(all->CheapestRouter()), std::string::npos);
}

}  // namespace
}  // namespace servesim
