// A real forward pass for one batch composition: every layer of a model's
// tensor-parallel shard on random bf16 weights with a paged KV cache, run
// with the kernels of kernels/ and cuBLAS, in vLLM's token order (decoding
// sequences first, then prefill chunks). Per layer:
//   residual + RMSNorm -> QKV GEMM -> rotary + KV write -> decode attention
//   (decodes) and chunked causal prefill attention (prefills) -> O GEMM ->
//   residual + RMSNorm -> gate+up GEMM -> SiLU-mul -> down GEMM,
// then a final norm and the LM head for the sampling sequences. Not run:
// the embedding gather and sampling (both tiny), and all-reduces (one GPU).
// The LM head reads the first S rows rather than gathering each sampling
// sequence's last row: the same GEMM shape, without a gather kernel.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "calibrate/gpu/device_arena.h"
#include "kernels/attention.h"
#include "sim/cost/cost_model.h"

namespace servesim::calibrate::gpu {

// The largest step of a set, which sizes every buffer.
struct StepLimits {
  int64_t max_tokens = 0;     // new tokens of one step
  int64_t max_kv_blocks = 0;  // blocks one step's sequences occupy
  int64_t max_samples = 0;    // sampling sequences of one step
};
StepLimits LimitsOf(const std::vector<BatchShape>& steps, int block_size);

// How many layers can have their own weights and KV cache in `free_bytes`
// (the others reuse them cyclically; a layer's weights exceed the L2 for
// every real model, so reuse still streams them from HBM). Throws when not
// even one layer fits.
int DistinctLayersThatFit(const ModelSpec& m, int tp, const StepLimits& lim,
                          int block_size, size_t free_bytes);

// The constants of the forward pass (Llama 3's; they do not change cost).
inline constexpr float kStepNormEps = 1e-5f;
inline constexpr float kStepRopeTheta = 5e5f;

class StepExecutor {
 public:
  struct LayerWeights {
    kernels::Bf16 *qkv, *o, *gate_up, *down, *norm1, *norm2;
  };
  struct LayerKv {
    kernels::Bf16 *k, *v;  // [blocks][block_size][kv_heads][head_dim]
  };

  StepExecutor(const ModelSpec& m, int tp, const StepLimits& lim,
               int block_size, int distinct_layers, cudaStream_t stream,
               cublasHandle_t cublas);
  StepExecutor(const StepExecutor&) = delete;
  StepExecutor& operator=(const StepExecutor&) = delete;

  // Block tables, positions and slots of `step` (synchronous uploads, so
  // call it outside a stream capture). Blocks come from a shuffled pool, as
  // a busy allocator hands them out.
  void Prepare(const BatchShape& step);
  // The forward pass of the prepared step, asynchronously on the stream
  // (capturable: no allocation, copy or synchronization inside).
  void Enqueue();
  // The final normed hidden state [tokens][hidden] of the last Enqueue.
  std::vector<kernels::Bf16> DownloadHidden() const;
  int tokens() const { return tokens_; }

  // For tests that recompute a prepared step on the CPU: the device
  // buffers of layer l, the input embeddings (valid between Prepare and
  // Enqueue, which overwrites them), and the computing sequences in
  // execution order (decodes first) with the physical blocks of each.
  const LayerWeights& layer_weights(int l) const { return weights_[l % weights_.size()]; }
  const LayerKv& layer_kv(int l) const { return kv_[l % kv_.size()]; }
  const kernels::Bf16* final_norm() const { return final_norm_; }
  const kernels::Bf16* input() const { return x_; }
  const std::vector<SeqWork>& order() const { return order_; }
  const std::vector<std::vector<int32_t>>& seq_blocks() const { return seq_blocks_; }

 private:

  int num_layers_, block_size_;
  Shard s_;
  cudaStream_t stream_;
  cublasHandle_t cublas_;
  Arena arena_;
  std::vector<LayerWeights> weights_;
  std::vector<LayerKv> kv_;
  kernels::Bf16 *final_norm_, *lm_head_;
  // Activations, sized for the largest step.
  kernels::Bf16 *x_, *residual_, *normed_, *qkv_, *q_, *attn_, *gate_up_,
      *act_, *logits_;
  std::vector<int32_t> pool_;  // shuffled physical block ids
  std::vector<SeqWork> order_;
  std::vector<std::vector<int32_t>> seq_blocks_;

  // The prepared step.
  std::unique_ptr<Arena> meta_;
  int tokens_ = 0, decodes_ = 0, prefills_ = 0, samples_ = 0;
  int decode_blocks_ = 0, prefill_blocks_ = 0;  // max blocks per sequence
  int max_decode_len_ = 0, max_new_ = 0, max_total_ = 0;
  int32_t *positions_ = nullptr, *slots_ = nullptr;
  int32_t *decode_table_ = nullptr, *decode_lens_ = nullptr;
  int32_t *prefill_table_ = nullptr, *q_start_ = nullptr, *context_lens_ = nullptr;
  void* decode_ws_ = nullptr;
  size_t decode_ws_bytes_ = 0;
};

}  // namespace servesim::calibrate::gpu
