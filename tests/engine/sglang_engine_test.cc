// engine.kind "sglang" end to end: what a scenario may say (and the
// one-line refusals of what is not modelled), SGLang's defaults, and runs
// under the run-level invariants that show SGLang's admission rule against
// vLLM's. The batch-for-batch conformance of the replica is in
// sglang_conformance_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/sglang_pool.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

using testing::MustParse;
using testing::RunScenario;

// A tight pool under overload, linear costs: every request 1000 prompt
// tokens and 300 output tokens, 300 requests at once, a pool of 60,000
// tokens (about 46 whole requests).
std::string Overloaded(const std::string& engine) {
  return R"({"seed": 3, "model": "llama-3.1-8b", "hardware": {"gpu": "h200"},
             "cost_model": {"type": "linear", "step_s": 0.002, "prefill_token_s": 1e-6,
                            "decode_seq_s": 1e-5},
             "engine": )" + engine + R"(,
             "workload": {"arrival": {"process": "poisson", "rate": 1000},
                          "input_len": {"dist": "fixed", "value": 1000},
                          "output_len": {"dist": "fixed", "value": 300},
                          "num_requests": 300}})";
}

std::string Sglang(const std::string& settings) {
  return R"({"kind": "sglang", "sglang": {"max_total_tokens": 60000,
             "max_running_requests": 256)" + settings + "}}";
}

int64_t Preemptions(const SimulationOutput& out) {
  int64_t n = 0;
  for (const Request& r : out.requests) n += r.preemptions;
  return n;
}

double MeanRunning(const SimulationOutput& out) {
  double sum = 0;
  for (const StepRecord& s : out.steps) sum += s.num_running;
  return out.steps.empty() ? 0 : sum / static_cast<double>(out.steps.size());
}

// SGLang's default mem_fraction_static reserves 1.5 MiB a token of the
// largest extend: without chunking, a 32768-token max_prefill_tokens takes
// more than an L40S has, and SGLang would not start. The refusal names the
// setting and the way out (fuzzer seeds 901420, 902883 met it as a
// misleading "gpu_memory_utilization -0.0" at /hardware/tp).
TEST(SglangEngine, ADefaultFractionThatLeavesNoMemoryIsRefusedByName) {
  const auto l40s = [](const std::string& sglang) {
    return ParseScenario(Overloaded(R"({"kind": "sglang", "sglang": )" + sglang + "}"), "<test>",
                         {"hardware.gpu=l40s"});
  };
  const auto refused = l40s(R"({"chunked_prefill_size": -1, "max_prefill_tokens": 32768})");
  ASSERT_FALSE(refused.ok());
  const std::string& m = refused.status().message();
  EXPECT_NE(m.find("/engine/sglang/max_prefill_tokens: SGLang's default mem_fraction_static on "
                   "l40s"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("expected a chunked_prefill_size, a smaller max_prefill_tokens, or "
                   "mem_fraction_static given"),
            std::string::npos)
      << m;
  // Each way out runs.
  EXPECT_TRUE(l40s(R"({"chunked_prefill_size": -1, "max_prefill_tokens": 8192})").ok());
  EXPECT_TRUE(l40s(R"({"chunked_prefill_size": 4096, "max_prefill_tokens": 32768})").ok());
  EXPECT_TRUE(l40s(R"({"chunked_prefill_size": -1, "max_prefill_tokens": 32768,
                       "mem_fraction_static": 0.8})")
                  .ok());
}

TEST(SglangEngine, RefusesWhatIsNotModelledInOneLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"kind": "sglang", "max_num_seqs": 8})",
       "/engine/max_num_seqs: a vLLM setting; with engine.kind \"sglang\""},
      {R"({"sglang": {"page_size": 16}})", "/engine/sglang: SGLang's settings"},
      {R"({"kind": "sglang", "sglang": {"schedule_policy": "hrrn"}})",
       "/engine/sglang/schedule_policy: \"hrrn\" is not modelled yet"},
      {R"({"kind": "sglang", "sglang": {"page_size": 16, "chunked_prefill_size": 100}})",
       "/engine/sglang/chunked_prefill_size: expected a multiple of page_size (16)"},
      {R"({"kind": "sglang", "sglang": {"mystery": 1}})", "/engine/sglang/mystery"},
      {R"({"kind": "sgl"})", "/engine/kind"},
      // A pool the GPU cannot hold beside the weights (here 8 GB of them).
      {R"({"kind": "sglang", "sglang": {"max_total_tokens": 99999999}})",
       "/engine/sglang/max_total_tokens: 99999999 tokens of KV need"},
  };
  for (const auto& [engine, want] : cases) {
    const auto sc = ParseScenario(Overloaded(engine), "<test>", {});
    ASSERT_FALSE(sc.ok()) << engine;
    EXPECT_NE(sc.status().message().find(want), std::string::npos)
        << engine << " -> " << sc.status().message();
    EXPECT_EQ(sc.status().message().find('\n'), std::string::npos) << sc.status().message();
  }
  // A trace naming its blocks by hash is refused, not run as misses.
  const auto hashed = ParseScenario(Overloaded(Sglang("")), "<test>",
                                    {R"(workload={"trace": {"path": "../shared/traces/synthetic_trace.jsonl",
                                                  "format": "mooncake"}})"});
  ASSERT_FALSE(hashed.ok());
  EXPECT_NE(hashed.status().message().find(
                "/engine/kind: expected \"vllm\" for a trace that names its blocks by hash"),
            std::string::npos)
      << hashed.status().message();
}

// Shared prefixes hit SGLang's radix cache as they hit vLLM's prefix cache:
// half of every prompt shared (target_hit_rate 0.5), both engines serve
// about that share of prompt tokens from cache, and every order runs
// under the invariants.
TEST(SglangEngine, SharedPrefixesHitTheRadixCache) {
  const std::string prefix = R"(workload.prefix={"model": "target_hit_rate", "hit_rate": 0.5})";
  const auto hit_share = [](const SimulationOutput& out) {
    double cached = 0, prompt = 0;
    for (const Request& r : out.requests) {
      cached += std::max(r.cached_tokens, 0);
      prompt += r.prompt_len;
    }
    return cached / prompt;
  };
  SimulationOutput vllm;
  RunScenario(MustParse(Overloaded(R"({"prefix_caching": true, "num_gpu_blocks": 3751})"),
                        {prefix, "workload.arrival.rate=20"}),
              &vllm, true);
  for (const char* order : {"fcfs", "lpm", "dfs-weight", "random"}) {
    SCOPED_TRACE(order);
    SimulationOutput sgl;
    RunScenario(MustParse(Overloaded(Sglang(std::string(", \"schedule_policy\": \"") + order +
                                            "\"")),
                          {prefix, "workload.arrival.rate=20"}),
                &sgl, true);
    for (const Request& r : sgl.requests) ASSERT_EQ(r.status, RequestStatus::kFinished);
    EXPECT_GT(hit_share(sgl), 0.4);
    EXPECT_NEAR(hit_share(sgl), hit_share(vllm), 0.05);
  }
}

TEST(SglangEngine, DefaultsFollowSglang) {
  // A given pool: its pages, the request limit of SGLang's rule for it, and
  // the vLLM fields the invariants read.
  const Scenario given = MustParse(Overloaded(R"({"kind": "sglang", "sglang":
      {"max_total_tokens": 100000, "page_size": 16}})"));
  const EngineConfig& e = given.engine;
  EXPECT_EQ(e.kind, EngineKind::kSglang);
  EXPECT_EQ(e.sglang.max_total_tokens, 100000);
  // 100000 / 131072 x 512 = 390 requests, raised to SGLang's floor of 2048.
  EXPECT_EQ(e.sglang.max_running_requests, 2048);
  EXPECT_EQ(e.max_num_seqs, 2048);
  EXPECT_EQ(e.num_gpu_blocks, 100000 / 16 + 1);  // + vLLM's reserved block
  EXPECT_EQ(e.block_size, 16);
  EXPECT_EQ(e.sglang.chunked_prefill_size, 8192);  // an H200: 80-160 GB
  EXPECT_EQ(e.max_num_batched_tokens, 8192);
  EXPECT_EQ(e.sglang.max_prefill_tokens, 16384);
  EXPECT_FALSE(e.sglang.disable_overlap_schedule);
  EXPECT_TRUE(e.async_scheduling);  // the overlap loop runs one batch ahead
  EXPECT_TRUE(e.sglang_ignore_eos);

  // From memory: SGLang reserves max(512 MiB + 1.5 MiB x 8192 + 1/8 GiB +
  // 2 MiB x 256, 10 GiB) = 13440 MiB of an H200's memory.
  const Scenario mem = MustParse(Overloaded(R"({"kind": "sglang"})"));
  const double mib = mem.gpu.memory_bytes / (1024.0 * 1024.0);
  EXPECT_DOUBLE_EQ(mem.gpu_memory_utilization, std::round((mib - 13440) / mib * 1000) / 1000);
  const double kv_bytes = mem.gpu.memory_bytes * mem.gpu_memory_utilization -
                          mem.model.WeightBytesPerGpu(1);
  const auto tokens = static_cast<int64_t>(kv_bytes / mem.model.KvBytesPerTokenPerGpu(1));
  EXPECT_EQ(mem.engine.sglang.max_total_tokens, tokens);
  EXPECT_EQ(mem.engine.sglang.max_running_requests,
            SglangRequestLimit(tokens, mem.model.max_context, 0));
}

// SGLang's admission reserves each running request's remaining output
// (x the new-token ratio, or whole with ignore_eos); vLLM admits while the
// prompt's blocks fit and preempts when decodes run out. Under the same
// overload and the same pool: with ignore_eos SGLang never retracts and
// runs fewer requests at once than vLLM, which preempts; without it, the
// ratio (0.7, decaying) lets SGLang admit more than it can finish, and it
// retracts.
TEST(SglangEngine, AdmitsFewerThanVllmAndRetractsOnlyWhenTheRatioUnderReserves) {
  for (const char* loop : {"false", "true"}) {
    SCOPED_TRACE(std::string("disable_overlap_schedule ") + loop);
    SimulationOutput sgl, sgl_ratio, vllm;
    RunScenario(MustParse(Overloaded(Sglang(std::string(", \"disable_overlap_schedule\": ") +
                                            loop))),
                &sgl, true);
    RunScenario(MustParse(Overloaded(Sglang(std::string(", \"disable_overlap_schedule\": ") +
                                            loop + ", \"ignore_eos\": false"))),
                &sgl_ratio, true);
    RunScenario(MustParse(Overloaded(
                    R"({"num_gpu_blocks": 3751, "block_size": 16, "max_num_seqs": 256})")),
                &vllm, true);
    for (const SimulationOutput* o : {&sgl, &sgl_ratio, &vllm}) {
      for (const Request& r : o->requests) {
        ASSERT_EQ(r.status, RequestStatus::kFinished);
        ASSERT_EQ(r.num_output, 300);
      }
    }
    EXPECT_EQ(Preemptions(sgl), 0);
    EXPECT_GT(Preemptions(vllm), 0);
    EXPECT_GT(Preemptions(sgl_ratio), 0);
    EXPECT_LT(MeanRunning(sgl), MeanRunning(vllm));
    // ignore_eos reserves 300 output tokens per request: at most
    // 60000 / (1000 + 300 + 1) requests hold the pool at once.
    for (const StepRecord& s : sgl.steps) ASSERT_LE(s.num_running, 60000 / 1301 + 1);
  }
}

}  // namespace
}  // namespace servesim
