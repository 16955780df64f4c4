// Tests of `servesim model import`'s mapping (sim/model/hf_config.h): the
// shipped models that came from vendored published configs are exactly the
// importer's output, their sizes match the model cards, and every
// architecture servesim does not model yet is refused with one line.
#include "sim/model/hf_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "sim/core/paths.h"
#include "sim/core/status.h"
#include "sim/model/model_file.h"
#include "sim/model/model_loader.h"

namespace servesim {
namespace {

using Json = nlohmann::json;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string ConfigDir() { return RepoRoot() + "/tests/model/hf_configs/"; }

Json Manifest() { return Json::parse(ReadText(ConfigDir() + "imports.json")); }

// The shipped file, byte for byte, is what the importer writes for the
// vendored config with the manifest's options; a second import gives the
// same bytes.
TEST(HfImportTest, ShippedFilesAreTheImportersOutput) {
  const Json manifest = Manifest();
  ASSERT_GE(manifest.size(), 9u);
  for (const Json& e : manifest) {
    const std::string name = e["name"];
    const HfImportOptions o{name, e["source"], e["served_hf_id"]};
    const std::string config = ConfigDir() + e["config"].get<std::string>();
    const std::string text = ModelFileText(ImportHfConfigFile(config, o));
    EXPECT_EQ(text, ReadText(RepoRoot() + "/models/llm/" + name + ".json")) << name;
    EXPECT_EQ(text, ModelFileText(ImportHfConfigFile(config, o))) << name;
    EXPECT_EQ(LoadModelSpec(name).name, name);
  }
  EXPECT_GE(AvailableModels().size(), 15u);
}

// Total parameters against each model card's figure, within 1%, and KV
// bytes per token from the config's own numbers (2 x layers x KV heads x
// head_dim x 2 bytes), not through ModelSpec.
TEST(HfImportTest, SizesMatchModelCardsAndConfigs) {
  const struct {
    const char* name;
    double card;  // total parameters
    const char* where;
  } cases[] = {
      // Qwen3 cards: "Number of Parameters: 0.6B" / "8.2B" / "235B in total
      // and 22B activated" (huggingface.co/Qwen/Qwen3-*, Model Overview).
      {"qwen3-0.6b", 0.6e9, "huggingface.co/Qwen/Qwen3-0.6B: 0.6B"},
      {"qwen3-8b", 8.2e9, "huggingface.co/Qwen/Qwen3-8B: 8.2B"},
      {"qwen3-235b-a22b", 235e9, "huggingface.co/Qwen/Qwen3-235B-A22B: 235B"},
      // "480B total parameters and 35B activated" (Model Overview).
      {"qwen3-coder-480b-a35b", 480e9,
       "huggingface.co/Qwen/Qwen3-Coder-480B-A35B-Instruct: 480B"},
      // Llama 3.1 card, Model Information table: 405B; Llama 3.3: 70B.
      {"llama-3.1-405b", 405e9, "huggingface.co/meta-llama/Llama-3.1-405B: 405B"},
      {"llama-3.3-70b", 70e9, "huggingface.co/meta-llama/Llama-3.3-70B-Instruct: 70B"},
      // Mistral's Mixtral 8x22B announcement (mistral.ai/news/mixtral-8x22b):
      // "39B active parameters out of 141B".
      {"mixtral-8x22b", 141e9, "mistral.ai/news/mixtral-8x22b: 141B"},
      // Qwen2.5 cards, Model Overview "Number of Parameters".
      {"qwen2.5-1.5b", 1.54e9, "huggingface.co/Qwen/Qwen2.5-1.5B: 1.54B"},
      {"qwen2.5-32b", 32.5e9, "huggingface.co/Qwen/Qwen2.5-32B: 32.5B"},
      {"qwen2.5-72b", 72.7e9, "huggingface.co/Qwen/Qwen2.5-72B: 72.7B"},
  };
  for (const auto& c : cases) {
    const ModelSpec m = LoadModelSpec(c.name);
    EXPECT_NEAR(m.ParamCount(), c.card, 0.01 * c.card) << c.where;
  }
  // Qwen3-1.7B's card: "1.7B; Number of Parameters (Non-Embedding): 1.4B".
  // The total rounds 1.72B to two digits (1.2% off), so the
  // non-embedding figure is the one checked: the tied embedding 151936 x
  // 2048 is left out.
  const ModelSpec q17 = LoadModelSpec("qwen3-1.7b");
  EXPECT_NEAR(q17.ParamCount() - 151936.0 * 2048, 1.4e9, 0.01 * 1.4e9);
  for (const Json& e : Manifest()) {
    const Json c = Json::parse(ReadText(ConfigDir() + e["config"].get<std::string>()));
    const double heads = c["num_attention_heads"];
    const double kv = c.value("num_key_value_heads", heads);
    const double head_dim = c.contains("head_dim") ? c["head_dim"].get<double>()
                                                   : c["hidden_size"].get<double>() / heads;
    const double layers = c["num_hidden_layers"];
    EXPECT_EQ(LoadModelSpec(e["name"]).KvBytesPerTokenPerGpu(1), 2 * layers * kv * head_dim * 2)
        << e["name"];
  }
}

// Active parameters per token of the MoE models: the cards' figures are
// rounded to whole billions, so within 2%.
TEST(HfImportTest, MoeActiveParamsMatchCards) {
  const struct {
    const char* name;
    double active;
  } cases[] = {{"qwen3-235b-a22b", 22e9}, {"qwen3-coder-480b-a35b", 35e9}, {"mixtral-8x22b", 39e9}};
  for (const auto& c : cases) {
    const ModelSpec m = LoadModelSpec(c.name);
    const double expert = 3.0 * m.hidden_size * m.intermediate_size;
    const double idle = 1.0 * m.num_layers * (m.num_experts - m.experts_per_token) * expert;
    EXPECT_NEAR(m.ParamCount() - idle, c.active, 0.02 * c.active) << c.name;
  }
}

// A small Llama-shaped config, to which each case adds or changes keys.
Json Base() {
  return Json::parse(R"({"model_type": "llama", "hidden_size": 512,
    "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2,
    "intermediate_size": 1024, "vocab_size": 1000, "max_position_embeddings": 4096,
    "torch_dtype": "bfloat16", "rope_theta": 500000.0})");
}

ModelSpec Import(const Json& j) {
  return ImportHfConfig(JsonView(j, "config.json"), {"tiny", "test", ""});
}

std::string ErrorOf(const Json& j) {
  try {
    Import(j);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

Json With(Json j, const Json& changes) {
  for (const auto& [k, v] : changes.items()) j[k] = v;
  return j;
}

TEST(HfImportTest, RefusesWhatServesimDoesNotModel) {
  const struct {
    const char* changes;
    const char* error;
  } cases[] = {
      {R"({"kv_lora_rank": 512, "q_lora_rank": 1536})",
       "config.json: /kv_lora_rank: 512: multi-head latent attention (MLA: DeepSeek-V2/V3, "
       "Kimi K2): not modelled by servesim yet; expected GQA or MHA attention (no "
       "kv_lora_rank)"},
      {R"({"sliding_window": 2048})",
       "config.json: /sliding_window: 2048: sliding-window attention: not modelled by "
       "servesim yet; expected sliding_window null, use_sliding_window false or a window of "
       "at least max_position_embeddings"},
      {R"({"sliding_window": 1024, "use_sliding_window": true})",
       "config.json: /sliding_window: 1024: sliding-window attention: not modelled"},
      {R"({"layer_types": ["sliding_attention", "full_attention"]})",
       "config.json: /layer_types/0: \"sliding_attention\": sliding-window attention layers "
       "(Gemma 2/3, gpt-oss): not modelled by servesim yet; expected \"full_attention\" in "
       "every layer"},
      {R"({"layer_types": ["full_attention", "linear_attention"]})",
       "config.json: /layer_types/1: \"linear_attention\": linear, state-space or hybrid "
       "attention layers: not modelled by servesim yet"},
      {R"({"full_attention_interval": 4})",
       "config.json: /full_attention_interval: 4: hybrid attention (linear attention between "
       "full-attention layers, Qwen3-Next): not modelled by servesim yet"},
      {R"({"hybrid_override_pattern": "M-M*"})",
       "config.json: /hybrid_override_pattern: \"M-M*\": linear, state-space or hybrid"},
      {R"({"add_swa_attention_sink_bias": true})",
       "config.json: /add_swa_attention_sink_bias: true: attention sinks: not modelled"},
      {R"({"num_experts": 64, "num_experts_per_tok": 6, "n_shared_experts": 2})",
       "config.json: /n_shared_experts: 2: shared experts: not modelled by servesim yet; "
       "expected 0 or null (routed experts only)"},
      {R"({"num_experts": 60, "num_experts_per_tok": 4, "shared_expert_intermediate_size": 5632})",
       "config.json: /shared_expert_intermediate_size: 5632: shared experts"},
      {R"({"n_routed_experts": 64, "num_experts_per_tok": 6, "first_k_dense_replace": 1})",
       "config.json: /first_k_dense_replace: 1: dense MLP layers before the MoE ones: not "
       "modelled by servesim yet; expected 0"},
      {R"({"num_experts": 128, "num_experts_per_tok": 8, "mlp_only_layers": [0, 1]})",
       "config.json: /mlp_only_layers: an array: dense MLP layers inside an MoE"},
      {R"({"num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 2})",
       "config.json: /decoder_sparse_step: 2: MoE layers alternating with dense ones: not "
       "modelled by servesim yet; expected 1 (the MoE in every layer)"},
      {R"({"vision_config": {"hidden_size": 1024}})",
       "config.json: /vision_config: an object: a multimodal wrapper"},
      {R"({"text_config": {"model_type": "llama"}})",
       "config.json: /text_config: an object: a multimodal wrapper (vision or audio tower, "
       "the decoder nested in text_config): not modelled by servesim yet; expected a "
       "text-only decoder's config.json"},
      // Required fields: missing, or of the wrong type.
      {R"({"num_hidden_layers": null})",
       "config.json: /num_hidden_layers: expected an integer in [1, 2147483647], got nothing"},
      {R"({"hidden_size": "4096"})",
       "config.json: /hidden_size: expected an integer in [1, 2147483647], got \"4096\""},
      {R"({"num_key_value_heads": 3})",
       "config.json: /num_key_value_heads: expected a divisor of num_attention_heads (8), got 3"},
      {R"({"model_type": "gpt2"})", "config.json: /model_type: expected one of llama, mistral"},
      {R"({"torch_dtype": "float8_e4m3fn"})", "config.json: /torch_dtype: expected"},
      {R"({"num_experts": 8})",
       "config.json: /num_experts_per_tok: expected an integer in [1, 8], got nothing"},
  };
  for (const auto& c : cases) {
    const std::string e = ErrorOf(With(Base(), Json::parse(c.changes)));
    EXPECT_EQ(e.rfind(c.error, 0), 0u) << c.changes << "\n  got: " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST(HfImportTest, ReadsEachFamilysSpelling) {
  // Absent num_key_value_heads is MHA; absent head_dim is hidden/heads.
  ModelSpec m = Import(With(Base(), Json::parse(R"({"num_key_value_heads": null})")));
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_FALSE(m.tie_word_embeddings);
  EXPECT_EQ(m.dtype_bytes, 2);
  EXPECT_NE(m.source.find("num_key_value_heads absent (MHA)"), std::string::npos) << m.source;
  EXPECT_NE(m.source.find("rope_theta 500000.0, rope_scaling none"), std::string::npos);
  // An explicit head_dim wins (Qwen3: 64 x 128 > hidden_size); fp32; newer
  // transformers' "dtype"; tied embeddings.
  m = Import(With(Base(), Json::parse(
      R"({"head_dim": 128, "torch_dtype": null, "dtype": "float32", "tie_word_embeddings": true})")));
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.dtype_bytes, 4);
  EXPECT_TRUE(m.tie_word_embeddings);
  // Windows that never bind: Qwen2.5's (use_sliding_window false) and
  // Phi-4's (as long as the context).
  m = Import(With(Base(), Json::parse(R"({"sliding_window": 131072, "use_sliding_window": false})")));
  EXPECT_NE(m.source.find("sliding_window 131072 unused"), std::string::npos) << m.source;
  m = Import(With(Base(), Json::parse(R"({"model_type": "phi3", "sliding_window": 4096})")));
  EXPECT_NE(m.source.find("spans max_position_embeddings"), std::string::npos) << m.source;
  // MoE: Mixtral's per-expert intermediate_size, Qwen3-MoE's
  // moe_intermediate_size, DeepSeek-style n_routed_experts.
  m = Import(With(Base(), Json::parse(R"({"model_type": "mixtral", "num_local_experts": 8,
      "num_experts_per_tok": 2})")));
  EXPECT_EQ(m.num_experts, 8);
  EXPECT_EQ(m.experts_per_token, 2);
  EXPECT_EQ(m.intermediate_size, 1024);
  m = Import(With(Base(), Json::parse(R"({"model_type": "qwen3_moe", "num_experts": 128,
      "num_experts_per_tok": 8, "moe_intermediate_size": 768, "decoder_sparse_step": 1,
      "mlp_only_layers": [], "shared_expert_intermediate_size": 0})")));
  EXPECT_EQ(m.num_experts, 128);
  EXPECT_EQ(m.intermediate_size, 768);
  m = Import(With(Base(), Json::parse(R"({"n_routed_experts": 16, "num_experts_per_tok": 2,
      "moe_intermediate_size": 256, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}})")));
  EXPECT_EQ(m.num_experts, 16);
  EXPECT_NE(m.source.find("rope_scaling yarn factor 4.0"), std::string::npos) << m.source;
  // Unknown keys are ignored; _name_or_path gives the served id.
  m = Import(With(Base(), Json::parse(R"({"some_future_key": [1], "_name_or_path": "org/model"})")));
  EXPECT_EQ(m.served_hf_id, "org/model");
}

}  // namespace
}  // namespace servesim
