// Without prefix caching the scheduler's pool is counted (requests hold a
// block count, not ids): which pool a configuration gets, and that the
// invariant check still catches a block released while still held (the
// holders' counts no longer sum to the pool's used count).
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sim/engine/scheduler.h"

namespace servesim {
namespace {

EngineConfig Tiny() {
  EngineConfig c;
  c.block_size = 4;
  c.num_gpu_blocks = 64;
  c.max_num_seqs = 8;
  c.max_num_batched_tokens = 64;
  c.async_scheduling = false;
  return c;
}

TEST(CountedBlocks, OnlyWithoutPrefixCachingAndOutsideTheReference) {
  RequestTable reqs;
  EngineConfig c = Tiny();
  EXPECT_TRUE(Scheduler(c, MakeSchedulerPolicy("fcfs"), &reqs).pool().counted());
  c.prefix_caching = true;
  EXPECT_FALSE(Scheduler(c, MakeSchedulerPolicy("fcfs"), &reqs).pool().counted());
  c.prefix_caching = false;
  c.reference_engine = true;
  EXPECT_FALSE(Scheduler(c, MakeSchedulerPolicy("fcfs"), &reqs).pool().counted());
}

TEST(CountedBlocksDeathTest, BlockReleasedWhileHeldIsCaught) {
  RequestTable reqs;
  reqs.reserve(8);
  Scheduler sched(Tiny(), MakeSchedulerPolicy("fcfs"), &reqs);
  for (int64_t id = 0; id < 3; ++id) {
    Request r;
    r.id = id;
    r.prompt_len = 9;
    r.output_len = 2;  // the next step is its last: it stays running
    reqs.push_back(r);
    sched.AddWaiting(id);
  }
  Recorder recorder;
  StepPlan plan;
  std::vector<int64_t> finished;
  // One step: the three prefills (running: a request whose next step is
  // its last does not join the decode group).
  sched.Schedule(1, &plan);
  sched.Commit(2, plan.batch, &recorder, &finished);
  sched.CheckInvariants();
  ASSERT_EQ(reqs[0].blocks.counted(), 3);  // 9 prompt tokens, 4 a block
  ASSERT_TRUE(reqs[0].blocks.ids().empty());
  // As if one of its blocks had gone back to the pool while it holds it.
  reqs[0].blocks.AddCounted(1);
  EXPECT_DEATH(sched.CheckInvariants(), "blocks held, pool says");
}

}  // namespace
}  // namespace servesim
