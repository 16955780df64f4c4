// Symmetric memory's all-reduce range against a measured end-to-end run:
// vLLM pull request 20759 served Llama-3.1-70B over 4 B200s (vllm bench
// serve, sonnet dataset: 550 prompt and 150 output tokens, Poisson, 60 s
// of requests, prefix caching off) without and with its symmetric-memory
// all-reduce. Mean TTFT, ms: 45.02 -> 41.46 at 1 req/s, 48.57 -> 46.92 at
// 5, 55.48 -> 54.58 at 10. scenarios/symm_mem_b200.json is that run. The
// tolerances are set from what servesim reaches (docs/validation.md): at
// most 9.9% off with the frontend's default, which holds each prompt for
// vLLM's 2 ms tokenizer window (0.10 on; whether the pull request's July
// 2025 build had it is not known), and 5.8% without it. TPOT is not checked: servesim's B200 kernels are
// vLLM 0.24.0's, 16-22% faster at decode than the pull request's vLLM of
// mid-2025 measured.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/core/paths.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

double MeanTtftMs(double rate, bool symm_mem, bool window = true) {
  const std::string n = std::to_string(static_cast<int>(60 * rate));
  std::vector<std::string> sets = {
      "workload.arrival.rate=" + std::to_string(rate), "workload.num_requests=" + n,
      std::string("cost_model.symm_mem_allreduce=") + (symm_mem ? "true" : "false")};
  if (!window) sets.push_back("frontend.tokenizer_batch_wait_s=0");
  StatusOr<Scenario> sc =
      LoadScenarioFile(ResolveDataPath("scenarios/symm_mem_b200.json"), sets);
  if (!sc.ok()) {
    ADD_FAILURE() << sc.status().message();
    return 0;
  }
  return testing::RunScenario(*sc).ttft_ms.mean;
}

TEST(SymmMemValidation, B200TensorParallelFourMatchesPullRequest20759) {
  struct Point {
    double rate, nccl_ms, symm_ms;
  };
  for (const Point& p : {Point{1, 45.02, 41.46}, Point{5, 48.57, 46.92}, Point{10, 55.48, 54.58}}) {
    for (const bool window : {true, false}) {
      const double tolerance = window ? 0.11 : 0.07;
      const double nccl = MeanTtftMs(p.rate, false, window);
      const double symm = MeanTtftMs(p.rate, true, window);
      EXPECT_NEAR(nccl / p.nccl_ms, 1, tolerance) << p.rate << " req/s, NCCL: " << nccl;
      EXPECT_NEAR(symm / p.symm_ms, 1, tolerance)
          << p.rate << " req/s, symmetric memory: " << symm;
      EXPECT_LT(symm, nccl) << p.rate << " req/s";
    }
  }
  // At 1 req/s (prefills mostly alone, 8.6 MiB all-reduces) the measured
  // gain is 7.9%.
  const double gain = 1 - MeanTtftMs(1, true) / MeanTtftMs(1, false);
  EXPECT_GT(gain, 0.04);
  EXPECT_LT(gain, 0.12);
}

}  // namespace
}  // namespace servesim
