// The waiting queue ordered by a policy's key (priority, edf on the fast
// engine) against the same queue in queue order scanned by the policy's
// PickNext (the reference engine): the same request next after any mix of
// arrivals, preemptions (to the front), admissions, requests passed over
// and put back, and requests finished while waiting.
#include "sim/engine/waiting_queue.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

namespace servesim {
namespace {

TEST(WaitingQueue, KeyedOrderPicksWhatThePolicysScanPicks) {
  for (const std::string name : {"priority", "edf"}) {
    const std::unique_ptr<SchedulerPolicy> policy = MakeSchedulerPolicy(name);
    ASSERT_TRUE(policy->has_waiting_key()) << name;
    std::mt19937_64 rng(7);
    RequestTable t;
    t.reserve(4000);
    WaitingQueue keyed(policy.get(), &t, true), scanned(policy.get(), &t, false);
    std::vector<int64_t> out;  // taken, not waiting
    int64_t picks = 0;
    for (int op = 0; op < 6000; ++op) {
      const uint64_t roll = rng() % 10;
      if (roll < 4 || keyed.empty()) {  // a new request; few priorities, tied sends
        Request& r = t.emplace_back();
        r.id = static_cast<int64_t>(t.size()) - 1;
        r.priority = static_cast<int32_t>(rng() % 3);
        r.send = static_cast<SimTime>(rng() % 50) * 1000;
        r.ttft_slo = rng() % 4 == 0 ? -1 : static_cast<SimTime>(rng() % 5) * 7000;
        keyed.PushBack(r.id);
        scanned.PushBack(r.id);
      } else if (roll < 7) {  // admitted
        ASSERT_EQ(keyed.Next(), scanned.Next()) << name << " op " << op;
        out.push_back(keyed.Next());
        keyed.Take();
        scanned.Take();
        ++picks;
      } else if (roll < 8 && !out.empty()) {  // preempted back to the queue
        const size_t k = rng() % out.size();
        keyed.PushFront(out[k]);
        scanned.PushFront(out[k]);
        out.erase(out.begin() + static_cast<ptrdiff_t>(k));
      } else if (roll < 9) {  // passed over by a waiting pass, then put back
        std::vector<int64_t> skipped;
        for (int k = 0; k < 3 && !keyed.empty(); ++k) {
          ASSERT_EQ(keyed.Next(), scanned.Next()) << name << " op " << op;
          skipped.push_back(keyed.Next());
          keyed.Take();
          scanned.Take();
        }
        keyed.PutBack(skipped);
        scanned.PutBack(skipped);
      } else {  // finished while waiting (its stale output completed it)
        int64_t id = -1;
        keyed.ForEach([&](int64_t w) { id = rng() % 3 == 0 || id < 0 ? w : id; });
        keyed.Erase(id);
        scanned.Erase(id);
      }
      ASSERT_EQ(keyed.size(), scanned.size());
    }
    EXPECT_GT(picks, 1000) << name;
    while (!keyed.empty()) {  // and to the end
      ASSERT_EQ(keyed.Next(), scanned.Next()) << name;
      keyed.Take();
      scanned.Take();
    }
    EXPECT_TRUE(scanned.empty());
  }
}

TEST(WaitingQueue, KeyedQueueRefusesWhatItCannotOrder) {
  RequestTable t(3);
  t[1].id = 0;  // the key of request 0
  t[2].id = 2;
  const std::unique_ptr<SchedulerPolicy> priority = MakeSchedulerPolicy("priority");
  WaitingQueue q(priority.get(), &t, true);
  q.PushBack(0);
  EXPECT_DEATH(q.PushBack(1), "has the key of another");
  EXPECT_DEATH(q.Erase(2), "is not waiting");
  EXPECT_DEATH(q.queue(), "no queue order");
  const std::unique_ptr<SchedulerPolicy> fcfs = MakeSchedulerPolicy("fcfs");
  EXPECT_DEATH({ WaitingQueue bad(fcfs.get(), &t, true); }, "needs a policy with a key");
}

}  // namespace
}  // namespace servesim
