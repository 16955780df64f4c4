// GPU memory plan of one replica: weights, an activation reserve, and what is
// left for the paged KV cache, as vLLM sizes it at start-up.
#pragma once

#include "sim/core/json_view.h"

namespace servesim {

struct Scenario;

// Most KV blocks per GPU. The block table is allocated up front (about 12
// bytes a block): 2^24 blocks is 268 M tokens at block size 16, more than
// any GPU holds, while 2^30 used to abort with std::bad_alloc.
inline constexpr int64_t kMaxGpuBlocks = int64_t{1} << 24;

// Default activation reserve per GPU, in bytes: peak activations of one
// max_num_batched_tokens forward pass plus fp32 logits for max_num_seqs
// sequences, plus 1 GiB for the CUDA context, cuBLAS workspace and graphs.
double DefaultActivationReserveBytes(const Scenario& s);

// Fills s->kv_cache_bytes and, unless given, s->engine.num_gpu_blocks.
// Throws ConfigError when the weights and reserve do not fit (naming
// /hardware/tp when the weights alone leave no room, else the engine key
// whose activation reserve does) -- with defer_fit, records that in
// s->no_room instead and leaves no KV blocks -- or when the memory gives
// more than kMaxGpuBlocks blocks.
void PlanMemory(const JsonView& root, Scenario* s, bool defer_fit = false);

}  // namespace servesim
