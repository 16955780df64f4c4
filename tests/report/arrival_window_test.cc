// Departures and backlog over the arrival window (arrival_window.h): a
// hand-worked example, and the steady-state throughput of a stable and of
// an overloaded M/D/1 run (the overloaded one used to read its offered
// rate, counting the requests that finished after arrivals stopped).
#include "sim/report/arrival_window.h"

#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace servesim {
namespace {

constexpr SimTime kS = 1000000000;  // ns per second

RequestOutcome Outcome(double arrival_s, double finish_s, int32_t output_len) {
  const SimTime a = static_cast<SimTime>(arrival_s * kS);
  const SimTime f = static_cast<SimTime>(finish_s * kS);
  return {a, a, a, a, f, output_len, -1};
}

TEST(ArrivalWindow, HandWorkedExample) {
  // Window [0, 100 s]: lead-in to 10 s, halves [10, 55) and [55, 100).
  OutcomeTable done;
  done.push_back(Outcome(0, 20, 5));    // counted; 10 s in the first half
  done.push_back(Outcome(30, 70, 7));   // counted; 25 s first, 15 s second
  done.push_back(Outcome(60, 120, 9));  // after the window: not counted; 40 s
  done.push_back(Outcome(5, 8, 11));    // inside the lead-in: not counted
  const std::vector<SimTime> unfinished = {90 * kS};  // 10 s in the second
  const WindowFlow f = MeasureWindowFlow(done, unfinished, 0, 100 * kS);
  EXPECT_DOUBLE_EQ(f.span_s, 90);
  EXPECT_EQ(f.departures, 2);
  EXPECT_EQ(f.output_tokens, 12);
  EXPECT_NEAR(f.backlog_first_half, 35.0 / 45, 1e-12);
  EXPECT_NEAR(f.backlog_second_half, 65.0 / 45, 1e-12);
  // No window, nothing measured.
  const WindowFlow none = MeasureWindowFlow(done, unfinished, 5, 5);
  EXPECT_EQ(none.departures, 0);
  EXPECT_EQ(none.span_s, 0);
}

// One request at a time, 10 ms each (prefill only): mu = 100 req/s.
RunSummary MD1At(double rate) {
  const Scenario sc = testing::MustParse(testing::LinearScenario(
      R"("prefill_token_s": 1e-5)",
      R"("arrival": {"process": "poisson", "rate": )" + std::to_string(rate) +
          R"(}, "input_len": {"dist": "fixed", "value": 1000},
             "output_len": {"dist": "fixed", "value": 1}, "num_requests": 20000)",
      R"("max_num_seqs": 1)"));
  return testing::RunScenario(sc);
}

TEST(ArrivalWindow, SteadyThroughputIsTheArrivalRateWhenStableAndMuWhenNot) {
  const RunSummary stable = MD1At(50);
  EXPECT_NEAR(stable.steady_request_throughput, 50, 1.5);
  // Little: the backlog's halves both estimate L = 0.75 for M/D/1 at 0.5.
  EXPECT_NEAR(stable.backlog_first_half, 0.75, 0.1);
  EXPECT_NEAR(stable.backlog_second_half, 0.75, 0.1);
  // Offered 120 req/s to a server of 100: departures over the window are
  // 100/s (the server never idles once the queue forms); the old figure,
  // completions whenever they finished, read about 120.
  const RunSummary over = MD1At(120);
  EXPECT_NEAR(over.steady_request_throughput, 100, 0.5);
  // Never more than a server busy throughout the counted span: one
  // departure every 10 ms, plus the one at its start.
  EXPECT_LE(over.steady_request_throughput,
            100.0 + 1.0 / (0.9 * over.arrival_window_s));
  EXPECT_NEAR(over.steady_output_throughput, over.steady_request_throughput, 1e-9);
  // The backlog grows by 20 requests a second: the second half holds far
  // more than the first.
  EXPECT_GT(over.backlog_second_half, 2 * over.backlog_first_half);
}

}  // namespace
}  // namespace servesim
