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
  return j.dump(2) + "\n";
}

}  // namespace servesim
