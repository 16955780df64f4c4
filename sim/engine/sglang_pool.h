// How SGLang 0.5.23 sizes its KV pool and request limit on a GPU
// (mem_cache/kv_cache_configurator.py: _profile_available_bytes,
// resolve_max_num_reqs), for standard attention:
//  - KV budget = GPU memory free after the weights load, less the slack
//    (1 - mem_fraction_static) x the memory free before they load;
//  - max_total_tokens = budget / KV bytes per token, down to a whole page;
//  - max_running_requests, unset: min(max(min(tokens / context_length x
//    512, 4096), 2048), tokens / 2); set by hand: min(it, tokens / 2).
// Used by engine.kind "sglang" (sim/scenario/sglang_engine.cc).
#pragma once

#include <cstdint>
#include <string>

namespace servesim {

struct SglangPoolInputs {
  double free_before_load_bytes = 0;  // free GPU memory before the weights
  double free_after_load_bytes = 0;   // ... and after (weights resident)
  double mem_fraction_static = 0.9;
  // Key and value x KV heads per tensor-parallel rank x head size x layers
  // x bytes per element.
  double kv_bytes_per_token = 0;
  int32_t page_size = 1;
  int64_t context_length = 0;
  int32_t max_running_requests = 0;  // 0: unset (SGLang's default rule)
};

struct SglangPool {
  int64_t max_total_tokens = 0;
  int32_t max_running_requests = 0;
};

// SGLang's max_running_requests for a pool of `tokens`: `requested` (> 0)
// or its default rule, at most tokens / 2.
int32_t SglangRequestLimit(int64_t tokens, int64_t context_length, int32_t requested);

// Fills *pool; false with *error (SGLang refuses to start) when the
// weights leave no memory for KV or the pool holds no page.
bool SizeSglangPool(const SglangPoolInputs& in, SglangPool* pool, std::string* error);

}  // namespace servesim
