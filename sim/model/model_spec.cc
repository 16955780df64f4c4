// Derived quantities of ModelSpec: parameter counts and per-GPU bytes of
// weights and KV cache, shared by every cost model and the KV-cache sizing.
#include "sim/model/model_spec.h"

#include <algorithm>

namespace servesim {

int64_t ModelSpec::AttentionParamsPerLayer() const {
  const int64_t h = hidden_size;
  const int64_t heads = num_heads;
  if (is_mla()) {
    // MLA (DeepSeek-V2 paper, section 2.1): queries through a q_lora_rank
    // bottleneck (q_a, q_b), keys and values from one compressed latent
    // (kv_a: h -> kv_lora_rank + the shared rope key; kv_b: the latent ->
    // every head's non-rope key and value), then the output projection.
    const int64_t q = q_lora_rank > 0 ? h * q_lora_rank + int64_t{q_lora_rank} * heads * head_dim
                                      : h * heads * head_dim;
    const int64_t kv_a = h * (kv_lora_rank + qk_rope_head_dim);
    const int64_t kv_b = int64_t{kv_lora_rank} * heads * (head_dim - qk_rope_head_dim + v_head_dim);
    return q + kv_a + kv_b + heads * v_head_dim * h;
  }
  const int64_t q = heads * head_dim;
  const int64_t kv = int64_t{num_kv_heads} * head_dim;
  // Q, K, V projections in, O projection out; biases (Qwen) ignored.
  return h * q + 2 * h * kv + q * h;
}

int64_t ModelSpec::MlpParamsPerLayer() const {
  if (!is_moe()) return DenseMlpParamsPerLayer();
  // Gated MLP (SwiGLU): gate and up h->i, down i->h, for every expert.
  const int64_t per_expert = 3 * int64_t{hidden_size} * intermediate_size;
  const int64_t router = int64_t{hidden_size} * num_experts;
  return (num_experts + shared_experts) * per_expert + router;
}

int64_t ModelSpec::DenseMlpParamsPerLayer() const {
  return 3 * int64_t{hidden_size} * DenseIntermediate();
}

int64_t ModelSpec::ParamCount() const {
  const int64_t embed = int64_t{vocab_size} * hidden_size;
  const int64_t embed_and_head = tie_word_embeddings ? embed : 2 * embed;
  return embed_and_head + num_layers * AttentionParamsPerLayer() +
         MoeLayers() * MlpParamsPerLayer() + DenseMlpLayers() * DenseMlpParamsPerLayer();
}

int64_t ModelSpec::ActiveParamCount() const {
  const int64_t idle_experts = is_moe() ? num_experts - experts_per_token : 0;
  const int64_t idle = MoeLayers() * idle_experts * 3 * int64_t{hidden_size} * intermediate_size;
  const int64_t lookup = tie_word_embeddings ? 0 : int64_t{vocab_size} * hidden_size;
  return ParamCount() - idle - lookup;
}

int ModelSpec::KvHeadsPerGpu(int tp) const {
  if (is_mla()) return 1;
  const int split = num_kv_heads / tp;
  return split > 0 ? split : 1;
}

double ModelSpec::WeightBytesPerGpu(int tp) const {
  // Megatron-style sharding as in vLLM: Q/O, MLP/experts, embedding and LM
  // head are split tp ways (experts ep ways under expert parallelism); K/V
  // projections follow KvHeadsPerGpu, so they are replicated once tp exceeds
  // num_kv_heads. The router is replicated.
  const double h = hidden_size;
  double attn = 0;
  if (is_mla()) {
    // vLLM replicates the down-projections (q_a, kv_a: ReplicatedLinear)
    // and splits the per-head up- and output projections by heads.
    const double heads = static_cast<double>(num_heads) / tp;
    const double q = q_lora_rank > 0 ? h * q_lora_rank + q_lora_rank * heads * head_dim
                                     : h * heads * head_dim;
    attn = q + h * (kv_lora_rank + qk_rope_head_dim) +
           kv_lora_rank * heads * (head_dim - qk_rope_head_dim + v_head_dim) +
           heads * v_head_dim * h;
  } else {
    const double q = static_cast<double>(num_heads) * head_dim / tp;
    const double kv = static_cast<double>(KvHeadsPerGpu(tp)) * head_dim;
    attn = 2 * h * q + 2 * h * kv;
  }
  // Expert parallelism keeps experts whole, num_experts / ep on each GPU;
  // shared experts and dense MLPs are split tp ways.
  const double one_expert = 3.0 * h * intermediate_size;
  const double experts =
      is_moe() ? num_experts * one_expert / (expert_parallel > 1 ? expert_parallel : tp) : 0;
  const double shared = is_moe() ? shared_experts * one_expert / tp : 0;
  const double router = is_moe() ? h * num_experts : 0;
  const double dense = 3.0 * h * DenseIntermediate() / tp;
  const double embed = static_cast<double>(vocab_size) * h / tp;
  // A pipeline stage holds the embedding, the LM head, both or neither
  // (tied: one matrix where a stage holds both, as a whole model does).
  const int tables = (holds_embedding ? 1 : 0) + (holds_lm_head ? 1 : 0);
  const double embed_and_head =
      embed * (tie_word_embeddings && tables == 2 ? 1 : tables);
  const double bf16 = dtype_bytes * (embed_and_head + MoeLayers() * router);
  if (dense_layers == 0 && shared_experts == 0 && expert_weight_dtype.empty()) {
    // One kind of layer (the sum as it always was, to the last bit).
    return bf16 + weight_bytes * num_layers * (attn + (is_moe() ? experts : dense));
  }
  return bf16 +
         weight_bytes * (num_layers * attn + MoeLayers() * shared + DenseMlpLayers() * dense) +
         ExpertWeightBytes() * MoeLayers() * experts;
}

std::string ModelSpec::Label() const {
  std::string q;
  if (fp8_weights()) q = "fp8 weights";
  if (!expert_weight_dtype.empty()) {
    q += std::string(q.empty() ? "" : ", ") + expert_weight_dtype + " experts";
  }
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

double ModelSpec::KvElementsPerTokenPerLayer(int tp) const {
  if (is_mla()) return static_cast<double>(kv_lora_rank) + qk_rope_head_dim;
  return 2.0 * KvHeadsPerGpu(tp) * head_dim;
}

double ModelSpec::KvBytesPerTokenPerGpu(int tp) const {
  return FullAttentionLayers() * KvElementsPerTokenPerLayer(tp) * kv_bytes;
}

double ModelSpec::WindowedKvBytesPerSeqPerGpu(int tp, int block_size) const {
  return static_cast<double>(sliding_window_layers) * (sliding_window + block_size) *
         KvElementsPerTokenPerLayer(tp) * kv_bytes;
}

int PipelineStageStart(int layers, int pp, int rank) {
  const int base = layers / pp, extra = layers % pp;
  // Stages pp - 1 - extra .. pp - 2 take one more layer each.
  const int first_long = pp - 1 - extra;
  return rank * base + std::max(0, std::min(rank, pp - 1) - first_long);
}

ModelSpec ModelSpec::PipelineStage(int pp, int rank) const {
  ModelSpec s = *this;
  if (pp <= 1) return s;
  const int a = PipelineStageStart(num_layers, pp, rank);
  const int b = PipelineStageStart(num_layers, pp, rank + 1);
  s.num_layers = b - a;
  // DeepSeek's dense layers are the first ones.
  s.dense_layers = std::max(0, std::min(dense_layers, b) - a);
  // Only a count of windowed layers is known (gpt-oss alternates them):
  // spread evenly.
  const auto windowed_before = [&](int layer) {
    return static_cast<int>(static_cast<int64_t>(layer) * sliding_window_layers / num_layers);
  };
  s.sliding_window_layers = windowed_before(b) - windowed_before(a);
  if (s.sliding_window_layers == 0) s.sliding_window = 0;
  s.holds_embedding = rank == 0;
  s.holds_lm_head = rank == pp - 1;
  return s;
}

}  // namespace servesim
