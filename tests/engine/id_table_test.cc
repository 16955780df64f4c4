// IdTable: values by request id, against a std::map doing the same.
#include "sim/engine/id_table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace servesim {
namespace {

TEST(IdTable, AgreesWithAMapUnderRandomInsertsAndErases) {
  IdTable<int64_t> t;
  std::map<int64_t, int64_t> m;
  std::mt19937_64 rng(7);
  int64_t next = 0;
  for (int step = 0; step < 200000; ++step) {
    if (m.empty() || rng() % 3 != 0) {
      // Ids mostly increase, with holes (requests of other replicas).
      next += 1 + static_cast<int64_t>(rng() % 3);
      t.Insert(next) = next * 10;
      m[next] = next * 10;
    } else {
      // Erase one of the oldest few (finishes come roughly in order).
      auto it = m.begin();
      std::advance(it, static_cast<long>(rng() % std::min<size_t>(m.size(), 50)));
      ASSERT_EQ(t.at(it->first), it->second);
      t.erase(it->first);
      m.erase(it);
    }
    ASSERT_EQ(t.size(), m.size());
  }
  std::vector<std::pair<int64_t, int64_t>> seen;
  t.ForEach([&](int64_t id, int64_t v) { seen.emplace_back(id, v); });
  using Pairs = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(seen, Pairs(m.begin(), m.end()));
}

TEST(IdTable, AFreedChunkStartsAgainFromValueInitialisedValues) {
  IdTable<int> t;
  t.Insert(5) = 42;
  t.erase(5);  // its chunk is freed
  EXPECT_EQ(t.Insert(5), 0);
  EXPECT_EQ(t.size(), 1u);
}

TEST(IdTableDeathTest, MisuseAborts) {
  IdTable<int> t;
  t.Insert(3);
  EXPECT_DEATH(t.Insert(3), "inserted twice");
  EXPECT_DEATH(t.at(4), "no value for id 4");
  EXPECT_DEATH(t.at(1 << 20), "no value for id");
  EXPECT_DEATH(t.Insert(-1), "negative id");
}

}  // namespace
}  // namespace servesim
