// Engine (one replica) settings, mirroring vLLM's names; SGLang's in its
// own words (sglang_config.h).
#pragma once

#include <cstdint>
#include <string>

#include "sim/engine/sglang_config.h"

namespace servesim {

// Speculative decoding (engine.speculative_decoding; README "Speculative
// decoding"): a proposer drafts k tokens per decoding sequence, the target
// verifies them in one (k+1)-token forward pass, and the drafts are accepted
// one by one until the first rejection, plus the target's own (bonus or
// correction) token. Synchronous scheduling only.
struct SpecDecodeConfig {
  int32_t num_speculative_tokens = 0;  // k; 0: off
  // Per draft token, the chance it is accepted (given the ones before it
  // were): a constant, or (beta_a > 0) drawn per request from
  // Beta(beta_a, beta_b).
  double acceptance_rate = 0;
  double beta_a = 0, beta_b = 0;
  // One draft forward pass costs this fraction of the target's one-token
  // decode pass over the same sequences; k passes per step (0: a free
  // proposer, e.g. n-gram on the CPU).
  double draft_cost_fraction = 0;
  // Not a scenario setting: the scenario seed (set by the driver); the
  // acceptance draws of a request are a function of (seed, request id,
  // output position), so policies compare on common random numbers.
  uint64_t seed = 0;
  bool on() const { return num_speculative_tokens > 0; }
};

// Which serving engine runs each replica (engine.kind).
enum class EngineKind { kVllm, kSglang };

struct EngineConfig {
  EngineKind kind = EngineKind::kVllm;
  // engine.kind "sglang": its scheduler's settings, and whether requests
  // set ignore_eos (sglang.bench_serving does by default): admission then
  // reserves a request's whole remaining output rather than the new-token
  // ratio's share. The vLLM fields below describe such a replica for the
  // invariants and reports: max_num_seqs = max_running_requests,
  // block_size = page_size, num_gpu_blocks = pool pages + the reserved one,
  // max_num_batched_tokens = the most one batch can compute.
  SglangConfig sglang;
  bool sglang_ignore_eos = true;
  int32_t max_num_seqs = 256;
  int32_t max_num_batched_tokens = 8192;
  bool chunked_prefill = true;
  bool prefix_caching = false;
  int32_t block_size = 16;
  int32_t num_gpu_blocks = 0;  // resolved: derived from memory or given;
                               // one of them is vLLM's reserved null block
  std::string policy = "fcfs";
  // vLLM's scheduler_reserve_full_isl: admit a waiting request only if the
  // free blocks hold its whole known sequence (minus cache hits), not just
  // its first chunk.
  bool reserve_full_prompt = true;
  // vLLM's async scheduling: step k+1 is scheduled while step k runs, before
  // its sampled tokens are known (two batches in flight).
  bool async_scheduling = true;
  // Pipeline parallelism (hardware.pp): the stages, each holding one batch
  // in flight. vLLM 0.33 schedules every ready request into the next batch,
  // so which micro-batch a decoding request rides is fixed by when it was
  // admitted, and the micro-batches can be as uneven as all in one
  // (vllm-project/vllm issues #15330, #41682). pipeline_decode_balance (a
  // what-if, not vLLM 0.33: PRs #50410 and #57433, open, and vllm-rbln's
  // DynamicDecodeCapPolicy) caps the decoding requests of each batch at
  // ceil(decoding requests / stages), spreading them over the stages.
  int32_t pipeline_stages = 1;
  bool pipeline_decode_balance = false;
  // vLLM's long_prefill_token_threshold: with more than one request in the
  // engine, a step computes at most this many tokens of one request (0: no
  // cap).
  int32_t long_prefill_token_threshold = 0;
  // vLLM's watermark: share of the KV blocks kept free when admitting a
  // waiting request while others run.
  double watermark = 0;
  // engine.preemption "swap" (vLLM v0's preemption_mode=swap): a victim's
  // KV blocks are copied to the CPU tier and back on resume instead of
  // being recomputed; recompute when the tier has no room (counted).
  bool swap_preemption = false;
  // engine.kv_offload: the CPU tier (sim/kv/cpu_tier.h) in blocks (0: no
  // tier), the bytes of one block on one GPU, the GPUs of the instance
  // (each moves its shard over its own link), and one GPU's host link.
  // It holds swapped requests and, with prefix caching, the blocks the GPU
  // prefix cache evicts.
  int64_t cpu_blocks = 0;
  double kv_block_bytes = 0;
  // Sliding-window layers (gpt-oss): the most KV one running sequence's
  // windowed layers hold on a GPU, and what the memory plan set aside for
  // max_num_seqs of them (sim/scenario/memory_plan.cc); 0 without them.
  // The run invariants check the running sequences never need more.
  double windowed_kv_bytes_per_seq = 0;
  double windowed_kv_reserve_bytes = 0;
  int32_t offload_gpus = 1;
  double pcie_bytes_per_s = 0;
  double pcie_latency_s = 0;
  // Not a scenario setting: run the reference engine, the documented
  // subset of the code with every fast path off, which the fast paths must
  // match byte for byte (tests/fuzz/reference_equivalence_test.cc, on
  // generated and hand-made scenarios). Off with it, each where it lives:
  //  - the decode group: every sequence scheduled one by one, one ITL
  //    sample per token (UsesDecodeGroup, grouped_decode.h);
  //  - the counted block pool: the linked free queue with block ids
  //    (KvCache's counted_pool, sim/kv);
  //  - the fast prefix cache: KvCache's own, every block by id and one at
  //    a time, rather than PrefixCache's anonymous private blocks and
  //    memoised shared prefix runs (KvCache's fast_prefix, sim/kv);
  //  - private streams: every full block hashed and put in the prefix
  //    cache's map (Scheduler::FirstPrivate);
  //  - the prefix-hash memo: hashes computed afresh (block_hashing.h,
  //    the scheduler and the router's lookups in simulation.cc).
  bool reference_engine = false;
  // Not a scenario setting: keep the running requests in steady decode as
  // an aggregate (Scheduler's decode group; UsesDecodeGroup says where it
  // runs: not with the CPU tier, the disaggregated roles or the reference
  // engine). Modes that need every sequence one by one each step turn it off.
  bool decode_group = true;
  // Not a scenario setting: the speculative decode group hands its
  // verifying members to the cost model as runs (BatchShape::runs) rather
  // than one entry each; set by the replica when its cost model
  // PricesRuns().
  bool verify_runs = false;
  // Not scenario settings: the two roles of disaggregated prefill (as
  // vLLM's P2P/Nixl connectors), set per pool by the simulation driver.
  // A prefill instance keeps a finished request's KV blocks until its
  // transfer to the decode instance ends (Scheduler::ReleaseHeld), as the
  // connector's delayed free does.
  bool hold_kv_after_finish = false;
  // A decode instance admits a request whose prompt KV arrived from a
  // prefill instance: it allocates the prompt's blocks, counts all prompt
  // tokens but the last as computed, and computes that last token to sample
  // the first output token (vLLM's scheduler after a remote KV load). A
  // request preempted later recomputes locally.
  bool remote_prefill = false;
  SpecDecodeConfig spec;
};

}  // namespace servesim
