// SLO parsing, goodput share and candidate/price parsing.
#include <gtest/gtest.h>

#include "sim/analysis/capacity_plan.h"
#include "sim/analysis/prices.h"
#include "sim/analysis/slo.h"

namespace servesim {
namespace {

TEST(ParseSlo, UnitsAndPercentiles) {
  auto slo = ParseSlo("ttft_p99=2s,tpot_p99=100ms,e2el_p99.9=30.5s");
  ASSERT_TRUE(slo.ok()) << slo.status().message();
  ASSERT_EQ(slo->size(), 3u);
  EXPECT_EQ((*slo)[0].metric, SloMetric::kTtft);
  EXPECT_DOUBLE_EQ((*slo)[0].limit_ms, 2000);
  EXPECT_DOUBLE_EQ((*slo)[1].limit_ms, 100);
  EXPECT_EQ((*slo)[2].metric, SloMetric::kE2el);
  EXPECT_DOUBLE_EQ((*slo)[2].percentile, 99.9);
  EXPECT_DOUBLE_EQ((*slo)[2].limit_ms, 30500);
}

TEST(ParseSlo, ErrorsAreOneLineNamingTheTerm) {
  const char* bad[] = {"",           "ttft_p99",      "ttft_p99=2",
                       "ttft_p99=2x", "itl_p99=1s",   "ttft_p0=1s",
                       "ttft_p101=1s", "ttft=1s",     "ttft_p99=-1s",
                       "ttft_p99=ms", "ttft_p99=2s,", "ttft_pxx=2s"};
  for (const char* text : bad) {
    auto slo = ParseSlo(text);
    if (std::string(text) == "ttft_p99=2s,") {  // trailing comma: one term
      EXPECT_TRUE(slo.ok());
      continue;
    }
    ASSERT_FALSE(slo.ok()) << text;
    EXPECT_NE(slo.status().message().find("--slo"), std::string::npos);
    EXPECT_EQ(slo.status().message().find('\n'), std::string::npos);
  }
  EXPECT_NE(ParseSlo("ttft_p99=2x").status().message().find("\"2x\""),
            std::string::npos);
}

TEST(GoodShare, EveryBoundPerRequest) {
  RequestTable t(3);
  for (int i = 0; i < 3; ++i) {
    t[i].status = RequestStatus::kFinished;
    t[i].send = 0;
    t[i].output_len = 11;
  }
  t[0].first_token = FromSeconds(0.5), t[0].finish = FromSeconds(1.5);  // tpot 100
  t[1].first_token = FromSeconds(3.0), t[1].finish = FromSeconds(3.5);  // ttft bad
  t[2].first_token = FromSeconds(0.1), t[2].finish = FromSeconds(3.1);  // tpot 300
  auto slo = ParseSlo("ttft_p99=2s,tpot_p99=100ms");
  ASSERT_TRUE(slo.ok());
  EXPECT_NEAR(GoodShare(t, *slo), 1.0 / 3, 1e-12);
}

TEST(Candidates, ParseAndReject) {
  auto cs = ParseCandidates("h100-sxm:1,h200,h200:2");
  ASSERT_TRUE(cs.ok());
  ASSERT_EQ(cs->size(), 3u);
  EXPECT_EQ((*cs)[1].tp, 1);
  EXPECT_EQ((*cs)[2].tp, 2);
  // Pipeline stages: GPU:TP:PP (0 = the scenario's when left out).
  EXPECT_EQ((*cs)[2].pp, 0);
  auto piped = ParseCandidates("h100-sxm:2:2,h200:4");
  ASSERT_TRUE(piped.ok()) << piped.status().message();
  EXPECT_EQ((*piped)[0].pp, 2);
  EXPECT_EQ((*piped)[0].gpus(), 4);
  EXPECT_EQ((*piped)[0].Layout(), "2x2");
  EXPECT_EQ((*piped)[1].Layout(), "4");
  for (const char* bad : {"h200:", "h200:x", ":2", "h200:0", "h200:-1", "h200:2:", "h200:2:0",
                          "h200:2:x", "h200:2:2:2"}) {
    EXPECT_FALSE(ParseCandidates(bad).ok()) << bad;
  }
  // Aliases become the shipped name (prices and reports use it); an
  // unknown GPU is one line naming the flag and the nearest names.
  cs = ParseCandidates("h100:2,H200");
  ASSERT_TRUE(cs.ok()) << cs.status().message();
  EXPECT_EQ((*cs)[0].gpu, "h100-sxm");
  EXPECT_EQ((*cs)[0].tp, 2);
  EXPECT_EQ((*cs)[1].gpu, "h200");
  const std::string e = ParseCandidates("h200:1,h100x:2").status().message();
  EXPECT_EQ(e.rfind("--candidates h200:1,h100x:2: unknown GPU \"h100x\" (did you mean "
                    "\"h100-sxm\"?)",
                    0),
            0u)
      << e;
}

TEST(ReplicasFor, CeilingUnderIdealRouter) {
  EXPECT_EQ(ReplicasFor(40, 40.0 / 3), 3);
  EXPECT_EQ(ReplicasFor(40, 13), 4);
  EXPECT_EQ(ReplicasFor(0, 13), 1);
  EXPECT_EQ(ReplicasFor(40, 0), 0);
  // Issue 35: a target far below one replica's rate still needs one; one
  // far above is counted in 64 bits (it printed -2147483648), and beyond
  // 2^53 it saturates rather than wrapping.
  EXPECT_EQ(ReplicasFor(1e-12, 13), 1);
  EXPECT_EQ(ReplicasFor(1e12, 1), 1000000000000);
  EXPECT_EQ(ReplicasFor(1e12, 1e-9), kMaxReplicas);
  EXPECT_EQ(ReplicasFor(40, -1), 0);
}

TEST(PriceTable, LoadsAndRejects) {
  auto t = ParsePriceTable(R"({"note": "example", "usd_per_gpu_hour": {"h200": 3.5}})", "p.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_DOUBLE_EQ(*t->Price("h200"), 3.5);
  EXPECT_FALSE(t->Price("b200").has_value());
  struct Bad { const char* text; const char* expect; } bad[] = {
      {"{", "p.json: invalid JSON"},
      {"[1]", "p.json: invalid JSON"},
      {R"({"note": "x"})", "p.json: /usd_per_gpu_hour: expected an object"},
      {R"({"usd_per_gpu_hour": {"h200": "3"}})", "/usd_per_gpu_hour/h200: expected a number > 0"},
      {R"({"usd_per_gpu_hour": {"h200": -1}})", "/usd_per_gpu_hour/h200: expected a number > 0, got -1"}};
  for (const Bad& b : bad) {
    auto r = ParsePriceTable(b.text, "p.json");
    ASSERT_FALSE(r.ok()) << b.text;
    EXPECT_NE(r.status().message().find(b.expect), std::string::npos)
        << r.status().message();
  }
  EXPECT_NE(LoadPriceTable("/nonexistent/prices.json").status().message().find(
                "cannot open"),
            std::string::npos);
}

// A price keyed by an alias prices the shipped GPU; two keys for one GPU
// are an error.
TEST(PriceTable, AliasesPriceTheShippedGpu) {
  auto t = ParsePriceTable(R"({"usd_per_gpu_hour": {"h100": 2, "my-gpu": 1}})", "p.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_DOUBLE_EQ(*t->Price("h100-sxm"), 2);
  EXPECT_DOUBLE_EQ(*t->Price("my-gpu"), 1);
  auto twice = ParsePriceTable(R"({"usd_per_gpu_hour": {"h100": 2, "h100-sxm": 3}})", "p.json");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("expected one price per GPU, got a second for h100-sxm"),
            std::string::npos)
      << twice.status().message();
}

TEST(PriceTable, ShippedTableLoads) {
  auto t = LoadPriceTable(DefaultPriceTablePath());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_NE(t->note.find("EXAMPLE"), std::string::npos);
  EXPECT_TRUE(t->Price("h200").has_value());
}

}  // namespace
}  // namespace servesim
