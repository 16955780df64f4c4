// Validation against queueing theory. With the linear cost model (prefill
// only), max_num_seqs 1 and one output token, each request is one step of
// fixed or random length: the replica is an M/G/1 queue, and the mean wait
// must match Pollaczek-Khinchine, E[W] = lambda E[S^2] / (2 (1 - rho)).
// The same for SGLang's engine (one request at a time, chunking off).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/test_util.h"

namespace servesim {
namespace {

struct Case {
  const char* name;
  const char* input_len;
  double mean_tokens;
  double rho;
  int64_t requests;
};

// E[W] in ms for Poisson arrivals at `rate` and each request's service of
// prompt_len x per_token (the moments from the lengths actually drawn:
// exogenous input); *rho = rate x E[S].
double PollaczekKhinchineWaitMs(const SimulationOutput& out, double rate, double per_token,
                                double* rho) {
  double m1 = 0, m2 = 0;
  for (const Request& r : out.requests) {
    const double sv = ToSeconds(FromSeconds(r.prompt_len * per_token));
    m1 += sv;
    m2 += sv * sv;
  }
  m1 /= out.requests.size();
  m2 /= out.requests.size();
  *rho = rate * m1;
  return 1e3 * rate * m2 / (2 * (1 - *rho));
}

class PollaczekKhinchine : public ::testing::TestWithParam<Case> {};

TEST_P(PollaczekKhinchine, MeanWaitMatchesWithinThreePercent) {
  const Case c = GetParam();
  const double per_token = 1e-5;  // s per prompt token
  const double rate = c.rho / (c.mean_tokens * per_token);
  const Scenario sc = testing::MustParse(testing::LinearScenario(
      R"("prefill_token_s": 1e-5)",
      std::string(R"("arrival": {"process": "poisson", "rate": )") +
          std::to_string(rate) + R"(}, "input_len": )" + c.input_len +
          R"(, "output_len": {"dist": "fixed", "value": 1}, "num_requests": )" +
          std::to_string(c.requests),
      R"("max_num_seqs": 1, "max_num_batched_tokens": 1000000)"));
  SimulationOutput out;
  const RunSummary s = testing::RunScenario(sc, &out);
  ASSERT_EQ(s.completed, c.requests);
  double rho = 0;
  const double pk_wait_ms = PollaczekKhinchineWaitMs(out, rate, per_token, &rho);
  EXPECT_NEAR(s.queue_ms.mean, pk_wait_ms, 0.03 * pk_wait_ms)
      << c.name << " rho " << rho;
  EXPECT_NEAR(s.gpu_busy_fraction, rho, 0.02);
}

INSTANTIATE_TEST_SUITE_P(
    MD1AndMG1, PollaczekKhinchine,
    ::testing::Values(
        Case{"MD1_rho05", R"({"dist": "fixed", "value": 1000})", 1000, 0.5, 400000},
        Case{"MD1_rho08", R"({"dist": "fixed", "value": 1000})", 1000, 0.8, 1000000},
        Case{"MG1exp_rho05", R"({"dist": "exponential", "mean": 1000})", 1000, 0.5, 400000},
        Case{"MG1exp_rho08", R"({"dist": "exponential", "mean": 1000})", 1000, 0.8, 2000000}),
    [](const auto& info) { return std::string(info.param.name); });

// The same queue served by SGLang's engine: max_running_requests 1,
// chunking off and a roomy pool make each request one extend batch, so
// the replica is again an M/G/1 queue (each event loop: the overlap loop
// schedules the next request only once the last one's result is in, as
// its in-flight token is its last).
struct SglangCase {
  const char* name;
  const char* input_len;
  bool overlap;
  double rho;
  int64_t requests;
};

class SglangPollaczekKhinchine : public ::testing::TestWithParam<SglangCase> {};

TEST_P(SglangPollaczekKhinchine, MeanWaitMatchesWithinThreePercent) {
  const SglangCase c = GetParam();
  const double per_token = 1e-5, mean_tokens = 1000;
  const double rate = c.rho / (mean_tokens * per_token);
  const Scenario sc = testing::MustParse(
      std::string(R"({"seed": 7, "model": "llama-3.1-8b", "hardware": {"gpu": "h200"},
        "cost_model": {"type": "linear", "prefill_token_s": 1e-5},
        "frontend": {"enabled": false},
        "engine": {"kind": "sglang", "sglang": {"max_running_requests": 1,
          "chunked_prefill_size": -1, "max_total_tokens": 500000,
          "disable_overlap_schedule": )") + (c.overlap ? "false" : "true") + R"(}},
        "workload": {"arrival": {"process": "poisson", "rate": )" + std::to_string(rate) +
      R"(}, "input_len": )" + c.input_len +
      R"(, "output_len": {"dist": "fixed", "value": 1}, "num_requests": )" +
      std::to_string(c.requests) + "}}");
  SimulationOutput out;
  const RunSummary s = testing::RunScenario(sc, &out);
  ASSERT_EQ(s.completed, c.requests);
  double rho = 0;
  const double pk_wait_ms = PollaczekKhinchineWaitMs(out, rate, per_token, &rho);
  EXPECT_NEAR(s.queue_ms.mean, pk_wait_ms, 0.03 * pk_wait_ms) << c.name << " rho " << rho;
  EXPECT_NEAR(s.gpu_busy_fraction, rho, 0.02);
}

INSTANTIATE_TEST_SUITE_P(
    Sglang, SglangPollaczekKhinchine,
    ::testing::Values(
        SglangCase{"MD1_rho08_normal", R"({"dist": "fixed", "value": 1000})", false, 0.8, 1000000},
        SglangCase{"MD1_rho08_overlap", R"({"dist": "fixed", "value": 1000})", true, 0.8, 1000000},
        SglangCase{"MG1exp_rho05_normal", R"({"dist": "exponential", "mean": 1000})", false, 0.5,
                   400000}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace servesim
