// Scenario loading: the embedded default, overrides, the memory plan, and
// one-line errors naming the JSON path.
#include "sim/scenario/scenario.h"

#include <gtest/gtest.h>

#include <fstream>

#include "sim/core/paths.h"

namespace servesim {
namespace {

std::string ErrorOf(const std::string& json,
                    const std::vector<std::string>& overrides = {}) {
  auto sc = ParseScenario(json, "s.json", overrides);
  EXPECT_FALSE(sc.ok());
  return sc.ok() ? "" : sc.status().message();
}

TEST(Scenario, EmbeddedDefaultEqualsTheShippedFile) {
  std::ifstream in(ResolveDataPath("scenarios/default_chat.json"));
  ASSERT_TRUE(in);
  std::string file((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(file, EmbeddedDefaultScenario());
  auto sc = ParseScenario(EmbeddedDefaultScenario(), "default", {});
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  EXPECT_EQ(sc->model.name, "llama-3.1-8b");
  EXPECT_EQ(sc->gpu.name, "h200");
  EXPECT_DOUBLE_EQ(sc->OfferedRate(), 10.0);
}

TEST(Scenario, KvBlocksFollowTheMemoryPlanByHand) {
  auto sc = ParseScenario(EmbeddedDefaultScenario(), "default", {});
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  // (memory * 0.9 - weights - reserve) / (16 tokens * 128 KiB per token).
  const double usable = sc->gpu.memory_bytes * 0.9;
  const double weights = 2.0 * sc->model.ParamCount();
  const double block = 16 * 131072.0;
  const double expect = std::floor((usable - weights - sc->activation_reserve_bytes) / block);
  EXPECT_EQ(sc->engine.num_gpu_blocks, static_cast<int32_t>(expect));
  // Sanity against vLLM's logs for this setup: on the order of 100 GiB of
  // KV cache (~ 50k blocks of 16 tokens).
  EXPECT_GT(sc->engine.num_gpu_blocks, 40000);
  EXPECT_LT(sc->engine.num_gpu_blocks, 60000);
}

TEST(Scenario, NumGpuBlocksCanBeSetToMatchAnEngineLog) {
  auto sc = ParseScenario(EmbeddedDefaultScenario(), "d",
                          {"engine.num_gpu_blocks=27000"});
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  EXPECT_EQ(sc->engine.num_gpu_blocks, 27000);
  EXPECT_TRUE(sc->num_gpu_blocks_given);
}

TEST(Scenario, OverridesCreateAndReplaceValues) {
  auto sc = ParseScenario(EmbeddedDefaultScenario(), "d",
                          {"workload.arrival.rate=12", "engine.policy=fcfs",
                           "metrics.warmup_s=30",
                           R"(workload.input_len={"dist": "fixed", "value": 7})"});
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  EXPECT_DOUBLE_EQ(sc->OfferedRate(), 12.0);
  EXPECT_DOUBLE_EQ(sc->metrics.warmup_s, 30.0);
  Rng rng(1, "x");
  EXPECT_EQ(sc->workload.input_len->Sample(rng), 7);
}

TEST(Scenario, ErrorsNameTheJsonPathAndSuggest) {
  const std::string d = EmbeddedDefaultScenario();
  EXPECT_EQ(ErrorOf(d, {"engine.max_num_seq=3"}),
            "s.json: /engine/max_num_seq: unknown key (did you mean "
            "\"max_num_seqs\"?); expected one of max_num_seqs, "
            "max_num_batched_tokens, chunked_prefill, block_size, "
            "gpu_memory_utilization, num_gpu_blocks, preemption, policy, "
            "activation_reserve_gib, prefix_caching");
  EXPECT_EQ(ErrorOf(d, {"workload.arrival.rate=0"}),
            "s.json: /workload/arrival/rate: expected a number > 0, got 0");
  EXPECT_EQ(ErrorOf(d, {"engine.gpu_memory_utilization=1.5"}),
            "s.json: /engine/gpu_memory_utilization: expected a number in (0, 1], got 1.5");
  EXPECT_EQ(ErrorOf(d, {"engine.preemption=swap"}),
            "s.json: /engine/preemption: expected one of recompute, got \"swap\"");
  EXPECT_EQ(ErrorOf(d, {"hardware.tp=5"}),
            "s.json: /hardware/tp: expected a divisor of llama-3.1-8b's 32 "
            "attention heads, got 5");
  EXPECT_NE(ErrorOf(d, {"engine.policy=fifo"}).find("did you mean \"fcfs\""),
            std::string::npos);
  EXPECT_NE(ErrorOf(d, {"workload.max_concurrency=-1"}).find("/workload/max_concurrency"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{\"seed\": 1,,}").find("s.json: invalid JSON: parse error at line 1"),
            std::string::npos);
}

TEST(Scenario, ModelThatDoesNotFitIsAnError) {
  const std::string e = ErrorOf(EmbeddedDefaultScenario(),
                                {"model=llama-3.1-70b", "hardware.gpu=h100-sxm"});
  EXPECT_NE(e.find("/hardware/tp: llama-3.1-70b does not fit"), std::string::npos) << e;
  auto ok = ParseScenario(EmbeddedDefaultScenario(), "d",
                          {"model=llama-3.1-70b", "hardware.gpu=h100-sxm",
                           "hardware.tp=4"});
  EXPECT_TRUE(ok.ok()) << ok.status().message();
}

TEST(Scenario, ShippedScenariosAllLoad) {
  for (const char* f : {"scenarios/default_chat.json", "scenarios/closed_loop_chat.json",
                        "scenarios/burst_gamma.json", "scenarios/md1_teaching.json",
                        "scenarios/bench_chat_1m.json", "scenarios/sharegpt_lengths.json",
                        "scenarios/rag_shared_prefix.json", "scenarios/multi_turn_chat.json",
                        "scenarios/mooncake_replay.json", "scenarios/azure_conv_replay.json"}) {
    auto sc = LoadScenarioFile(ResolveDataPath(f), {});
    EXPECT_TRUE(sc.ok()) << f << ": " << sc.status().message();
  }
}

}  // namespace
}  // namespace servesim
