// One executed step of one replica, as the run-level invariant checks and
// per-step exports see it: plain data, recorded only when asked for.
#pragma once

#include <cstdint>

#include "sim/core/time.h"

namespace servesim {

struct StepRecord {
  int32_t replica = 0;
  SimTime start = 0;          // the step's batch began executing
  SimTime end = 0;            // its tokens were sampled (start + cost)
  int32_t num_seqs = 0;       // sequences in the batch
  int32_t num_prefill_seqs = 0;  // of them, computing prompt (or recompute) tokens
  int64_t num_tokens = 0;     // tokens computed
  int32_t num_preempted = 0;  // requests preempted while scheduling it
  int32_t kv_blocks_used = 0;  // after scheduling (held by requests)
  int32_t kv_blocks_total = 0;  // usable blocks of the replica's cache
};

}  // namespace servesim
