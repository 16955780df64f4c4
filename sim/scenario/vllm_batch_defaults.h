// The batch limits `vllm serve` takes when its flags leave them out. They
// depend on the GPU (vLLM's EngineArgs.get_batch_defaults, the same from
// vLLM 0.9 to 0.33): a GPU of 70 GiB or more that is not an A100 (H100,
// H200, B200, RTX PRO 6000) gets max_num_seqs 1024 and a token budget of
// 8192; any other (A100, L40S, L4, RTX 4090) 256 and 2048. (vLLM's
// offline LLM class takes twice the budget; servesim models the server.)
#pragma once

#include <cstdint>

#include "sim/model/model_spec.h"

namespace servesim {

struct VllmBatchDefaults {
  int32_t max_num_seqs;
  int32_t max_num_batched_tokens;
  // "GPUs of 70 GiB or more other than A100" or "other GPUs": the rule's
  // branch, for the report.
  const char* why;
};

VllmBatchDefaults VllmServeBatchDefaults(const GpuSpec& gpu);

}  // namespace servesim
