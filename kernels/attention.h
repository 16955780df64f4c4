// Launchers of the paged attention kernels (decode_attention.cu,
// prefill_attention.cu). Layouts are those of kernels/reference.h; bf16 is
// passed as raw 16-bit words so this header needs only the CUDA runtime API.
// Every launcher checks its arguments and returns an error Status instead of
// launching on bad input; device-side data (lengths, tables) is trusted.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/bf16_host.h"
#include "sim/core/status.h"

namespace servesim::kernels {

// The paged KV cache of one layer: [num_blocks][block_size][kv_heads][head_dim]
// bf16 for K and for V, plus the block table of the batch.
struct PagedKvCache {
  const Bf16* k = nullptr;
  const Bf16* v = nullptr;
  const int32_t* block_table = nullptr;  // [batch][max_blocks_per_seq]
  int block_size = 16;
  int max_blocks_per_seq = 0;
  int kv_heads = 0;
  int head_dim = 0;  // 64 or 128
};

// Tokens of context one decode thread block handles (flash-decoding split).
constexpr int kDecodePartition = 512;

size_t DecodeAttentionWorkspaceBytes(int batch, int heads, int max_seq_len,
                                     int head_dim);

// out[b][h] = softmax(scale q[b][h] K_b^T) V_b over the seq_lens[b] cached
// tokens of sequence b (the step's own K/V already written), for GQA with
// heads a multiple of kv_heads. max_seq_len bounds every seq_lens[b].
Status LaunchPagedDecodeAttention(const Bf16* q, const PagedKvCache& kv,
                                  const int32_t* seq_lens, int batch, int heads,
                                  int max_seq_len, float scale, void* workspace,
                                  size_t workspace_bytes, Bf16* out,
                                  cudaStream_t stream);

// Chunked causal prefill: sequence b has context_lens[b] cached tokens and
// q_start[b+1] - q_start[b] new tokens (their K/V already in the cache at
// positions context_lens[b] + i); q and out are [total_new][heads][head_dim].
// max_new bounds the new tokens of any sequence, max_total its cached + new.
Status LaunchPrefillAttention(const Bf16* q, const PagedKvCache& kv,
                              const int32_t* q_start,
                              const int32_t* context_lens, int batch,
                              int heads, int max_new, int max_total,
                              float scale, Bf16* out, cudaStream_t stream);

}  // namespace servesim::kernels
