// The result JSON carries the keys of `vllm bench serve --save-result` for
// the quantities servesim has, with vLLM's meaning.
#include <gtest/gtest.h>

#include <fstream>

#include "sim/report/writers.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

using testing::LinearScenario;
using testing::MustParse;
using testing::RunScenario;

// Two requests 1 ms apart, 10-token prompts, 3 output tokens (the engine
// test's golden sequence): A in flight [0, 6.5] ms, B [1, 8] ms.
std::string TwoRequests(const std::string& extra = "") {
  return LinearScenario(
      R"("step_s": 0.001, "prefill_token_s": 0.0001, "decode_seq_s": 0.0005)",
      R"("arrival": {"process": "constant", "rate": 1000},
         "input_len": {"dist": "fixed", "value": 10},
         "output_len": {"dist": "fixed", "value": 3}, "num_requests": 2)" + extra);
}

TEST(ResultJson, HasVllmBenchServeKeys) {
  const Scenario sc = MustParse(TwoRequests());
  const nlohmann::json j = ResultJson(sc, RunScenario(sc));
  for (const char* key :
       {"endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts",
        "request_rate", "burstiness", "max_concurrency", "duration", "completed", "failed",
        "total_input_tokens", "total_output_tokens", "request_throughput",
        "request_goodput", "output_throughput", "total_token_throughput",
        "max_output_tokens_per_s", "max_concurrent_requests"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* metric : {"ttft", "tpot", "itl", "e2el"}) {
    for (const std::string stat : {"mean_", "median_", "std_", "p99_", "p99.9_"}) {
      EXPECT_TRUE(j.contains(stat + metric + "_ms")) << stat + metric;
    }
  }
  EXPECT_TRUE(j["label"].is_null());
  EXPECT_TRUE(j["tokenizer_id"].is_null());
  EXPECT_TRUE(j["request_goodput"].is_null());
  EXPECT_EQ(j["endpoint_type"], "servesim");
  EXPECT_EQ(j["failed"], 0);
  EXPECT_EQ(j["max_concurrent_requests"], 2);  // A and B overlap
  // Only with max_concurrency, as vLLM.
  EXPECT_FALSE(j.contains("mean_client_queue_time_ms"));
  EXPECT_FALSE(j.contains("date"));  // would break same seed => same bytes
}

TEST(ResultJson, MaxConcurrentRequestsCountsAFinishBeforeASendAtTheSameInstant) {
  // max_concurrency 1: each request is sent the instant the previous one
  // finishes; the intervals [send, finish) never overlap.
  const Scenario sc = MustParse(TwoRequests(R"(, "max_concurrency": 1)"));
  SimulationOutput out;
  const nlohmann::json j = ResultJson(sc, RunScenario(sc, &out));
  ASSERT_EQ(out.requests[1].send, out.requests[0].finish);
  EXPECT_EQ(j["max_concurrent_requests"], 1);
  EXPECT_EQ(j["max_concurrency"], 1);
}

TEST(ResultJson, ClientQueueTimeIsTheWaitForASlot) {
  const Scenario sc = MustParse(TwoRequests(R"(, "max_concurrency": 1)"));
  SimulationOutput out;
  const nlohmann::json j = ResultJson(sc, RunScenario(sc, &out));
  const Request& b = out.requests[1];
  // A waits 0, B from its arrival at 1 ms until A finishes.
  const double wait_b = ToMillis(b.send - b.arrival);
  EXPECT_GT(wait_b, 0);
  EXPECT_NEAR(j["mean_client_queue_time_ms"].get<double>(), wait_b / 2, 1e-9);
  EXPECT_NEAR(j["p99_client_queue_time_ms"].get<double>(), 0.99 * wait_b, 1e-9);
  const Request& a = out.requests[0];
  EXPECT_NEAR(j["mean_e2el_including_client_queue_ms"].get<double>(),
              (ToMillis(a.finish - a.arrival) + ToMillis(b.finish - b.arrival)) / 2, 1e-9);
}

TEST(ResultJson, FailedCountsMeasuredRejections) {
  const Scenario sc = MustParse(LinearScenario(
      R"("prefill_token_s": 0.00001)",
      R"("arrival": {"process": "constant", "rate": 10},
         "input_len": {"dist": "uniform", "min": 10, "max": 8000},
         "output_len": {"dist": "fixed", "value": 2}, "num_requests": 40)",
      R"("max_num_batched_tokens": 4096, "chunked_prefill": false)"));
  SimulationOutput out;
  const RunSummary s = RunScenario(sc, &out);
  int64_t measured_rejections = 0;
  for (const Request& r : out.requests) {
    measured_rejections += r.status == RequestStatus::kRejected && r.measured;
  }
  ASSERT_GT(measured_rejections, 0);
  ASSERT_GT(s.completed, 0);
  const nlohmann::json j = ResultJson(sc, s);
  EXPECT_EQ(j["failed"], measured_rejections);
  EXPECT_EQ(j["completed"].get<int64_t>() + j["failed"].get<int64_t>(), 40);
}

// vLLM: tokens in one-second buckets counted from the first request's start;
// the maximum over buckets.
TEST(ResultJson, MaxOutputTokensPerSecondBucketsFromTheWindowStart) {
  Recorder rec;
  rec.MarkWindowStart(FromSeconds(0.5));
  // Buckets from 0.5 s: [0.5, 1.5) 3 tokens, [1.5, 2.5) 4, [2.5, 3.5) 2.
  for (double t : {0.5, 1.2, 1.4999, 1.5, 1.6, 2.0, 2.4999, 2.5, 3.0}) {
    rec.RecordOutputToken(FromSeconds(t));
  }
  EXPECT_EQ(rec.output_tokens(), 9);
  EXPECT_EQ(rec.max_output_tokens_per_s(), 4);
  // The origin matters: the same four tokens are 1 + 3 from 0 s, 4 in one
  // bucket from 0.35 s.
  Recorder at_zero;
  at_zero.MarkWindowStart(0);
  for (double t : {0.9, 1.1, 1.2, 1.3}) at_zero.RecordOutputToken(FromSeconds(t));
  EXPECT_EQ(at_zero.max_output_tokens_per_s(), 3);
  Recorder shifted;
  shifted.MarkWindowStart(FromSeconds(0.35));
  for (double t : {0.9, 1.1, 1.2, 1.3}) shifted.RecordOutputToken(FromSeconds(t));
  EXPECT_EQ(shifted.max_output_tokens_per_s(), 4);
}

TEST(ResultJson, MaxOutputTokensPerSecondFromTheRecorder) {
  const Scenario sc = MustParse(TwoRequests());
  SimulationOutput out;
  RunScenario(sc, &out);
  const SimulationInput in = sc.ToSimulationInput();
  const RunSummary s = Summarize(out, in, "", 1000);
  const nlohmann::json j = ResultJson(sc, s);
  if (out.recorder.output_tokens() == 0) {
    // The engine does not report delivered tokens to the recorder yet: the
    // key says it is unknown rather than 0.
    EXPECT_TRUE(j["max_output_tokens_per_s"].is_null());
  } else {
    // All six tokens (2-8 ms) fall in the first second.
    EXPECT_EQ(j["max_output_tokens_per_s"], 6);
  }
  out.recorder = Recorder();
  out.recorder.MarkWindowStart(0);
  for (int k = 0; k < 6; ++k) out.recorder.RecordOutputToken(FromSeconds(0.002 * k));
  EXPECT_EQ(ResultJson(sc, Summarize(out, in, "", 1000))["max_output_tokens_per_s"], 6);
}

// A replayed trace says the unit its numeric timestamps were read in and
// how many 0-token rows were read as 1 token, in the console's arrival line
// and in the result JSON.
TEST(ResultJson, TraceSaysItsTimestampUnitAndZeroTokenRows) {
  const std::string path = ::testing::TempDir() + "servesim_rj_ms.jsonl";
  std::ofstream(path)
      << R"({"prompt_tokens": 10, "completion_tokens": 3, "timestamp": 1000}
{"prompt_tokens": 10, "completion_tokens": 0, "timestamp": 1250}
{"prompt_tokens": 0, "completion_tokens": 3, "timestamp": 1500}
)";
  const std::string cost =
      R"("step_s": 0.001, "prefill_token_s": 0.0001, "decode_seq_s": 0.0005)";
  const Scenario sc = MustParse(LinearScenario(
      cost, R"("trace": {"path": ")" + path + R"(", "format": "jsonl"})"));
  SimulationOutput out;
  const nlohmann::json j = ResultJson(sc, RunScenario(sc, &out, true));
  const nlohmann::json& t = j["servesim"]["trace"];
  EXPECT_EQ(t["format"], "jsonl");
  EXPECT_EQ(t["timestamp_unit"], "ms");
  EXPECT_NE(t["timestamp_unit_reason"].get<std::string>().find(
                "auto: median gap 250 "),
            std::string::npos)
      << t;
  EXPECT_EQ(t["records"], 3);
  EXPECT_EQ(t["zero_token_prompts_read_as_1"], 1);
  EXPECT_EQ(t["zero_token_completions_read_as_1"], 1);
  EXPECT_EQ(t["filtered_lines"], 0);
  ASSERT_EQ(out.requests.size(), 3u);
  EXPECT_EQ(out.requests[1].arrival, FromSeconds(0.25));
  EXPECT_EQ(out.requests[2].arrival, FromSeconds(0.5));
  EXPECT_EQ(out.requests[1].output_len, 1);
  EXPECT_EQ(out.requests[2].prompt_len, 1);
  EXPECT_NE(sc.ArrivalDescription().find(
                "; timestamps in ms (auto: median gap 250 between the first 3 "
                "timestamps is 0.25 s read as ms"),
            std::string::npos)
      << sc.ArrivalDescription();
  EXPECT_NE(sc.ArrivalDescription().find(
                "1 completions of 0 tokens read as 1 token"),
            std::string::npos);
  // Given as seconds, the same log spans 500 s.
  const Scenario s2 = MustParse(LinearScenario(
      cost, R"("trace": {"path": ")" + path +
                R"(", "format": "jsonl", "timestamp_unit": "s"})"));
  SimulationOutput out2;
  const nlohmann::json j2 = ResultJson(s2, RunScenario(s2, &out2, true));
  EXPECT_EQ(j2["servesim"]["trace"]["timestamp_unit"], "s");
  EXPECT_EQ(out2.requests[2].arrival, FromSeconds(500));
  // Without a trace, no trace key.
  EXPECT_FALSE(ResultJson(MustParse(TwoRequests()),
                          RunScenario(MustParse(TwoRequests())))["servesim"]
                   .contains("trace"));
}

}  // namespace
}  // namespace servesim
