// engine.kind "sglang" (see sglang_engine.h). SGLang's defaults follow
// its 0.5.23 sources: chunked_prefill_size and the decode CUDA-graph batch
// by GPU memory and tp, mem_fraction_static from the memory it reserves for
// activations and graphs (arg_groups/memory_hook.py), the pool and
// max_running_requests by SizeSglangPool (sglang_pool.h).
#include "sim/scenario/sglang_engine.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <string>

#include "sim/core/status.h"
#include "sim/core/units.h"
#include "sim/engine/engine_support.h"
#include "sim/engine/sglang_pool.h"
#include "sim/scenario/memory_plan.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

// The engine object's keys that stay meaningful beside kind "sglang".
bool SharedKey(const std::string& key) {
  return key == "kind" || key == "sglang" || key == "kv_cache_dtype" ||
         key == "kv_beyond_gpu_memory";
}

// SGLang's chunked_prefill_size and decode CUDA-graph batch for a GPU of
// `mib` MiB at tensor parallelism `tp`.
void GpuDefaults(double mib, int tp, int64_t* chunk, int64_t* graph_bs) {
  if (mib < 20 * 1024) {
    *chunk = 2048, *graph_bs = 8;
  } else if (mib < 35 * 1024) {
    *chunk = 4096, *graph_bs = tp < 4 ? 48 : 160;
  } else if (mib < 60 * 1024) {
    *chunk = 4096, *graph_bs = tp < 4 ? 32 : 160;
  } else if (mib < 160 * 1024) {
    *chunk = 8192, *graph_bs = tp < 4 ? 256 : 512;
  } else {
    *chunk = 16384, *graph_bs = 512;
  }
}

// SGLang's mem_fraction_static when none is given: all but the memory it
// reserves for activations (1.5 MiB per token of the largest extend), CUDA
// graphs (2 MiB per decode batch row), metadata and parallel slack, at
// least 10 GiB on GPUs over 60 GiB. (The prefill graphs' few hundred MiB
// are left out.)
double DefaultMemFraction(double mib, int tp, int64_t extend_tokens, int64_t graph_bs) {
  double reserved = 512 + static_cast<double>(std::max<int64_t>(extend_tokens, 2048)) * 1.5;
  reserved += tp / 8.0 * 1024;
  reserved += static_cast<double>(graph_bs) * 2;
  if (mib > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
  return std::round((mib - reserved) / mib * 1000) / 1000;
}

void RefuseVllmKeys(const JsonView& v) {
  for (const auto& [key, value] : v.raw().items()) {
    if (SharedKey(key)) continue;
    v.FailMessage(key, "a vLLM setting; with engine.kind \"sglang\" the engine is set in "
                       "/engine/sglang, in SGLang's words (e.g. max_running_requests, "
                       "chunked_prefill_size, mem_fraction_static); to switch a vLLM "
                       "scenario to SGLang replace the engine object: --set "
                       "'engine={\"kind\": \"sglang\"}'");
  }
}

// A given max_total_tokens may exceed what the memory plan leaves, but not
// the GPU less its weights: that pool cannot exist.
void CheckGivenPool(const JsonView& root, const Scenario& s) {
  const int64_t tokens = s.engine.sglang.max_total_tokens;
  const double per_token = s.model.KvBytesPerTokenPerGpu(s.tp);
  const double room = s.gpu.memory_bytes - s.model.WeightBytesPerGpu(s.tp);
  const auto possible = static_cast<int64_t>(std::floor(room / per_token));
  if (tokens <= possible || s.kv_beyond_gpu_memory) return;
  throw ConfigError(root.file() + ": " + root.PathOf("engine") + "/sglang/max_total_tokens: " +
                    std::to_string(tokens) + " tokens of KV need " +
                    FormatGib(static_cast<double>(tokens) * per_token) + " per GPU, but " +
                    s.gpu.name + " holds " + FormatGib(s.gpu.memory_bytes) + " with " +
                    FormatGib(s.model.WeightBytesPerGpu(s.tp)) + " of " + s.model.name + " weights at tp " + std::to_string(s.tp) +
                    "; expected at most " + std::to_string(possible) +
                    " (or engine.kv_beyond_gpu_memory: true for a what-if)");
}

}  // namespace

void ParseSglangEngine(const JsonView& v, Scenario* s) {
  RefuseVllmKeys(v);
  static const nlohmann::json kNone = nlohmann::json::object();
  const JsonView g = v.Has("sglang") ? v.Object("sglang") : JsonView(kNone, v.file(), v.PathOf("sglang"));
  g.AllowKeys({"mem_fraction_static", "max_total_tokens", "max_running_requests",
               "max_prefill_tokens", "chunked_prefill_size", "page_size", "schedule_policy",
               "schedule_conservativeness", "disable_overlap_schedule", "ignore_eos",
               "init_new_token_ratio", "min_new_token_ratio_factor",
               "new_token_ratio_decay_steps"});
  SglangConfig c;
  const double mib = s->gpu.memory_bytes / kMiB;
  int64_t chunk = 0, graph_bs = 0;
  GpuDefaults(mib, s->tp, &chunk, &graph_bs);
  c.chunked_prefill_size = g.Integer("chunked_prefill_size", chunk, Range::Closed(-1, 1 << 24));
  if (c.chunked_prefill_size == 0) c.chunked_prefill_size = -1;  // off, as SGLang's -1
  c.max_prefill_tokens = g.Integer("max_prefill_tokens", 16384, Range::Closed(1, 1 << 24));
  c.page_size = static_cast<int32_t>(g.Integer("page_size", 1, Range::Closed(1, 4096)));
  if (c.chunked_prefill_size > 0 && c.chunked_prefill_size % c.page_size != 0) {
    // As SGLang's own check: a chunk ends on a page boundary.
    g.FailMessage("chunked_prefill_size", "expected a multiple of page_size (" +
                                              std::to_string(c.page_size) + ") or -1, got " +
                                              std::to_string(c.chunked_prefill_size));
  }
  // SGLang 0.5.23's choices; those not modelled are refused by name.
  const std::string policy =
      g.Choice("schedule_policy", "fcfs",
               {"fcfs", "lof", "lpm", "dfs-weight", "random", "priority", "routing-key", "hrrn",
                "shortest-prefill-first"});
  if (const auto p = SglangPolicyNamed(policy)) {
    c.schedule_policy = *p;
  } else {
    g.FailMessage("schedule_policy", "\"" + policy + "\" is not modelled yet: expected "
                  "\"fcfs\", \"lof\", \"lpm\", \"dfs-weight\" or \"random\"");
  }
  c.schedule_conservativeness =
      g.Number("schedule_conservativeness", 1.0, Range{0, 100, true, false});
  c.disable_overlap_schedule = g.Bool("disable_overlap_schedule", false);
  c.init_new_token_ratio = g.Number("init_new_token_ratio", 0.7, Range::OpenClosed(0, 1));
  c.min_new_token_ratio_factor =
      g.Number("min_new_token_ratio_factor", 0.14, Range::OpenClosed(0, 1));
  c.new_token_ratio_decay_steps = static_cast<int32_t>(
      g.Integer("new_token_ratio_decay_steps", 600, Range::Closed(1, 1e9)));
  if (auto n = g.OptionalInteger("max_running_requests", Range::Closed(1, 1 << 20))) {
    c.max_running_requests = static_cast<int32_t>(*n);
    graph_bs = std::min<int64_t>(graph_bs, *n);
  }
  const int64_t extend = c.chunked_prefill_size > 0 ? c.chunked_prefill_size : c.max_prefill_tokens;
  const double fraction = DefaultMemFraction(mib, s->tp, extend, graph_bs);
  if (!g.Has("mem_fraction_static") && fraction <= 0) {
    // SGLang's own rule leaves nothing for weights and KV: it would not start.
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "SGLang's default mem_fraction_static on %s (%.1f GiB) would be %.3f: it "
                  "reserves 1.5 MiB a token of the largest extend (%lld tokens: %s) beside CUDA "
                  "graphs and slack; expected a chunked_prefill_size, a smaller "
                  "max_prefill_tokens, or mem_fraction_static given",
                  s->gpu.name.c_str(), mib / 1024, fraction, static_cast<long long>(extend),
                  c.chunked_prefill_size > 0 ? "chunked_prefill_size"
                                             : "max_prefill_tokens, chunked prefill off");
    g.FailMessage(c.chunked_prefill_size > 0 ? "chunked_prefill_size" : "max_prefill_tokens", buf);
  }
  s->gpu_memory_utilization =
      g.Number("mem_fraction_static", fraction, Range::OpenClosed(0, 1));
  EngineConfig& e = s->engine;
  e.kind = EngineKind::kSglang;
  e.sglang_ignore_eos = g.Bool("ignore_eos", true);
  // What the memory plan reads: pages as blocks and no reserve beside the
  // fraction. A given pool is checked against the GPU after the plan
  // (ResolveSglangPool).
  e.block_size = c.page_size;
  s->activation_reserve_bytes = 0;
  if (auto t = g.OptionalInteger("max_total_tokens", Range::Closed(c.page_size, 1e12))) {
    c.max_total_tokens = *t / c.page_size * c.page_size;
    s->num_gpu_blocks_given = true;
  }
  e.prefix_caching = false;
  e.chunked_prefill = c.chunked_prefill_size > 0;
  e.async_scheduling = !c.disable_overlap_schedule;
  e.spec = SpecDecodeConfig{};
  e.sglang = c;
}

void CheckSglangSupport(const JsonView& root, const Scenario& s) {
  if (s.engine.kind != EngineKind::kSglang) return;
  const EngineFeatures features{
      .disaggregation = s.json.contains("disaggregation"),
      .sglang = true,
      .hashed_trace = s.workload.trace && s.workload.trace->format == TraceFormat::kMooncake,
      .sliding_window = s.model.WindowedKvBytesPerSeqPerGpu(s.tp, 16) > 0,
      .pipeline_parallel = s.pp > 1,
  };
  if (const auto rule = Unsupported(features)) {
    root.Object("engine").FailMessage(rule->key, rule->expected);
  }
}

void ResolveSglangPool(const JsonView& root, Scenario* s) {
  EngineConfig& e = s->engine;
  if (e.kind != EngineKind::kSglang) return;
  SglangConfig& c = e.sglang;
  // SGLang's own rule (sglang_pool.h), on the whole GPU as free memory
  // before the weights load; a given max_total_tokens replaces its pool.
  SglangPoolInputs in;
  in.free_before_load_bytes = s->gpu.memory_bytes;
  in.free_after_load_bytes = s->gpu.memory_bytes - s->model.WeightBytesPerGpu(s->tp);
  in.mem_fraction_static = s->gpu_memory_utilization;
  in.kv_bytes_per_token = s->model.KvBytesPerTokenPerGpu(s->tp);
  in.page_size = c.page_size;
  in.context_length = s->model.max_context > 0 ? s->model.max_context : 131072;
  in.max_running_requests = c.max_running_requests;
  SglangPool pool;
  std::string error;
  if (!SizeSglangPool(in, &pool, &error)) {
    throw ConfigError(root.file() + ": " + root.PathOf("engine") + "/sglang/mem_fraction_static: " +
                      error + "; expected a larger mem_fraction_static, tp or GPU");
  }
  if (s->num_gpu_blocks_given) {  // max_total_tokens given
    CheckGivenPool(root, *s);
    pool.max_running_requests =
        SglangRequestLimit(c.max_total_tokens, in.context_length, c.max_running_requests);
  } else {
    c.max_total_tokens = pool.max_total_tokens;
  }
  c.max_running_requests = std::max(1, pool.max_running_requests);
  // The vLLM fields a report or an invariant reads: pages as blocks plus
  // vLLM's reserved one, the request limit, and the most tokens one batch
  // computes (a decode of every running request, or an extend within the
  // chunk; without chunking, up to the pool).
  const int64_t blocks = c.max_total_tokens / c.page_size + 1;
  if (blocks > kMaxGpuBlocks) {
    throw ConfigError(root.file() + ": " + root.PathOf("engine") + "/sglang/max_total_tokens: " +
                      std::to_string(c.max_total_tokens) + " tokens in pages of " +
                      std::to_string(c.page_size) + " are " + std::to_string(blocks - 1) +
                      " pages; expected at most " + std::to_string(kMaxGpuBlocks - 1) +
                      ": set a larger page_size or a smaller pool");
  }
  e.num_gpu_blocks = static_cast<int32_t>(blocks);
  e.max_num_seqs = c.max_running_requests;
  const int64_t extend = c.chunked_prefill_size > 0 ? c.chunked_prefill_size : c.max_total_tokens;
  e.max_num_batched_tokens = static_cast<int32_t>(
      std::min<int64_t>(std::max<int64_t>(extend, c.max_running_requests), INT32_MAX));
}

}  // namespace servesim
