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
            "activation_reserve_gib, prefix_caching, async_scheduling, "
            "reserve_full_prompt, long_prefill_token_threshold, watermark, "
            "kv_beyond_gpu_memory, kv_cache_dtype, kv_offload, speculative_decoding, kind, "
            "pipeline_decode_balance");
  EXPECT_EQ(ErrorOf(d, {"workload.arrival.rate=0"}),
            "s.json: /workload/arrival/rate: expected a number in [1e-06, "
            "1e+09], got 0");
  EXPECT_EQ(ErrorOf(d, {"engine.gpu_memory_utilization=1.5"}),
            "s.json: /engine/gpu_memory_utilization: expected a number in (0, 1], got 1.5");
  EXPECT_EQ(ErrorOf(d, {"engine.preemption=paging"}),
            "s.json: /engine/preemption: expected one of recompute, swap, got \"paging\"");
  EXPECT_EQ(ErrorOf(d, {"engine.preemption=swap"}),
            "s.json: /engine/preemption: expected \"recompute\": \"swap\" needs "
            "/engine/kv_offload (its cpu_gib is the swap space)");
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

// capacity --candidates and search --gpus/--tp replace the hardware, so
// they parse the scenario with the fit check deferred: the reason is kept
// (a short note and the strict error), and the scenario cannot be run.
TEST(Scenario, DeferredFitRecordsWhyTheModelDoesNotFit) {
  const std::vector<std::string> big = {"model=llama-3.1-70b"};  // on one H200
  auto sc = ParseScenario(EmbeddedDefaultScenario(), "s.json", big, {.defer_fit = true});
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  ASSERT_TRUE(sc->no_room.has_value());
  EXPECT_EQ(sc->engine.num_gpu_blocks, 0);
  const NoRoom& r = *sc->no_room;
  EXPECT_NE(r.note.find("GiB of weights + "), std::string::npos) << r.note;
  EXPECT_NE(r.note.find("GiB usable"), std::string::npos) << r.note;
  EXPECT_EQ(r.note.find("s.json"), std::string::npos) << r.note;  // short
  EXPECT_EQ(r.message, ErrorOf(EmbeddedDefaultScenario(), big));
  EXPECT_NE(r.message.find("s.json: /hardware/tp: llama-3.1-70b does not fit"),
            std::string::npos) << r.message;
  EXPECT_DEATH(sc->ToSimulationInput(), "does not fit");
  // An engine key's reserve: the note says which key to lower.
  auto seqs = ParseScenario(EmbeddedDefaultScenario(), "s.json",
                            {"engine.max_num_seqs=1048576"}, {.defer_fit = true});
  ASSERT_TRUE(seqs.ok()) << seqs.status().message();
  ASSERT_TRUE(seqs->no_room.has_value());
  EXPECT_NE(seqs->no_room->note.find("expected a smaller max_num_seqs"), std::string::npos);
  // A scenario that fits has none; other errors stay errors.
  auto fits = ParseScenario(EmbeddedDefaultScenario(), "s.json", {}, {.defer_fit = true});
  ASSERT_TRUE(fits.ok());
  EXPECT_FALSE(fits->no_room.has_value());
  EXPECT_FALSE(ParseScenario(EmbeddedDefaultScenario(), "s.json", {"hardware.tp=3"},
                             {.defer_fit = true})
                   .ok());
}

// hardware.gpu takes an alias; an unknown name names the file and JSON
// path and the nearest shipped GPU.
TEST(Scenario, GpuAliasesAndUnknownGpuNames) {
  auto sc = ParseScenario(EmbeddedDefaultScenario(), "s.json", {"hardware.gpu=h100"});
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  EXPECT_EQ(sc->gpu.name, "h100-sxm");
  const std::string e = ErrorOf(EmbeddedDefaultScenario(), {"hardware.gpu=h100-nvl"});
  EXPECT_EQ(e.rfind("s.json: /hardware/gpu: unknown GPU \"h100-nvl\" (did you mean "
                    "\"h100-pcie\" or \"h100-sxm\"?); available: a100-40gb, a100-80gb, "
                    "b200, h100-pcie, h100-sxm, h200, l4, l40s, rtx-4090, rtx-pro-6000",
                    0),
            0u)
      << e;
  const std::string m = ErrorOf(EmbeddedDefaultScenario(), {"model=llama-3.1-9b"});
  EXPECT_EQ(m.rfind("s.json: /model: unknown model \"llama-3.1-9b\" (did you mean", 0), 0u)
      << m;
}

// vllm serve's batch limits depend on the GPU (EngineArgs.get_batch_defaults
// in vLLM 0.9 to 0.33): 1024 running requests and an 8192-token budget on a
// GPU of 70 GiB or more that is not an A100, else 256 and 2048. A scenario's
// own value wins, each limit on its own; a disaggregated pool on another GPU
// takes that GPU's; SGLang keeps its own defaults.
TEST(Scenario, VllmBatchLimitsDefaultByGpuAsVllmServeSetsThem) {
  const std::string d = EmbeddedDefaultScenario();
  struct Case {
    const char* gpu;
    int seqs, tokens;
  };
  for (const Case c : {Case{"h200", 1024, 8192}, Case{"h100-sxm", 1024, 8192},
                       Case{"h100-pcie", 1024, 8192}, Case{"b200", 1024, 8192},
                       Case{"rtx-pro-6000", 1024, 8192}, Case{"a100-80gb", 256, 2048},
                       Case{"a100-40gb", 256, 2048}, Case{"l40s", 256, 2048},
                       Case{"l4", 256, 2048}, Case{"rtx-4090", 256, 2048}}) {
    auto sc = ParseScenario(d, "d", {"model=qwen2.5-1.5b", std::string("hardware.gpu=") + c.gpu});
    ASSERT_TRUE(sc.ok()) << c.gpu << ": " << sc.status().message();
    EXPECT_EQ(sc->engine.max_num_seqs, c.seqs) << c.gpu;
    EXPECT_EQ(sc->engine.max_num_batched_tokens, c.tokens) << c.gpu;
  }
  auto given = ParseScenario(d, "d", {"hardware.gpu=l40s", "engine.max_num_seqs=64"});
  ASSERT_TRUE(given.ok()) << given.status().message();
  EXPECT_EQ(given->engine.max_num_seqs, 64);
  EXPECT_EQ(given->engine.max_num_batched_tokens, 2048);
  given = ParseScenario(d, "d", {"engine.max_num_batched_tokens=512"});
  ASSERT_TRUE(given.ok()) << given.status().message();
  EXPECT_EQ(given->engine.max_num_seqs, 1024);
  EXPECT_EQ(given->engine.max_num_batched_tokens, 512);

  auto pd = ParseScenario(
      d, "d",
      {R"(disaggregation={"prefill": {"replicas": 1}, "decode": {"gpu": "l40s", "replicas": 1},
          "link": "infiniband-ndr-400g"})",
       "model=qwen2.5-1.5b"});
  ASSERT_TRUE(pd.ok()) << pd.status().message();
  EXPECT_EQ(pd->disagg->prefill.engine.max_num_seqs, 1024);
  EXPECT_EQ(pd->disagg->prefill.engine.max_num_batched_tokens, 8192);
  EXPECT_EQ(pd->disagg->decode.engine.max_num_seqs, 256);
  EXPECT_EQ(pd->disagg->decode.engine.max_num_batched_tokens, 2048);

  auto sglang = ParseScenario(d, "d", {R"(engine={"kind": "sglang"})"});
  ASSERT_TRUE(sglang.ok()) << sglang.status().message();
  EXPECT_EQ(sglang->engine.max_num_seqs, sglang->engine.sglang.max_running_requests);
}

// hardware.ep: MoE only, a multiple of tp dividing the experts, whole
// groups of data-parallel replicas, not with disaggregation.
TEST(Scenario, ExpertParallelChecks) {
  const std::vector<std::string> moe = {"model=qwen3-30b-a3b", "hardware.gpu=h200"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> sets = moe;
    sets.insert(sets.end(), extra.begin(), extra.end());
    return sets;
  };
  auto ok = ParseScenario(EmbeddedDefaultScenario(), "s.json",
                          with({"hardware.ep=2", "cluster.replicas=2"}));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->model.expert_parallel, 2);
  EXPECT_EQ(ok->model.ExpertDataParallel(ok->tp), 2);
  EXPECT_NE(ErrorOf(EmbeddedDefaultScenario(), {"hardware.ep=2"})
                .find("/hardware/ep: expected 1: llama-3.1-8b has no experts to spread"),
            std::string::npos);
  EXPECT_NE(ErrorOf(EmbeddedDefaultScenario(), with({"hardware.ep=3"}))
                .find("/hardware/ep: expected a multiple of tp (1) that divides "
                      "qwen3-30b-a3b's 128 experts"),
            std::string::npos);
  EXPECT_NE(ErrorOf(EmbeddedDefaultScenario(), with({"hardware.ep=2"}))
                .find("cluster.replicas a multiple of 2 (got 1)"),
            std::string::npos);
  // ep = tp: experts spread over one replica's GPUs, no replicas needed.
  EXPECT_TRUE(ParseScenario(EmbeddedDefaultScenario(), "s.json",
                            with({"hardware.tp=2", "hardware.ep=2"}))
                  .ok());
}

// Issue 10: values whose sums overflowed int64 nanoseconds, lengths whose
// sums overflowed int32, and block counts that exhausted memory are errors
// naming the path and the bound.
TEST(Scenario, TimesAreBoundedFarFromOverflow) {
  const std::string d = EmbeddedDefaultScenario();
  EXPECT_EQ(ErrorOf(d, {"workload.duration_s=1e10"}),
            "s.json: /workload/duration_s: expected a number in [0, 1e+08], "
            "got 1e+10");
  EXPECT_EQ(ErrorOf(d, {"metrics.warmup_s=1e308"}),
            "s.json: /metrics/warmup_s: expected a number in [0, 1e+08], got "
            "1e+308");
  EXPECT_EQ(ErrorOf(d, {R"(workload.arrival={"process": "closed", "concurrency": 2, "think_time_s": 1e12})"}),
            "s.json: /workload/arrival/think_time_s: expected a number in [0, "
            "1e+06], got 1e+12");
  EXPECT_EQ(ErrorOf(d, {"workload.num_requests=1000000", "workload.arrival.rate=0.001"}),
            "s.json: /workload/num_requests: expected at most 1e+08 s (3.2 "
            "years) of simulated traffic, got num_requests / rate = 1000000 / "
            "0.001/s = 1e+09 s; lower num_requests or set duration_s");
  // A duration bounds the run however slow the arrivals.
  auto ok = ParseScenario(d, "s.json",
                          {"workload.num_requests=1000000",
                           "workload.arrival.rate=0.001",
                           "workload.duration_s=1e8"});
  EXPECT_TRUE(ok.ok()) << ok.status().message();
}

TEST(Scenario, LengthsAndBlocksAreBounded) {
  const std::string d = EmbeddedDefaultScenario();
  EXPECT_EQ(ErrorOf(d, {R"(workload.input_len={"dist": "fixed", "value": 2147483638})"}),
            "s.json: /workload/input_len/value: expected an integer in [1, "
            "16777216], got 2147483638");
  EXPECT_EQ(ErrorOf(d, {"engine.num_gpu_blocks=1073741824"}),
            "s.json: /engine/num_gpu_blocks: expected an integer in [1, "
            "16777216], got 1073741824");
  // Within the range but beyond what the GPU can hold beside the weights:
  // an error naming the GPU's capacity (2 MiB blocks of Llama-3.1-8B).
  EXPECT_EQ(ErrorOf(d, {"engine.num_gpu_blocks=16777216"}),
            "s.json: /engine/num_gpu_blocks: 16777216 blocks of 2097152 bytes need "
            "32768.0 GiB of KV per GPU, but h200 holds 141.0 GiB with 15.0 GiB of "
            "llama-3.1-8b weights at tp 1; expected at most 64534 (or "
            "engine.kv_beyond_gpu_memory: true for a what-if)");
  EXPECT_TRUE(ParseScenario(d, "s.json",
                            {"engine.num_gpu_blocks=16777216", "engine.kv_beyond_gpu_memory=true"})
                  .ok());
  auto ok = ParseScenario(d, "s.json", {"engine.num_gpu_blocks=64534"});
  EXPECT_TRUE(ok.ok()) << ok.status().message();
}

TEST(Scenario, NoRoomForKvBlamesTheKeyThatTookIt) {
  const std::string d = EmbeddedDefaultScenario();
  std::string e = ErrorOf(d, {"engine.max_num_seqs=1048576"});
  EXPECT_EQ(e.rfind("s.json: /engine/max_num_seqs: no room for the KV cache", 0), 0u) << e;
  EXPECT_NE(e.find("expected a smaller max_num_seqs"), std::string::npos) << e;
  e = ErrorOf(d, {"engine.activation_reserve_gib=200"});
  EXPECT_EQ(e.rfind("s.json: /engine/activation_reserve_gib: no room", 0), 0u) << e;
  e = ErrorOf(d, {"engine.max_num_batched_tokens=16777216"});
  EXPECT_EQ(e.rfind("s.json: /engine/max_num_batched_tokens: no room", 0), 0u) << e;
}

TEST(Scenario, OverridesMustBeUtf8AndStrictJson) {
  const std::string d = EmbeddedDefaultScenario();
  EXPECT_EQ(ErrorOf(d, {"workload.arrival.process=\xff"}),
            "--set workload.arrival.process: invalid UTF-8");
  EXPECT_EQ(ErrorOf(d, {"workload.\xff=1"}),
            "--set workload.\xff: invalid UTF-8 in the key");
  EXPECT_EQ(ErrorOf(d, {R"(workload.arrival={"rate": 1, "rate": 2})"}),
            "--set workload.arrival: /workload/arrival/rate: duplicate key: "
            "\"rate\" is given twice in the same object; expected each key once");
  EXPECT_NE(ErrorOf(d, {"workload.arrival.rate=1e400"})
                .find("--set workload.arrival.rate: /workload/arrival/rate: "
                      "number out of range: 1e400"),
            std::string::npos);
}

TEST(Scenario, DuplicateKeysInTheFileAreErrors) {
  EXPECT_EQ(ErrorOf(R"({"seed": 1, "seed": 2})"),
            "s.json: /seed: duplicate key: \"seed\" is given twice in the "
            "same object; expected each key once");
}

TEST(Scenario, FilesThatAreNotFilesAreRefused) {
  auto dir = LoadScenarioFile(ResolveDataPath("scenarios"), {});
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("cannot open scenario file: is a directory"),
            std::string::npos);
  auto dev = LoadScenarioFile("/dev/zero", {});
  ASSERT_FALSE(dev.ok());
  EXPECT_EQ(dev.status().message(),
            "/dev/zero: cannot open scenario file: is a character device "
            "(expected a regular file)");
}

TEST(Scenario, ShippedScenariosAllLoad) {
  for (const char* f : {"scenarios/default_chat.json", "scenarios/closed_loop_chat.json",
                        "scenarios/burst_gamma.json", "scenarios/md1_teaching.json",
                        "scenarios/bench_chat_1m.json", "scenarios/sharegpt_lengths.json",
                        "scenarios/rag_shared_prefix.json", "scenarios/multi_turn_chat.json",
                        "scenarios/mooncake_replay.json", "scenarios/azure_conv_replay.json",
                        "scenarios/priority_classes.json",
                        "scenarios/spec_decoding_load.json", "scenarios/sglang_chat.json",
                        "scenarios/pipeline_70b.json"}) {
    auto sc = LoadScenarioFile(ResolveDataPath(f), {});
    EXPECT_TRUE(sc.ok()) << f << ": " << sc.status().message();
  }
}

}  // namespace
}  // namespace servesim
