// Scenario parsing and validation (see scenario.h). Each section of the
// file is read by one function that owns its keys.
#include "sim/scenario/scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "sim/core/json_view.h"
#include "sim/core/paths.h"
#include "sim/core/time.h"
#include "sim/core/units.h"
#include "sim/cost/pipeline_cost_model.h"
#include "sim/engine/engine_support.h"
#include "sim/engine/scheduler_policy.h"
#include "sim/model/model_loader.h"
#include "sim/scenario/memory_plan.h"
#include "sim/scenario/sglang_engine.h"
#include "sim/scenario/vllm_batch_defaults.h"
#include "sim/workload/prefix_model.h"
#include "sim/workload/trace_reader.h"

namespace servesim {
namespace {

// A scenario is a page of JSON; anything bigger is the wrong file.
constexpr uintmax_t kMaxScenarioBytes = uintmax_t{16} << 20;

Range IntervalSeconds() { return Range::Closed(0, kMaxIntervalSeconds); }
Range SpanSeconds() { return Range::Closed(0, kMaxSpanSeconds); }

std::string Seconds(double x) {
  std::ostringstream os;
  os << x << " s";
  return os.str();
}

// v's `key`: a shipped model (GPU) name, in any case, a GPU's alias
// ("h100"), or a file; an unknown name fails naming the JSON path and the
// nearest shipped names.
ModelSpec LoadModelAt(const JsonView& v, std::string_view key) {
  const std::string given = v.RequireString(key);
  const std::string name = FindModelName(given);
  if (name.empty()) v.FailMessage(key, UnknownModelText(given));
  return LoadModelSpec(name);
}

GpuSpec LoadGpuAt(const JsonView& v) {
  const std::string given = v.RequireString("gpu");
  const std::string name = FindGpuName(given);
  if (name.empty()) v.FailMessage("gpu", UnknownGpuText(given));
  return LoadGpuSpec(name);
}

// "model": a name (or path), or {"name": ..., "weight_dtype": "bf16" |
// "fp8", "served_hf_id": ...} -- fp8 as vLLM's --quantization fp8 (linear
// layers' weights in fp8, the embedding and LM head in bf16);
// served_hf_id the Hugging Face id the deployment files serve (default:
// the model file's).
void ParseModel(const JsonView& root, Scenario* s) {
  const auto m = s->json.find("model");
  if (m == s->json.end() || !m->is_object()) {
    s->model = LoadModelAt(root, "model");
    return;
  }
  const JsonView v = root.Object("model");
  v.AllowKeys({"name", "weight_dtype", "served_hf_id"});
  s->model = LoadModelAt(v, "name");
  // Default: the model file's (fp8 where the weights are published so).
  s->model.SetWeightDtype(v.Choice("weight_dtype", s->model.weight_dtype, {"bf16", "fp8"}));
  s->model.served_hf_id = v.String("served_hf_id", s->model.served_hf_id);
  if (s->model.served_hf_id.empty() ||
      s->model.served_hf_id.find_first_of(" \t\n'\"") != std::string::npos) {
    v.Fail("served_hf_id", "a Hugging Face model id such as "
                           "\"meta-llama/Llama-3.1-8B-Instruct\" (or a path)");
  }
}

// The tp of `hw` (default def), checked against the model's heads.
int ParseTp(const JsonView& hw, const ModelSpec& model, int def) {
  const int tp = static_cast<int>(hw.Integer("tp", def, Range::Closed(1, 64)));
  if (model.num_heads % tp != 0) {
    hw.Fail("tp", "a divisor of " + model.name + "'s " +
                      std::to_string(model.num_heads) + " attention heads");
  }
  return tp;
}

// hardware.ep: vLLM's --enable-expert-parallel over tp x data-parallel
// GPUs. The replicas that share experts are checked against
// cluster.replicas once that is read (CheckExpertGroups).
void ParseExpertParallel(const JsonView& hw, Scenario* s) {
  if (!hw.Has("ep")) return;
  const int ep = static_cast<int>(hw.RequireInteger("ep", Range::Closed(1, 4096)));
  if (ep == 1) return;
  const ModelSpec& m = s->model;
  if (!m.is_moe()) {
    hw.Fail("ep", "1: " + m.name + " has no experts to spread");
  }
  if (ep % s->tp != 0 || m.num_experts % ep != 0) {
    hw.Fail("ep", "a multiple of tp (" + std::to_string(s->tp) + ") that divides " +
                      m.name + "'s " + std::to_string(m.num_experts) + " experts");
  }
  s->model.expert_parallel = ep;
}

// An expert-parallel group of ep / tp data-parallel replicas needs whole
// groups of replicas.
void CheckExpertGroups(const JsonView& root, const Scenario& s) {
  const int dp = s.model.ExpertDataParallel(s.tp);
  if (dp > 1 && s.num_replicas % dp != 0) {
    root.Object("hardware").Fail(
        "ep", "ep / tp = " + std::to_string(dp) +
                  " data-parallel replicas per expert group, so cluster.replicas "
                  "a multiple of " + std::to_string(dp) + " (got " +
                  std::to_string(s.num_replicas) + ")");
  }
}

// hardware.pp: pipeline stages of tp GPUs each, at most half the layers
// (every stage holds two layers or more, so each keeps a full-attention
// layer of an alternating model); pp_link: the link between stages when
// they are in different servers.
void ParsePipeline(const JsonView& hw, Scenario* s) {
  const ModelSpec& m = s->model;
  s->pp = static_cast<int>(hw.Integer("pp", 1, Range::Closed(1, 64)));
  if (2 * s->pp > m.num_layers && s->pp > 1) {
    hw.Fail("pp", "at most " + std::to_string(m.num_layers / 2) + " (two of " + m.name + "'s " +
                      std::to_string(m.num_layers) + " layers per stage or more)");
  }
  if (hw.Has("pp_link")) {
    if (s->pp == 1) hw.Fail("pp_link", "no pp_link without hardware.pp > 1");
    s->pp_link = hw.RequireString("pp_link");
    try {
      LoadLinkSpec(s->pp_link);
    } catch (const ConfigError& e) {
      hw.Fail("pp_link", std::string("a link under models/links: ") + e.what());
    }
  }
}

void ParseHardware(const JsonView& root, Scenario* s) {
  ParseModel(root, s);
  // A disaggregated deployment's pools may each name their own.
  if (!root.Has("hardware") && root.Has("disaggregation")) return;
  const JsonView hw = root.Object("hardware");
  hw.AllowKeys({"gpu", "tp", "interconnect_gb_per_s", "ep", "pp", "pp_link"});
  s->gpu = LoadGpuAt(hw);
  s->tp = ParseTp(hw, s->model, 1);
  ParseExpertParallel(hw, s);
  ParsePipeline(hw, s);
  // The GPU-to-GPU link is the host's as much as the card's: a PCIe server
  // without peer-to-peer sends tensor-parallel traffic through host memory.
  if (hw.Has("interconnect_gb_per_s")) {
    s->gpu.interconnect_bytes_per_s =
        hw.RequireNumber("interconnect_gb_per_s", Range::Closed(0.1, 1e6)) * 1e9;
    s->interconnect_given = true;
  }
}

// engine.speculative_decoding: {num_speculative_tokens, acceptance_rate |
// acceptance_beta {a, b}, draft_cost_fraction}. Synchronous scheduling
// only (EngineRules): ParseEngineObject turns async_scheduling off, or
// refuses it when the object sets it.
void ParseSpecDecoding(const JsonView& engine, EngineConfig* e) {
  const JsonView v = engine.Object("speculative_decoding");
  v.AllowKeys({"num_speculative_tokens", "acceptance_rate", "acceptance_beta",
               "draft_cost_fraction"});
  SpecDecodeConfig c;
  c.num_speculative_tokens = static_cast<int32_t>(
      v.RequireInteger("num_speculative_tokens", Range::Closed(0, 64)));
  if (v.Has("acceptance_rate") == v.Has("acceptance_beta")) {
    v.FailMessage("", "expected exactly one of acceptance_rate (a number in "
                      "[0, 1]) and acceptance_beta ({\"a\": > 0, \"b\": > 0})");
  }
  if (v.Has("acceptance_rate")) {
    c.acceptance_rate = v.RequireNumber("acceptance_rate", Range::Closed(0, 1));
  } else {
    const JsonView b = v.Object("acceptance_beta");
    b.AllowKeys({"a", "b"});
    c.beta_a = b.RequireNumber("a", {0, 1e6, true, false});
    c.beta_b = b.RequireNumber("b", {0, 1e6, true, false});
  }
  c.draft_cost_fraction =
      v.Number("draft_cost_fraction", 0, Range::Closed(0, 10));
  e->spec = c;
}

// An engine object; keys it omits keep their current values (the defaults,
// or for a disaggregated pool the scenario's /engine).
void ParseEngineObject(const JsonView& v, Scenario* s) {
  EngineConfig& e = s->engine;
  const bool sglang = v.Choice("kind", e.kind == EngineKind::kSglang ? "sglang" : "vllm",
                               {"vllm", "sglang"}) == "sglang";
  if (!sglang && v.Has("sglang")) {
    v.FailMessage("sglang", "SGLang's settings: expected engine.kind \"sglang\" beside them");
  }
  if (!sglang) v.AllowKeys({"max_num_seqs", "max_num_batched_tokens", "chunked_prefill",
               "block_size", "gpu_memory_utilization", "num_gpu_blocks",
               "preemption", "policy", "activation_reserve_gib",
               "prefix_caching", "async_scheduling", "reserve_full_prompt",
               "long_prefill_token_threshold", "watermark",
               "kv_beyond_gpu_memory", "kv_cache_dtype", "kv_offload",
               "speculative_decoding", "kind", "pipeline_decode_balance"});
  // As vLLM's --kv-cache-dtype: "auto" is the model's dtype (bf16, also
  // under fp8 weights); the fp8 formats are one byte per element.
  if (v.Has("kv_cache_dtype")) {
    const std::string kv_dtype = v.Choice(
        "kv_cache_dtype", "auto", {"auto", "bf16", "fp8", "fp8_e4m3", "fp8_e5m2"});
    s->model.SetKvCacheDtype(kv_dtype.rfind("fp8", 0) == 0 ? "fp8" : "bf16");
  }
  if (sglang) {
    s->kv_beyond_gpu_memory = v.Bool("kv_beyond_gpu_memory", s->kv_beyond_gpu_memory);
    ParseSglangEngine(v, s);
    return;
  }
  e.kind = EngineKind::kVllm;
  s->max_num_seqs_given = s->max_num_seqs_given || v.Has("max_num_seqs");
  s->max_num_batched_tokens_given =
      s->max_num_batched_tokens_given || v.Has("max_num_batched_tokens");
  e.max_num_seqs = static_cast<int32_t>(
      v.Integer("max_num_seqs", e.max_num_seqs, Range::Closed(1, 1 << 20)));
  e.max_num_batched_tokens = static_cast<int32_t>(v.Integer(
      "max_num_batched_tokens", e.max_num_batched_tokens, Range::Closed(1, 1 << 24)));
  e.chunked_prefill = v.Bool("chunked_prefill", e.chunked_prefill);
  e.prefix_caching = v.Bool("prefix_caching", e.prefix_caching);
  e.async_scheduling = v.Bool("async_scheduling", e.async_scheduling);
  e.pipeline_decode_balance = v.Bool("pipeline_decode_balance", e.pipeline_decode_balance);
  if (e.pipeline_decode_balance && s->pp == 1) {
    v.Fail("pipeline_decode_balance", "false without hardware.pp > 1 (it balances the "
                                      "decodes of a pipeline's micro-batches)");
  }
  e.reserve_full_prompt = v.Bool("reserve_full_prompt", e.reserve_full_prompt);
  e.long_prefill_token_threshold = static_cast<int32_t>(
      v.Integer("long_prefill_token_threshold", e.long_prefill_token_threshold,
                Range::Closed(0, 1 << 24)));
  e.watermark = v.Number("watermark", e.watermark, Range{0, 1, false, true});
  e.block_size = static_cast<int32_t>(
      v.Integer("block_size", e.block_size, Range::Closed(1, 4096)));
  s->gpu_memory_utilization = v.Number(
      "gpu_memory_utilization", s->gpu_memory_utilization, Range::OpenClosed(0, 1));
  if (auto n = v.OptionalInteger("num_gpu_blocks", Range::Closed(1, kMaxGpuBlocks))) {
    e.num_gpu_blocks = static_cast<int32_t>(*n);
    s->num_gpu_blocks_given = true;
  }
  // A what-if: a cache larger than any GPU of this kind holds (e.g. an
  // "infinite" cache to measure a trace's reuse).
  s->kv_beyond_gpu_memory = v.Bool("kv_beyond_gpu_memory", s->kv_beyond_gpu_memory);
  // vLLM v1 preempts by recompute; "swap" is vLLM v0's preemption_mode
  // (needs kv_offload: its cpu_gib is the swap space).
  e.swap_preemption =
      v.Choice("preemption", e.swap_preemption ? "swap" : "recompute",
               {"recompute", "swap"}) == "swap";
  if (v.Has("kv_offload")) {
    const JsonView o = v.Object("kv_offload");
    o.AllowKeys({"cpu_gib", "pcie_gb_per_s", "latency_us"});
    // 0: no tier (so --set engine.kv_offload.cpu_gib=0 turns it off).
    s->kv_offload_cpu_gib = o.RequireNumber("cpu_gib", Range::Closed(0, 1e6));
    s->kv_offload_pcie_bytes_per_s =
        o.Number("pcie_gb_per_s", 0, Range::Closed(0.01, 1e6)) * 1e9;
    s->kv_offload_latency_s = o.Number("latency_us", 0, Range::Closed(0, 1e6)) * 1e-6;
  }
  e.policy = v.Choice("policy", e.policy, SchedulerPolicyNames());
  if (auto gib = v.OptionalNumber("activation_reserve_gib", Range::Closed(0, 1e6))) {
    s->activation_reserve_bytes = *gib * kGiB;
  }  // else as before: given by /engine, or < 0 (derived)
  if (v.Has("speculative_decoding")) ParseSpecDecoding(v, &e);
  // The combinations the engine runs (a pool may inherit /engine's
  // speculative decoding).
  const EngineFeatures features{
      .speculative_decoding = e.spec.on(),
      .async_scheduling = v.Has("async_scheduling") && e.async_scheduling,
      .kv_offload = s->kv_offload_cpu_gib > 0,
      .swap_preemption = e.swap_preemption,
      .disaggregation = s->json.contains("disaggregation"),
      .pipeline_parallel = s->pp > 1,
  };
  if (const auto rule = Unsupported(features)) v.FailMessage(rule->key, rule->expected);
  if (e.spec.on()) e.async_scheduling = false;
}

// A step moves at most the whole CPU tier and the whole GPU cache over
// PCIe; that stall must stay one interval (core/time.h) or the clock
// saturates (a run of 4.6e9 s at 1e-300 GB/s).
void CheckTransferTime(const JsonView& root, const Scenario& s) {
  const EngineConfig& e = s.engine;
  const double bytes =
      (static_cast<double>(e.cpu_blocks) + e.num_gpu_blocks) * e.kv_block_bytes;
  const double seconds = e.pcie_latency_s + bytes / e.pcie_bytes_per_s;
  if (seconds <= kMaxIntervalSeconds) return;
  std::ostringstream os;
  os << "expected a link that moves the CPU tier and the GPU cache ("
     << e.cpu_blocks + e.num_gpu_blocks << " blocks, " << bytes / 1e9
     << " GB per GPU) within " << kMaxIntervalSeconds << " s: at least "
     << bytes / (kMaxIntervalSeconds - e.pcie_latency_s) / 1e9 << " GB/s, got "
     << e.pcie_bytes_per_s / 1e9 << " GB/s";
  root.Object("engine").Object("kv_offload").FailMessage("pcie_gb_per_s", os.str());
}

// engine.kv_offload in blocks of this model, tp and block size, and the
// link's bandwidth (default: the GPU's PCIe, per direction, per GPU).
void ResolveKvOffload(const JsonView& root, Scenario* s) {
  EngineConfig& e = s->engine;
  // (Combinations with the tier were checked per engine object: EngineRules.)
  if (s->kv_offload_cpu_gib == 0) return;
  // cpu_gib is the instance's, over its tp GPUs (as vLLM's
  // --kv-offloading-size); each GPU keeps its shard of every block.
  const double block_bytes = s->model.KvBytesPerTokenPerGpu(s->tp) * e.block_size;
  const double blocks = std::floor(s->kv_offload_cpu_gib * kGiB / (block_bytes * s->tp));
  if (blocks < 1) {
    std::ostringstream os;
    os << "expected room for at least one KV block ("
       << static_cast<int64_t>(block_bytes * s->tp)
       << " bytes over " << s->tp << " GPU(s)), got " << s->kv_offload_cpu_gib << " GiB";
    root.Object("engine").Object("kv_offload").FailMessage("cpu_gib", os.str());
  }
  e.cpu_blocks = static_cast<int64_t>(blocks);
  e.kv_block_bytes = block_bytes;
  e.offload_gpus = s->tp;
  e.pcie_bytes_per_s = s->kv_offload_pcie_bytes_per_s > 0 ? s->kv_offload_pcie_bytes_per_s
                                                          : s->gpu.pcie_bytes_per_s;
  e.pcie_latency_s = s->kv_offload_latency_s;
  CheckTransferTime(root, *s);
}

// The batch limits a vLLM engine's scenario leaves out: `vllm serve`'s for
// its GPU. (SGLang's defaults are resolved with its memory pool.)
void ApplyVllmBatchDefaults(Scenario* s) {
  if (s->engine.kind != EngineKind::kVllm) return;
  const VllmBatchDefaults d = VllmServeBatchDefaults(s->gpu);
  if (!s->max_num_seqs_given) s->engine.max_num_seqs = d.max_num_seqs;
  if (!s->max_num_batched_tokens_given) {
    s->engine.max_num_batched_tokens = d.max_num_batched_tokens;
  }
}

void ParseEngine(const JsonView& root, Scenario* s) {
  if (root.Has("engine")) ParseEngineObject(root.Object("engine"), s);
  ApplyVllmBatchDefaults(s);
  // Pipeline stages: vLLM's batch queue holds one batch per stage, and a
  // request has one token in flight at most (async scheduling with
  // pipeline parallelism, vLLM PR #32359): the plain scheduler's rule.
  if (s->pp > 1) s->engine.async_scheduling = false;
  s->engine.pipeline_stages = s->pp;
}

// hardware.pp > 1: one cost model per distinct stage (the middle stages
// of equal layer counts share one), and the link between stages.
// The engine overlaps a step's host work with the GPU's previous step
// under vLLM's async scheduling and SGLang's overlap scheduler (both set
// async_scheduling; parsed before the cost model).
HostWork HostWorkOf(const EngineConfig& e) {
  return e.async_scheduling ? HostWork::kOverlapped : HostWork::kBetweenSteps;
}

// vLLM runs all-reduces on symmetric memory by default; SGLang only when
// asked (--enable-torch-symm-mem), which servesim does not model.
bool SymmMemAllReduceOf(const EngineConfig& e) { return e.kind == EngineKind::kVllm; }

std::unique_ptr<CostModel> MakePipelineCostModel(const JsonView& v, const Scenario& s) {
  if (v.Choice("type", "", {"linear", "roofline", "calibrated"}) == "linear") {
    v.Fail("type", "\"roofline\" or \"calibrated\" with hardware.pp > 1 (a linear "
                   "model prices whole steps, not a stage's layers)");
  }
  std::vector<std::shared_ptr<const CostModel>> stages;
  std::vector<ModelSpec> specs;
  for (int rank = 0; rank < s.pp; ++rank) {
    const ModelSpec stage = s.model.PipelineStage(s.pp, rank);
    std::shared_ptr<const CostModel> model;
    for (size_t j = 0; j < specs.size() && !model; ++j) {
      const ModelSpec& o = specs[j];
      if (o.num_layers == stage.num_layers && o.dense_layers == stage.dense_layers &&
          o.sliding_window_layers == stage.sliding_window_layers &&
          o.holds_embedding == stage.holds_embedding &&
          o.holds_lm_head == stage.holds_lm_head) {
        model = stages[j];
      }
    }
    if (!model) {
      model = MakeCostModel(v, stage, s.gpu, s.tp, HostWorkOf(s.engine),
                            SymmMemAllReduceOf(s.engine));
    }
    specs.push_back(stage);
    stages.push_back(std::move(model));
  }
  StageLink link;
  if (!s.pp_link.empty()) {
    const LinkSpec l = LoadLinkSpec(s.pp_link);
    link = {l.name, l.bytes_per_s, l.latency_s};
  } else {
    // Stages in one server: NCCL send/recv over the GPUs' own link. The
    // 10 us is an assumption (a point-to-point NCCL launch and handshake).
    link = {s.gpu.interconnect_topology, s.gpu.interconnect_bytes_per_s, 1e-5};
  }
  return std::make_unique<PipelineCostModel>(std::move(stages), s.model, s.tp, link);
}

// The cost model of `pool`'s cost_model key if it has one, else root's, else
// the default roofline.
void ParseCostModel(const JsonView& root, const JsonView& pool, Scenario* s) {
  static const nlohmann::json def = {{"type", "roofline"}};
  const JsonView v = pool.Has("cost_model")   ? pool.Object("cost_model")
                     : root.Has("cost_model") ? root.Object("cost_model")
                                              : JsonView(def, root.file(), "/cost_model");
  s->cost_model = s->pp > 1 ? MakePipelineCostModel(v, *s)
                            : MakeCostModel(v, s->model, s->gpu, s->tp, HostWorkOf(s->engine),
                                            SymmMemAllReduceOf(s->engine));
  s->work_counter = std::make_shared<const StepWorkCounter>(s->model, s->tp);
}

void ParseCostModel(const JsonView& root, Scenario* s) { ParseCostModel(root, root, s); }

void ParseArrival(const JsonView& w, Scenario* s) {
  WorkloadConfig& wc = s->workload;
  const JsonView a = w.Object("arrival");
  if (a.String("process", "") == "closed") {
    a.AllowKeys({"process", "concurrency", "think_time_s"});
    wc.closed_loop = true;
    wc.concurrency = static_cast<int32_t>(
        a.RequireInteger("concurrency", Range::Closed(1, 1 << 20)));
    wc.think_time_s = a.Number("think_time_s", 0, IntervalSeconds());
    return;
  }
  wc.arrival = MakeArrivalProcess(a);
}

// The trace is read once here, streaming, so a malformed file fails before
// the run instead of after it.
// What reading the trace found: its records' facts, whether every record
// has a timestamp, and the last one.
void ScanTrace(const TraceOptions& opts, Scenario* s) {
  auto reader = OpenTrace(opts);
  TraceRecord rec;
  bool timed = true;
  double last_s = 0;
  while (reader->Next(&rec)) {
    timed = timed && !std::isnan(rec.timestamp_s);
    if (timed) last_s = rec.timestamp_s;
    const int64_t tokens = int64_t{rec.input_tokens} + rec.output_tokens;
    if (tokens > s->trace_longest_tokens) {
      s->trace_longest_tokens = tokens;
      s->trace_longest_line = rec.line;
    }
  }
  reader->Finish();
  s->trace_bad_lines = reader->bad_lines();
  s->trace_data_lines = reader->data_lines();
  s->trace_records = reader->good_records();
  s->trace_notes = reader->notes();
  if (!reader->first_errors().empty()) {
    s->trace_first_error = reader->first_errors().front();
  }
  s->trace_timed = timed;
  s->trace_last_s = last_s;
}

// The scan's facts, from a scenario that read the same trace.
void CopyTraceScan(const Scenario& from, Scenario* s) {
  s->trace_bad_lines = from.trace_bad_lines;
  s->trace_data_lines = from.trace_data_lines;
  s->trace_records = from.trace_records;
  s->trace_notes = from.trace_notes;
  s->trace_first_error = from.trace_first_error;
  s->trace_longest_tokens = from.trace_longest_tokens;
  s->trace_longest_line = from.trace_longest_line;
  s->trace_timed = from.trace_timed;
  s->trace_last_s = from.trace_last_s;
}

// /workload/trace as `sc` was given it, or null.
const nlohmann::json* TraceJson(const Scenario& sc) {
  const auto w = sc.json.find("workload");
  if (w == sc.json.end() || !w->is_object()) return nullptr;
  const auto t = w->find("trace");
  return t == w->end() ? nullptr : &*t;
}

// `scanned`: a scenario this one is an edit of (Rederive), whose scan is
// reused when its /workload/trace is the same (the file is not read again).
void ParseTrace(const JsonView& w, Scenario* s, const Scenario* scanned) {
  WorkloadConfig& wc = s->workload;
  const JsonView t = w.Object("trace");
  TraceOptions opts = ParseTraceOptions(t);
  const nlohmann::json* before = scanned ? TraceJson(*scanned) : nullptr;
  if (before && *before == t.raw() && scanned->file == s->file) {
    CopyTraceScan(*scanned, s);
  } else {
    ScanTrace(opts, s);
  }
  const bool timed = s->trace_timed;
  const double last_s = s->trace_last_s;
  // Timestamps are relative to the first record and never go backwards, so
  // the last one is the span.
  if (opts.use_timestamps && timed && last_s * opts.time_scale > kMaxSpanSeconds) {
    std::ostringstream os;
    os << "expected a replay of at most " << Seconds(kMaxSpanSeconds)
       << " (3.2 years), got the trace's " << Seconds(last_s) << " x time_scale "
       << opts.time_scale << " = " << Seconds(last_s * opts.time_scale);
    t.FailMessage(t.Has("time_scale") ? "time_scale" : "path", os.str());
  }
  if (opts.format == TraceFormat::kSessions && !opts.use_timestamps) {
    t.FailMessage("use_timestamps",
                  "expected true: the sessions format sends first turns at "
                  "their timestamps and later turns after their parents by "
                  "the trace's gaps");
  }
  if (opts.use_timestamps && !timed) {
    t.FailMessage("use_timestamps",
                  "expected false: this trace has no timestamps; give "
                  "/workload/arrival to draw arrivals");
  }
  if (opts.use_timestamps && w.Has("arrival")) {
    w.FailMessage("arrival",
                  "a trace replayed with its own timestamps takes no arrival "
                  "process; set /workload/trace/use_timestamps false to use one");
  }
  wc.trace = opts;
}

// workload.classes: each class its share, lengths, priority and SLOs.
void ParseClasses(const JsonView& w, Scenario* s) {
  WorkloadConfig& wc = s->workload;
  if (wc.trace) {
    w.FailMessage("classes", "a trace gives every request's lengths; classes "
                             "draw their own: remove /workload/trace or classes");
  }
  if (wc.prefix && wc.prefix->DefinesLengths()) {
    w.FailMessage("classes", "this prefix model defines the lengths; classes "
                             "draw their own: use a prefix model that adds a "
                             "prefix (zipf, random_prefix, target_hit_rate)");
  }
  if (w.Has("sessions")) {
    w.FailMessage("classes", "classes are drawn per request and sessions per "
                             "conversation: expected one of the two");
  }
  const std::vector<JsonView> items = w.Array("classes");
  if (items.empty() || items.size() > 64) {
    w.Fail("classes", "a list of 1 to 64 classes");
  }
  for (const JsonView& c : items) {
    c.AllowKeys({"name", "share", "input_len", "output_len", "priority",
                 "ttft_slo_ms", "tpot_slo_ms"});
    RequestClass rc;
    rc.name = c.RequireString("name");
    if (rc.name.empty()) c.Fail("name", "a non-empty name");
    for (const RequestClass& other : wc.classes) {
      if (other.name == rc.name) c.Fail("name", "a name no other class has");
    }
    rc.share = c.RequireNumber("share", Range::OpenClosed(0, 1e9));
    rc.input_len = MakeLengthDistribution(c.Object("input_len"));
    rc.output_len = MakeLengthDistribution(c.Object("output_len"));
    rc.priority = static_cast<int32_t>(
        c.Integer("priority", 0, Range::Closed(-1e9, 1e9)));
    rc.ttft_slo_s = c.Number("ttft_slo_ms", 0, Range::Closed(0, 1e9)) / 1e3;
    rc.tpot_slo_s = c.Number("tpot_slo_ms", 0, Range::Closed(0, 1e9)) / 1e3;
    wc.classes.push_back(std::move(rc));
  }
  for (const char* key : {"input_len", "output_len"}) {
    if (w.Has(key)) {
      w.FailMessage(key, "each of /workload/classes has its own lengths; "
                         "remove this key");
    }
  }
}

void ParseLengths(const JsonView& w, Scenario* s) {
  WorkloadConfig& wc = s->workload;
  if (!wc.classes.empty()) return;  // ParseClasses
  const bool given_elsewhere =
      wc.trace || (wc.prefix && wc.prefix->DefinesLengths());
  const char* by = wc.trace ? "the trace" : "the prefix model";
  for (const char* key : {"input_len", "output_len"}) {
    if (given_elsewhere && w.Has(key)) {
      w.FailMessage(key, std::string("lengths come from ") + by + "; remove this key");
    }
  }
  if (given_elsewhere) return;
  wc.input_len = MakeLengthDistribution(w.Object("input_len"));
  wc.output_len = MakeLengthDistribution(w.Object("output_len"));
}

void ParsePrefix(const JsonView& w, Scenario* s) {
  // The target-hit-rate model needs the engine's block size to aim at.
  nlohmann::json cfg = w.raw().at("prefix");
  if (cfg.is_object() && cfg.value("model", "") == "target_hit_rate" &&
      !cfg.contains("block_size")) {
    cfg["block_size"] = s->engine.block_size;
  }
  s->workload.prefix = MakePrefixModel(JsonView(cfg, w.file(), w.PathOf("prefix")));
}

void ParseSessions(const JsonView& w, Scenario* s) {
  const JsonView v = w.Object("sessions");
  v.AllowKeys({"turns", "think_time_s"});
  WorkloadConfig::Sessions sess;
  sess.turns = MakeLengthDistribution(v.Object("turns"));
  sess.think_time_s = v.Number("think_time_s", 0, IntervalSeconds());
  s->workload.sessions = sess;
  if (s->workload.closed_loop || s->workload.trace) {
    w.FailMessage("sessions", "sessions arrive open-loop: expected a poisson, "
                              "gamma or constant /workload/arrival and no trace");
  }
  // Turns after the first draw their new input and their answer from the
  // length distributions; a prefix model that defines lengths has none.
  if (!s->workload.input_len || !s->workload.output_len) {
    w.FailMessage("sessions", "later turns draw their new input and answer from "
                              "/workload/input_len and /workload/output_len: expected "
                              "both (this prefix model defines only first-turn lengths)");
  }
}

// A run bounded only by its request count must still end within
// kMaxSpanSeconds of simulated time, or its clock would run towards int64
// overflow: the expected span of the arrivals (requests / rate, the requests
// being num_requests or a trace's records), or of a closed loop's think
// times (num_requests * think_time_s / concurrency).
void CheckTrafficSpan(const JsonView& w, const Scenario& s) {
  const WorkloadConfig& wc = s.workload;
  if (wc.duration_s > 0) return;
  int64_t n = wc.num_requests;
  std::string what = "num_requests";
  if (wc.trace) {  // lengths (and with an arrival process, only lengths)
    const int64_t records = s.trace_records;
    if (n == 0 || records < n) n = records, what = "the trace's records";
  }
  std::ostringstream how;
  double span = 0;
  if (wc.closed_loop) {
    span = static_cast<double>(n) * wc.think_time_s / wc.concurrency;
    how << what << " * think_time_s / concurrency = " << n << " * "
        << Seconds(wc.think_time_s) << " / " << wc.concurrency;
  } else if (wc.arrival) {
    span = static_cast<double>(n) / wc.arrival->rate();
    how << what << " / rate = " << n << " / " << wc.arrival->rate() << "/s";
  }
  if (span <= kMaxSpanSeconds) return;
  w.FailMessage("num_requests",
                "expected at most " + Seconds(kMaxSpanSeconds) +
                    " (3.2 years) of simulated traffic, got " + how.str() +
                    " = " + Seconds(span) +
                    "; lower num_requests or set duration_s");
}

void ParseWorkload(const JsonView& root, Scenario* s, const Scenario* scanned) {
  WorkloadConfig& wc = s->workload;
  const JsonView w = root.Object("workload");
  w.AllowKeys({"arrival", "input_len", "output_len", "num_requests",
               "duration_s", "max_concurrency", "prefix", "sessions", "trace",
               "classes"});
  if (w.Has("trace")) ParseTrace(w, s, scanned);
  if (!(wc.trace && wc.trace->use_timestamps)) ParseArrival(w, s);
  if (w.Has("prefix")) ParsePrefix(w, s);
  if (w.Has("classes")) ParseClasses(w, s);
  ParseLengths(w, s);
  if (w.Has("sessions")) ParseSessions(w, s);
  wc.num_requests = w.Integer("num_requests", 0, Range::Closed(0, 1e9));
  wc.duration_s = w.Number("duration_s", 0, SpanSeconds());
  if (wc.num_requests == 0 && wc.duration_s == 0 && !wc.trace) {
    w.FailMessage("num_requests",
                  "expected num_requests > 0 or duration_s > 0 to bound the run");
  }
  wc.max_concurrency = static_cast<int32_t>(
      w.Integer("max_concurrency", 0, Range::Closed(0, 1 << 20)));
  if (wc.closed_loop && wc.max_concurrency > 0) {
    w.FailMessage("max_concurrency",
                  "applies to open-loop arrivals; a closed loop's concurrency "
                  "is /workload/arrival/concurrency");
  }
  CheckTrafficSpan(w, *s);
}

// metrics.goodput: vllm bench serve --goodput's SLOs, in ms; 0 is allowed
// (as vLLM allows it: only an instant answer meets it).
void ParseGoodput(const JsonView& g, GoodputSlo* slo) {
  g.AllowKeys({"ttft_ms", "tpot_ms", "e2el_ms"});
  const Range ms = Range::Closed(0, 1e11);  // up to the longest span, 1e8 s
  slo->ttft_ms = g.OptionalNumber("ttft_ms", ms);
  slo->tpot_ms = g.OptionalNumber("tpot_ms", ms);
  slo->e2el_ms = g.OptionalNumber("e2el_ms", ms);
  if (slo->empty()) {
    g.FailMessage("", "expected at least one of ttft_ms, tpot_ms, e2el_ms");
  }
}

void ParseMetrics(const JsonView& root, Scenario* s) {
  if (!root.Has("metrics")) return;
  const JsonView m = root.Object("metrics");
  m.AllowKeys({"warmup_s", "warmup_requests", "percentiles", "goodput"});
  s->metrics.warmup_s = m.Number("warmup_s", 0, SpanSeconds());
  s->metrics.warmup_requests =
      m.Integer("warmup_requests", 0, Range::Closed(0, 1e9));
  s->metrics.percentiles =
      m.Numbers("percentiles", s->metrics.percentiles, Range::Closed(0, 100));
  // A percentile given twice would be one column and one JSON key twice.
  const std::vector<double>& ps = s->metrics.percentiles;
  for (size_t i = 0; i < ps.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (ps[i] == ps[j]) {
        std::ostringstream msg;
        msg << "expected distinct percentiles, got " << ps[i] << " twice";
        m.FailMessage("percentiles", msg.str());
      }
    }
  }
  if (m.Has("goodput")) ParseGoodput(m.Object("goodput"), &s->metrics.goodput);
}

void ParseCluster(const JsonView& root, Scenario* s) {
  if (!root.Has("cluster")) return;
  const JsonView c = root.Object("cluster");
  c.AllowKeys({"replicas", "router", "load_slack"});
  s->num_replicas = static_cast<int32_t>(c.Integer("replicas", 1, Range::Closed(1, 4096)));
  s->router.name = c.Choice("router", "round_robin",
                            {"round_robin", "least_outstanding", "power_of_two",
                             "prefix_affinity"});
  s->router.load_slack = c.Number("load_slack", 0.25, Range::Closed(0, 1e6));
  if (s->router.name == "prefix_affinity" && !s->engine.prefix_caching) {
    c.FailMessage("router", "prefix_affinity routes by cached prefixes: expected "
                            "/engine/prefix_caching true");
  }
}

// One pool of /disaggregation: the scenario's /hardware and /engine are its
// defaults; its own keys override them; its memory plan and cost model are
// made for its GPU and tp.
PoolSpec ParsePool(const JsonView& root, const JsonView& v, const Scenario& base) {
  v.AllowKeys({"gpu", "tp", "replicas", "router", "load_slack", "engine", "cost_model"});
  Scenario ps = base;
  const bool hw = root.Has("hardware");
  if (v.Has("gpu") || !hw) ps.gpu = LoadGpuAt(v);
  ps.tp = ParseTp(v, ps.model, hw ? base.tp : 1);
  if (v.Has("engine")) ParseEngineObject(v.Object("engine"), &ps);
  ApplyVllmBatchDefaults(&ps);  // for the pool's own GPU
  PlanMemory(v, &ps);
  ParseCostModel(root, v, &ps);
  PoolSpec p;
  p.model = ps.model;
  p.gpu = ps.gpu;
  p.tp = ps.tp;
  p.engine = ps.engine;
  p.gpu_memory_utilization = ps.gpu_memory_utilization;
  p.kv_cache_bytes = ps.kv_cache_bytes;
  p.num_gpu_blocks_given = ps.num_gpu_blocks_given;
  p.cost_model = ps.cost_model;
  p.work_counter = ps.work_counter;
  p.replicas = static_cast<int32_t>(v.Integer("replicas", 1, Range::Closed(1, 4096)));
  p.router.name = v.Choice("router", "round_robin",
                           {"round_robin", "least_outstanding", "power_of_two",
                            "prefix_affinity"});
  p.router.load_slack = v.Number("load_slack", 0.25, Range::Closed(0, 1e6));
  if (p.router.name == "prefix_affinity" && !p.engine.prefix_caching) {
    v.FailMessage("router", "prefix_affinity routes by cached prefixes: expected "
                            "engine.prefix_caching true in this pool");
  }
  return p;
}

// /link: a name under models/links (or a file), or an object with the
// figures ({"gb_per_s", "latency_us"}, optionally starting from "name").
LinkSpec ParseLink(const JsonView& d) {
  if (d.Has("link") && d.raw().at("link").is_object()) {
    const JsonView l = d.Object("link");
    l.AllowKeys({"name", "gb_per_s", "latency_us"});
    LinkSpec link;
    if (l.Has("name")) {
      link = LoadLinkSpec(l.RequireString("name"));
      link.bytes_per_s = l.Number("gb_per_s", link.bytes_per_s / 1e9,
                                  Range::Closed(0.01, 1e6)) * 1e9;
      link.latency_s = l.Number("latency_us", link.latency_s * 1e6,
                                Range::Closed(0, 1e7)) * 1e-6;
    } else {
      link.name = "custom";
      link.source = d.file() + ": " + l.path();
      link.bytes_per_s = l.RequireNumber("gb_per_s", Range::Closed(0.01, 1e6)) * 1e9;
      link.latency_s = l.RequireNumber("latency_us", Range::Closed(0, 1e7)) * 1e-6;
    }
    return link;
  }
  return LoadLinkSpec(d.RequireString("link"));
}

void ParseDisaggregation(const JsonView& root, Scenario* s) {
  const JsonView d = root.Object("disaggregation");
  d.AllowKeys({"prefill", "decode", "link"});
  if (root.Has("cluster")) {
    root.FailMessage("cluster", "a disaggregated deployment sizes its pools in "
                                "/disaggregation/prefill and /disaggregation/decode: "
                                "remove /cluster");
  }
  DisaggSpec ds;
  ds.prefill = ParsePool(root, d.Object("prefill"), *s);
  ds.decode = ParsePool(root, d.Object("decode"), *s);
  if (ds.prefill.model.kv_cache_dtype != ds.decode.model.kv_cache_dtype) {
    d.Object("decode").FailMessage(
        "engine", "expected the prefill pool's kv_cache_dtype (" +
                      ds.prefill.model.kv_cache_dtype + "): the KV moves as it is, got " +
                      ds.decode.model.kv_cache_dtype);
  }
  ds.link = ParseLink(d);
  // The single-deployment fields describe the decode pool.
  const PoolSpec& dec = ds.decode;
  s->model = dec.model;
  s->gpu = dec.gpu;
  s->tp = dec.tp;
  s->engine = dec.engine;
  s->gpu_memory_utilization = dec.gpu_memory_utilization;
  s->kv_cache_bytes = dec.kv_cache_bytes;
  s->num_gpu_blocks_given = dec.num_gpu_blocks_given;
  s->cost_model = dec.cost_model;
  s->work_counter = dec.work_counter;
  s->num_replicas = ds.prefill.replicas + dec.replicas;
  s->router = dec.router;
  s->disagg = std::move(ds);
}

void ParseLimits(const JsonView& root, Scenario* s) {
  if (!root.Has("limits")) return;
  const JsonView l = root.Object("limits");
  l.AllowKeys({"max_queued"});
  s->limits.max_queued = l.Integer("max_queued", 100000, Range::Closed(1, 1e9));
}

// The request path outside the scheduler (sim/engine/frontend.h): on
// unless /frontend/enabled is false, so TTFT and E2E are what a benchmark
// client measures.
void ParseFrontend(const JsonView& root, Scenario* s) {
  s->frontend.enabled = true;
  // vLLM's API server tokenizes in micro-batches; SGLang's tokenizer
  // manager one request at a time (its dynamic batch tokenizer is opt-in).
  if (s->engine.kind == EngineKind::kSglang) s->frontend.tokenizer_batch_wait_s = 0;
  if (!root.Has("frontend")) return;
  const JsonView f = root.Object("frontend");
  f.AllowKeys({"enabled", "request_s", "prompt_token_s", "work_cv", "api_servers",
               "engine_hop_s", "output_s", "client_turnaround_s", "client_jitter_s",
               "tokenizer_batch_wait_s", "tokenizer_max_batch"});
  FrontendConfig& c = s->frontend;
  const Range seconds = Range::Closed(0, 60);
  c.enabled = f.Bool("enabled", c.enabled);
  c.request_s = f.Number("request_s", c.request_s, seconds);
  c.prompt_token_s = f.Number("prompt_token_s", c.prompt_token_s, Range::Closed(0, 0.01));
  c.work_cv = f.Number("work_cv", c.work_cv, Range::Closed(0, 10));
  c.api_servers = static_cast<int32_t>(f.Integer("api_servers", 0, Range::Closed(0, 4096)));
  c.engine_hop_s = f.Number("engine_hop_s", c.engine_hop_s, seconds);
  c.output_s = f.Number("output_s", c.output_s, seconds);
  c.client_turnaround_s = f.Number("client_turnaround_s", c.client_turnaround_s, seconds);
  c.client_jitter_s = f.Number("client_jitter_s", c.client_jitter_s, seconds);
  c.tokenizer_batch_wait_s =
      f.Number("tokenizer_batch_wait_s", c.tokenizer_batch_wait_s, Range::Closed(0, 1));
  c.tokenizer_max_batch = static_cast<int32_t>(
      f.Integer("tokenizer_max_batch", c.tokenizer_max_batch, Range::Closed(1, 4096)));
}

// `scanned`: see ParseTrace.
Scenario ParseOrThrow(nlohmann::json j, const std::string& label,
                      const ScenarioParseOptions& options,
                      const Scenario* scanned = nullptr) {
  Scenario s;
  s.file = label;
  s.json = std::move(j);
  // An edit of a checked scenario is checked too (capacity's rates).
  if (scanned != nullptr) s.check_invariants = scanned->check_invariants;
  const JsonView root(s.json, label);
  root.AllowKeys({"seed", "model", "hardware", "engine", "cost_model",
                  "workload", "metrics", "limits", "cluster", "name",
                  "description", "disaggregation", "frontend"});
  s.seed = static_cast<uint64_t>(root.Integer("seed", 1, Range::Closed(0, 9e15)));
  ParseHardware(root, &s);
  ParseEngine(root, &s);
  ParseWorkload(root, &s, scanned);
  CheckSglangSupport(root, s);
  ParseMetrics(root, &s);
  ParseLimits(root, &s);
  ParseFrontend(root, &s);
  if (root.Has("disaggregation")) {
    if (s.model.expert_parallel > 1) {
      root.Object("hardware").Fail("ep", "1 with disaggregation (expert "
                                         "parallelism is modelled on co-located replicas)");
    }
    if (s.pp > 1) {
      root.Object("hardware").Fail("pp", "1 with disaggregation (pipeline "
                                         "parallelism is modelled on co-located replicas)");
    }
    ParseDisaggregation(root, &s);
    return s;
  }
  ParseCluster(root, &s);
  CheckExpertGroups(root, s);
  PlanMemory(root, &s, options.defer_fit);
  ResolveKvOffload(root, &s);
  if (!s.no_room) ResolveSglangPool(root, &s);
  ParseCostModel(root, &s);
  return s;
}

}  // namespace

SimulationInput Scenario::ToSimulationInput() const {
  if (no_room) {  // a caller that deferred the fit check forgot to look
    std::fprintf(stderr, "servesim: running a scenario that does not fit: %s\n",
                 no_room->message.c_str());
    std::abort();
  }
  SimulationInput in;
  in.seed = seed;
  in.workload = workload;
  in.engine = engine;
  in.cost_model = cost_model.get();
  in.work_counter = work_counter.get();
  in.peak_flops_per_gpu = gpu.GemmPeakFlops(model.fp8_weights());
  in.peak_hbm_bytes_per_s = gpu.hbm_bytes_per_s;
  in.check_invariants = check_invariants;
  in.metrics = metrics;
  in.limits = limits;
  in.frontend = frontend;
  in.num_replicas = num_replicas;
  in.router = router;
  if (disagg) {
    const auto pool = [](const PoolSpec& p) {
      PoolConfig c;
      c.engine = p.engine;
      c.cost_model = p.cost_model.get();
      c.work_counter = p.work_counter.get();
      c.num_replicas = p.replicas;
      c.router = p.router;
      return c;
    };
    DisaggConfig d;
    d.prefill = pool(disagg->prefill);
    d.decode = pool(disagg->decode);
    d.link_bytes_per_s = disagg->link.bytes_per_s;
    d.link_latency_s = disagg->link.latency_s;
    d.kv_bytes_per_token_per_gpu = disagg->decode.model.KvBytesPerTokenPerGpu(disagg->decode.tp);
    d.decode_gpus = disagg->decode.tp;
    in.disagg = d;
    // MFU and MBU are against one GPU kind's peaks at one tp.
    if (disagg->prefill.gpu.name != disagg->decode.gpu.name ||
        disagg->prefill.tp != disagg->decode.tp ||
        !disagg->prefill.cost_model->HasHardwareBasis()) {
      in.peak_flops_per_gpu = in.peak_hbm_bytes_per_s = 0;
    }
  }
  // Step times without a FLOP/byte basis (the linear model) make no
  // utilization: MFU and MBU are left unknown (null, "-").
  if (!cost_model->HasHardwareBasis()) in.peak_flops_per_gpu = in.peak_hbm_bytes_per_s = 0;
  return in;
}

std::string Scenario::ArrivalDescription() const {
  if (workload.trace && workload.trace->use_timestamps) {
    std::ostringstream os;
    os << "trace replay of " << workload.trace->path << " (its timestamps x "
       << workload.trace->time_scale << ")";
    if (workload.trace->format == TraceFormat::kSessions) {
      os << ", later turns sent after their parent's answer (given think "
            "time, else the trace's gap from the parent's arrival)";
    }
    return os.str() + TraceSkipNote();
  }
  if (workload.closed_loop) {
    std::ostringstream os;
    os << "closed loop (" << workload.concurrency << " clients, think time "
       << workload.think_time_s << " s)";
    return os.str();
  }
  std::string d = workload.arrival->Describe();
  if (workload.sessions) {
    std::ostringstream os;
    os << "multi-turn sessions arriving " << d << ", turns "
       << workload.sessions->turns->Describe() << ", think time "
       << workload.sessions->think_time_s << " s";
    d = os.str();
  }
  if (workload.max_concurrency > 0) {
    d += ", capped at max_concurrency " + std::to_string(workload.max_concurrency);
  }
  if (workload.trace) d += ", lengths from " + workload.trace->path;
  return d + TraceSkipNote();
}

std::string Scenario::TraceSkipNote() const {
  if (!workload.trace) return "";
  std::string note;
  if (trace_bad_lines > 0) {
    note = ", skipping " + std::to_string(trace_bad_lines) + " malformed of " +
           std::to_string(trace_data_lines) + " trace lines (first: " +
           trace_first_error + ")";
  }
  TraceNotes notes = trace_notes;
  // Lengths only: the unit of timestamps that are not used is no news.
  if (!workload.trace->use_timestamps) notes.numeric_timestamps = false;
  // Priorities only the priority policy reads: said, and said if unused.
  const int64_t prioritized = notes.priority_records;
  notes.priority_records = 0;
  std::string said = DescribeTraceNotes(notes);
  if (prioritized > 0) {
    said += (said.empty() ? "" : "; ") + std::to_string(prioritized) +
            " records give a priority" +
            (engine.policy == "priority"
                 ? ""
                 : " (unused: policy " + engine.policy + " does not order by it)");
  }
  return said.empty() ? note : note + "; " + said;
}

double Scenario::OfferedRate() const {
  // Sessions: the arrival rate is of sessions, not of requests.
  if (workload.closed_loop || !workload.arrival || workload.sessions) return 0.0;
  return workload.arrival->rate();
}

Status ApplyOverride(nlohmann::json* json, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::Error("--set " + assignment +
                         ": expected path=value, e.g. workload.arrival.rate=12");
  }
  const std::string path = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  // Every string of the scenario is written out again (reports, result
  // JSON), which needs UTF-8.
  if (!IsValidUtf8(path)) return Status::Error("--set " + path + ": invalid UTF-8 in the key");
  if (!IsValidUtf8(text)) return Status::Error("--set " + path + ": invalid UTF-8");
  nlohmann::json* node = json;
  // "model": "name" is shorthand for {"name": "name"}: model.weight_dtype=fp8
  // extends it.
  if (path.rfind("model.", 0) == 0 && json->is_object() &&
      json->contains("model") && (*json)["model"].is_string()) {
    (*json)["model"] = nlohmann::json{{"name", (*json)["model"]}};
  }
  std::string done;
  std::istringstream parts(path);
  std::string key;
  std::vector<std::string> keys;
  while (std::getline(parts, key, '.')) {
    if (key.empty()) return Status::Error("--set " + assignment + ": empty key in path");
    keys.push_back(key);
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    if (node->is_null()) *node = nlohmann::json::object();  // new section
    if (!node->is_object()) {
      return Status::Error("--set " + assignment + ": /" + done +
                           " is not an object");
    }
    done += (done.empty() ? "" : "/") + keys[i];
    node = &(*node)[keys[i]];
  }
  nlohmann::json value;
  if (auto problem = ParseJsonStrict(text, &value)) {
    // Not JSON at all: taken as a string. JSON that is too deep, has a
    // duplicate key or an out-of-range number is an error.
    if (!problem->syntax) {
      std::string at = "/" + path;  // the JSON path of the value set
      std::replace(at.begin(), at.end(), '.', '/');
      if (problem->path != "/") at += problem->path;
      return Status::Error("--set " + path + ": " + at + ": " + problem->what);
    }
    value = text;
  }
  *node = std::move(value);
  return Status::Ok();
}

StatusOr<Scenario> ParseScenario(const std::string& text,
                                 const std::string& label,
                                 const std::vector<std::string>& overrides,
                                 const ScenarioParseOptions& options) {
  nlohmann::json j;
  if (auto problem = ParseJsonStrict(text, &j)) {
    return Status::Error(label + ": " + problem->message());
  }
  for (const auto& o : overrides) {
    Status st = ApplyOverride(&j, o);
    if (!st.ok()) return st;
  }
  if (options.edit) {
    if (Status st = options.edit(&j); !st.ok()) return st;
  }
  return CatchConfigErrors([&] { return ParseOrThrow(std::move(j), label, options); });
}

StatusOr<Scenario> Rederive(const Scenario& base, nlohmann::json json,
                            const ScenarioParseOptions& options) {
  return CatchConfigErrors(
      [&] { return ParseOrThrow(std::move(json), base.file, options, &base); });
}

StatusOr<Scenario> LoadScenarioFile(const std::string& path,
                                    const std::vector<std::string>& overrides,
                                    const ScenarioParseOptions& options) {
  StatusOr<std::string> text = CatchConfigErrors(
      [&] { return ReadInputFile(path, "scenario file", kMaxScenarioBytes); });
  if (!text.ok()) return text.status();
  return ParseScenario(*text, path, overrides, options);
}

}  // namespace servesim
