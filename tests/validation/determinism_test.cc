// Same seed => byte-identical result JSON; a different seed differs.
#include <gtest/gtest.h>

#include "sim/report/writers.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

std::string ResultFor(int seed) {
  const Scenario sc = testing::MustParse(EmbeddedDefaultScenario(),
                                         {"seed=" + std::to_string(seed),
                                          "workload.num_requests=3000",
                                          "workload.arrival.rate=25"});
  return ResultJson(sc, testing::RunScenario(sc)).dump(2);
}

TEST(Determinism, SameSeedSameBytesDifferentSeedDifferent) {
  const std::string a = ResultFor(5), b = ResultFor(5), c = ResultFor(6);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

}  // namespace
}  // namespace servesim
