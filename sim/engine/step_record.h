// One executed step of one replica, as the run-level invariant checks and
// the per-step export see it: plain data, recorded only when asked for.
#pragma once

#include <cstdint>

#include "sim/core/time.h"

namespace servesim {

struct StepRecord {
  int32_t replica = 0;
  SimTime scheduled = 0;  // the engine scheduled the batch (async: earlier
                          // than start, while the previous step ran)
  SimTime start = 0;      // the batch began executing
  SimTime end = 0;        // its tokens were sampled (start + cost)
  // Pipeline parallelism (hardware.pp, pipeline_stages > 1): the batch left
  // the first stage at first_stage_end and entered the last at
  // last_stage_start; busy is its share of the replica's GPU time (its
  // stages' times over their number). One stage: end, start, end - start.
  SimTime first_stage_end = 0, last_stage_start = 0, busy = 0;
  int32_t pipeline_stages = 1;
  int32_t num_seqs = 0;          // sequences in the batch
  int32_t num_prefill_seqs = 0;  // of them, computing prompt (or recompute) tokens
  int32_t num_decode_seqs = 0;   // of them, one-token decodes
  int64_t num_tokens = 0;        // tokens computed
  int64_t prefill_tokens = 0;    // of them, by prefill sequences
  int64_t context_tokens = 0;    // sum of the sequences' cached context
  int32_t num_admitted = 0;   // requests taken from the waiting queue
  int32_t num_preempted = 0;  // requests preempted while scheduling it
  int32_t num_finishing = 0;  // requests whose last token this step samples
  int64_t cached_tokens = 0;  // prefix-cache hits of the admitted requests
  int32_t kv_blocks_used = 0;   // after scheduling (held by requests)
  int32_t kv_blocks_total = 0;  // usable blocks of the replica's cache
  int32_t num_running = 0;  // requests in the running queue after scheduling
  int32_t num_waiting = 0;  // requests in the waiting queue after scheduling
                            // (not yet admitted, or preempted)
  // KV offload (engine.kv_offload): blocks this step moved to the CPU tier
  // (swap-out; evicted prefix blocks) and back (swap-in; CPU prefix hits),
  // counting those of empty batches scheduled just before it, and the time
  // it waited for them (included in end - start).
  int64_t swap_out_blocks = 0, store_blocks = 0;
  int64_t swap_in_blocks = 0, load_blocks = 0;
  SimTime transfer_stall = 0;
  // The cost model's breakdown of the step, seconds.
  double gemm_s = 0, attn_prefill_s = 0, attn_decode_s = 0, comm_s = 0,
         other_s = 0, overhead_s = 0;
};

}  // namespace servesim
