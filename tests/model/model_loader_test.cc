// Tests of model/GPU spec loading: the shipped data against published sizes
// and datasheets, and every kind of bad file against its error message.
#include "sim/model/model_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/core/status.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

// Published total parameter counts from the model cards.
TEST(ModelSpecTest, ParamCountsMatchModelCards) {
  const struct {
    const char* name;
    double published;
  } cases[] = {{"llama-3.1-8b", 8.03e9},
               {"llama-3.1-70b", 70.6e9},
               {"qwen2.5-7b", 7.61e9},
               {"mixtral-8x7b", 46.7e9},
               {"qwen3-32b", 32.8e9},
               {"qwen3-30b-a3b", 30.5e9}};
  for (const auto& c : cases) {
    const ModelSpec m = LoadModelSpec(c.name);
    EXPECT_NEAR(m.ParamCount(), c.published, 0.01 * c.published) << c.name;
  }
}

// Mistral quotes 12.9B active parameters per token (2 of 8 experts).
TEST(ModelSpecTest, MixtralActiveParamsMatchAnnouncement) {
  const ModelSpec m = LoadModelSpec("mixtral-8x7b");
  ASSERT_TRUE(m.is_moe());
  const double one_expert = m.MlpParamsPerLayer() / 8.0;  // router is ~0
  const double inactive = m.num_layers * 6 * one_expert;
  EXPECT_NEAR(m.ParamCount() - inactive, 12.9e9, 0.01 * 12.9e9);
}

// Qwen3-30B-A3B: 8 of 128 experts per token; the card says 3.3B activated.
// Computed here from its config: attention 2048x(4096+512+512) + 4096x2048,
// a router 2048x128 and 8 experts of 3x2048x768 per layer, 48 layers, and
// untied embeddings 2x151936x2048.
TEST(ModelSpecTest, Qwen3MoeActiveParams) {
  const ModelSpec m = LoadModelSpec("qwen3-30b-a3b");
  ASSERT_TRUE(m.is_moe());
  const double attention = 2048.0 * (4096 + 512 + 512) + 4096.0 * 2048;
  const double active_layer = attention + 2048.0 * 128 + 8 * 3 * 2048.0 * 768;
  const double active = 48 * active_layer + 2 * 151936.0 * 2048;
  const double one_expert = 3 * 2048.0 * 768;
  EXPECT_NEAR(m.ParamCount() - 48 * 120 * one_expert, active, 0.005 * active);
  EXPECT_NEAR(active, 3.3e9, 0.02 * 3.3e9);
  // KV: 2 x 48 layers x 4 KV heads x 128 x 2 bytes = 96 KiB per token.
  EXPECT_EQ(m.KvBytesPerTokenPerGpu(1), 2 * 48 * 4 * 128 * 2);
  // Qwen3-32B: 2 x 64 x 8 x 128 x 2 = 256 KiB per token.
  EXPECT_EQ(LoadModelSpec("qwen3-32b").KvBytesPerTokenPerGpu(1), 256 * 1024);
}

TEST(ModelSpecTest, KvBytesPerToken) {
  const ModelSpec m = LoadModelSpec("llama-3.1-8b");
  // 2 (K,V) * 32 layers * 8 KV heads * 128 dims * 2 bytes.
  EXPECT_EQ(m.KvBytesPerTokenPerGpu(1), 131072);
  EXPECT_EQ(m.KvBytesPerTokenPerGpu(2), 65536);
  EXPECT_EQ(m.KvBytesPerTokenPerGpu(8), 16384);
  // Beyond 8 GPUs each still holds one (replicated) KV head.
  EXPECT_EQ(m.KvBytesPerTokenPerGpu(16), 16384);
  // Llama-3.1-70B: the widely quoted 320 KiB per token.
  EXPECT_EQ(LoadModelSpec("llama-3.1-70b").KvBytesPerTokenPerGpu(1),
            320 * 1024);
}

TEST(ModelSpecTest, WeightBytesSplitAcrossGpus) {
  const ModelSpec m = LoadModelSpec("llama-3.1-70b");
  // bf16: about 141 GB at tp 1, an eighth of it at tp 8 (KV heads divide).
  EXPECT_NEAR(m.WeightBytesPerGpu(1), 2 * 70.6e9, 0.01 * 2 * 70.6e9);
  EXPECT_NEAR(m.WeightBytesPerGpu(8), m.WeightBytesPerGpu(1) / 8, 1e3);
  // At tp 16 the 8 KV heads are replicated, so a GPU holds more than 1/16.
  const ModelSpec small = LoadModelSpec("llama-3.1-8b");
  EXPECT_GT(small.WeightBytesPerGpu(16), small.WeightBytesPerGpu(1) / 16);
}

TEST(GpuSpecTest, DatasheetNumbers) {
  const GpuSpec h100 = LoadGpuSpec("h100-sxm");
  EXPECT_DOUBLE_EQ(h100.memory_bytes, 80.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(h100.hbm_bytes_per_s, 3.35e12);
  EXPECT_DOUBLE_EQ(h100.bf16_flops, 989e12);
  EXPECT_DOUBLE_EQ(h100.interconnect_bytes_per_s, 450e9);  // 900 GB/s total
  const GpuSpec h200 = LoadGpuSpec("h200");
  EXPECT_DOUBLE_EQ(h200.hbm_bytes_per_s, 4.8e12);
  EXPECT_DOUBLE_EQ(h200.bf16_flops, 989e12);
  EXPECT_DOUBLE_EQ(LoadGpuSpec("a100-80gb").interconnect_bytes_per_s, 300e9);
  EXPECT_DOUBLE_EQ(LoadGpuSpec("a100-80gb").bf16_flops, 312e12);
  EXPECT_DOUBLE_EQ(LoadGpuSpec("l40s").interconnect_bytes_per_s, 32e9);
  EXPECT_DOUBLE_EQ(LoadGpuSpec("l40s").hbm_bytes_per_s, 864e9);
  EXPECT_DOUBLE_EQ(LoadGpuSpec("b200").interconnect_bytes_per_s, 900e9);
  EXPECT_DOUBLE_EQ(LoadGpuSpec("b200").bf16_flops, 2250e12);
  // PCIe-only cards: the link is PCIe, one direction.
  EXPECT_DOUBLE_EQ(LoadGpuSpec("rtx-pro-6000").interconnect_bytes_per_s, 64e9);
  EXPECT_DOUBLE_EQ(LoadGpuSpec("rtx-pro-6000").hbm_bytes_per_s, 1.792e12);
  EXPECT_NEAR(LoadGpuSpec("rtx-pro-6000").memory_bytes, 97887.0 * 1048576,
              1e6);
  EXPECT_NEAR(LoadGpuSpec("rtx-4090").memory_bytes, 25250627584.0, 1e6);
  EXPECT_DOUBLE_EQ(LoadGpuSpec("rtx-4090").bf16_flops, 165.2e12);
  EXPECT_DOUBLE_EQ(LoadGpuSpec("h100-pcie").interconnect_bytes_per_s, 300e9);
  EXPECT_DOUBLE_EQ(LoadGpuSpec("l4").hbm_bytes_per_s, 300e9);
  EXPECT_DOUBLE_EQ(LoadGpuSpec("l4").fp8_flops, 242.5e12);
  EXPECT_DOUBLE_EQ(LoadGpuSpec("a100-40gb").hbm_bytes_per_s, 1.555e12);
  EXPECT_DOUBLE_EQ(LoadGpuSpec("a100-40gb").memory_bytes, 40.0 * (1 << 30));
}

TEST(LoaderTest, ListsShippedData) {
  const auto models = AvailableModels();
  for (const char* n :
       {"llama-3.1-8b", "llama-3.1-70b", "qwen2.5-7b", "mixtral-8x7b"}) {
    EXPECT_NE(std::find(models.begin(), models.end(), n), models.end()) << n;
  }
  const auto gpus = AvailableGpus();
  for (const char* n : {"h100-sxm", "h200", "a100-80gb", "l40s", "b200"}) {
    EXPECT_NE(std::find(gpus.begin(), gpus.end(), n), gpus.end()) << n;
  }
  // Every shipped file loads and is named after itself.
  for (const auto& n : models) EXPECT_EQ(LoadModelSpec(n).name, n);
  for (const auto& n : gpus) EXPECT_EQ(LoadGpuSpec(n).name, n);
}

// GPU names as users type them: an alias of a shipped GPU, another case.
TEST(LoaderTest, GpuAliasesResolveToShippedGpus) {
  EXPECT_EQ(LoadGpuSpec("h100").name, "h100-sxm");
  EXPECT_EQ(LoadGpuSpec("a100").name, "a100-80gb");
  EXPECT_EQ(LoadGpuSpec("H200").name, "h200");
  EXPECT_EQ(FindGpuName("h100"), "h100-sxm");
  EXPECT_EQ(FindGpuName("H100_SXM"), "h100-sxm");
  EXPECT_EQ(FindGpuName("h200"), "h200");
  EXPECT_EQ(FindGpuName("h100-pcie"), "h100-pcie");  // its own file
  EXPECT_EQ(FindGpuName("RTXPRO6000"), "rtx-pro-6000");
  EXPECT_EQ(FindGpuName("h100-nvl"), "");  // another GPU: never an alias
  EXPECT_EQ(FindModelName("Llama-3.1-8B"), "llama-3.1-8b");
  EXPECT_EQ(FindModelName("llama-3.1-9b"), "");
  // Hugging Face ids: the served one and the config's repository, any case;
  // an id of another model is none.
  EXPECT_EQ(FindModelName("meta-llama/Llama-3.1-8B-Instruct"), "llama-3.1-8b");
  EXPECT_EQ(FindModelName("meta-llama/Llama-3.1-70B"), "llama-3.1-70b");
  EXPECT_EQ(FindModelName("qwen/qwen2.5-7b-instruct"), "qwen2.5-7b");
  EXPECT_EQ(FindModelName("mistralai/Mixtral-8x7B-Instruct-v0.1"), "mixtral-8x7b");
  EXPECT_EQ(FindModelName("meta-llama/Llama-3.1-405B-Instruct"), "llama-3.1-405b");
  EXPECT_EQ(FindModelName("meta-llama/Llama-2-7b-chat-hf"), "");
  EXPECT_NE(UnknownModelText("meta-llama/Llama-3.1-8B-Instrct")
                .find("did you mean \"llama-3.1-8b\"?"),
            std::string::npos)
      << UnknownModelText("meta-llama/Llama-3.1-8B-Instrct");
  // Every alias names a GPU that ships, and no shipped name is an alias.
  const auto gpus = AvailableGpus();
  ASSERT_FALSE(GpuAliases().empty());
  for (const auto& [alias, target] : GpuAliases()) {
    EXPECT_NE(std::find(gpus.begin(), gpus.end(), target), gpus.end()) << alias;
    EXPECT_EQ(std::find(gpus.begin(), gpus.end(), alias), gpus.end()) << alias;
    EXPECT_EQ(LoadGpuSpec(alias).name, target) << alias;
  }
}

// "h100" once drew "did you mean h200" (one letter away); the nearest names
// now count aliases and, past a typo, the longest shared prefix.
TEST(LoaderTest, UnknownGpuSuggestsTheNearestShippedNames) {
  EXPECT_NE(UnknownGpuText("h100x").find("(did you mean \"h100-sxm\"?)"), std::string::npos)
      << UnknownGpuText("h100x");
  EXPECT_NE(UnknownGpuText("h100-nvl").find(
                "(did you mean \"h100-pcie\" or \"h100-sxm\"?)"),
            std::string::npos)
      << UnknownGpuText("h100-nvl");
  EXPECT_NE(UnknownGpuText("b20").find("(did you mean \"b200\"?)"), std::string::npos);
  // Nothing near: no guess, but every shipped name and alias.
  const std::string t = UnknownGpuText("tpu-v5e");
  EXPECT_EQ(t.rfind("unknown GPU \"tpu-v5e\"; available: ", 0), 0u) << t;
  for (const auto& n : AvailableGpus()) EXPECT_NE(t.find(n), std::string::npos) << n;
  EXPECT_NE(t.find("; aliases: "), std::string::npos) << t;
  EXPECT_NE(t.find("a100, a100-sxm = a100-80gb; "), std::string::npos) << t;
  EXPECT_NE(t.find("; h100, h100-sxm5 = h100-sxm; "), std::string::npos) << t;
  // A model a version away, by edit distance.
  EXPECT_NE(UnknownModelText("llama-3-70b").find("did you mean \"llama-3.1-70b\"?"),
            std::string::npos)
      << UnknownModelText("llama-3-70b");
}

// The message of the ConfigError fn throws ("" if it throws none).
template <typename Fn>
std::string ErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

class BadFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("servesim_model_loader_test_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  // A valid dense model with one field replaced (or added).
  std::string ModelWith(const std::string& key, const nlohmann::json& value) {
    nlohmann::json j = {{"name", "tiny"},    {"source", "test"},
                        {"num_layers", 2},   {"hidden_size", 64},
                        {"num_heads", 8},    {"num_kv_heads", 2},
                        {"head_dim", 8},     {"intermediate_size", 128},
                        {"vocab_size", 100}, {"max_context", 256}};
    j[key] = value;
    return Write("model.json", j.dump());
  }

  fs::path dir_;
};

TEST_F(BadFileTest, ValidFileByPathLoads) {
  const ModelSpec m = LoadModelSpec(ModelWith("num_experts", 1));
  EXPECT_EQ(m.name, "tiny");
  EXPECT_EQ(m.num_experts, 1);
  EXPECT_EQ(m.dtype_bytes, 2);
}

TEST_F(BadFileTest, UnknownModelNameSuggestsNearest) {
  const std::string e = ErrorOf([] { LoadModelSpec("llama-3.1-8"); });
  EXPECT_NE(e.find("unknown model \"llama-3.1-8\""), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean \"llama-3.1-8b\""), std::string::npos) << e;
  EXPECT_NE(e.find("mixtral-8x7b"), std::string::npos) << e;  // the list
  const std::string g = ErrorOf([] { LoadGpuSpec("h20"); });
  EXPECT_NE(g.find("did you mean \"h200\""), std::string::npos) << g;
  const std::string h = ErrorOf([] { LoadGpuSpec("h100x"); });
  EXPECT_EQ(h.rfind("models/gpu: unknown GPU \"h100x\" (did you mean \"h100-sxm\"?)", 0), 0u)
      << h;
}

TEST_F(BadFileTest, MissingFile) {
  const std::string path = (dir_ / "absent.json").string();
  const std::string e = ErrorOf([&] { LoadModelSpec(path); });
  EXPECT_NE(e.find(path + ": cannot open"), std::string::npos) << e;
}

TEST_F(BadFileTest, MalformedJsonReportsPosition) {
  const std::string path =
      Write("bad.json", "{\n  \"name\": \"x\",\n  oops\n}");
  const std::string e = ErrorOf([&] { LoadModelSpec(path); });
  EXPECT_EQ(e.rfind(path + ": invalid JSON", 0), 0u) << e;
  EXPECT_NE(e.find("line 3"), std::string::npos) << e;
}

TEST_F(BadFileTest, UnknownKeySuggestsNearest) {
  const std::string path = ModelWith("num_layer", 2);
  const std::string e = ErrorOf([&] { LoadModelSpec(path); });
  EXPECT_NE(e.find(path + ": /num_layer: unknown key"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean \"num_layers\""), std::string::npos) << e;
}

TEST_F(BadFileTest, WrongTypesAndImpossibleValues) {
  struct Case {
    std::string key;
    nlohmann::json value;
    std::string want;
  };
  const Case cases[] = {
      {"hidden_size", "64", "/hidden_size: expected an integer"},
      {"hidden_size", 0, "/hidden_size: expected an integer in [1"},
      {"num_layers", -3, "/num_layers: expected an integer in [1"},
      {"head_dim", 8.5, "/head_dim: expected an integer"},
      {"num_heads", 7, "/num_heads: expected a multiple of num_kv_heads (2)"},
      {"experts_per_token", 2, "/experts_per_token: expected at most"},
      {"tie_word_embeddings", 1, "/tie_word_embeddings: expected true or"},
  };
  for (const Case& c : cases) {
    const std::string path = ModelWith(c.key, c.value);
    const std::string e = ErrorOf([&] { LoadModelSpec(path); });
    EXPECT_NE(e.find(path + ": " + c.want), std::string::npos)
        << c.key << ": " << e;
  }
}

TEST_F(BadFileTest, BadGpuFile) {
  nlohmann::json j = {{"name", "g"},
                      {"source", "test"},
                      {"memory_gib", 80},
                      {"hbm_tb_per_s", 3},
                      {"bf16_dense_tflops", 900},
                      {"interconnect_gb_per_s", 900},
                      {"interconnect_direction", "bidirectional_totl"}};
  std::string path = Write("gpu.json", j.dump());
  std::string e = ErrorOf([&] { LoadGpuSpec(path); });
  EXPECT_NE(e.find("/interconnect_direction: expected one of"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("did you mean \"bidirectional_total\""), std::string::npos)
      << e;
  j["interconnect_direction"] = "per_direction";
  j["memory_gib"] = -80;
  path = Write("gpu.json", j.dump());
  e = ErrorOf([&] { LoadGpuSpec(path); });
  EXPECT_NE(e.find("/memory_gib: expected a number in [1, 100000], got -80"),
            std::string::npos)
      << e;
  // Absurd sizes are refused: 1e308 GiB overflowed the KV block count.
  j["memory_gib"] = 1e308;
  path = Write("gpu.json", j.dump());
  e = ErrorOf([&] { LoadGpuSpec(path); });
  EXPECT_NE(e.find("/memory_gib: expected a number in [1, 100000], got 1e+308"),
            std::string::npos)
      << e;
  j["memory_gib"] = 80;
  j["hbm_tb_per_s"] = 1e-308;
  path = Write("gpu.json", j.dump());
  e = ErrorOf([&] { LoadGpuSpec(path); });
  EXPECT_NE(e.find("/hbm_tb_per_s: expected a number in [0.01, 1000]"),
            std::string::npos)
      << e;
  j["hbm_tb_per_s"] = 3;
  path = Write("gpu.json", j.dump());
  EXPECT_DOUBLE_EQ(LoadGpuSpec(path).interconnect_bytes_per_s, 900e9);
  EXPECT_EQ(LoadGpuSpec(path).compute_capability, "");  // optional
  // A compute capability is "major.minor".
  j["compute_capability"] = "sm90";
  path = Write("gpu.json", j.dump());
  e = ErrorOf([&] { LoadGpuSpec(path); });
  EXPECT_NE(e.find("/compute_capability: expected a compute capability"), std::string::npos) << e;
  j["compute_capability"] = "9.0";
  path = Write("gpu.json", j.dump());
  EXPECT_EQ(LoadGpuSpec(path).compute_capability, "9.0");
}

}  // namespace
}  // namespace servesim
