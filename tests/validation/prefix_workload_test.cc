// Prefix caching on generated workloads: the target-hit-rate generator
// lands on its target, cached tokens save exactly their prefill time,
// throughput under a latency bound rises with the hit rate, multi-turn
// histories hit the cache, and invariants hold under sharing, preemption
// and eviction.
#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace servesim {
namespace {

std::string TargetScenario(double hit_rate, double rate, bool caching,
                           const std::string& cost) {
  return R"({"seed": 3, "model": "llama-3.1-8b", "hardware": {"gpu": "h200"},
    "engine": {"prefix_caching": )" + std::string(caching ? "true" : "false") + R"(},
    "cost_model": )" + cost + R"(,
    "workload": {"arrival": {"process": "poisson", "rate": )" + std::to_string(rate) + R"(},
      "input_len": {"dist": "lognormal", "median": 400, "p99": 4000},
      "output_len": {"dist": "lognormal", "median": 100, "p99": 800},
      "prefix": {"model": "target_hit_rate", "hit_rate": )" + std::to_string(hit_rate) + R"(},
      "num_requests": 6000}})";
}

const char* kRoofline = R"({"type": "roofline"})";

TEST(PrefixWorkload, TargetHitRateLandsWithinTwoPoints) {
  for (double target : {0.0, 0.4, 0.9}) {
    const Scenario sc = testing::MustParse(TargetScenario(target, 5, true, kRoofline));
    const RunSummary s = testing::RunScenario(sc);
    EXPECT_NEAR(s.token_hit_rate, target, 0.02) << "target " << target;
  }
}

TEST(PrefixWorkload, CachedTokensSaveExactlyTheirPrefillTime) {
  // Linear cost: every token computed costs 10 us, so the time saved must
  // equal 10 us x cached tokens. (Decode is priced per sequence at the same
  // 10 us because a prompt cached but for its last token computes one
  // token at a context, exactly like a decode step, and is priced as one.)
  const std::string cost = R"({"type": "linear", "prefill_token_s": 1e-5, "decode_seq_s": 1e-5})";
  const RunSummary off = testing::RunScenario(
      testing::MustParse(TargetScenario(0.6, 2, false, cost)));
  const RunSummary on = testing::RunScenario(
      testing::MustParse(TargetScenario(0.6, 2, true, cost)));
  ASSERT_EQ(off.preemptions + on.preemptions, 0);
  ASSERT_GT(on.cached_prompt_tokens, 0);
  const double saved = off.total_cost.gemm_s - on.total_cost.gemm_s;
  EXPECT_NEAR(saved, 1e-5 * on.cached_prompt_tokens, 1e-6 * saved);
  EXPECT_LT(on.ttft_ms.mean, off.ttft_ms.mean);
}

// Highest Poisson rate whose p99 TTFT stays under 500 ms, by bisection.
double RateUnderTtftBound(double hit_rate) {
  double lo = 1, hi = 200;
  for (int i = 0; i < 9; ++i) {
    const double mid = (lo + hi) / 2;
    const RunSummary s = testing::RunScenario(
        testing::MustParse(TargetScenario(hit_rate, mid, true, kRoofline),
                           {"workload.num_requests=3000"}));
    const double p99 = s.ttft_ms.percentiles[3].second;  // 50, 90, 95, 99
    (p99 <= 500 && !s.unstable ? lo : hi) = mid;
  }
  return lo;
}

TEST(PrefixWorkload, ThroughputUnderALatencyBoundRisesWithHitRate) {
  const double r0 = RateUnderTtftBound(0.0);
  const double r5 = RateUnderTtftBound(0.5);
  const double r9 = RateUnderTtftBound(0.9);
  EXPECT_GT(r5, r0 * 1.05) << r0 << " " << r5 << " " << r9;
  EXPECT_GT(r9, r5 * 1.05) << r0 << " " << r5 << " " << r9;
}

TEST(PrefixWorkload, MultiTurnHistoryIsServedFromCache) {
  const Scenario sc = testing::MustParse(R"({"seed": 5, "model": "llama-3.1-8b",
    "hardware": {"gpu": "h200"}, "engine": {"prefix_caching": true},
    "workload": {"arrival": {"process": "poisson", "rate": 1},
      "sessions": {"turns": {"dist": "uniform", "min": 2, "max": 6}, "think_time_s": 5},
      "input_len": {"dist": "lognormal", "median": 150, "p99": 1500},
      "output_len": {"dist": "lognormal", "median": 200, "p99": 1000},
      "num_requests": 3000}})");
  SimulationOutput out;
  const RunSummary s = testing::RunScenario(sc, &out);
  EXPECT_EQ(s.completed + s.rejected, 3000);
  int64_t later_turns = 0, history = 0, cached = 0;
  for (const Request& r : out.requests) {
    if (r.session_turn == 0 || r.status != RequestStatus::kFinished) continue;
    ++later_turns;
    cached += r.cached_tokens;
    // Each later turn's prompt contains the whole previous exchange.
    history += r.prompt_len;
  }
  ASSERT_GT(later_turns, 1000);
  // With an ample cache nearly all history (all but partial blocks and the
  // last answer token) is a hit.
  EXPECT_GT(static_cast<double>(cached) / history, 0.6);
  EXPECT_GT(s.token_hit_rate, 0.4);
}

TEST(PrefixWorkload, InvariantsHoldUnderSharingPreemptionAndEviction) {
  const Scenario sc = testing::MustParse(R"({"seed": 9, "model": "llama-3.1-8b",
    "hardware": {"gpu": "h200"},
    "engine": {"prefix_caching": true, "num_gpu_blocks": 300, "max_num_seqs": 48,
               "max_num_batched_tokens": 1024},
    "cost_model": {"type": "linear", "step_s": 0.001, "prefill_token_s": 1e-5,
                   "decode_seq_s": 1e-4},
    "workload": {"arrival": {"process": "gamma", "rate": 60, "burstiness": 0.3},
      "input_len": {"dist": "lognormal", "median": 60, "p99": 800},
      "output_len": {"dist": "lognormal", "median": 60, "p99": 600},
      "prefix": {"model": "zipf", "num_prefixes": 20, "prefix_len": 512, "s": 1.1},
      "num_requests": 2500}})");
  SimulationOutput out;
  const RunSummary s = testing::RunScenario(sc, &out, /*check_invariants=*/true);
  EXPECT_GT(s.preemptions, 0);
  EXPECT_GT(s.evictions, 0);
  EXPECT_GT(s.cached_prompt_tokens, 0);
  EXPECT_GT(s.resume_cached_tokens, 0);
  EXPECT_EQ(s.completed + s.rejected, 2500);
  for (const Request& r : out.requests) {
    if (r.status == RequestStatus::kFinished) {
      EXPECT_EQ(r.num_output, r.output_len);
    }
  }
}

}  // namespace
}  // namespace servesim
