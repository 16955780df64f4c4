// Deployment limits (sim/scenario/deploy_limits.h): the longest request a
// workload can send, the KV cache's tokens, --max-model-len from them; and
// the served Hugging Face id (model files' served_hf_id, the scenario's
// model.served_hf_id).
#include "sim/scenario/deploy_limits.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/core/paths.h"
#include "sim/engine/scheduler.h"

namespace servesim {
namespace {

Scenario Load(const std::string& file, const std::vector<std::string>& sets) {
  StatusOr<Scenario> sc = LoadScenarioFile(ResolveDataPath(file), sets);
  EXPECT_TRUE(sc.ok()) << sc.status().message();
  return sc.ok() ? *sc : Scenario{};
}

std::string ErrorOf(const std::string& file, const std::vector<std::string>& sets) {
  StatusOr<Scenario> sc = LoadScenarioFile(ResolveDataPath(file), sets);
  EXPECT_FALSE(sc.ok());
  return sc.ok() ? "" : sc.status().message();
}

TEST(ServedHfId, ModelFilesServeTheInstructVariants) {
  const std::vector<std::pair<std::string, std::string>> expect = {
      {"llama-3.1-8b", "meta-llama/Llama-3.1-8B-Instruct"},
      {"llama-3.1-70b", "meta-llama/Llama-3.1-70B-Instruct"},
      {"mixtral-8x7b", "mistralai/Mixtral-8x7B-Instruct-v0.1"},
      {"qwen2.5-7b", "Qwen/Qwen2.5-7B-Instruct"}};
  for (const auto& [model, id] : expect) {
    const Scenario sc = Load("scenarios/capacity_plan.json",
                             {"model=" + model, "hardware.tp=4", "hardware.gpu=h200"});
    EXPECT_EQ(sc.model.served_hf_id, id) << model;
  }
}

TEST(ServedHfId, TheScenarioOverridesItAndUnknownKeysStayErrors) {
  const Scenario sc = Load("scenarios/capacity_plan.json",
                           {"model.served_hf_id=acme/Llama-3.1-8B-FT"});
  EXPECT_EQ(sc.model.name, "llama-3.1-8b");
  EXPECT_EQ(sc.model.served_hf_id, "acme/Llama-3.1-8B-FT");
  const std::string typo =
      ErrorOf("scenarios/capacity_plan.json", {"model.served_hf=acme/x"});
  EXPECT_NE(typo.find("/model/served_hf"), std::string::npos) << typo;
  EXPECT_NE(typo.find("served_hf_id"), std::string::npos) << typo;  // the suggestion
  const std::string blank =
      ErrorOf("scenarios/capacity_plan.json", {"model.served_hf_id=a b"});
  EXPECT_NE(blank.find("/model/served_hf_id: expected a Hugging Face model id"),
            std::string::npos)
      << blank;
}

TEST(ServedHfId, AModelFileWithoutItServesItsSourceRepositoryElseItsName) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "servesim_served_hf_id_test";
  std::filesystem::create_directories(dir);
  const auto write = [&dir](const std::string& name, const std::string& source) {
    const std::string path = (dir / (name + ".json")).string();
    std::ofstream(path) << R"({"name": ")" << name << R"(", "source": ")" << source
                        << R"(", "num_layers": 2, "hidden_size": 64, "num_heads": 4,
        "num_kv_heads": 4, "head_dim": 16, "intermediate_size": 128,
        "vocab_size": 1000, "max_context": 4096})";
    return path;
  };
  const std::string hf =
      write("hf", "https://huggingface.co/acme/Tiny-1B/blob/main/config.json (by hand)");
  const std::string local = write("local", "made up for a test");
  EXPECT_EQ(Load("scenarios/capacity_plan.json", {"model=" + hf}).model.served_hf_id,
            "acme/Tiny-1B");
  EXPECT_EQ(Load("scenarios/capacity_plan.json", {"model=" + local}).model.served_hf_id,
            "local");
  std::filesystem::remove_all(dir);
}

TEST(LongestRequest, TheLengthClampsBoundIt) {
  const Scenario sc = Load("scenarios/capacity_plan.json",
                           {"workload.input_len.max=3000", "workload.output_len.max=1000"});
  const LongestRequest r = LongestRequestOf(sc);
  EXPECT_EQ(r.tokens, 4000);
  EXPECT_EQ(r.how, "input_len max 3000 + output_len max 1000");
  // Without a clamp the families' default max (1,000,000 each) bounds it.
  EXPECT_EQ(LongestRequestOf(Load("scenarios/capacity_plan.json", {})).tokens, 2000000);
}

TEST(LongestRequest, PrefixesClassesSessionsAndTraces) {
  // A common 500-token prefix before a fixed 100-token prompt.
  const Scenario prefixed = Load(
      "scenarios/capacity_plan.json",
      {R"(workload.input_len={"dist": "fixed", "value": 100})",
       R"(workload.output_len={"dist": "uniform", "min": 1, "max": 50})",
       R"(workload.prefix={"model": "random_prefix", "prefix_len": 500})"});
  EXPECT_EQ(LongestRequestOf(prefixed).tokens, 650);
  // Sessions of up to 3 turns: the third turn's prompt holds the first two
  // turns' 150 tokens each.
  const Scenario sessions = Load(
      "scenarios/capacity_plan.json",
      {R"(workload.input_len={"dist": "fixed", "value": 100})",
       R"(workload.output_len={"dist": "fixed", "value": 50})",
       R"(workload.sessions={"turns": {"dist": "uniform", "min": 1, "max": 3}})"});
  EXPECT_EQ(LongestRequestOf(sessions).tokens, 450);
  // Classes: the longest class.
  const Scenario classes = Load("scenarios/priority_classes.json", {});
  int64_t longest = 0;
  for (const RequestClass& c : classes.workload.classes) {
    longest = std::max<int64_t>(longest, int64_t{c.input_len->Max()} + c.output_len->Max());
  }
  EXPECT_EQ(LongestRequestOf(classes).tokens, longest);
  EXPECT_NE(LongestRequestOf(classes).how.find("class "), std::string::npos);
  // A trace: its longest record.
  const std::string trace =
      (std::filesystem::temp_directory_path() / "servesim_longest_trace.jsonl").string();
  std::ofstream(trace) << R"({"prompt_tokens": 10, "completion_tokens": 5}
{"prompt_tokens": 700, "completion_tokens": 77}
{"prompt_tokens": 20, "completion_tokens": 600}
)";
  const Scenario replay =
      Load("scenarios/capacity_plan.json",
           {"workload.input_len=null", "workload.output_len=null",
            R"(workload.trace={"path": ")" + trace +
                R"(", "format": "jsonl", "use_timestamps": false})"});
  const LongestRequest r = LongestRequestOf(replay);
  EXPECT_EQ(r.tokens, 777);
  EXPECT_NE(r.how.find("line 2"), std::string::npos) << r.how;
  std::filesystem::remove(trace);
}

TEST(MaxModelLen, SeventyBOnTwoH100sIsCappedAtTheKvCache) {
  const Scenario sc = Load("scenarios/capacity_plan.json",
                           {"model=llama-3.1-70b", "hardware.tp=2", "hardware.gpu=h100-sxm"});
  const MaxModelLen m = PlanMaxModelLen(sc);
  const int64_t kv = int64_t{sc.engine.num_gpu_blocks - Scheduler::kReservedBlocks} *
                     sc.engine.block_size;
  EXPECT_EQ(m.kv_tokens, kv);
  EXPECT_EQ(m.tokens, kv);
  EXPECT_LT(kv, sc.model.max_context);  // vLLM's default would not start
  EXPECT_NE(m.note.find("is all the KV cache holds"), std::string::npos) << m.note;
  EXPECT_NE(m.note.find("2000000 tokens"), std::string::npos) << m.note;
}

TEST(MaxModelLen, TheModelContextOrTheLongestRequestWhenSmaller) {
  // 8B on an H200: the cache holds far more than the model's context.
  const Scenario big = Load("scenarios/capacity_plan.json", {});
  const MaxModelLen ctx = PlanMaxModelLen(big);
  EXPECT_GT(ctx.kv_tokens, big.model.max_context);
  EXPECT_EQ(ctx.tokens, big.model.max_context);
  EXPECT_NE(ctx.note.find("context"), std::string::npos) << ctx.note;
  // Bounded lengths: exactly the longest request, nothing to say.
  const Scenario bounded = Load("scenarios/capacity_plan.json",
                                {"workload.input_len.max=3000", "workload.output_len.max=1000"});
  const MaxModelLen m = PlanMaxModelLen(bounded);
  EXPECT_EQ(m.tokens, 4000);
  EXPECT_EQ(m.note, "");
}

}  // namespace
}  // namespace servesim
