// The scenario keys and their defaults, printed by `servesim run --help`.
// README's "Scenario reference" section carries the same table.
#include "sim/cli/commands.h"

namespace servesim {

const char* ScenarioReference() {
  return R"(
Scenario keys (JSON; unknown keys are errors; absent or null = default):
  seed                          1        seeds every random stream
  model                         required models/llm/<name>.json or a path, or
                                         {"name": ..., "weight_dtype": ...}
  model.weight_dtype            bf16     bf16 | fp8 (vLLM --quantization fp8:
                                         layers' weights 1 byte; W8A8 GEMMs on
                                         GPUs with fp8 tensor cores)
  model.served_hf_id            (model)  Hugging Face id `search` deploys
                                         (vllm serve <id>); default: the model
                                         file's served_hf_id (the instruct
                                         variant)
  hardware.gpu                  required models/gpu/<name>.json or a path;
                                         aliases: h100 = h100-sxm, a100 =
                                         a100-80gb
  hardware.tp                   1        tensor-parallel degree (divides heads)
  engine.max_num_seqs           256      running requests per step
  engine.max_num_batched_tokens 8192     token budget per step
  engine.chunked_prefill        true     split prompts across steps
  engine.block_size             16       tokens per KV block
  engine.gpu_memory_utilization 0.9      share of GPU memory the engine uses
  engine.num_gpu_blocks         null     KV blocks; null = derived from memory
  engine.activation_reserve_gib null     null = derived from the model
  engine.preemption             recompute (only mode, as vLLM v1)
  engine.policy                 fcfs     fcfs | shortest-prompt-first |
                                         shortest-prompt-first-oracle (reads
                                         true output lengths: a bound only) |
                                         priority (vLLM: lowest class priority
                                         first, preempts the highest value) |
                                         edf (earliest send + class TTFT SLO
                                         first, preempts the latest) | lpm
                                         (SGLang: longest cached prefix first)
  engine.prefix_caching         false    vLLM automatic prefix caching
  engine.async_scheduling       true     vLLM async scheduling: next step
                                         scheduled while one runs (+1 step
                                         before a busy engine sees a request)
  engine.reserve_full_prompt    true     admit only if the whole prompt fits
                                         in free KV (scheduler_reserve_full_isl)
  engine.long_prefill_token_threshold 0  per-request token cap per step
                                         when others wait (0 = none)
  engine.watermark              0        share of KV blocks kept free when
                                         admitting while others run
  engine.kv_beyond_gpu_memory   false    allow num_gpu_blocks beyond the GPU's
                                         memory minus weights (a what-if)
  engine.kv_cache_dtype         auto     auto (= bf16) | bf16 | fp8 | fp8_e4m3
                                         | fp8_e5m2 (vLLM --kv-cache-dtype)
  engine.speculative_decoding   none     {num_speculative_tokens k (0-64),
                                         acceptance_rate (per draft token,
                                         [0, 1]) or acceptance_beta {a, b}
                                         (per-request rate ~ Beta(a, b)),
                                         draft_cost_fraction (one draft pass /
                                         one target decode pass, 0)}; sync
                                         scheduling only
  cost_model.type               roofline roofline | linear | calibrated (+profile)
    linear: step_s, prefill_token_s, decode_seq_s, kv_token_s (all 0)
    roofline: preset (kernels | datasheet), then overrides per op kind:
      gemm_{floor_s,compute_efficiency,memory_efficiency,crossover_p};
      attention_{compute,memory}_efficiency (both kinds), or
      {prefill,decode}_attention_{floor_s,compute_efficiency,
      memory_efficiency,crossover_p}, prefill_attention_per_query_head_s,
      decode_attention_per_sequence_kv_head_s;
      fp8 and MoE kinds: gemm_fp8_*, moe_*, {prefill,decode}_attention_fp8_kv_*
      (the same suffixes);
      elementwise_{memory_efficiency,kernel_floor_s},
      {rmsnorm,residual_add,rotary,silu_mul,kv_cache_write}_memory_efficiency;
      interconnect_efficiency, allreduce_latency_s (both backends),
      custom_allreduce_{latency_s,efficiency,max_bytes},
      nccl_allreduce_{latency_s,efficiency};
      step_overhead_s, per_sequence_overhead_s (README, "Cost models")
  workload.arrival.process      required poisson | gamma | constant | closed
    rate (req/s, open loop), burstiness (gamma; 1 = Poisson, < 1 burstier)
    concurrency, think_time_s (0) for closed
  workload.max_concurrency      0        open loop: cap on requests in flight
  workload.input_len / output_len required {"dist": ...}:
    fixed{value} uniform{min,max} normal{mean,std} exponential{mean}
    lognormal{median,p99 | mu,sigma} empirical{path,column}
    every dist: min (1), max (1000000) clamps
  workload.prefix               null     shared prefixes, {"model": ...}:
    prefix_repetition{num_prefixes,prefix_len,suffix_len,output_len}
    random_prefix{prefix_len}  zipf{num_prefixes,prefix_len,s}
    generated_shared_prefix{num_groups,prompts_per_group,system_prompt_len,
      question_len,output_len}  target_hit_rate{hit_rate}
  workload.sessions             null     multi-turn: {turns: {dist}, think_time_s}
  workload.classes              null     request classes, a list of {name, share,
    input_len, output_len (each a dist, replacing workload.input_len /
    output_len), priority (0; lower first under policy priority),
    ttft_slo_ms, tpot_slo_ms (0 = none; goodput and edf deadlines)};
    not with a trace, sessions or a prefix model that defines lengths;
    the report and JSON (servesim.classes) give each class's latencies,
    SLO attainment and goodput
  workload.trace                null     {path, format: jsonl|azure|mooncake|
    lengths|burstgpt|sessions, use_timestamps (true), time_scale (1),
    max_bad_fraction (0), fields: {prompt_tokens, completion_tokens,
    timestamp} (jsonl; sessions also request_id, parent_id, session_id,
    think_time), timestamp_unit: auto|s|ms|us (numeric stamps; auto:
    the format's own, else detected and reported), model, log_type
    (burstgpt row filters)}; 0-token rows are read as 1 token and counted
  workload.num_requests         0        stop creating after N (0 = no bound)
  workload.duration_s           0        stop creating after T s (0 = no bound)
  metrics.warmup_s              0        exclude requests arriving before T s
  metrics.warmup_requests       0        exclude the first N requests
  metrics.percentiles           [50,90,95,99,99.9]
  limits.max_queued             100000   stop (unstable) beyond this queue
  cluster.replicas              1        identical replicas behind a router
  cluster.router                round_robin | least_outstanding |
                                power_of_two | prefix_affinity
  cluster.load_slack            0.25     prefix_affinity load bound
  disaggregation                null     prefill/decode pools (excludes cluster):
    {prefill: POOL, decode: POOL, link: LINK}; POOL = {gpu, tp (default
    /hardware's), replicas (1), router, load_slack, engine {any /engine key,
    overriding /engine}, cost_model}; LINK = models/links/<name> (nvlink-4,
    infiniband-ndr-400g, infiniband-hdr-200g, roce-200g, roce-400g) or
    {gb_per_s, latency_us} per decode GPU. Prefill runs max_tokens=1 and
    holds its KV until the transfer ends; the decode instance produces every
    token the client sees (TTFT includes the transfer)

Bounds (simulated time is int64 ns; beyond these a value is an error):
  a time interval (think_time_s, 1 / rate) <= 1e6 s; a span (duration_s,
  warmup_s, num_requests / rate, a trace replay) <= 1e8 s; gamma burstiness
  in [0.001, 1000]; prompt and output lengths <= 16777216 tokens;
  num_gpu_blocks (given or derived) <= 16777216; linear step_s <= 60 s,
  per-token/sequence terms <= 1 s; roofline efficiencies in [0.001, 1],
  latencies <= 1 s. A key given twice, JSON nested deeper than 64 levels
  and a scenario file over 16 MiB are errors.
)";
}

}  // namespace servesim
