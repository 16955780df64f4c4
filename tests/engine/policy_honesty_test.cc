// Policies must not see a request's true output length unless their name
// says they are an oracle: for every registered policy not ending in
// "-oracle", the admission and victim choices are unchanged when every
// request's output length is redrawn; the oracle's victim choice does
// change (it reads the output length, which is what it is for).
#include <gtest/gtest.h>

#include <random>

#include "sim/engine/scheduler_policy.h"

namespace servesim {
namespace {

struct Choices {
  std::vector<size_t> next, victim;
};

// Random queues over a table of requests in mixed states; `output_seed`
// draws the output lengths only, everything a server knows stays fixed.
Choices Choose(const SchedulerPolicy& p, uint64_t output_seed) {
  std::mt19937_64 known(42), secret(output_seed);
  std::uniform_int_distribution<int32_t> len(1, 2000);
  Choices c;
  for (int round = 0; round < 200; ++round) {
    RequestTable t(12);
    for (size_t i = 0; i < t.size(); ++i) {
      t[i].id = static_cast<int64_t>(i);
      t[i].prompt_len = len(known);
      t[i].num_output = len(known) % 50;
      t[i].num_computed = t[i].known_tokens() / 2;
      t[i].output_len = t[i].num_output + len(secret);
    }
    std::deque<int64_t> waiting = {0, 1, 2, 3, 4, 5};
    std::vector<int64_t> running = {6, 7, 8, 9, 10, 11};
    c.next.push_back(p.PickNext(waiting, t));
    c.victim.push_back(
        p.PickVictim(running, static_cast<size_t>(round % 6), t));
  }
  return c;
}

TEST(PolicyHonesty, OnlyOraclesReadTheOutputLength) {
  for (const std::string& name : SchedulerPolicyNames()) {
    const auto policy = MakeSchedulerPolicy(name);
    ASSERT_NE(policy, nullptr) << name;
    const Choices one = Choose(*policy, 1), two = Choose(*policy, 2);
    const bool oracle = name.size() > 7 && name.ends_with("-oracle");
    EXPECT_EQ(one.next, two.next) << name << ": admission reads output lengths";
    if (oracle) {
      EXPECT_NE(one.victim, two.victim)
          << name << ": an oracle that ignores its oracle";
    } else {
      EXPECT_EQ(one.victim, two.victim)
          << name << ": victim choice reads output lengths";
    }
  }
}

TEST(PolicyHonesty, ShortestPromptFirstPreemptsTheLongestPromptNewestFirst) {
  const auto p = MakeSchedulerPolicy("shortest-prompt-first");
  RequestTable t(4);
  const int32_t prompts[] = {100, 500, 300, 500};
  for (int i = 0; i < 4; ++i) t[i].prompt_len = prompts[i];
  const std::vector<int64_t> running = {0, 1, 2, 3};
  EXPECT_EQ(p->PickVictim(running, 0, t), 3u);  // 500, the newer of two
  const std::vector<int64_t> older_long = {1, 0, 2};
  EXPECT_EQ(p->PickVictim(older_long, 0, t), 0u);
  EXPECT_EQ(p->PickVictim(older_long, 1, t), 2u);  // 1 already scheduled
}

}  // namespace
}  // namespace servesim
