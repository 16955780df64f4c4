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
      // DeepSeek-V3 card: "671B total parameters with 37B activated for
      // each token" (the 685B on Hugging Face adds the 14B MTP module,
      // which servesim does not count: vLLM skips it without speculative
      // decoding).
      {"deepseek-v3", 671e9, "huggingface.co/deepseek-ai/DeepSeek-V3: 671B"},
      // gpt-oss model card (arXiv 2508.10925), table 1: 116.83B total,
      // 5.13B active per token.
      {"gpt-oss-120b", 116.83e9, "openai.com/index/gpt-oss-model-card: 116.83B"},
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
    double layers = c["num_hidden_layers"];
    // Per layer: K and V of every KV head, or MLA's one latent (the
    // compressed KV and the shared rope key).
    double per_layer = 2 * kv * head_dim;
    if (c.contains("kv_lora_rank")) {
      per_layer = c["kv_lora_rank"].get<double>() + c["qk_rope_head_dim"].get<double>();
    }
    // The block pool holds the full-attention layers only.
    double windowed = 0;
    for (const Json& t : c.value("layer_types", Json::array())) windowed += t == "sliding_attention";
    layers -= windowed;
    const ModelSpec m = LoadModelSpec(e["name"]);
    EXPECT_EQ(m.KvBytesPerTokenPerGpu(1), layers * per_layer * 2) << e["name"];
    // Windowed layers: window + one block of tokens per sequence.
    const double window = windowed > 0 ? c["sliding_window"].get<double>() : 0;
    EXPECT_EQ(m.WindowedKvBytesPerSeqPerGpu(1, 16), windowed * (window + 16) * per_layer * 2)
        << e["name"];
  }
  // By hand: DeepSeek-V3 caches 61 x (512 + 64) bf16 values a token, on
  // every GPU (70,272 bytes, 1/70th of MHA's 61 x 2 x 128 x 192); gpt-oss
  // 18 full layers x 2 x 8 x 64 (36,864 bytes) and 18 windowed layers of
  // 128 + 16 tokens (5.3 MB a sequence).
  EXPECT_EQ(LoadModelSpec("deepseek-v3").KvBytesPerTokenPerGpu(8), 70272);
  EXPECT_EQ(LoadModelSpec("gpt-oss-120b").KvBytesPerTokenPerGpu(1), 36864);
  EXPECT_EQ(LoadModelSpec("gpt-oss-120b").WindowedKvBytesPerSeqPerGpu(1, 16), 18 * 144 * 2048);
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
  // ActiveParamCount leaves the embedding lookup out, as the gpt-oss card
  // does (5.13B: 36 layers of attention, router and 4 of 128 experts, and
  // the unembedding); DeepSeek's "37B activated" is rounded (36.6B here,
  // 37.5B with the embedding), so within 2% as above.
  EXPECT_NEAR(LoadModelSpec("gpt-oss-120b").ActiveParamCount(), 5.13e9, 0.01 * 5.13e9);
  EXPECT_NEAR(LoadModelSpec("deepseek-v3").ActiveParamCount(), 37e9, 0.02 * 37e9);
}

// Weights and parameters of the two from their configs by hand, term by
// term (not through ModelSpec's formulas).
TEST(HfImportTest, DeepSeekV3AndGptOssWeightsByHand) {
  // DeepSeek-V3: MLA q_a 7168x1536, q_b 1536x(128x192), kv_a 7168x576,
  // kv_b 512x(128x256), o (128x128)x7168; 3 dense MLPs of 18432; 58 MoE
  // layers of 256 routed + 1 shared expert of 2048 and a 7168x256 router;
  // embedding and LM head 129280 x 7168.
  const double attn = 7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 +
                      512.0 * 128 * 256 + 128.0 * 128 * 7168;
  const double expert = 3 * 7168.0 * 2048;
  const double embed = 129280.0 * 7168;
  const double total = 61 * attn + 3 * 3 * 7168.0 * 18432 +
                       58 * (257 * expert + 7168.0 * 256) + 2 * embed;
  const ModelSpec ds = LoadModelSpec("deepseek-v3");
  EXPECT_EQ(ds.ParamCount(), total);
  EXPECT_EQ(ds.ActiveParamCount(), total - 58 * 248 * expert - embed);
  EXPECT_EQ(ds.weight_dtype, "fp8");
  // fp8 linear layers (1 byte), bf16 embedding, LM head and routers; at
  // tp 8 with ep 8 every GPU holds 1/8 of everything but q_a and kv_a,
  // which vLLM replicates.
  ModelSpec ds8 = ds;
  ds8.expert_parallel = 8;
  const double replicated = 61 * (7168.0 * 1536 + 7168.0 * 576);
  const double fp8 = (61 * attn - replicated) / 8 + replicated +
                     (3 * 3 * 7168.0 * 18432 + 58 * 257 * expert) / 8;
  const double bf16 = 2 * (2 * embed / 8 + 58 * 7168.0 * 256);
  EXPECT_NEAR(ds8.WeightBytesPerGpu(8), fp8 + bf16, 1e-9 * (fp8 + bf16));
  // gpt-oss-120b: attention 2880 -> 64 x 64 (q, o) and 8 x 64 (k, v);
  // 128 experts of 3 x 2880 x 2880 in MXFP4 (4.25 bits), a bf16 router;
  // bf16 embedding and LM head 201088 x 2880.
  const double g_attn = 2 * 2880.0 * 4096 + 2 * 2880.0 * 512;
  const double g_expert = 3 * 2880.0 * 2880;
  const double g_embed = 201088.0 * 2880;
  const ModelSpec g = LoadModelSpec("gpt-oss-120b");
  EXPECT_EQ(g.ParamCount(), 36 * (g_attn + 128 * g_expert + 2880.0 * 128) + 2 * g_embed);
  const double bytes = 2 * (36 * g_attn + 36 * 2880.0 * 128 + 2 * g_embed) +
                       4.25 / 8 * 36 * 128 * g_expert;
  EXPECT_NEAR(g.WeightBytesPerGpu(1), bytes, 1e-9 * bytes);
  // 60.7 GiB: one 80 GB GPU holds it, as the card says.
  EXPECT_NEAR(g.WeightBytesPerGpu(1) / 1073741824.0, 60.7, 0.05);
  EXPECT_EQ(g.sliding_window, 128);
  EXPECT_EQ(g.sliding_window_layers, 18);
  EXPECT_TRUE(g.attention_sinks);
  EXPECT_EQ(g.expert_weight_dtype, "mxfp4");
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
       "config.json: /kv_lora_rank: 512: multi-head latent attention outside the "
       "deepseek_v2/deepseek_v3 families (Kimi K2, GLM-5): not modelled by servesim yet; "
       "expected GQA or MHA attention (no kv_lora_rank), or DeepSeek's model_type"},
      {R"({"sliding_window": 2048})",
       "config.json: /sliding_window: 2048: sliding-window attention: not modelled by "
       "servesim yet; expected sliding_window null, use_sliding_window false or a window of "
       "at least max_position_embeddings"},
      {R"({"sliding_window": 1024, "use_sliding_window": true})",
       "config.json: /sliding_window: 1024: sliding-window attention: not modelled"},
      {R"({"layer_types": ["sliding_attention", "full_attention"]})",
       "config.json: /sliding_window: layer_types has 1 sliding_attention layers but no "
       "window; expected sliding_window"},
      {R"({"layer_types": ["sliding_attention", "sliding_attention"], "sliding_window": 64})",
       "config.json: /layer_types: an array: sliding-window attention in every layer: not "
       "modelled by servesim yet; expected at least one \"full_attention\" layer"},
      {R"({"model_type": "deepseek_v3", "kv_lora_rank": 64, "qk_nope_head_dim": 32,
          "qk_rope_head_dim": 16, "v_head_dim": 32, "n_routed_experts": 8,
          "num_experts_per_tok": 2, "moe_layer_freq": 2})",
       "config.json: /moe_layer_freq: 2: MoE layers alternating with dense ones"},
      {R"({"model_type": "deepseek_v3", "kv_lora_rank": 64, "qk_rope_head_dim": 16,
          "v_head_dim": 32})",
       "config.json: /qk_nope_head_dim: expected an integer"},
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

// DeepSeek-V2-Lite's spelling: MLA without a query bottleneck
// (q_lora_rank null), shared experts, one dense first layer.
TEST(HfImportTest, ReadsDeepSeekAndGptOssKeys) {
  const ModelSpec m = Import(With(Base(), Json::parse(R"({"model_type": "deepseek_v2",
      "kv_lora_rank": 128, "q_lora_rank": null, "qk_nope_head_dim": 64,
      "qk_rope_head_dim": 32, "v_head_dim": 64, "n_routed_experts": 16,
      "num_experts_per_tok": 2, "moe_intermediate_size": 256, "n_shared_experts": 2,
      "first_k_dense_replace": 1, "moe_layer_freq": 1})")));
  EXPECT_TRUE(m.is_mla());
  EXPECT_EQ(m.q_lora_rank, 0);
  EXPECT_EQ(m.head_dim, 96);
  EXPECT_EQ(m.dense_layers, 1);
  EXPECT_EQ(m.dense_intermediate_size, 1024);
  EXPECT_EQ(m.shared_experts, 2);
  // By hand: q 512 x 8 x 96, kv_a 512 x 160, kv_b 128 x 8 x 128, o 8 x 64 x 512;
  // 3 MoE layers of 18 experts of 3 x 512 x 256 and a 512 x 16 router; one
  // dense MLP of 1024; embedding and head 1000 x 512.
  const double attn = 512.0 * 768 + 512.0 * 160 + 128.0 * 1024 + 512.0 * 512;
  EXPECT_EQ(m.ParamCount(), 4 * attn + 3 * (18 * 3 * 512.0 * 256 + 512.0 * 16) +
                                3 * 512.0 * 1024 + 2 * 1000.0 * 512);
  EXPECT_EQ(m.KvBytesPerTokenPerGpu(4), 4 * 160 * 2);
  // A windowed llama-shaped config (gpt-oss's spelling of the window).
  const ModelSpec w = Import(With(Base(), Json::parse(R"({"sliding_window": 256,
      "layer_types": ["sliding_attention", "full_attention", "sliding_attention",
                      "full_attention"]})")));
  EXPECT_EQ(w.sliding_window, 256);
  EXPECT_EQ(w.sliding_window_layers, 2);
  EXPECT_EQ(w.KvBytesPerTokenPerGpu(1), 2 * 2 * 2 * 64 * 2);
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
