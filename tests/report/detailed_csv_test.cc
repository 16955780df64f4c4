// The detailed CSV's times are formatted from integers where that gives
// printf's digits exactly (below 1e15 ns): checked against printf on
// boundaries and random values of every magnitude.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "sim/core/rng.h"
#include "sim/core/time.h"
#include "sim/report/writers.h"

namespace servesim {
namespace {

std::string Printf(int64_t ns, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, decimals == 9 ? "%.9f" : "%.6f",
                decimals == 9 ? ToSeconds(ns) : ToMillis(ns));
  return buf;
}

TEST(DetailedCsv, TimesFromIntegersMatchPrintf) {
  std::vector<int64_t> values = {0, 1, 9, 10, 999999, 1000000, 1000001, 999999999,
                                 1000000000, 1000000001, 123456789012345,
                                 999999999999999, 1000000000000000, 4503599627370497,
                                 -1, -1000000};
  Rng rng(17, "csv");
  for (int digits = 1; digits <= 15; ++digits) {
    int64_t scale = 1;
    for (int i = 0; i < digits; ++i) scale *= 10;
    for (int i = 0; i < 20000; ++i) {
      values.push_back(static_cast<int64_t>(rng.Uniform() * static_cast<double>(scale)));
    }
  }
  for (int64_t ns : values) {
    for (int decimals : {9, 6}) {
      std::string got;
      AppendNanosAsFixed(ns, decimals, &got);
      ASSERT_EQ(got, Printf(ns, decimals)) << ns << " ns, " << decimals << " decimals";
    }
  }
}

}  // namespace
}  // namespace servesim
