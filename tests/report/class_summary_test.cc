// Request classes (workload.classes): drawn from their own stream, each with
// its lengths, priority and SLOs carried by its requests; the per-class
// report adds up to the run's and computes SLO attainment and goodput by
// hand-checkable rules; the result JSON carries them.
#include <gtest/gtest.h>

#include <sstream>

#include "sim/report/writers.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

using testing::LinearScenario;
using testing::MustParse;
using testing::RunScenario;

constexpr SimTime kMs = 1'000'000;

std::string TwoClasses(const std::string& extra_a = "", const std::string& extra_b = "") {
  return R"("arrival": {"process": "poisson", "rate": 50}, "num_requests": 2000,
            "classes": [
              {"name": "interactive", "share": 1, "priority": 0,
               "input_len": {"dist": "fixed", "value": 100},
               "output_len": {"dist": "fixed", "value": 20},
               "ttft_slo_ms": 50, "tpot_slo_ms": 10)" + extra_a + R"(},
              {"name": "batch", "share": 3, "priority": 5,
               "input_len": {"dist": "fixed", "value": 1000},
               "output_len": {"dist": "fixed", "value": 200})" + extra_b + R"(}])";
}

TEST(Classes, RequestsCarryTheirClassAndSharesHold) {
  const Scenario sc = MustParse(LinearScenario(
      R"("step_s": 0.001, "prefill_token_s": 0.000001, "decode_seq_s": 0.00001)",
      TwoClasses()));
  SimulationOutput out;
  const RunSummary s = RunScenario(sc, &out);
  int64_t per[2] = {0, 0};
  for (const Request& r : out.requests) {
    ASSERT_GE(r.request_class, 0);
    ++per[r.request_class];
    if (r.request_class == 0) {
      EXPECT_EQ(r.prompt_len, 100);
      EXPECT_EQ(r.output_len, 20);
      EXPECT_EQ(r.priority, 0);
      EXPECT_EQ(r.ttft_slo, 50 * kMs);
    } else {
      EXPECT_EQ(r.prompt_len, 1000);
      EXPECT_EQ(r.output_len, 200);
      EXPECT_EQ(r.priority, 5);
      EXPECT_EQ(r.ttft_slo, -1);
    }
  }
  // Share 1:3 of 2000: binomial sd ~19, so 500 +- 4 sd.
  EXPECT_NEAR(per[0], 500, 80);
  ASSERT_EQ(s.classes.size(), 2u);
  EXPECT_DOUBLE_EQ(s.classes[0].share, 0.25);
  EXPECT_EQ(s.classes[0].created + s.classes[1].created, s.created);
  EXPECT_EQ(s.classes[0].completed + s.classes[1].completed, s.completed);
  EXPECT_EQ(s.classes[0].output_tokens + s.classes[1].output_tokens,
            s.total_output_tokens);
  EXPECT_EQ(s.classes[0].ttft_ms.count + s.classes[1].ttft_ms.count,
            s.ttft_ms.count);
  EXPECT_EQ(s.classes[0].preemptions + s.classes[1].preemptions, s.preemptions);
}

// The class draw has its own stream: the arrivals are those of a run
// without classes.
TEST(Classes, ClassDrawLeavesTheArrivals) {
  const std::string cost =
      R"("step_s": 0.001, "prefill_token_s": 0.000001, "decode_seq_s": 0.00001)";
  const Scenario with = MustParse(LinearScenario(cost, TwoClasses()));
  const Scenario without = MustParse(LinearScenario(
      cost, R"("arrival": {"process": "poisson", "rate": 50}, "num_requests": 2000,
               "input_len": {"dist": "fixed", "value": 100},
               "output_len": {"dist": "fixed", "value": 20})"));
  SimulationOutput a, b;
  RunScenario(with, &a);
  RunScenario(without, &b);
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (size_t i = 0; i < a.requests.size(); ++i) {
    ASSERT_EQ(a.requests[i].arrival, b.requests[i].arrival) << i;
  }
}

// Two requests by hand, sync scheduling, 1 ms per step + 0.1 ms per prompt
// token + 0.5 ms per decoding sequence (as tests/engine/engine_test.cc):
// A (class fast, t=0) and B (class slow, t=1 ms), prompt 10, 3 tokens.
//  step 1 [0, 2]     A prefill          -> A TTFT 2 ms
//  step 2 [2, 4.5]   A decode, B prefill-> B TTFT 3.5 ms
//  step 3 [4.5, 6.5] A, B decode        -> A done: TPOT (6.5 - 2) / 2 = 2.25
//  step 4 [6.5, 8]   B decode           -> B done: TPOT (8 - 4.5) / 2 = 1.75
// fast's SLO TTFT 2 ms, TPOT 2 ms: A fails on TPOT. slow's TTFT 3 ms: B fails
// on TTFT. With a 2.3 ms TPOT SLO A passes. Duration 8 ms.
TEST(Classes, SloAttainmentAndGoodputByHand) {
  auto run = [](double fast_tpot_ms) {
    const Scenario sc = MustParse(LinearScenario(
        R"("step_s": 0.001, "prefill_token_s": 0.0001, "decode_seq_s": 0.0005)",
        R"("arrival": {"process": "constant", "rate": 1000}, "num_requests": 2,
           "classes": [
             {"name": "fast", "share": 1, "ttft_slo_ms": 2, "tpot_slo_ms": )" +
            std::to_string(fast_tpot_ms) + R"(,
              "input_len": {"dist": "fixed", "value": 10},
              "output_len": {"dist": "fixed", "value": 3}},
             {"name": "slow", "share": 1, "ttft_slo_ms": 3,
              "input_len": {"dist": "fixed", "value": 10},
              "output_len": {"dist": "fixed", "value": 3}}])",
        R"("async_scheduling": false)"));
    SimulationOutput out;
    RunSummary s = RunScenario(sc, &out, true);
    return std::make_pair(s, out.requests);
  };
  auto [s, reqs] = run(2);
  ASSERT_EQ(reqs.size(), 2u);
  // Which class each request drew is the stream's business; find them.
  const Request& a = reqs[0];
  const Request& b = reqs[1];
  ASSERT_EQ(a.first_token, 2 * kMs);
  ASSERT_EQ(b.first_token, 4500 * kMs / 1000);
  ASSERT_DOUBLE_EQ(s.duration_s, 0.008);
  int64_t good = 0;
  for (const ClassSummary& c : s.classes) good += c.good;
  // A: TTFT 2 (ok for both classes' TTFT: fast 2, slow 3); TPOT 2.25 (fails
  // fast's 2; slow has none). B: TTFT 3.5 fails both.
  const int32_t ka = a.request_class;
  EXPECT_EQ(good, ka == 1 ? 1 : 0);
  auto [s2, reqs2] = run(2.3);
  good = 0;
  for (const ClassSummary& c : s2.classes) good += c.good;
  EXPECT_EQ(good, 1);  // A passes whichever class it is in; B never
  const ClassSummary& ca = s2.classes[reqs2[0].request_class];
  EXPECT_EQ(ca.good, 1);
  EXPECT_DOUBLE_EQ(ca.goodput_rps, 1 / 0.008);
  EXPECT_DOUBLE_EQ(ca.slo_attainment, 1.0 / ca.completed);
}

TEST(Classes, ReportAndJsonCarryEveryClass) {
  const Scenario sc = MustParse(LinearScenario(
      R"("step_s": 0.001, "prefill_token_s": 0.000001, "decode_seq_s": 0.00001)",
      TwoClasses()));
  const RunSummary s = RunScenario(sc);
  std::ostringstream os;
  WriteConsoleReport(sc, s, os);
  EXPECT_NE(os.str().find("interactive: 25.0% of traffic, priority 0, SLO TTFT 50 ms"),
            std::string::npos)
      << os.str();
  EXPECT_NE(os.str().find("batch: 75.0% of traffic, priority 5, SLO TTFT none"),
            std::string::npos);
  const nlohmann::json j = ResultJson(sc, s);
  const auto& cj = j["servesim"]["classes"];
  ASSERT_EQ(cj.size(), 2u);
  EXPECT_EQ(cj[0]["name"], "interactive");
  EXPECT_EQ(cj[0]["ttft_slo_ms"], 50.0);
  EXPECT_TRUE(cj[1]["ttft_slo_ms"].is_null());
  EXPECT_EQ(cj[0]["completed"].get<int64_t>() + cj[1]["completed"].get<int64_t>(),
            j["completed"].get<int64_t>());
  EXPECT_EQ(cj[0]["ttft_ms"]["p99"], s.classes[0].ttft_ms.percentiles[3].second);
  EXPECT_EQ(j["servesim"]["policy"], "fcfs");
  // --save-detailed: the class name is the last column.
  SimulationOutput out;
  RunScenario(sc, &out);
  std::ostringstream csv;
  WriteDetailedCsv(out, csv, sc.workload.classes);
  std::istringstream lines(csv.str());
  std::string line;
  std::getline(lines, line);
  EXPECT_TRUE(line.ends_with(",reject_reason,class")) << line;
  for (const Request& r : out.requests) {
    ASSERT_TRUE(std::getline(lines, line));
    EXPECT_TRUE(line.ends_with("," + sc.workload.classes[r.request_class].name)) << line;
  }
  std::ostringstream plain;
  WriteDetailedCsv(out, plain);  // no classes given: the column is empty
  EXPECT_NE(plain.str().find(",\n"), std::string::npos);
}

TEST(Classes, BadClassesFailWithThePath) {
  auto err = [](const std::string& workload) {
    StatusOr<Scenario> sc = ParseScenario(
        LinearScenario(R"("step_s": 0.001)", workload), "x.json", {});
    return sc.ok() ? std::string("ok") : sc.status().message();
  };
  EXPECT_NE(err(TwoClasses() + R"(, "input_len": {"dist": "fixed", "value": 1})")
                .find("/workload/input_len: each of /workload/classes has its own lengths"),
            std::string::npos);
  const std::string zero_share =
      R"("arrival": {"process": "poisson", "rate": 5}, "num_requests": 10,
         "classes": [{"name": "a", "share": 0,
           "input_len": {"dist": "fixed", "value": 1},
           "output_len": {"dist": "fixed", "value": 1}}])";
  EXPECT_NE(err(zero_share).find("/workload/classes/0/share"), std::string::npos)
      << err(zero_share);
  const std::string dup =
      R"("arrival": {"process": "poisson", "rate": 5}, "num_requests": 10,
         "classes": [{"name": "a", "share": 1,
           "input_len": {"dist": "fixed", "value": 1},
           "output_len": {"dist": "fixed", "value": 1}},
          {"name": "a", "share": 1,
           "input_len": {"dist": "fixed", "value": 1},
           "output_len": {"dist": "fixed", "value": 1}}])";
  EXPECT_NE(err(dup).find("/workload/classes/1/name"), std::string::npos) << err(dup);
  const std::string typo =
      R"("arrival": {"process": "poisson", "rate": 5}, "num_requests": 10,
         "classes": [{"name": "a", "share": 1, "ttft_slo": 5,
           "input_len": {"dist": "fixed", "value": 1},
           "output_len": {"dist": "fixed", "value": 1}}])";
  EXPECT_NE(err(typo).find("ttft_slo_ms"), std::string::npos) << err(typo);
  EXPECT_NE(err(R"("arrival": {"process": "poisson", "rate": 5}, "num_requests": 10,
                   "classes": [])")
                .find("/workload/classes"),
            std::string::npos);
}

}  // namespace
}  // namespace servesim
