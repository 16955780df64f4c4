// Derived quantities of ModelSpec: parameter counts and per-GPU bytes of
// weights and KV cache, shared by every cost model and the KV-cache sizing.
#include "sim/model/model_spec.h"

namespace servesim {

int64_t ModelSpec::AttentionParamsPerLayer() const {
  const int64_t h = hidden_size;
  const int64_t q = int64_t{num_heads} * head_dim;
  const int64_t kv = int64_t{num_kv_heads} * head_dim;
  // Q, K, V projections in, O projection out; biases (Qwen) ignored.
  return h * q + 2 * h * kv + q * h;
}

int64_t ModelSpec::MlpParamsPerLayer() const {
  // Gated MLP (SwiGLU): gate and up h->i, down i->h, for every expert.
  const int64_t per_expert = 3 * int64_t{hidden_size} * intermediate_size;
  const int64_t router = is_moe() ? int64_t{hidden_size} * num_experts : 0;
  return num_experts * per_expert + router;
}

int64_t ModelSpec::ParamCount() const {
  const int64_t embed = int64_t{vocab_size} * hidden_size;
  const int64_t embed_and_head = tie_word_embeddings ? embed : 2 * embed;
  return embed_and_head +
         num_layers * (AttentionParamsPerLayer() + MlpParamsPerLayer());
}

int ModelSpec::KvHeadsPerGpu(int tp) const {
  const int split = num_kv_heads / tp;
  return split > 0 ? split : 1;
}

double ModelSpec::WeightBytesPerGpu(int tp) const {
  // Megatron-style sharding as in vLLM: Q/O, MLP/experts, embedding and LM
  // head are split tp ways (experts ep ways under expert parallelism); K/V
  // projections follow KvHeadsPerGpu, so they are replicated once tp exceeds
  // num_kv_heads. The router is replicated.
  const double h = hidden_size;
  const double q = static_cast<double>(num_heads) * head_dim / tp;
  const double kv = static_cast<double>(KvHeadsPerGpu(tp)) * head_dim;
  const double attn = 2 * h * q + 2 * h * kv;
  // Expert parallelism keeps experts whole, num_experts / ep on each GPU.
  const double experts = num_experts * 3.0 * h * intermediate_size /
                         (expert_parallel > 1 ? expert_parallel : tp);
  const double router = is_moe() ? h * num_experts : 0;
  const double embed = static_cast<double>(vocab_size) * h / tp;
  const double embed_and_head = tie_word_embeddings ? embed : 2 * embed;
  return dtype_bytes * (embed_and_head + num_layers * router) +
         weight_bytes * num_layers * (attn + experts);
}

std::string ModelSpec::Label() const {
  std::string q;
  if (fp8_weights()) q = "fp8 weights";
  if (fp8_kv()) q += std::string(q.empty() ? "" : ", ") + "fp8 KV cache";
  return q.empty() ? name : name + " (" + q + ")";
}

void ModelSpec::SetWeightDtype(const std::string& dtype) {
  weight_dtype = dtype;
  weight_bytes = dtype == "fp8" ? 1 : dtype_bytes;
}

void ModelSpec::SetKvCacheDtype(const std::string& dtype) {
  kv_cache_dtype = dtype;
  kv_bytes = dtype == "fp8" ? 1 : dtype_bytes;
}

double ModelSpec::KvBytesPerTokenPerGpu(int tp) const {
  // K and V, each KvHeadsPerGpu * head_dim values, in every layer.
  return 2.0 * num_layers * KvHeadsPerGpu(tp) * head_dim * kv_bytes;
}

}  // namespace servesim
