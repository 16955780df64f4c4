// validate --save-json (sim/analysis/measured_run_json.h): the rows and
// figures of the console table, and null where the log gives none.
#include "sim/analysis/measured_run_json.h"

#include <gtest/gtest.h>

namespace servesim {
namespace {

RequestLatency Req(double start, double ttft, double e2e) {
  RequestLatency r;
  r.prompt_tokens = 10;
  r.output_tokens = 5;
  r.start_s = start;
  r.ttft_s = ttft;
  r.e2e_s = e2e;
  r.tpot_s = (e2e - ttft) / 4;
  return r;
}

TEST(MeasuredRunJsonTest, RowsAndFiguresAsTheTable) {
  std::vector<RequestLatency> m, p;
  for (int i = 0; i < 4; ++i) {
    m.push_back(Req(i, 0.1 * (i + 1), 1.0 + 0.1 * i));
    p.push_back(Req(i, 0.11 * (i + 1), 1.1 + 0.11 * i));  // 10% slower
  }
  const RunComparison c = CompareRequests(m, p).value();
  const nlohmann::json j = ComparisonJson(c, "s.json", "log.jsonl");
  EXPECT_EQ(j["command"], "validate");
  EXPECT_EQ(j["scenario"], "s.json");
  EXPECT_EQ(j["measured"], "log.jsonl");
  EXPECT_EQ(j["requests"], 4);
  ASSERT_EQ(j["rows"].size(), c.rows.size());
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const nlohmann::json& row = j["rows"][i];
    EXPECT_EQ(row["metric"], c.rows[i].metric);
    EXPECT_EQ(row["unit"], c.rows[i].unit);
    EXPECT_DOUBLE_EQ(row["measured"].get<double>(), c.rows[i].measured);
    EXPECT_DOUBLE_EQ(row["predicted"].get<double>(), c.rows[i].predicted);
    EXPECT_TRUE(row["peer_error_pct"].is_null());  // no peer summary read
  }
  // TTFT mean: 0.25 s measured, 0.275 s predicted: +10%.
  EXPECT_EQ(j["rows"][0]["metric"], "TTFT mean");
  EXPECT_NEAR(j["rows"][0]["error_pct"].get<double>(), 10.0, 1e-9);
  EXPECT_NEAR(j["per_request"]["ttft_median_ape_pct"].get<double>(), 10.0, 1e-9);
  EXPECT_DOUBLE_EQ(j["over_time"]["bucket_s"].get<double>(), RunComparison::kBucketS);
  // No scheduled or arrival times in these requests: those figures are null.
  EXPECT_TRUE(j["over_time"]["running_error_pct"].is_null());
  EXPECT_TRUE(j["frontend_delay"]["p50_ms"].is_null());
  EXPECT_TRUE(j["peer"].is_null());
}

}  // namespace
}  // namespace servesim
