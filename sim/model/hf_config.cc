// Mapping a Hugging Face config.json to a ModelSpec (see hf_config.h).
#include "sim/model/hf_config.h"

#include <limits>
#include <string_view>

#include "sim/core/status.h"

namespace servesim {
namespace {

using Json = nlohmann::json;

// Families whose decoder is the one servesim costs (GQA/MHA attention, a
// gated MLP or routed experts of gated MLPs) and whose configs name it with
// the keys read below. Others may differ in ways no key says (Phi-2's
// two-matrix MLP, GPT-2's names), so they are refused rather than guessed.
constexpr std::string_view kFamilies[] = {
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3",
    "qwen3_moe", "phi3", "olmo2", "granite", "granitemoe",
    "deepseek_v2", "deepseek_v3", "gpt_oss"};

// DeepSeek's decoder: MLA, shared experts, dense first layers. Those keys
// mean what DeepSeek means only in its own families, so they are read
// there and refused elsewhere.
bool IsDeepSeek(const JsonView& c) {
  const auto it = c.raw().find("model_type");
  if (it == c.raw().end() || !it->is_string()) return false;
  const std::string t = it->get<std::string>();
  return t == "deepseek_v2" || t == "deepseek_v3";
}

bool IsGptOss(const JsonView& c) {
  const auto it = c.raw().find("model_type");
  return it != c.raw().end() && it->is_string() && it->get<std::string>() == "gpt_oss";
}

const Json* Get(const JsonView& c, std::string_view key) {
  const Json& j = c.raw();
  auto it = j.find(std::string(key));
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

// Set to something other than null, false or 0.
bool InUse(const Json* v) {
  if (v == nullptr || (v->is_boolean() && !v->get<bool>())) return false;
  return !(v->is_number() && v->get<double>() == 0);
}

[[noreturn]] void Refuse(const JsonView& c, std::string_view key, const Json& v,
                         const std::string& what, const std::string& expected) {
  c.FailMessage(key, DescribeJson(v) + ": " + what +
                         ": not modelled by servesim yet; expected " + expected);
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

void RefuseWrappersAndMla(const JsonView& c) {
  for (const char* key : {"text_config", "vision_config", "audio_config"}) {
    if (const Json* v = Get(c, key)) {
      Refuse(c, key, *v, "a multimodal wrapper (vision or audio tower, the decoder nested in text_config)",
             "a text-only decoder's config.json");
    }
  }
  if (IsDeepSeek(c)) return;
  for (const char* key : {"kv_lora_rank", "q_lora_rank"}) {
    if (const Json* v = Get(c, key)) {
      Refuse(c, key, *v,
             "multi-head latent attention outside the deepseek_v2/deepseek_v3 families "
             "(Kimi K2, GLM-5)",
             "GQA or MHA attention (no " + std::string(key) + "), or DeepSeek's model_type");
    }
  }
}

// Linear attention, state-space layers and hybrids of them with attention
// keep no per-token KV cache in those layers, so servesim's KV sizing and
// attention cost would both be wrong.
// Returns how many layers layer_types marks "sliding_attention".
int RefuseHybrids(const JsonView& c) {
  const std::string expected = "full attention in every layer";
  if (const Json* v = Get(c, "full_attention_interval")) {
    Refuse(c, "full_attention_interval", *v,
           "hybrid attention (linear attention between full-attention layers, Qwen3-Next)", expected);
  }
  for (const auto& [key, value] : c.raw().items()) {
    for (std::string_view p : {"linear_", "mamba", "ssm_", "hybrid_", "attn_layer_"}) {
      if (StartsWith(key, p) && InUse(&value)) {
        Refuse(c, key, value, "linear, state-space or hybrid attention layers", expected);
      }
    }
  }
  if (const Json* v = Get(c, "block_configs")) {
    Refuse(c, "block_configs", *v, "layers of different shapes (per-layer block_configs)",
           "the same layer repeated");
  }
  const Json* types = Get(c, "layer_types");
  if (types == nullptr) return 0;
  if (!types->is_array()) c.Fail("layer_types", "an array of strings");
  int sliding = 0;
  for (size_t i = 0; i < types->size(); ++i) {
    const Json& t = (*types)[i];
    const std::string key = "layer_types/" + std::to_string(i);
    if (!t.is_string()) c.Fail(key, "a string");
    const std::string s = t.get<std::string>();
    if (s == "full_attention") continue;
    if (s == "sliding_attention") {
      ++sliding;
      continue;
    }
    Refuse(c, key, t, "linear, state-space or hybrid attention layers",
           "\"full_attention\" or \"sliding_attention\" in every layer");
  }
  if (sliding > 0 && sliding == static_cast<int>(types->size())) {
    Refuse(c, "layer_types", *types, "sliding-window attention in every layer",
           "at least one \"full_attention\" layer");
  }
  return sliding;
}

// A sliding window that binds changes both the KV cache (only the window
// is kept) and attention's cost. Qwen2/2.5 carry a window with
// use_sliding_window false, and Phi-4 one as long as its context: both
// attend over everything. Returns how attention was read, for the source.
// `sliding` layers marked windowed by layer_types take the window as
// given (the others attend over everything).
std::string RefuseSlidingWindows(const JsonView& c, int sliding) {
  if (const Json* v = Get(c, "attention_chunk_size")) {
    Refuse(c, "attention_chunk_size", *v, "chunked local attention", "full attention");
  }
  for (const auto& [key, value] : c.raw().items()) {
    if (key.find("sink") != std::string::npos && InUse(&value) && !IsGptOss(c)) {
      Refuse(c, key, value, "attention sinks", "none");
    }
  }
  const Json* w = Get(c, "sliding_window");
  if (sliding > 0) {
    if (w == nullptr) {
      c.FailMessage("sliding_window", "layer_types has " + std::to_string(sliding) +
                                          " sliding_attention layers but no window; "
                                          "expected sliding_window");
    }
    const int64_t window = c.RequireInteger("sliding_window", Range::Closed(1, 2147483647));
    return std::to_string(sliding) + " sliding_attention layers of " +
           std::to_string(window) + " tokens (layer_types), the rest full attention";
  }
  if (w == nullptr) return "full attention";
  const int64_t window =
      c.RequireInteger("sliding_window", Range::Closed(1, 9e15));
  const std::string unused = "full attention (sliding_window " + std::to_string(window);
  if (c.Has("use_sliding_window") && !c.Bool("use_sliding_window", true)) {
    return unused + " unused: use_sliding_window false)";
  }
  const Json* ctx = Get(c, "max_position_embeddings");
  if (ctx != nullptr && ctx->is_number() && window >= ctx->get<double>()) {
    return unused + " spans max_position_embeddings)";
  }
  Refuse(c, "sliding_window", *w, "sliding-window attention",
         "sliding_window null, use_sliding_window false or a window of at least "
         "max_position_embeddings");
}

// Shared experts and dense MLP layers inside an MoE make layers differ from
// servesim's one routed-experts layer.
void RefuseMixedMoe(const JsonView& c) {
  if (IsDeepSeek(c)) return;  // read by ReadDeepSeek
  for (const char* key : {"n_shared_experts", "num_shared_experts",
                          "shared_expert_intermediate_size",
                          "moe_shared_expert_intermediate_size"}) {
    const Json* v = Get(c, key);
    if (v == nullptr) continue;
    if (!v->is_number()) c.Fail(key, "a number");
    if (v->get<double>() > 0) {
      Refuse(c, key, *v, "shared experts", "0 or null (routed experts only)");
    }
  }
  const std::string every = "the MoE in every layer";
  if (const Json* v = Get(c, "first_k_dense_replace"); InUse(v)) {
    Refuse(c, "first_k_dense_replace", *v, "dense MLP layers before the MoE ones", "0");
  }
  if (const Json* v = Get(c, "mlp_only_layers")) {
    if (!v->is_array()) c.Fail("mlp_only_layers", "an array");
    if (!v->empty()) Refuse(c, "mlp_only_layers", *v, "dense MLP layers inside an MoE", "[]");
  }
  for (const char* key : {"decoder_sparse_step", "moe_layer_freq", "interleave_moe_layer_step"}) {
    const Json* v = Get(c, key);
    if (v != nullptr && !(v->is_number() && v->get<double>() == 1)) {
      Refuse(c, key, *v, "MoE layers alternating with dense ones", "1 (" + every + ")");
    }
  }
}

int PositiveInt(const JsonView& c, std::string_view key) {
  return static_cast<int>(
      c.RequireInteger(key, Range::Closed(1, std::numeric_limits<int32_t>::max())));
}

std::string Dump(const Json* v) { return v == nullptr ? "null" : v->dump(); }

// obj[key] when it is a string, else `def` (never a type error).
std::string StringIn(const Json& obj, const char* key, const std::string& def) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : def;
}

// RoPE changes positions, not cost: recorded for the reader only.
std::string RopeText(const JsonView& c) {
  const Json* theta = Get(c, "rope_theta");
  const Json* params = Get(c, "rope_parameters");
  if (theta == nullptr && params != nullptr && params->is_object()) {
    auto it = params->find("rope_theta");
    if (it != params->end()) theta = &*it;
  }
  std::string text = "rope_theta " + Dump(theta);
  const Json* s = Get(c, "rope_scaling");
  if (s == nullptr && params != nullptr && params->is_object() &&
      StringIn(*params, "rope_type", "default") != "default") {
    s = params;
  }
  if (s == nullptr) {
    text += ", rope_scaling none";
  } else if (s->is_object()) {
    text += ", rope_scaling " + StringIn(*s, "rope_type", StringIn(*s, "type", "?"));
    for (const char* k : {"factor", "original_max_position_embeddings"}) {
      if (s->contains(k)) text += " " + std::string(k) + " " + (*s)[k].dump();
    }
  } else {
    text += ", rope_scaling " + s->dump();
  }
  if (const Json* p = Get(c, "partial_rotary_factor")) {
    text += ", partial_rotary_factor " + p->dump();
  }
  return text;
}

int DtypeBytes(const JsonView& c, std::string* note) {
  const char* key = c.Has("torch_dtype") ? "torch_dtype" : "dtype";
  if (!c.Has(key)) {
    *note = "torch_dtype absent (bf16 assumed)";
    return 2;
  }
  const std::string d = c.Choice(key, "", {"bfloat16", "float16", "float32"});
  *note = std::string(key) + " " + d;
  return d == "float32" ? 4 : 2;
}

// "org/name" from _name_or_path; local paths ("/data/x", "./x") are not ids.
std::string HfIdOf(const JsonView& c) {
  const Json* v = Get(c, "_name_or_path");
  if (v == nullptr || !v->is_string()) return "";
  const std::string id = v->get<std::string>();
  const size_t slash = id.find('/');
  const bool one_slash = slash != std::string::npos && slash > 0 &&
                         slash + 1 < id.size() && id.find('/', slash + 1) == std::string::npos;
  return one_slash && id[0] != '.' && id[0] != '~' ? id : "";
}

// DeepSeek-V2/V3's MLA, shared experts and dense first layers (their
// config keys as in DeepSeek's configuration_deepseek.py).
void ReadDeepSeek(const JsonView& c, ModelSpec* m, std::string* text) {
  m->kv_lora_rank = PositiveInt(c, "kv_lora_rank");
  // V2-Lite projects queries directly (q_lora_rank null).
  m->q_lora_rank = Get(c, "q_lora_rank") == nullptr ? 0 : PositiveInt(c, "q_lora_rank");
  const int nope = PositiveInt(c, "qk_nope_head_dim");
  m->qk_rope_head_dim = PositiveInt(c, "qk_rope_head_dim");
  m->v_head_dim = PositiveInt(c, "v_head_dim");
  m->head_dim = nope + m->qk_rope_head_dim;
  *text += "; MLA: q_lora_rank " + Dump(Get(c, "q_lora_rank")) + ", kv_lora_rank " +
           std::to_string(m->kv_lora_rank) + ", qk_nope_head_dim " + std::to_string(nope) +
           ", qk_rope_head_dim " + std::to_string(m->qk_rope_head_dim) + ", v_head_dim " +
           std::to_string(m->v_head_dim) + " (head_dim " + std::to_string(m->head_dim) +
           " for queries and keys; num_key_value_heads unused: one latent is cached)";
  if (!m->is_moe()) return;
  if (const Json* v = Get(c, "moe_layer_freq"); v != nullptr && !(v->is_number() && v->get<double>() == 1)) {
    Refuse(c, "moe_layer_freq", *v, "MoE layers alternating with dense ones", "1");
  }
  m->shared_experts = static_cast<int>(c.Integer("n_shared_experts", 0, Range::Closed(0, 64)));
  m->dense_layers = static_cast<int>(
      c.Integer("first_k_dense_replace", 0, Range::Closed(0, m->num_layers - 1)));
  if (m->dense_layers > 0) m->dense_intermediate_size = PositiveInt(c, "intermediate_size");
  *text += "; n_shared_experts " + std::to_string(m->shared_experts) +
           " (always active, moe_intermediate_size each), first_k_dense_replace " +
           std::to_string(m->dense_layers) +
           (m->dense_layers > 0
                ? " (dense MLP of intermediate_size " + std::to_string(m->dense_intermediate_size) + ")"
                : "");
  for (const char* k : {"n_group", "topk_group", "topk_method", "scoring_func"}) {
    if (const Json* v = Get(c, k)) *text += ", " + std::string(k) + " " + v->dump();
  }
  *text += " (routing: no cost effect)";
  if (const Json* v = Get(c, "num_nextn_predict_layers"); InUse(v)) {
    *text += "; num_nextn_predict_layers " + v->dump() +
             " not counted (vLLM skips the MTP layers' weights unless speculative "
             "decoding uses them)";
  }
}

// quantization_config as vLLM loads it: fp8 (DeepSeek-V3's block-wise
// e4m3, every linear layer but the router, embedding and LM head) and
// mxfp4 (gpt-oss: routed experts only) are costed as published; others
// are noted and costed at dtype_bytes.
std::string ReadQuantization(const JsonView& c, ModelSpec* m) {
  const Json* q = Get(c, "quantization_config");
  if (q == nullptr) return "";
  const std::string method = q->is_object() ? StringIn(*q, "quant_method", "?") : "?";
  if (method == "fp8") {
    m->SetWeightDtype("fp8");
    return "; quantization_config fp8: linear layers' weights 1 byte (embedding, LM head "
           "and router bf16)";
  }
  if (method == "mxfp4" && m->is_moe()) {
    m->expert_weight_dtype = "mxfp4";
    return "; quantization_config mxfp4: routed experts 4.25 bits a parameter (4-bit "
           "values, one 8-bit scale per 32), attention, router, embedding and LM head "
           "at dtype_bytes";
  }
  return "; quantization_config (" + method +
         ") ignored: the weights are costed at dtype_bytes unless a scenario sets "
         "model.weight_dtype";
}

}  // namespace

ModelSpec ImportHfConfig(const JsonView& c, const HfImportOptions& options) {
  if (!c.raw().is_object()) c.FailMessage("", "expected a config.json object");
  RefuseWrappersAndMla(c);
  const int sliding = RefuseHybrids(c);
  const std::string attention = RefuseSlidingWindows(c, sliding);
  RefuseMixedMoe(c);
  const std::string type = c.RequireString("model_type");
  bool known = false;
  std::string families;
  for (std::string_view f : kFamilies) {
    known = known || f == type;
    families += (families.empty() ? "" : ", ") + std::string(f);
  }
  if (!known) c.Fail("model_type", "one of " + families + " (decoders servesim models)");
  if (options.name.empty()) throw ConfigError(c.file() + ": expected a model name (--name)");

  ModelSpec m;
  m.name = options.name;
  m.served_hf_id = options.served_hf_id.empty() ? HfIdOf(c) : options.served_hf_id;
  m.num_layers = PositiveInt(c, "num_hidden_layers");
  m.hidden_size = PositiveInt(c, "hidden_size");
  m.num_heads = PositiveInt(c, "num_attention_heads");
  std::string text = "model_type " + type + ": num_hidden_layers " +
                     std::to_string(m.num_layers) + ", hidden_size " +
                     std::to_string(m.hidden_size) + ", num_attention_heads " +
                     std::to_string(m.num_heads);
  // Absent means multi-head attention (one KV head per query head).
  m.num_kv_heads = static_cast<int>(c.Integer("num_key_value_heads", m.num_heads,
                                              Range::Closed(1, m.num_heads)));
  if (m.num_heads % m.num_kv_heads != 0) {
    c.Fail("num_key_value_heads",
           "a divisor of num_attention_heads (" + std::to_string(m.num_heads) + ")");
  }
  text += c.Has("num_key_value_heads")
              ? ", num_key_value_heads " + std::to_string(m.num_kv_heads)
              : ", num_key_value_heads absent (MHA)";
  if (IsDeepSeek(c)) {
    // MLA's head widths: read with the rest of it (ReadDeepSeek).
  } else if (c.Has("head_dim")) {
    m.head_dim = PositiveInt(c, "head_dim");
    text += ", head_dim " + std::to_string(m.head_dim);
  } else {
    if (m.hidden_size % m.num_heads != 0) {
      c.FailMessage("head_dim", "absent and hidden_size is not a multiple of "
                                "num_attention_heads; expected head_dim");
    }
    m.head_dim = m.hidden_size / m.num_heads;
    text += ", head_dim absent (hidden_size/num_attention_heads = " +
            std::to_string(m.head_dim) + ")";
  }
  // The routed-expert count goes by three names across families.
  for (const char* key : {"num_local_experts", "num_experts", "n_routed_experts"}) {
    if (!c.Has(key)) continue;
    m.num_experts = static_cast<int>(c.RequireInteger(key, Range::Closed(0, 4096)));
    if (m.num_experts <= 1) {
      m.num_experts = 1;
      break;
    }
    m.experts_per_token = static_cast<int>(
        c.RequireInteger("num_experts_per_tok", Range::Closed(1, m.num_experts)));
    text += ", " + std::to_string(m.num_experts) + " routed experts (" + key +
            "), num_experts_per_tok " + std::to_string(m.experts_per_token);
    break;
  }
  if (m.is_moe() && c.Has("moe_intermediate_size")) {
    m.intermediate_size = PositiveInt(c, "moe_intermediate_size");
    text += ", moe_intermediate_size " + std::to_string(m.intermediate_size) +
            " (intermediate_size here is per expert)";
  } else {
    m.intermediate_size = PositiveInt(c, "intermediate_size");
    text += ", intermediate_size " + std::to_string(m.intermediate_size) +
            (m.is_moe() ? " per expert" : "");
  }
  if (IsDeepSeek(c)) ReadDeepSeek(c, &m, &text);
  if (sliding > 0) {
    m.sliding_window = PositiveInt(c, "sliding_window");
    m.sliding_window_layers = sliding;
  }
  m.attention_sinks = IsGptOss(c);
  m.vocab_size = PositiveInt(c, "vocab_size");
  m.max_context = PositiveInt(c, "max_position_embeddings");
  // Every accepted family's config class defaults to untied embeddings.
  m.tie_word_embeddings = c.Bool("tie_word_embeddings", false);
  std::string dtype;
  m.dtype_bytes = DtypeBytes(c, &dtype);
  m.weight_bytes = m.kv_bytes = m.dtype_bytes;
  text += ", vocab_size " + std::to_string(m.vocab_size) + ", max_position_embeddings " +
          std::to_string(m.max_context) + ", tie_word_embeddings " +
          (m.tie_word_embeddings ? "true" : "false") + ", " + dtype + "; " + attention +
          "; RoPE (no cost effect): " + RopeText(c);
  if (m.attention_sinks) {
    text += "; attention sinks (gpt-oss: one learned logit per head, no cost effect)";
  }
  if (const Json* b = Get(c, "attention_bias"); InUse(b)) {
    text += "; attention_bias true (biases not counted: < 0.1% of the weights)";
  }
  text += ReadQuantization(c, &m);
  m.source = (options.source.empty() ? c.file() : options.source) +
             " (imported by servesim model import: " + text + ")";
  return m;
}

ModelSpec ImportHfConfigFile(const std::string& path, const HfImportOptions& options) {
  const Json j = ReadJsonFile(path, "Hugging Face config");
  return ImportHfConfig(JsonView(j, path), options);
}

}  // namespace servesim
