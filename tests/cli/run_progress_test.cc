// `servesim run`'s progress text: requests of the bound, simulated time,
// and the fraction done from whichever bound the run has.
#include "sim/cli/run_progress.h"

#include <gtest/gtest.h>

namespace servesim {
namespace {

TEST(RunProgress, RequestsOfTheBound) {
  WorkloadConfig w;
  w.num_requests = 1000;
  const RunProgressText t = DescribeRunProgress(w, {FromSeconds(90), 250, 260});
  EXPECT_DOUBLE_EQ(t.fraction, 0.25);
  EXPECT_EQ(t.what, "250/1000 requests done, simulated 1 min 30 s");
}

TEST(RunProgress, DurationBound) {
  WorkloadConfig w;
  w.duration_s = 3600;
  const RunProgressText t = DescribeRunProgress(w, {FromSeconds(900), 7, 9});
  EXPECT_DOUBLE_EQ(t.fraction, 0.25);
  EXPECT_EQ(t.what, "7 requests done, simulated 15 min 0 s of 1 h 0 min");
}

TEST(RunProgress, TheNearerBoundWins) {
  WorkloadConfig w;
  w.num_requests = 1000;
  w.duration_s = 100;
  EXPECT_DOUBLE_EQ(DescribeRunProgress(w, {FromSeconds(50), 100, 100}).fraction, 0.5);
}

}  // namespace
}  // namespace servesim
