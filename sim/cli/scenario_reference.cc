// The scenario keys and their defaults: one table, printed as text by
// `servesim run --help` and as Markdown by `servesim run
// --scenario-reference-markdown` (tools/docs/scenario_reference.py turns the
// latter into docs/reference/scenario.md, and CI fails when they differ).
#include <sstream>
#include <string>
#include <string_view>

#include "sim/cli/commands.h"
#include "sim/engine/engine_support.h"

namespace servesim {
namespace {

struct KeyDoc {
  const char* key;
  const char* def;   // the default, or "required"
  const char* text;  // one paragraph, ASCII, no manual line breaks
};

constexpr KeyDoc kKeys[] = {
    {"seed", "1",
     "Seeds every random stream; arrivals, input lengths and output lengths "
     "are separate streams, so changing the engine never changes the traffic."},
    {"name, description", "none", "Free text, for the reader; not used."},
    {"model", "required",
     "models/llm/<name>.json or a path, or a shipped model's Hugging Face id "
     "(meta-llama/Llama-3.1-8B-Instruct; servesim list models), or "
     "{\"name\": ..., \"weight_dtype\": ..., \"served_hf_id\": ...}."},
    {"model.weight_dtype", "the model file's (bf16; deepseek-v3: fp8 as published)",
     "bf16 or fp8 (vLLM --quantization fp8): the layers' linear weights take "
     "one byte (the embedding, LM head and an MoE router stay bf16), so more "
     "KV blocks fit; GEMMs run as W8A8 at the fitted fp8 rates on GPUs with "
     "fp8 tensor cores, weight-only at the bf16 rates elsewhere (A100). "
     "--set model.weight_dtype=fp8 works on a scenario whose model is a name. "
     "gpt-oss-120b's MXFP4 experts keep their format either way."},
    {"model.served_hf_id", "the model file's",
     "The Hugging Face id that `search`'s deployment files serve (vllm serve "
     "<id>); the model files name the instruct variant."},
    {"hardware.gpu", "required",
     "models/gpu/<name>.json or a path; aliases h100 = h100-sxm, a100 = "
     "a100-80gb."},
    {"hardware.tp", "1", "Tensor-parallel degree; must divide the attention heads."},
    {"hardware.ep", "1",
     "Expert parallelism (vLLM --enable-expert-parallel), MoE models only: "
     "the experts spread whole over ep GPUs, tp of a replica times ep / tp "
     "data-parallel replicas (cluster.replicas a multiple of it); a multiple "
     "of tp dividing num_experts. Roofline only; not with disaggregation."},
    {"hardware.pp", "1",
     "Pipeline-parallel stages (vLLM --pipeline-parallel-size), tp GPUs each, "
     "the layers split as vLLM splits them; one batch in flight per stage. "
     "At most half the layers; roofline or calibrated; not with speculative "
     "decoding, KV offload, SGLang or disaggregation."},
    {"hardware.pp_link", "the GPU interconnect",
     "The link between stages in different servers: a models/links name "
     "(e.g. infiniband-ndr-400g). Default: the GPUs' own link, 10 us a send."},
    {"hardware.interconnect_gb_per_s", "the GPU file's",
     "GPU-to-GPU bandwidth per direction as this host provides it (GB/s), "
     "for tensor-parallel all-reduce: e.g. a PCIe server without "
     "peer-to-peer, where traffic crosses host memory. On a PCIe topology at "
     "most the GPU's pcie_gb_per_s; a calibrated profile's measured "
     "all-reduce is scaled by the ratio to the GPU file's link."},
    {"engine.kind", "vllm",
     "The serving engine: vllm (vLLM 0.33.0's scheduler; the engine.* keys "
     "below) or sglang (SGLang 0.5.23's scheduler, radix cache and event loop, "
     "set in engine.sglang; beside it only kv_cache_dtype and "
     "kv_beyond_gpu_memory)."},
    {"engine.sglang", "SGLang's defaults",
     "engine.kind sglang, in SGLang's words: mem_fraction_static (weights + KV "
     "pool / GPU memory; default from SGLang's reserve), max_total_tokens (the "
     "pool; default from memory), max_running_requests (default from the pool, "
     "2048-4096), max_prefill_tokens (16384), chunked_prefill_size (by GPU "
     "memory: 8192 on 80-160 GB; -1 off), page_size (1), schedule_policy (fcfs, "
     "lof, lpm, dfs-weight or random), schedule_conservativeness (1.0), "
     "disable_overlap_schedule (false), ignore_eos (true, as "
     "sglang.bench_serving), init_new_token_ratio (0.7), "
     "min_new_token_ratio_factor (0.14), new_token_ratio_decay_steps (600). "
     "The radix cache is on: shared prefixes and sessions hit it."},
    {"engine.max_num_seqs", "vllm serve's for the GPU: 1024 on GPUs of 70 GiB or more "
     "other than A100 (H100, H200, B200, RTX PRO 6000), else 256",
     "Most running requests in a step."},
    {"engine.max_num_batched_tokens", "vllm serve's for the GPU: 8192 where max_num_seqs "
     "defaults to 1024, else 2048",
     "Token budget per step."},
    {"engine.chunked_prefill", "true",
     "Split prompts across steps; off, a prompt must fit the budget whole."},
    {"engine.block_size", "16", "Tokens per KV block."},
    {"engine.gpu_memory_utilization", "0.9", "Share of GPU memory the engine may use."},
    {"engine.num_gpu_blocks", "null",
     "KV blocks; null derives them from memory; set it to match an engine's "
     "log."},
    {"engine.activation_reserve_gib", "null",
     "Memory kept for activations; null derives it from the model."},
    {"engine.kv_beyond_gpu_memory", "false",
     "Allow num_gpu_blocks beyond the GPU's memory minus the weights (a "
     "what-if, e.g. an infinite cache to measure a trace's reuse)."},
    {"engine.preemption", "recompute",
     "recompute (vLLM v1) or swap (vLLM v0's preemption_mode: the victim's KV "
     "goes to the CPU tier and back; needs engine.kv_offload)."},
    {"engine.kv_offload", "null",
     "A CPU tier behind the GPU KV cache: {cpu_gib, pcie_gb_per_s (default "
     "the GPU's pcie_gb_per_s), latency_us (0)}; cpu_gib is the instance's, "
     "over its tp GPUs, as vLLM's --kv-offloading-size (0 = no tier). With "
     "prefix caching it keeps the blocks the GPU cache evicts; with "
     "preemption swap it is the swap space. Not with disaggregation or "
     "speculative decoding."},
    {"engine.policy", "fcfs",
     "fcfs; shortest-prompt-first (admit the fewest tokens left to prefill, "
     "preempt the longest prompt); shortest-prompt-first-oracle (the same "
     "admission, preempts the request with the most output tokens left, read "
     "from its true output length: a bound, not a policy); priority (vLLM: "
     "lowest class priority first, then arrival; preempts the highest "
     "priority value, latest arrival); edf (earliest send + class TTFT SLO "
     "first, preempts the latest deadline); lpm (SGLang's longest prefix "
     "match: longest cached prefix first)."},
    {"engine.prefix_caching", "false", "vLLM automatic prefix caching."},
    {"engine.async_scheduling", "true",
     "vLLM async scheduling: the next step is scheduled while one runs (a "
     "request reaching a busy engine waits one more step); false = "
     "--no-async-scheduling. With hardware.pp > 1 a request has one token in "
     "flight at most (vLLM PR #32359): the same as false."},
    {"engine.pipeline_decode_balance", "false",
     "hardware.pp > 1 only. A what-if, not vLLM 0.33: each batch takes at most "
     "ceil(decoding requests / pp) decodes, spreading them over the stages "
     "(vLLM PRs #50410, #57433, open). vLLM 0.33 puts every ready request in "
     "the next batch, so its micro-batches may be uneven."},
    {"engine.reserve_full_prompt", "true",
     "Admit a waiting request only if the free KV blocks hold its whole "
     "prompt (vLLM scheduler_reserve_full_isl)."},
    {"engine.long_prefill_token_threshold", "0",
     "With more than one request in the engine, at most this many tokens of "
     "one request per step (0: no cap)."},
    {"engine.watermark", "0",
     "Share of KV blocks kept free when admitting a waiting request while "
     "others run."},
    {"engine.kv_cache_dtype", "auto",
     "auto (the model's dtype, bf16, also under fp8 weights), bf16, fp8, "
     "fp8_e4m3, fp8_e5m2 (vLLM --kv-cache-dtype): fp8 halves the KV bytes per "
     "token (twice the blocks) and prices attention at the fitted fp8-KV "
     "rates."},
    {"engine.speculative_decoding", "none",
     "{num_speculative_tokens k (0-64, 0 off), acceptance_rate (per draft "
     "token, in [0, 1]) or acceptance_beta {a, b} (per-request rate ~ Beta(a, "
     "b)), draft_cost_fraction (one draft pass / one target decode pass, "
     "default 0)}; synchronous scheduling only."},
    {"cost_model.type", "roofline",
     "roofline, linear, or calibrated (+ profile: a profile JSON, e.g. "
     "models/profiles/<gpu>-<model>-tp<N>.json; + host_gap_s as the "
     "roofline's)."},
    {"cost_model (linear)", "all 0",
     "step_s, prefill_token_s, decode_seq_s, kv_token_s: step = step_s + "
     "prefill_token_s x prompt tokens + decode_seq_s x decoding sequences + "
     "kv_token_s x context tokens attended."},
    {"cost_model (roofline)", "preset kernels",
     "preset (kernels | datasheet), then overrides per op kind: "
     "gemm_{floor_s, compute_efficiency, memory_efficiency, crossover_p}; "
     "attention_{compute, memory}_efficiency (both kinds), or "
     "{prefill, decode}_attention_{floor_s, compute_efficiency, "
     "memory_efficiency, crossover_p}, prefill_attention_per_query_head_s, "
     "decode_attention_per_sequence_kv_head_s; fp8 and MoE kinds: gemm_fp8_*, "
     "moe_*, {prefill, decode}_attention_fp8_kv_* (the same suffixes); "
     "elementwise_{memory_efficiency, kernel_floor_s}, {rmsnorm, "
     "residual_add, rotary, silu_mul, kv_cache_write}_memory_efficiency; "
     "interconnect_efficiency, allreduce_latency_s (every all-reduce range), "
     "custom_allreduce_{latency_s, efficiency, max_bytes}, "
     "nccl_allreduce_{latency_s, efficiency}, symm_allreduce_{latency_s, "
     "efficiency}, symm_mem_allreduce (vLLM's symmetric-memory range on "
     "Hopper and Blackwell boards; default true for vLLM, false for "
     "SGLang); step_overhead_s, "
     "per_sequence_overhead_s (host time), host_gap_s (what overlapped host "
     "work costs a step, 150 us). A specific key given with a general one wins."},
    {"workload.arrival.process", "required",
     "poisson, gamma (+ burstiness), constant, or closed (+ concurrency, "
     "think_time_s)."},
    {"workload.arrival.rate", "required (open loop)", "Requests/s."},
    {"workload.arrival.burstiness", "required for gamma",
     "Gamma shape; 1 = Poisson, < 1 burstier (CV^2 = 1/burstiness), as vllm "
     "bench serve."},
    {"workload.arrival.concurrency", "required (closed)", "Clients of a closed loop."},
    {"workload.arrival.think_time_s", "0",
     "Closed loop: a client's pause between an answer and its next request."},
    {"workload.max_concurrency", "0 (none)",
     "Open loop capped at this many requests in flight (vllm bench serve "
     "--max-concurrency); the slot wait is recorded and TTFT reported from "
     "both the intended arrival and the actual send."},
    {"workload.input_len, workload.output_len", "required",
     "{\"dist\": ...}: fixed{value}, uniform{min, max}, normal{mean, std} "
     "(truncated by resampling), lognormal{median, p99} or {mu, sigma}, "
     "exponential{mean}, empirical{path, column} (a CSV column, e.g. "
     "../shared/traces/sharegpt_8k_filtered_stats_llama2_tokenizer.csv); each "
     "with min (1) and max (1000000) clamps."},
    {"workload.prefix", "null",
     "Shared prefixes, {\"model\": ...}: prefix_repetition{num_prefixes, "
     "prefix_len, suffix_len, output_len} (vLLM); random_prefix{prefix_len} "
     "(vLLM --random-prefix-len); generated_shared_prefix{num_groups, "
     "prompts_per_group, system_prompt_len, question_len, output_len} "
     "(SGLang; a uniformly random group per request); zipf{num_prefixes, "
     "prefix_len (or one per prefix), s} plus a unique suffix from input_len; "
     "target_hit_rate{hit_rate}."},
    {"workload.sessions", "null",
     "Multi-turn: {turns: {dist}, think_time_s}; arrival is then the session "
     "arrival process; each turn's prompt is the whole history plus new "
     "input_len tokens."},
    {"workload.classes", "null",
     "Request classes, a list of {name, share, input_len, output_len, "
     "priority (0), ttft_slo_ms (0), tpot_slo_ms (0)}: each request is drawn "
     "into one class by share (its own random stream, so the arrivals are "
     "those of the same scenario without classes) and takes that class's "
     "length distributions (replacing workload.input_len / output_len), its "
     "priority (lower first under engine.policy priority) and SLOs (0 = none; "
     "goodput and the edf deadlines). Not with a trace, sessions, or a prefix "
     "model that defines the lengths. The report and the result JSON "
     "(servesim.classes) give each class's latencies, SLO attainment and "
     "goodput."},
    {"workload.trace", "null",
     "Replay: {path, format: jsonl | azure | mooncake | lengths | burstgpt | "
     "sessions, use_timestamps (true), time_scale (1), max_bad_fraction (0), "
     "fields: {prompt_tokens, completion_tokens, timestamp, priority} "
     "(sessions: no priority, but request_id, parent_id, session_id, "
     "think_time), timestamp_unit: auto | "
     "s | ms | us (numeric stamps; auto: the format's own, else detected and "
     "reported), model, log_type (BurstGPT row filters)}. With use_timestamps "
     "false the trace gives lengths and arrival draws the times; 0-token rows "
     "are read as 1 token and counted. A JSONL record's optional integer "
     "priority is the request's (lower first under engine.policy priority; "
     "counted, and said when the policy does not use it)."},
    {"workload.num_requests", "0 (none)", "Stop creating requests after N."},
    {"workload.duration_s", "0 (none)",
     "Stop creating requests after T seconds (one of the two bounds is "
     "required)."},
    {"metrics.warmup_s", "0", "Exclude requests arriving before T s."},
    {"metrics.warmup_requests", "0",
     "Exclude the first N requests; the report says how many were excluded."},
    {"metrics.percentiles", "[50, 90, 95, 99, 99.9]", "Percentile set of every latency."},
    {"metrics.goodput", "null",
     "vllm bench serve --goodput: {ttft_ms, tpot_ms, e2el_ms}, any subset (>= 0): "
     "a completed request is good when it meets every one given (TPOT = (E2E - TTFT) "
     "/ (output tokens - 1), 0 for one token); request_goodput = good requests / "
     "the run's duration (run --goodput ttft:500 sets it)."},
    {"limits.max_queued", "100000",
     "Stop the run (unstable) when more requests than this are queued."},
    {"frontend.enabled", "true",
     "The request path outside the scheduler, as vLLM's API server runs it: "
     "each request is parsed first come, first served and tokenized (in "
     "micro-batches, vLLM) before the engine "
     "core has it, every token reaches the client output_s after the engine "
     "made it, and closed-loop clients turn around before their next send. "
     "TTFT and E2E are then the client's; the engine's are reported beside them. "
     "false: a pure queue, the engine's figures from the send (teaching "
     "scenarios, queueing-theory checks); `serve` always runs it off (its "
     "HTTP path is real)."},
    {"frontend.request_s", "0.0012", "API-server work per request on its event loop (HTTP, validation, chat template, the tokenizer call)."},
    {"frontend.prompt_token_s", "1e-06", "API-server work per prompt token (tokenization)."},
    {"frontend.tokenizer_batch_wait_s", "0.002 (vLLM), 0 (sglang)",
     "vLLM's tokenizer micro-batch (0.10 to mid-2026): the first prompt ready opens a "
     "window this long, and every prompt ready before it closes is tokenized in one "
     "call and reaches the engine with the others. 0: each request's work in one "
     "piece, one at a time (SGLang; vLLM after pull request 45759)."},
    {"frontend.tokenizer_max_batch", "32", "Most prompts in one tokenizer micro-batch (it closes when full)."},
    {"frontend.work_cv", "0.3",
     "Coefficient of variation of each request's API-server work (a gamma factor of mean 1)."},
    {"frontend.api_servers", "0 (one per replica)",
     "API servers, each first come, first served (vLLM --api-server-count)."},
    {"frontend.engine_hop_s", "0.0002", "API server to engine core."},
    {"frontend.output_s", "0.0003",
     "Engine core to client, every token alike (output processing, detokenization, streaming)."},
    {"frontend.client_turnaround_s", "0.0005",
     "Closed loop and sessions: from reading an answer to the next send."},
    {"frontend.client_jitter_s", "0",
     "Closed loop and sessions: an extra uniform delay in [0, this) before each next send."},
    {"cluster.replicas", "1", "Identical replicas behind a router."},
    {"cluster.router", "round_robin",
     "round_robin, least_outstanding, power_of_two, prefix_affinity."},
    {"cluster.load_slack", "0.25",
     "prefix_affinity: a replica is eligible while its outstanding requests "
     "<= (1 + slack) x the least loaded's + 1."},
    {"disaggregation", "null",
     "Prefill/decode disaggregation: {prefill: POOL, decode: POOL, link: "
     "LINK}; excludes cluster. Prefill runs max_tokens=1 and holds its KV "
     "until the transfer ends; the decode instance produces every token the "
     "client sees (TTFT includes the transfer)."},
    {"disaggregation.prefill, disaggregation.decode", "required",
     "A pool: gpu and tp (default /hardware's; required without it), "
     "replicas (1), router and load_slack (as cluster), engine (any /engine "
     "key, overriding the scenario's /engine for this pool), cost_model "
     "(default the scenario's); each pool gets its own memory plan and cost "
     "model; both pools need the same kv_cache_dtype."},
    {"disaggregation.link", "required",
     "models/links/<name>.json (nvlink-4, infiniband-ndr-400g, "
     "infiniband-hdr-200g, roce-200g, roce-400g) or a path, or {gb_per_s, "
     "latency_us} (optionally with name to start from a file): per decode "
     "GPU, one direction."},
};

constexpr const char* kBounds[] = {
    "a time interval (think_time_s, 1 / rate) <= 1e6 s",
    "a span (duration_s, warmup_s, num_requests / rate, a trace replay) <= 1e8 s",
    "gamma burstiness in [0.001, 1000]",
    "prompt and output lengths <= 16777216 tokens",
    "num_gpu_blocks (given or derived) <= 16777216",
    "linear step_s <= 60 s, per-token/sequence terms <= 1 s",
    "roofline efficiencies in [0.001, 1], latencies <= 1 s",
    ("a key given twice, JSON nested deeper than 64 levels and a scenario file "
     "over 16 MiB are errors"),  // (one element: clang's -Wstring-concatenation)
};

// The combinations the engine does not run, from the one table of them.
// A scenario breaking one is refused with its message.
constexpr const char* kRulesTitle =
    "Engine features that do not combine (sim/engine/engine_support.cc)";

// Appends `text` wrapped at `width` columns: the first line indented by
// `indent`, the others by `hang`.
void AppendWrapped(std::string_view text, int indent, int hang, int width,
                   std::string* out) {
  std::istringstream words{std::string(text)};
  std::string word;
  int col = 0;
  while (words >> word) {
    const int len = static_cast<int>(word.size());
    if (col > 0 && col + 1 + len > width) {
      *out += '\n';
      out->append(hang, ' ');
      col = hang;
    } else if (col == 0) {
      out->append(indent, ' ');
      col = indent;
    } else {
      *out += ' ';
      ++col;
    }
    *out += word;
    col += len;
  }
  *out += '\n';
}

// Markdown-escapes text for a table cell.
std::string EscapeMarkdown(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '|': case '\\': case '*': case '_': case '[': case ']': case '`':
        out += '\\';
        out += c;
        break;
      default: out += c;
    }
  }
  return out;
}

// `a, b` -> "`a`, `b`" (keys are code; a parenthesised note is not).
std::string MarkdownKey(std::string_view key) {
  std::string out;
  size_t start = 0;
  while (start <= key.size()) {
    size_t end = key.find(", ", start);
    if (end == std::string_view::npos) end = key.size();
    std::string_view part = key.substr(start, end - start);
    const size_t paren = part.find(" (");
    if (!out.empty()) out += ", ";
    out += "`" + std::string(part.substr(0, paren)) + "`";
    if (paren != std::string_view::npos) out += EscapeMarkdown(part.substr(paren));
    start = end + 2;
  }
  return out;
}

std::string BuildText() {
  std::string out =
      "\nScenario keys (JSON; unknown keys are errors; absent or null = default):\n";
  for (const KeyDoc& k : kKeys) {
    out += "  " + std::string(k.key) + " = " + k.def + "\n";
    AppendWrapped(k.text, 6, 6, 79, &out);
  }
  out += "\nBounds (simulated time is int64 ns; beyond these a value is an error):\n";
  for (const char* b : kBounds) AppendWrapped(std::string("- ") + b, 2, 4, 79, &out);
  out += "\n" + std::string(kRulesTitle) + ":\n";
  for (const EngineRule& r : EngineRules()) {
    AppendWrapped(std::string("- engine.") + r.key + ": " + r.expected, 2, 4, 79, &out);
  }
  return out;
}

}  // namespace

const char* ScenarioReference() {
  static const std::string text = BuildText();
  return text.c_str();
}

std::string ScenarioReferenceMarkdown() {
  std::string out = "| key | default | meaning |\n|---|---|---|\n";
  for (const KeyDoc& k : kKeys) {
    out += "| " + MarkdownKey(k.key) + " | " + EscapeMarkdown(k.def) + " | " +
           EscapeMarkdown(k.text) + " |\n";
  }
  out += "\nBounds (simulated time is int64 nanoseconds; beyond these a value is "
         "an error):\n\n";
  for (const char* b : kBounds) out += "- " + EscapeMarkdown(b) + "\n";
  out += "\n" + std::string(kRulesTitle) + ":\n\n";
  for (const EngineRule& r : EngineRules()) {
    out += "- `engine." + std::string(r.key) + "`: " + EscapeMarkdown(r.expected) + "\n";
  }
  return out;
}

}  // namespace servesim
