// Engine (one replica) settings, mirroring vLLM's names.
#pragma once

#include <cstdint>
#include <string>

namespace servesim {

struct EngineConfig {
  int32_t max_num_seqs = 256;
  int32_t max_num_batched_tokens = 8192;
  bool chunked_prefill = true;
  bool prefix_caching = false;
  int32_t block_size = 16;
  int32_t num_gpu_blocks = 0;  // resolved: derived from memory or given
  std::string policy = "fcfs";
};

}  // namespace servesim
