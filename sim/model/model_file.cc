// Writing a ModelSpec as a model file (see model_file.h).
#include "sim/model/model_file.h"

#include <nlohmann/json.hpp>


namespace servesim {

std::string ModelFileText(const ModelSpec& m) {
  nlohmann::ordered_json j;
  j["name"] = m.name;
  j["source"] = m.source;
  if (!m.served_hf_id.empty()) j["served_hf_id"] = m.served_hf_id;
  j["num_layers"] = m.num_layers;
  j["hidden_size"] = m.hidden_size;
  j["num_heads"] = m.num_heads;
  j["num_kv_heads"] = m.num_kv_heads;
  j["head_dim"] = m.head_dim;
  j["intermediate_size"] = m.intermediate_size;
  j["vocab_size"] = m.vocab_size;
  j["num_experts"] = m.num_experts;
  j["experts_per_token"] = m.experts_per_token;
  j["tie_word_embeddings"] = m.tie_word_embeddings;
  j["max_context"] = m.max_context;
  j["dtype_bytes"] = m.dtype_bytes;
  // The architecture keys only where they are used, so a plain decoder's
  // file has none of them.
  auto put = [&](const char* key, int v) {
    if (v != 0) j[key] = v;
  };
  if (m.weight_dtype != "bf16") j["weight_dtype"] = m.weight_dtype;
  if (!m.expert_weight_dtype.empty()) j["expert_weight_dtype"] = m.expert_weight_dtype;
  put("shared_experts", m.shared_experts);
  put("dense_layers", m.dense_layers);
  put("dense_intermediate_size", m.dense_intermediate_size);
  put("q_lora_rank", m.q_lora_rank);
  put("kv_lora_rank", m.kv_lora_rank);
  put("qk_rope_head_dim", m.qk_rope_head_dim);
  put("v_head_dim", m.v_head_dim);
  put("sliding_window", m.sliding_window);
  put("sliding_window_layers", m.sliding_window_layers);
  if (m.attention_sinks) j["attention_sinks"] = true;
  return j.dump(2) + "\n";
}

}  // namespace servesim
