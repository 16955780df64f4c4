// The measured-run comparison (sim/analysis/measured_run.h): the bench's
// latency definitions worked by hand, and bad logs refused with the line.
#include "sim/analysis/measured_run.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>


namespace servesim {
namespace {

std::string WriteLog(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(MeasuredRunTest, LatenciesAsTheBenchDefinesThem) {
  const std::string path = WriteLog(
      "measured_ok.jsonl",
      "{\"input_toks\": 100, \"output_toks\": 11, \"queued_ts\": 10.0, "
      "\"first_token_ts\": 10.25, \"last_token_ts\": 10.75}\n"
      "\n"
      "{\"input_toks\": 7, \"output_toks\": 1, \"queued_ts\": 11.0, "
      "\"first_token_ts\": 11.5, \"last_token_ts\": 11.5, \"extra\": 1}\n");
  StatusOr<std::vector<RequestLatency>> r = ReadMeasuredRequests(path, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r.value().size(), 2u);
  const RequestLatency& a = r.value()[0];
  EXPECT_EQ(a.prompt_tokens, 100);
  EXPECT_DOUBLE_EQ(a.ttft_s, 0.25);
  EXPECT_DOUBLE_EQ(a.tpot_s, 0.05);  // 0.5 s over 10 gaps
  EXPECT_DOUBLE_EQ(a.e2e_s, 0.75);
  EXPECT_LT(r.value()[1].tpot_s, 0);  // one token: no TPOT
}

TEST(MeasuredRunTest, RenamedFields) {
  const std::string path = WriteLog(
      "measured_renamed.jsonl",
      "{\"p\": 3, \"o\": 2, \"q\": 1, \"f\": 2, \"l\": 4}\n");
  MeasuredFields f;
  f.prompt_tokens = "p";
  f.output_tokens = "o";
  f.queued = "q";
  f.first_token = "f";
  f.last_token = "l";
  StatusOr<std::vector<RequestLatency>> r = ReadMeasuredRequests(path, f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_DOUBLE_EQ(r.value()[0].tpot_s, 2.0);
}

TEST(MeasuredRunTest, BadLinesNameTheLine) {
  const struct {
    const char* text;
    const char* expected;
  } cases[] = {
      {"{\"input_toks\": 1}\n", ":1: missing \"output_toks\""},
      {"{\"input_toks\": 1, \"output_toks\": 2, \"queued_ts\": \"x\", "
       "\"first_token_ts\": 1, \"last_token_ts\": 2}\n",
       ":1: \"queued_ts\" is \"x\"; expected a number"},
      {"{\"input_toks\": 1, \"output_toks\": 2, \"queued_ts\": 0, "
       "\"first_token_ts\": 1, \"last_token_ts\": 2}\nnot json\n",
       ":2: not a JSON object"},
      {"{\"input_toks\": 0, \"output_toks\": 2, \"queued_ts\": 0, "
       "\"first_token_ts\": 1, \"last_token_ts\": 2}\n",
       ":1: \"input_toks\" is 0; expected a whole number of tokens >= 1"},
      {"{\"input_toks\": 1, \"output_toks\": 2, \"queued_ts\": 5, "
       "\"first_token_ts\": 1, \"last_token_ts\": 2}\n",
       ":1: timestamps out of order"},
      {"\n", ": no requests"},
  };
  int i = 0;
  for (const auto& c : cases) {
    const std::string path = WriteLog("measured_bad" + std::to_string(i++) + ".jsonl", c.text);
    StatusOr<std::vector<RequestLatency>> r = ReadMeasuredRequests(path, {});
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(path + c.expected), std::string::npos)
        << r.status().message();
  }
  EXPECT_FALSE(ReadMeasuredRequests("/nonexistent/x.jsonl", {}).ok());
}

RequestLatency Req(int64_t in, int64_t out, double start, double ttft,
                   double e2e) {
  RequestLatency r;
  r.prompt_tokens = in;
  r.output_tokens = out;
  r.start_s = start;
  r.ttft_s = ttft;
  r.e2e_s = e2e;
  r.tpot_s = out > 1 ? (e2e - ttft) / (out - 1) : -1;
  return r;
}

TEST(MeasuredRunTest, ComparisonRowsByHand) {
  // Measured TTFT 100, 200, 300, 400 ms; predicted 10% high on each.
  std::vector<RequestLatency> m, p;
  for (int i = 0; i < 4; ++i) {
    m.push_back(Req(10, 5, i, 0.1 * (i + 1), 1.0 + 0.1 * i));
    p.push_back(Req(10, 5, i, 0.11 * (i + 1), 1.1 + 0.11 * i));
  }
  StatusOr<RunComparison> c = CompareRequests(m, p);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const ValidationRow& ttft_mean = c.value().rows[0];
  EXPECT_EQ(ttft_mean.metric, "TTFT mean");
  EXPECT_NEAR(ttft_mean.measured, 250, 1e-9);
  EXPECT_NEAR(ttft_mean.error_pct(), 10, 1e-9);
  // numpy-linear p90 of 100..400: 100 + 0.9 * 3 * 100 = 370.
  EXPECT_NEAR(c.value().rows[2].measured, 370, 1e-9);
  EXPECT_EQ(c.value().rows[2].metric, "TTFT p90");
  EXPECT_NEAR(c.value().ttft_median_ape_pct, 10, 1e-9);
  EXPECT_NEAR(c.value().ttft_correlation, 1, 1e-12);
  // Makespan: first start 0 to the last end (3 + 1.3 measured, 3 + 1.43).
  const ValidationRow& makespan = c.value().rows[12];
  EXPECT_EQ(makespan.metric, "makespan");
  EXPECT_NEAR(makespan.measured, 4.3, 1e-12);
  EXPECT_NEAR(makespan.predicted, 4.43, 1e-12);
}

// Over time: one request running from 0 to 10 s delivering 11 tokens
// (1 at 0, then 1 a second), in 5 s buckets: 1.2 and 1.0 tok/s (its first
// and 5 evenly spread in the first, 5 in the second), running 1 and 1. The
// prediction runs it from 0 to 5 s: 2.2 tok/s and 0, running 1 and 0.
TEST(MeasuredRunTest, OverTimeByHand) {
  RequestLatency m = Req(10, 11, 0, 0, 10);
  m.scheduled_s = 0;
  RequestLatency p = Req(10, 11, 0, 0, 5);
  p.scheduled_s = 0;
  StatusOr<RunComparison> c = CompareRequests({m}, {p});
  ASSERT_TRUE(c.ok()) << c.status().message();
  // Tokens: |2.2 - 1.2| + |0 - 1.0| over 2.2 tok/s summed = 90.9%.
  EXPECT_NEAR(c.value().throughput_over_time_error_pct, 100 * 2.0 / 2.2, 1e-9);
  // Running: |1 - 1| + |0 - 1| over 2 = 50%.
  EXPECT_NEAR(c.value().running_over_time_error_pct, 50, 1e-9);
  // Without scheduled times there is no running comparison.
  m.scheduled_s = -1;
  EXPECT_LT(CompareRequests({m}, {p}).value().running_over_time_error_pct, 0);
}

// A peer's summary (LLMServingSim's layout): its printed error is quoted
// beside the matching rows; a summary of another run is refused.
TEST(MeasuredRunTest, PeerSummaryColumn) {
  std::vector<RequestLatency> m, p;
  for (int i = 0; i < 4; ++i) {
    m.push_back(Req(10, 5, i, 0.1 * (i + 1), 1.0 + 0.1 * i));
    p.push_back(Req(10, 5, i, 0.11 * (i + 1), 1.1 + 0.11 * i));
  }
  RunComparison c = CompareRequests(m, p).value();
  const std::string ok = WriteLog(
      "peer_ok.txt",
      "Metric   vLLM   Sim   Diff%\n-----\nTTFT Mean   250.0   240.0   -4.0%\n"
      "Latency Median   1150.0   1160.0   +0.9%\nTPOT P95 1 1 +0.0%\n");
  ASSERT_TRUE(AddPeerErrors(ok, &c).ok());
  EXPECT_DOUBLE_EQ(c.rows[0].peer_error_pct, -4.0);  // TTFT mean
  EXPECT_EQ(c.rows[9].metric, "E2E p50");
  EXPECT_DOUBLE_EQ(c.rows[9].peer_error_pct, 0.9);
  EXPECT_TRUE(std::isnan(c.rows[1].peer_error_pct));
  EXPECT_NE(ComparisonTable(c).find("peer error"), std::string::npos);
  const std::string other =
      WriteLog("peer_other.txt", "TTFT Mean   260.0   240.0   -7.7%\n");
  const Status st = AddPeerErrors(other, &c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(":1: TTFT Mean measured 260.0, the log gives 250.0"),
            std::string::npos)
      << st.message();
}

// The front end's delay: queued - arrival less its smallest value (the two
// clocks' offset), here 0, 10, 20 and 30 ms on an offset of 100 s, with
// prompts 10, 20, 30, 40 tokens (correlation 1).
TEST(MeasuredRunTest, FrontendDelayByHand) {
  std::vector<RequestLatency> m, p;
  for (int i = 0; i < 4; ++i) {
    RequestLatency r = Req(10 * (i + 1), 5, i, 0.1, 1);
    p.push_back(r);
    r.queued_minus_arrival_s = 100 + 0.01 * i;
    m.push_back(r);
  }
  const RunComparison c = CompareRequests(m, p).value();
  EXPECT_NEAR(c.frontend_delay_p50_ms, 15, 1e-6);
  EXPECT_NEAR(c.frontend_delay_p90_ms, 27, 1e-6);
  EXPECT_NEAR(c.frontend_delay_prompt_correlation, 1, 1e-9);
  EXPECT_NE(ComparisonTable(c).find("p50 15.0 ms, p90 27.0 ms"), std::string::npos);
  m[2].queued_minus_arrival_s = std::nan("");
  EXPECT_TRUE(std::isnan(CompareRequests(m, p).value().frontend_delay_p50_ms));
}

TEST(MeasuredRunTest, MismatchedRequestsAreRefused) {
  std::vector<RequestLatency> m = {Req(10, 5, 0, 0.1, 1)};
  std::vector<RequestLatency> p = {Req(11, 5, 0, 0.1, 1)};
  StatusOr<RunComparison> c = CompareRequests(m, p);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("request 0: measured 10/5 tokens, replayed 11/5"),
            std::string::npos)
      << c.status().message();
  p.push_back(Req(10, 5, 0, 0.1, 1));
  EXPECT_FALSE(CompareRequests(m, p).ok());
}

}  // namespace
}  // namespace servesim
