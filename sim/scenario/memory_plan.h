// GPU memory plan of one replica: weights, an activation reserve, and what is
// left for the paged KV cache, as vLLM sizes it at start-up.
#pragma once

#include "sim/core/json_view.h"

namespace servesim {

struct Scenario;

// Default activation reserve per GPU, in bytes: peak activations of one
// max_num_batched_tokens forward pass plus fp32 logits for max_num_seqs
// sequences, plus 1 GiB for the CUDA context, cuBLAS workspace and graphs.
double DefaultActivationReserveBytes(const Scenario& s);

// Fills s->kv_cache_bytes and, unless given, s->engine.num_gpu_blocks.
// Throws ConfigError when the weights and reserve do not fit.
void PlanMemory(const JsonView& root, Scenario* s);

}  // namespace servesim
