// Engine behaviour on tiny scenarios worked out by hand: the exact event
// sequence, chunked prefill, the sequence budget, preemption and rejection.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "tests/test_util.h"

namespace servesim {
namespace {

using testing::LinearScenario;
using testing::MustParse;
using testing::RunScenario;

constexpr SimTime kMs = 1'000'000;

// Two requests 1 ms apart, prompt 10 and 3 output tokens each; step cost
// 1 ms + 0.1 ms per prompt token + 0.5 ms per decoding sequence.
// Synchronous scheduling (vLLM's EngineCore.step):
//  step 1 [0, 2]     A prefill 10           -> A token 1
//  step 2 [2, 4.5]   A decode, B prefill 10 -> A token 2, B token 1
//  step 3 [4.5, 6.5] A decode, B decode     -> A token 3 (done), B token 2
//  step 4 [6.5, 8]   B decode               -> B token 3 (done)
TEST(Engine, GoldenEventSequence) {
  const Scenario sc = MustParse(LinearScenario(
      R"("step_s": 0.001, "prefill_token_s": 0.0001, "decode_seq_s": 0.0005)",
      R"("arrival": {"process": "constant", "rate": 1000},
         "input_len": {"dist": "fixed", "value": 10},
         "output_len": {"dist": "fixed", "value": 3}, "num_requests": 2)",
      R"("async_scheduling": false)"));
  SimulationOutput out;
  const RunSummary s = RunScenario(sc, &out, /*check_invariants=*/true);
  ASSERT_EQ(out.requests.size(), 2u);
  const Request& a = out.requests[0];
  const Request& b = out.requests[1];
  EXPECT_EQ(a.arrival, 0);
  EXPECT_EQ(a.first_scheduled, 0);
  EXPECT_EQ(a.first_token, 2 * kMs);
  EXPECT_EQ(a.finish, 6500 * kMs / 1000);
  EXPECT_EQ(b.arrival, 1 * kMs);
  EXPECT_EQ(b.first_scheduled, 2 * kMs);
  EXPECT_EQ(b.first_token, 4500 * kMs / 1000);
  EXPECT_EQ(b.finish, 8 * kMs);
  EXPECT_EQ(out.recorder.steps().all_steps, 4);
  // TPOT (vLLM): (e2e - ttft) / (tokens - 1).
  EXPECT_NEAR(s.tpot_ms.max, (6.5 - 2.0) / 2, 1e-9);  // A
  EXPECT_NEAR(s.tpot_ms.min, (8.0 - 4.5) / 2, 1e-9);  // B
  // ITL gaps: A 2.5, 2.0; B 2.0, 1.5 ms.
  EXPECT_EQ(s.itl_ms.count, 4);
  EXPECT_NEAR(s.itl_ms.mean, (2.5 + 2.0 + 2.0 + 1.5) / 4, 1e-9);
}

// The per-step records of the synchronous golden sequence above, row by
// row (what --save-steps exports).
TEST(Engine, GoldenStepRecords) {
  const Scenario sc = MustParse(LinearScenario(
      R"("step_s": 0.001, "prefill_token_s": 0.0001, "decode_seq_s": 0.0005)",
      R"("arrival": {"process": "constant", "rate": 1000},
         "input_len": {"dist": "fixed", "value": 10},
         "output_len": {"dist": "fixed", "value": 3}, "num_requests": 2)",
      R"("async_scheduling": false)"));
  SimulationOutput out;
  RunScenario(sc, &out, /*check_invariants=*/true);
  ASSERT_EQ(out.steps.size(), 4u);
  struct Row {
    double start_ms, end_ms;
    int seqs, prefill_seqs, decode_seqs;
    int64_t tokens, prefill_tokens, context;
    int admitted, finishing, blocks;
  };
  // Blocks: 10 prompt tokens = 1 block each; a third token's KV fits too.
  const Row want[] = {
      {0, 2, 1, 1, 0, 10, 10, 0, 1, 0, 1},
      {2, 4.5, 2, 1, 1, 11, 10, 10, 1, 0, 2},
      {4.5, 6.5, 2, 0, 2, 2, 0, 21, 0, 1, 2},
      {6.5, 8, 1, 0, 1, 1, 0, 11, 0, 1, 1},
  };
  double busy_ms = 0;
  for (size_t k = 0; k < 4; ++k) {
    const StepRecord& r = out.steps[k];
    const Row& w = want[k];
    SCOPED_TRACE("step " + std::to_string(k));
    EXPECT_EQ(r.start, static_cast<SimTime>(w.start_ms * 1000) * kMs / 1000);
    EXPECT_EQ(r.end, static_cast<SimTime>(w.end_ms * 1000) * kMs / 1000);
    EXPECT_EQ(r.scheduled, r.start);  // sync: scheduled when it starts
    EXPECT_EQ(r.num_seqs, w.seqs);
    EXPECT_EQ(r.num_prefill_seqs, w.prefill_seqs);
    EXPECT_EQ(r.num_decode_seqs, w.decode_seqs);
    EXPECT_EQ(r.num_tokens, w.tokens);
    EXPECT_EQ(r.prefill_tokens, w.prefill_tokens);
    EXPECT_EQ(r.context_tokens, w.context);
    EXPECT_EQ(r.num_admitted, w.admitted);
    EXPECT_EQ(r.num_finishing, w.finishing);
    EXPECT_EQ(r.num_preempted, 0);
    EXPECT_EQ(r.kv_blocks_used, w.blocks);
    // The breakdown adds up to the step.
    EXPECT_NEAR(r.gemm_s + r.attn_prefill_s + r.attn_decode_s + r.comm_s +
                    r.other_s + r.overhead_s,
                ToSeconds(r.end - r.start), 1e-9);
    busy_ms += (w.end_ms - w.start_ms);
  }
  EXPECT_NEAR(out.replicas[0].busy_s * 1000, busy_ms, 1e-9);
}

// The same two requests with async scheduling (vLLM's default): each step is
// scheduled when the one before it is launched, so B, arriving while step 1
// runs, misses step 2 (already scheduled at t = 0) and joins step 3; A's
// last token is in flight when step 4 is scheduled, so A is left out of it.
//  step 1 [0, 2]     A prefill 10   (scheduled at 0)   -> A token 1
//  step 2 [2, 3.5]   A decode       (scheduled at 0)   -> A token 2
//  step 3 [3.5, 6]   A decode, B prefill (at 2)        -> A token 3 (done), B token 1
//  step 4 [6, 7.5]   B decode       (scheduled at 3.5) -> B token 2
//  step 5 [7.5, 9]   B decode       (scheduled at 6)   -> B token 3 (done)
TEST(Engine, GoldenEventSequenceWithAsyncScheduling) {
  const Scenario sc = MustParse(LinearScenario(
      R"("step_s": 0.001, "prefill_token_s": 0.0001, "decode_seq_s": 0.0005)",
      R"("arrival": {"process": "constant", "rate": 1000},
         "input_len": {"dist": "fixed", "value": 10},
         "output_len": {"dist": "fixed", "value": 3}, "num_requests": 2)",
      R"("async_scheduling": true)"));
  SimulationOutput out;
  RunScenario(sc, &out, /*check_invariants=*/true);
  ASSERT_EQ(out.requests.size(), 2u);
  const Request& a = out.requests[0];
  const Request& b = out.requests[1];
  EXPECT_EQ(a.first_scheduled, 0);
  EXPECT_EQ(a.first_token, 2 * kMs);
  EXPECT_EQ(a.finish, 6 * kMs);
  EXPECT_EQ(b.first_scheduled, 3500 * kMs / 1000);
  EXPECT_EQ(b.first_token, 6 * kMs);
  EXPECT_EQ(b.finish, 9 * kMs);
  EXPECT_EQ(out.recorder.steps().all_steps, 5);
}

TEST(Engine, ChunkedPrefillSplitsALongPromptByTheTokenBudget) {
  const Scenario sc = MustParse(LinearScenario(
      R"("prefill_token_s": 0.00001)",
      R"("arrival": {"process": "constant", "rate": 1},
         "input_len": {"dist": "fixed", "value": 10000},
         "output_len": {"dist": "fixed", "value": 2}, "num_requests": 1)",
      R"("max_num_batched_tokens": 4096)"));
  SimulationOutput out;
  RunScenario(sc, &out, true);
  // 4096 + 4096 + 1808 prompt tokens, then one decode step.
  EXPECT_EQ(out.recorder.steps().all_steps, 4);
  EXPECT_EQ(out.requests[0].first_token, FromSeconds(10000 * 1e-5));
}

TEST(Engine, WithoutChunkingALongPromptIsRejectedWithAReason) {
  const Scenario sc = MustParse(LinearScenario(
      R"("prefill_token_s": 0.00001)",
      R"("arrival": {"process": "constant", "rate": 1},
         "input_len": {"dist": "fixed", "value": 10000},
         "output_len": {"dist": "fixed", "value": 2}, "num_requests": 3)",
      R"("max_num_batched_tokens": 4096, "chunked_prefill": false)"));
  SimulationOutput out;
  const RunSummary s = RunScenario(sc, &out);
  EXPECT_EQ(s.rejected, 3);
  EXPECT_EQ(s.completed, 0);
  ASSERT_EQ(s.reject_reasons.size(), 1u);
  EXPECT_NE(s.reject_reasons[0].find("chunked prefill off"), std::string::npos);
}

TEST(Engine, RequestLargerThanTheWholeCacheIsRejectedNotLooped) {
  const Scenario sc = MustParse(LinearScenario(
      R"("prefill_token_s": 0.00001)",
      R"("arrival": {"process": "constant", "rate": 10},
         "input_len": {"dist": "uniform", "min": 100, "max": 300},
         "output_len": {"dist": "fixed", "value": 10}, "num_requests": 200)",
      R"("num_gpu_blocks": 12)"));  // 11 usable (one is vLLM's null block): 176 tokens
  SimulationOutput out;
  const RunSummary s = RunScenario(sc, &out, true);
  EXPECT_GT(s.rejected, 0);
  EXPECT_GT(s.completed, 0);
  EXPECT_EQ(s.rejected + s.completed, 200);
  for (const Request& r : out.requests) {
    EXPECT_EQ(r.status == RequestStatus::kRejected, r.max_cached_tokens() > 176);
  }
}

TEST(Engine, MaxNumSeqsCapsTheBatch) {
  const Scenario sc = MustParse(LinearScenario(
      R"("step_s": 0.001)",
      R"("arrival": {"process": "constant", "rate": 100},
         "input_len": {"dist": "fixed", "value": 5},
         "output_len": {"dist": "fixed", "value": 200}, "num_requests": 100)",
      R"("max_num_seqs": 8)"));
  const RunSummary s = RunScenario(sc, nullptr, true);
  EXPECT_EQ(s.max_batch_size, 8);
  EXPECT_EQ(s.completed, 100);
  EXPECT_GT(s.mean_waiting, 1.0);  // the cap, not the load, limited the batch
}

// Two requests whose decodes outgrow a 10-block cache: FCFS preempts the
// newest (B), which later recomputes its prompt and output so far.
TEST(Engine, PreemptsNewestFirstAndRecomputes) {
  const Scenario sc = MustParse(LinearScenario(
      R"("step_s": 0.001, "prefill_token_s": 0.00001)",
      R"("arrival": {"process": "constant", "rate": 10000},
         "input_len": {"dist": "fixed", "value": 64},
         "output_len": {"dist": "fixed", "value": 60}, "num_requests": 2)",
      R"("num_gpu_blocks": 10)"));
  SimulationOutput out;
  const RunSummary s = RunScenario(sc, &out, true);
  const Request& a = out.requests[0];
  const Request& b = out.requests[1];
  EXPECT_EQ(a.preemptions, 0);
  EXPECT_GE(b.preemptions, 1);
  EXPECT_EQ(s.completed, 2);
  EXPECT_EQ(b.num_output, 60);
  EXPECT_GT(b.finish, a.finish);
  // Together they need 2 * 124 = 248 token slots > 160: B must have waited
  // for A's blocks, so B finishes after A's whole decode plus its own
  // recomputed remainder.
  EXPECT_EQ(s.preempted_requests, 1);
}

TEST(Engine, ClosedLoopWithOneClientNeverQueues) {
  const Scenario sc = MustParse(LinearScenario(
      R"("step_s": 0.002, "prefill_token_s": 0.00001, "decode_seq_s": 0.0001)",
      R"("arrival": {"process": "closed", "concurrency": 1, "think_time_s": 0.01},
         "input_len": {"dist": "lognormal", "median": 100, "p99": 2000},
         "output_len": {"dist": "exponential", "mean": 50}, "num_requests": 2000)"));
  const RunSummary s = RunScenario(sc);
  EXPECT_EQ(s.completed, 2000);
  EXPECT_EQ(s.queue_ms.max, 0.0);
  EXPECT_EQ(s.max_batch_size, 1);
}

TEST(Engine, MaxConcurrencyRecordsSlotWaitAndBothTtfts) {
  const Scenario sc = MustParse(LinearScenario(
      R"("step_s": 0.002, "prefill_token_s": 0.00001, "decode_seq_s": 0.0001)",
      R"("arrival": {"process": "poisson", "rate": 200},
         "input_len": {"dist": "fixed", "value": 100},
         "output_len": {"dist": "fixed", "value": 100}, "num_requests": 3000,
         "max_concurrency": 4)"));
  SimulationOutput out;
  const RunSummary s = RunScenario(sc, &out);
  EXPECT_EQ(s.completed, 3000);
  EXPECT_LE(s.max_batch_size, 4);
  EXPECT_GT(s.slot_wait_ms.mean, 0.0);
  // TTFT from the intended arrival = wait for a slot + TTFT from send.
  EXPECT_NEAR(s.ttft_from_arrival_ms.mean, s.slot_wait_ms.mean + s.ttft_ms.mean,
              1e-6 * s.ttft_from_arrival_ms.mean);
  for (const Request& r : out.requests) ASSERT_GE(r.send, r.arrival);
}

}  // namespace
}  // namespace servesim

namespace servesim {
namespace {

// Later turns of a session wait for a max_concurrency slot like any request
// (found by the simulation fuzzer: they used to be sent at once). The
// run-level invariants (checked by RunScenario) sweep sends and finishes;
// here the peak is also counted directly.
TEST(Engine, SessionTurnsRespectMaxConcurrency) {
  const Scenario sc = testing::MustParse(testing::LinearScenario(
      R"("step_s": 0.001, "prefill_token_s": 0.00001, "decode_seq_s": 0.0001)",
      R"("arrival": {"process": "poisson", "rate": 200}, "max_concurrency": 2,
         "sessions": {"turns": {"dist": "fixed", "value": 3}, "think_time_s": 0},
         "input_len": {"dist": "fixed", "value": 50},
         "output_len": {"dist": "fixed", "value": 5}, "num_requests": 300)"));
  SimulationOutput out;
  const RunSummary s = testing::RunScenario(sc, &out);
  EXPECT_EQ(s.completed, 300);
  std::vector<std::pair<SimTime, int>> events;
  for (const Request& r : out.requests) {
    events.push_back({r.send, 1});
    events.push_back({r.finish, -1});
  }
  std::sort(events.begin(), events.end());  // finishes first at equal times
  int level = 0, peak = 0;
  for (const auto& [t, d] : events) peak = std::max(peak, level += d);
  EXPECT_EQ(peak, 2);
}

}  // namespace
}  // namespace servesim
