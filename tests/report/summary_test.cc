// Summarize: the peak of overlapping [send, finish) intervals (a finish
// before a send at the same instant), and the from-arrival latencies and
// slot waits when no request waited for a slot (taken from the from-send
// ones without sorting them again) and when some did.
#include <gtest/gtest.h>

#include "sim/report/summary.h"

namespace servesim {
namespace {

Request Finished(int64_t id, SimTime arrival, SimTime send, SimTime first_token,
                 SimTime finish) {
  Request r;
  r.id = id;
  r.prompt_len = 10;
  r.output_len = 3;
  r.status = RequestStatus::kFinished;
  r.arrival = arrival;
  r.send = send;
  r.first_scheduled = send;
  r.first_token = first_token;
  r.last_token = r.finish = finish;
  return r;
}

TEST(Summary, PeakConcurrencyCountsAFinishBeforeASendAtOneInstant) {
  SimulationOutput out;
  // [0, 10) [5, 20) [10, 30) [10, 12): at 10 the first leaves before two
  // arrive, so the peak is 3 (5..10: 2; 10..12: 3), not 4.
  out.requests = {Finished(0, 0, 0, 2, 10), Finished(1, 5, 5, 7, 20),
                  Finished(2, 10, 10, 11, 30), Finished(3, 10, 10, 11, 12)};
  const RunSummary s = Summarize(out, SimulationInput(), "", 1);
  EXPECT_EQ(s.max_concurrent_requests, 3);
}

TEST(Summary, FromArrivalEqualsFromSendWithoutSlotWaits) {
  SimulationOutput out;
  out.requests = {Finished(0, 0, 0, 2000000, 9000000),
                  Finished(1, 1000000, 1000000, 5000000, 6000000)};
  SimulationInput in;
  in.metrics.percentiles = {50, 99};
  const RunSummary s = Summarize(out, in, "", 1);
  EXPECT_EQ(s.ttft_from_arrival_ms.count, 2);
  EXPECT_EQ(s.ttft_from_arrival_ms.mean, s.ttft_ms.mean);
  EXPECT_EQ(s.ttft_from_arrival_ms.percentiles, s.ttft_ms.percentiles);
  EXPECT_EQ(s.e2el_from_arrival_ms.max, s.e2el_ms.max);
  EXPECT_EQ(s.slot_wait_ms.count, 2);
  EXPECT_EQ(s.slot_wait_ms.max, 0.0);
  ASSERT_EQ(s.slot_wait_ms.percentiles.size(), 2u);
  EXPECT_EQ(s.slot_wait_ms.percentiles[1], std::make_pair(99.0, 0.0));
}

TEST(Summary, FromArrivalIncludesTheSlotWait) {
  SimulationOutput out;
  // The second request waits 1 ms for a slot.
  out.requests = {Finished(0, 0, 0, 2000000, 9000000),
                  Finished(1, 1000000, 2000000, 5000000, 6000000)};
  const RunSummary s = Summarize(out, SimulationInput(), "", 1);
  EXPECT_DOUBLE_EQ(s.ttft_ms.max, 3.0);
  EXPECT_DOUBLE_EQ(s.ttft_from_arrival_ms.max, 4.0);
  EXPECT_DOUBLE_EQ(s.slot_wait_ms.max, 1.0);
  EXPECT_DOUBLE_EQ(s.slot_wait_ms.mean, 0.5);
}

}  // namespace
}  // namespace servesim
