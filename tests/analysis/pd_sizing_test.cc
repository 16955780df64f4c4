// The P:D split search on a short disaggregated scenario: the answer
// passes when judged again on its own, every cheaper split was run and
// failed, and the pools' figures come from real runs.
#include <gtest/gtest.h>

#include "sim/analysis/pd_sizing.h"
#include "sim/report/html_report.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

// Prefill-heavy traffic on Llama-3.1-8B / H200 pools, short runs.
Scenario ShortDisagg() {
  const std::string json = R"({
    "seed": 3,
    "model": "llama-3.1-8b",
    "hardware": {"gpu": "h200", "tp": 1},
    "engine": {"max_num_seqs": 64, "max_num_batched_tokens": 4096},
    "cost_model": {"type": "roofline"},
    "workload": {
      "arrival": {"process": "poisson", "rate": 10},
      "input_len": {"dist": "lognormal", "median": 3000, "p99": 9000},
      "output_len": {"dist": "lognormal", "median": 150, "p99": 500},
      "num_requests": 400
    },
    "metrics": {"warmup_requests": 40, "percentiles": [50, 99]},
    "disaggregation": {
      "prefill": {"replicas": 1, "router": "least_outstanding"},
      "decode": {"replicas": 1, "router": "least_outstanding"},
      "link": "infiniband-ndr-400g"
    }})";
  StatusOr<Scenario> sc = ParseScenario(json, "<pd>", {});
  EXPECT_TRUE(sc.ok()) << sc.status().message();
  return *sc;
}

PdSizingOptions Options(double rate) {
  PdSizingOptions o;
  o.capacity.slo = *ParseSlo("ttft_p99=1500ms,tpot_p99=40ms");
  o.capacity.max_replications = 6;
  o.capacity.progress = false;
  o.target_rate = rate;
  o.max_prefill = 4;
  o.max_decode = 4;
  return o;
}

TEST(PdSizing, CheapestPassesAndEveryCheaperSplitFails) {
  const Scenario sc = ShortDisagg();
  const PdSizingOptions o = Options(30);
  StatusOr<PdSizingResult> r = SizePdSplit(sc, o, PriceTable{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->cheapest.has_value());
  const PdSplit& best = r->splits[*r->cheapest];
  EXPECT_TRUE(best.at.feasible);
  // Not the trivial answer: the rate needs more than one of each.
  EXPECT_GT(best.gpus, 2);
  // No prices: cost is GPUs; tried in non-decreasing GPU count.
  for (size_t i = 1; i < r->splits.size(); ++i) {
    EXPECT_LE(r->splits[i - 1].gpus, r->splits[i].gpus);
  }
  // Every cheaper split was run and failed; the splits of the answer's
  // cost were all run; nothing costlier was.
  for (size_t i = 0; i < r->splits.size(); ++i) {
    const PdSplit& s = r->splits[i];
    const std::string name = std::to_string(s.prefill) + ":" + std::to_string(s.decode);
    if (i < *r->cheapest) {
      EXPECT_TRUE(s.evaluated && !s.at.feasible) << name;
    } else {
      EXPECT_EQ(s.evaluated, s.gpus == best.gpus) << name;
    }
  }
  // Judged again on its own (same seeds), the answer still passes.
  StatusOr<Scenario> again = ParseScenario(
      sc.json.dump(), "<pd>",
      {"disaggregation.prefill.replicas=" + std::to_string(best.prefill),
       "disaggregation.decode.replicas=" + std::to_string(best.decode)});
  ASSERT_TRUE(again.ok());
  StatusOr<RateEvaluation> e = EvaluateRate(*again, o.target_rate, o.capacity);
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->feasible);
  // The report: its data validates and the answer's row is highlighted.
  StatusOr<std::string> page = RenderHtmlReport(PdSizingReportJson(sc, *r));
  ASSERT_TRUE(page.ok()) << page.status().message();
  EXPECT_NE(page->find("<tr class=\"best\"><td>" + std::to_string(best.prefill) + ":" +
                       std::to_string(best.decode) + "</td>"),
            std::string::npos);
  // Pool figures came from a real run of the answer.
  EXPECT_GT(best.prefill_busy, 0);
  EXPECT_LE(best.prefill_busy, 1);
  EXPECT_GT(best.decode_busy, 0);
  EXPECT_GT(best.transfer_share_of_mean_ttft, 0);
  EXPECT_LT(best.transfer_share_of_mean_ttft, 1);
}

TEST(PdSizing, PricesOrderTheSplitsByFleetCost) {
  // Decode GPUs priced at a tenth of prefill GPUs: 1:3 costs less than 2:1.
  PriceTable prices;
  prices.usd_per_gpu_hour["h200"] = 10;
  prices.usd_per_gpu_hour["h100-sxm"] = 1;
  const Scenario sc = ShortDisagg();
  StatusOr<Scenario> mixed = ParseScenario(
      sc.json.dump(), "<pd>", {"disaggregation.decode.gpu=\"h100-sxm\""});
  ASSERT_TRUE(mixed.ok()) << mixed.status().message();
  PdSizingOptions o = Options(30);
  o.capacity.slo = *ParseSlo("ttft_p99=1000s");  // any stable split passes
  StatusOr<PdSizingResult> r = SizePdSplit(*mixed, o, prices);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (size_t i = 1; i < r->splits.size(); ++i) {
    EXPECT_LE(*r->splits[i - 1].usd_per_hour, *r->splits[i].usd_per_hour);
  }
  EXPECT_EQ(*r->splits[0].usd_per_hour, 11);  // 1 x 10 + 1 x 1
}

TEST(PdSizing, RefusesWithoutATargetRateOrPools) {
  StatusOr<PdSizingResult> r = SizePdSplit(ShortDisagg(), Options(0), PriceTable{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("expected --target-rate"), std::string::npos);
  StatusOr<Scenario> colocated = ParseScenario(ShortDisagg().json.dump(), "<pd>",
                                               {"disaggregation=null"});
  ASSERT_TRUE(colocated.ok()) << colocated.status().message();
  r = SizePdSplit(*colocated, Options(5), PriceTable{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/disaggregation"), std::string::npos);
}

}  // namespace
}  // namespace servesim
