// KV offload to CPU memory, worked out by hand: swap preemption against
// recompute on one tight cache (every step's time under the linear cost
// model), swap's fallback to recompute when the CPU tier is full, and a
// prefix evicted from the GPU cache to the CPU tier, then hit there.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/scheduler.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

using testing::LinearScenario;
using testing::MustParse;
using testing::RunScenario;

constexpr SimTime kUs = 1'000;
constexpr SimTime kMs = 1'000'000;

// Llama-3.1-8B, block size 16: 2 MiB of KV a block. pcie_gb_per_s
// 4.194304 moves a block in 0.5 ms; latency 100 us a transfer.
std::string TightCache(const std::string& preemption, double cpu_gib) {
  char offload[160];
  std::snprintf(offload, sizeof offload,
                R"("preemption": "%s", "kv_offload": {"cpu_gib": %.9g,
                   "pcie_gb_per_s": 4.194304, "latency_us": 100})",
                preemption.c_str(), cpu_gib);
  // A and B (1 ms apart): 16-token prompts, 33 output tokens (3 blocks at
  // most each) in 4 usable blocks. Step: 1 ms + 0.1 ms a prompt token.
  return LinearScenario(
      R"("step_s": 0.001, "prefill_token_s": 0.0001)",
      R"("arrival": {"process": "constant", "rate": 1000},
         "input_len": {"dist": "fixed", "value": 16},
         "output_len": {"dist": "fixed", "value": 33}, "num_requests": 2)",
      std::string(R"("async_scheduling": false, "num_gpu_blocks": 5, )") + offload);
}

// Both ways, steps 1-17 are the same:
//  step 1  [0, 2.6]      A prefill 16                  -> A token 1
//  step 2  [2.6, 5.2]    A decode (2nd block), B prefill 16
//  steps 3-17, 1 ms each: both decode; after step 17 A has 32 tokens of
//    KV in 2 blocks, B 31 in 2: the cache is full.
//  step 18: A needs a 3rd block; FCFS preempts the newest, B (16 tokens
//    out, 32 known). A alone decodes to its 33rd token at step 33; B's
//    whole sequence (2 blocks) does not fit in the 1 block left.
//  step 34: B resumes, then decodes its tokens 18-33 in steps 35-50.
// Recompute: step 18 takes 1 ms; step 34 prefills B's 32 known tokens
//   (4.2 ms). A finishes at 5.2 + 31 = 36.2 ms, B at 36.2 + 4.2 + 16 =
//   56.4 ms.
// Swap: step 18 copies B's 2 blocks out first: 1 ms + 0.1 + 2 x 0.5 ms =
//   2.1 ms, so A finishes at 37.3 ms; step 34 copies them back (1.1 ms)
//   and computes only B's 32nd token (a 1-token decode over 31 of
//   context): 2.1 ms, B finishes at 37.3 + 2.1 + 16 = 55.4 ms.
TEST(KvOffload, SwapPreemptionAgainstRecomputeStepByStep) {
  SimulationOutput rec_out, swap_out;
  const RunSummary rec = RunScenario(MustParse(TightCache("recompute", 1)), &rec_out, true);
  const RunSummary swp = RunScenario(MustParse(TightCache("swap", 1)), &swap_out, true);
  ASSERT_EQ(rec_out.steps.size(), 50u);
  ASSERT_EQ(swap_out.steps.size(), 50u);
  EXPECT_EQ(rec_out.requests[0].finish, 36200 * kUs);
  EXPECT_EQ(rec_out.requests[1].finish, 56400 * kUs);
  EXPECT_EQ(swap_out.requests[0].finish, 37300 * kUs);
  EXPECT_EQ(swap_out.requests[1].finish, 55400 * kUs);
  for (const SimulationOutput* o : {&rec_out, &swap_out}) {
    EXPECT_EQ(o->requests[0].preemptions, 0);
    EXPECT_EQ(o->requests[1].preemptions, 1);
    EXPECT_EQ(o->steps[17].num_preempted, 1);
  }
  // Recompute: step 34 prefills 32 tokens; nothing moves.
  EXPECT_EQ(rec_out.steps[33].prefill_tokens, 32);
  EXPECT_EQ(rec_out.steps[33].end - rec_out.steps[33].start, 4200 * kUs);
  EXPECT_EQ(rec.swap_out_blocks + rec.swap_in_blocks, 0);
  EXPECT_EQ(rec.transfer_stall_s, 0);
  // Swap: the two transfers, and their cost in their steps.
  const StepRecord& out18 = swap_out.steps[17];
  EXPECT_EQ(out18.swap_out_blocks, 2);
  EXPECT_EQ(out18.transfer_stall, 1100 * kUs);
  EXPECT_EQ(out18.end - out18.start, 2100 * kUs);
  const StepRecord& in34 = swap_out.steps[33];
  EXPECT_EQ(in34.swap_in_blocks, 2);
  EXPECT_EQ(in34.num_decode_seqs, 1);
  EXPECT_EQ(in34.prefill_tokens, 0);
  EXPECT_EQ(in34.context_tokens, 31);
  EXPECT_EQ(in34.end - in34.start, 2100 * kUs);
  EXPECT_EQ(swp.swap_preemptions, 1);
  EXPECT_EQ(swp.swap_fallbacks, 0);
  EXPECT_EQ(swp.swap_out_blocks, 2);
  EXPECT_EQ(swp.swap_in_blocks, 2);
  EXPECT_DOUBLE_EQ(swp.bytes_to_cpu, 2 * 2097152.0);
  EXPECT_DOUBLE_EQ(swp.bytes_to_gpu, 2 * 2097152.0);
  EXPECT_NEAR(swp.transfer_stall_s, 2.2e-3, 1e-12);
  EXPECT_EQ(swap_out.requests[1].num_output, 33);
}

// A CPU tier of one block cannot hold B's two: the swap falls back to
// recompute, counted, and the run is the recompute run to the nanosecond.
TEST(KvOffload, SwapWithoutRoomRecomputes) {
  SimulationOutput rec_out, out;
  RunScenario(MustParse(TightCache("recompute", 1)), &rec_out, true);
  const RunSummary s =
      RunScenario(MustParse(TightCache("swap", 1.0 / 512)), &out, true);  // 1 block
  EXPECT_EQ(s.cpu_blocks, 1);
  EXPECT_EQ(s.swap_preemptions, 0);
  EXPECT_EQ(s.swap_fallbacks, 1);
  EXPECT_EQ(s.swap_out_blocks, 0);
  ASSERT_EQ(out.requests.size(), rec_out.requests.size());
  for (size_t i = 0; i < out.requests.size(); ++i) {
    EXPECT_EQ(out.requests[i].finish, rec_out.requests[i].finish) << i;
  }
}

// Block size 4, 6 usable GPU blocks, a CPU tier of 8, prefix caching,
// synchronous steps committed one after the other.
class PrefixTier {
 public:
  PrefixTier() {
    EngineConfig c;
    c.block_size = 4;
    c.num_gpu_blocks = 6 + Scheduler::kReservedBlocks;
    c.max_num_batched_tokens = 64;
    c.async_scheduling = false;
    c.prefix_caching = true;
    c.cpu_blocks = 8;
    c.kv_block_bytes = 1000;
    c.pcie_bytes_per_s = 1e9;
    reqs_.reserve(16);
    sched_ = std::make_unique<Scheduler>(c, MakeSchedulerPolicy("fcfs"), &reqs_);
  }
  // A one-token answer to `prompt` tokens, the first 8 of them shared
  // prefix `prefix` (0: none).
  int64_t Add(int32_t prompt, uint64_t prefix) {
    Request r;
    r.id = static_cast<int64_t>(reqs_.size());
    r.prompt_len = prompt;
    r.output_len = 1;
    r.arrival = r.send = 0;
    if (prefix != 0) {
      r.content.prefix_id = prefix;
      r.content.prefix_len = 8;
    }
    r.content.stream_id = static_cast<uint64_t>(r.id) + 1000;
    reqs_.push_back(r);
    sched_->AddWaiting(r.id);
    return r.id;
  }
  // One step, committed; returns its transfers.
  TransferCounts Step() {
    StepPlan plan;
    sched_->Schedule(now_, &plan);
    const std::vector<ScheduledSeq>& batch = plan.batch;
    const TransferCounts t = plan.transfers;
    now_ += kMs;
    std::vector<int64_t> finished;
    sched_->Commit(now_, batch, &recorder_, &finished);
    sched_->CheckInvariants();
    return t;
  }
  const Request& req(int64_t id) const { return reqs_[id]; }
  const Scheduler& scheduler() const { return *sched_; }

 private:
  RequestTable reqs_;
  Recorder recorder_;
  std::unique_ptr<Scheduler> sched_;
  SimTime now_ = 0;
};

// A (prefix X + 1 token) fills and frees 3 blocks, X's two cached. B (24
// private tokens) takes all 6: X's blocks are evicted from the GPU, tail
// block first, into the CPU tier (2 stored). C (X + 1 token) misses on the
// GPU, hits both X blocks on the CPU (2 loaded, its 8 cached tokens from
// the CPU tier), computes 1 token; its 3 fresh blocks evict 3 of B's
// private blocks, stored as anonymous entries. D (X + 1) then hits X on
// the GPU (C registered the loaded blocks): nothing moves.
TEST(KvOffload, PrefixEvictedToCpuThenHitThere) {
  PrefixTier h;
  const int64_t a = h.Add(9, 77);
  TransferCounts t = h.Step();
  EXPECT_EQ(t.store + t.load, 0);
  EXPECT_EQ(h.req(a).cached_tokens, 0);
  h.Add(24, 0);
  t = h.Step();
  EXPECT_EQ(t.store, 2);
  EXPECT_EQ(t.load, 0);
  EXPECT_EQ(h.scheduler().cpu_tier()->num_prefix(), 2);
  const int64_t c = h.Add(9, 77);
  t = h.Step();
  EXPECT_EQ(t.load, 2);
  EXPECT_EQ(t.store, 3);
  EXPECT_EQ(h.req(c).cached_tokens, 8);
  EXPECT_EQ(h.req(c).cpu_cached_tokens, 8);
  EXPECT_EQ(h.scheduler().cpu_tier()->num_prefix(), 5);
  const int64_t d = h.Add(9, 77);
  t = h.Step();
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(h.req(d).cached_tokens, 8);
  EXPECT_EQ(h.req(d).cpu_cached_tokens, 0);
  EXPECT_EQ(h.scheduler().transfers().load, 2);
  EXPECT_EQ(h.scheduler().transfers().store, 5);
}

}  // namespace
}  // namespace servesim
