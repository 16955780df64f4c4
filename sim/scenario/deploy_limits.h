// What a real deployment of a scenario must accept and can hold: the
// longest request its workload can send, the KV cache's tokens per replica,
// and from them vLLM's --max-model-len (the deployment files `servesim
// search` writes). vLLM refuses to start when its KV cache cannot hold one
// request of max_model_len tokens, and its default (the model's whole
// context) is far above what a large model's cache holds on few GPUs.
#pragma once

#include <cstdint>
#include <string>

#include "sim/scenario/scenario.h"

namespace servesim {

// The most tokens (prompt + output) one request of the workload can have:
// the length distributions' maxima (their clamps), a class's, the prefix
// model's longest prefix, a multi-turn session's whole conversation, or a
// trace's longest record.
struct LongestRequest {
  int64_t tokens = 0;
  std::string how;  // e.g. "input_len max 1000000 + output_len max 1000000"
};
LongestRequest LongestRequestOf(const Scenario& s);

// Tokens of KV one replica holds: the blocks the scheduler can use (one is
// vLLM's reserved null block) x block size. A request needing more is
// rejected by the simulation (Scheduler::CheckServable).
int64_t KvTokenCapacity(const Scenario& s);

// vLLM's --max-model-len for the scenario's replica: the longest request,
// capped at what the KV cache holds and at the model's context
// (max_position_embeddings, above which vLLM refuses the setting).
struct MaxModelLen {
  int64_t tokens = 0;
  LongestRequest longest;
  int64_t kv_tokens = 0;
  std::string note;  // why it is below the longest request; "" when it is not
};
MaxModelLen PlanMaxModelLen(const Scenario& s);

}  // namespace servesim
