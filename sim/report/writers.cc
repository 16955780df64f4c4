// Report writers (see writers.h).
#include "sim/report/writers.h"
#include "sim/report/csv_field.h"
#include "sim/report/format.h"
#include "sim/scenario/vllm_batch_defaults.h"

#include <charconv>
#include <cstdio>
#include <sstream>

namespace servesim {
namespace {

void LatencyRow(std::ostream& os, const char* name, const SampleStats& st) {
  os << "  " << name;
  for (size_t i = std::string(name).size(); i < 20; ++i) os << ' ';
  os << Fmt(" %11.2f", st.mean) << Fmt(" %11.2f", st.median);
  for (const auto& [p, v] : st.percentiles) os << Fmt(" %11.2f", v);
  os << "\n";
}

// A statistic of no samples is null, not 0.0: nothing was measured.
nlohmann::json Measured(const SampleStats& st, double v) {
  return st.count > 0 ? nlohmann::json(v) : nlohmann::json(nullptr);
}

void AddLatency(nlohmann::json& j, const std::string& metric,
                const SampleStats& st) {
  j["mean_" + metric + "_ms"] = Measured(st, st.mean);
  j["median_" + metric + "_ms"] = Measured(st, st.median);
  j["std_" + metric + "_ms"] = Measured(st, st.stddev);
  for (const auto& [p, v] : st.percentiles) {
    j["p" + PercentileName(p) + "_" + metric + "_ms"] = Measured(st, v);
  }
}

nlohmann::json StatsJson(const SampleStats& st) {
  nlohmann::json j = {{"count", st.count},
                      {"mean", Measured(st, st.mean)},
                      {"std", Measured(st, st.stddev)},
                      {"median", Measured(st, st.median)},
                      {"min", Measured(st, st.min)},
                      {"max", Measured(st, st.max)}};
  for (const auto& [p, v] : st.percentiles) {
    j["p" + PercentileName(p)] = Measured(st, v);
  }
  return j;
}

void WriteLatencyHeader(const RunSummary& s, std::ostream& os) {
  os << "  metric                      mean       median";
  for (double p : s.percentiles) {
    const std::string name = "p" + PercentileName(p);
    os << std::string(name.size() < 12 ? 12 - name.size() : 0, ' ') << name;
  }
  os << "\n";
}

void WriteLatencyTable(const RunSummary& s, std::ostream& os) {
  WriteLatencyHeader(s, os);
  LatencyRow(os, "TTFT", s.ttft_ms);
  if (s.max_concurrency > 0)
    LatencyRow(os, "TTFT from arrival", s.ttft_from_arrival_ms);
  LatencyRow(os, "TPOT", s.tpot_ms);
  LatencyRow(os, "ITL (histogram)", s.itl_ms);
  LatencyRow(os, "E2E latency", s.e2el_ms);
  LatencyRow(os, "queueing delay", s.queue_ms);
  if (s.max_concurrency > 0) LatencyRow(os, "wait for slot", s.slot_wait_ms);
}

std::string PrefixContext(const RunSummary& s) {
  if (!s.prefix_caching) return "prefix caching off (hit rate 0%)";
  return "prefix caching on (hit rate " + Fmt("%.1f", 100 * s.token_hit_rate) +
         "% of prompt tokens, " + Fmt("%.1f", 100 * s.block_hit_rate) +
         "% of full blocks)";
}

// How loaded the GPUs were over the window: model FLOPs and memory-bandwidth
// utilization (sim/cost/step_work.h), "-" when unknown (a cost model without
// a FLOP basis, pools of two GPU kinds). The engine's busy share is 100%
// whenever any batch runs, not a utilization of the GPU, so it is named for
// what it is and never stands in for MFU.
std::string LoadText(const RunSummary& s) {
  if (s.mfu < 0) {
    return "MFU -, MBU -, engine busy " + Fmt("%.1f", 100 * s.gpu_busy_fraction) + "%";
  }
  return "MFU " + Fmt("%.1f", 100 * s.mfu) + "%, MBU " + Fmt("%.1f", 100 * s.mbu) + "%";
}

// The request path outside the engine: what the client's TTFT and E2E
// above include beyond the engine's own times.
void WriteFrontend(const RunSummary& s, std::ostream& os) {
  const RunSummary::Frontend& f = s.frontend;
  os << "  frontend (TTFT and E2E above are the client's): send to engine core mean "
     << Fmt("%.2f", f.to_engine_ms.mean) << " ms, max "
     << Fmt("%.2f", f.to_engine_ms.max) << " ms (" << f.api_servers
     << " API server" << (f.api_servers == 1 ? "" : "s") << ", busy "
     << Fmt("%.1f", 100 * f.api_busy_fraction) << "% of the run); output +"
     << Fmt("%.2f", f.output_ms) << " ms a token; engine-side TTFT mean "
     << Fmt("%.2f", f.engine_ttft_ms.mean) << " ms, median "
     << Fmt("%.2f", f.engine_ttft_ms.median) << " ms\n";
}

std::string SloText(double ms) {
  return ms > 0 ? Fmt("%g ms", ms) : std::string("none");
}

// Each class's counts, SLO attainment and latency table, with the policy
// that produced them.
void WriteClassTables(const Scenario& sc, const RunSummary& s, std::ostream& os) {
  os << "\nPer class (policy " << sc.engine.policy << "; SLO met = TTFT and "
     << "TPOT within the class's SLOs, goodput = those per second of the "
     << Fmt("%.1f", s.duration_s) << " s window, as vllm bench serve --goodput):\n";
  for (const ClassSummary& c : s.classes) {
    os << "  " << c.name << ": " << Fmt("%.1f", 100 * c.share)
       << "% of traffic, priority " << c.priority << ", SLO TTFT "
       << SloText(c.ttft_slo_ms) << " TPOT " << SloText(c.tpot_slo_ms) << "; "
       << c.completed << " completed, " << c.rejected << " rejected, "
       << c.unfinished << " unfinished, " << c.preemptions
       << " preemptions; SLO met by " << Fmt("%.1f", 100 * c.slo_attainment)
       << "%, goodput " << Fmt("%.3f", c.goodput_rps) << " of "
       << Fmt("%.3f", c.request_throughput) << " req/s\n";
    if (c.completed == 0) continue;
    os << "  ";
    WriteLatencyHeader(s, os);
    os << "  ";
    LatencyRow(os, "TTFT", c.ttft_ms);
    os << "  ";
    LatencyRow(os, "TPOT", c.tpot_ms);
    os << "  ";
    LatencyRow(os, "E2E latency", c.e2el_ms);
    os << "  ";
    LatencyRow(os, "queueing delay", c.queue_ms);
  }
}

nlohmann::json ClassesJson(const RunSummary& s) {
  nlohmann::json arr = nlohmann::json::array();
  auto slo = [](double ms) {
    return ms > 0 ? nlohmann::json(ms) : nlohmann::json(nullptr);
  };
  for (const ClassSummary& c : s.classes) {
    arr.push_back({{"name", c.name},
                   {"share", c.share},
                   {"priority", c.priority},
                   {"ttft_slo_ms", slo(c.ttft_slo_ms)},
                   {"tpot_slo_ms", slo(c.tpot_slo_ms)},
                   {"created", c.created},
                   {"completed", c.completed},
                   {"excluded_warmup", c.excluded_warmup},
                   {"rejected", c.rejected},
                   {"failed", c.failed},
                   {"unfinished", c.unfinished},
                   {"total_input_tokens", c.input_tokens},
                   {"total_output_tokens", c.output_tokens},
                   {"preemptions", c.preemptions},
                   {"good", c.good},
                   {"slo_attainment", c.completed > 0 ? nlohmann::json(c.slo_attainment)
                                                      : nlohmann::json(nullptr)},
                   {"request_goodput", c.goodput_rps},
                   {"request_throughput", c.request_throughput},
                   {"ttft_ms", StatsJson(c.ttft_ms)},
                   {"tpot_ms", StatsJson(c.tpot_ms)},
                   {"e2el_ms", StatsJson(c.e2el_ms)},
                   {"queueing_delay_ms", StatsJson(c.queue_ms)}});
  }
  return arr;
}

// The CPU tier's line: tier hit rates, transfers and the time steps
// waited for them.
void WriteOffload(const RunSummary& s, std::ostream& os) {
  os << "  KV offload: CPU tier of " << s.cpu_blocks << " blocks";
  if (s.prefix_caching) {
    os << "; prefix hits GPU tier " << Fmt("%.1f", 100 * s.gpu_tier_hit_rate)
       << "%, CPU tier " << Fmt("%.1f", 100 * s.cpu_tier_hit_rate)
       << "% of prompt tokens";
  }
  if (s.swap_preemption) {
    os << "; " << s.swap_preemptions << " swap preemptions ("
       << s.swap_fallbacks << " recomputed: no room)";
  }
  os << "\n  moved to CPU " << Fmt("%.2f", s.bytes_to_cpu / 1e9) << " GB (swap "
     << s.swap_out_blocks << ", evicted prefix " << s.store_blocks
     << " blocks), to GPU " << Fmt("%.2f", s.bytes_to_gpu / 1e9) << " GB (swap "
     << s.swap_in_blocks << ", prefix hits " << s.load_blocks
     << " blocks); steps stalled on transfers " << Fmt("%.3f", s.transfer_stall_s)
     << " s (" << Fmt("%.2f", 100 * s.transfer_stall_fraction) << "% of busy time)\n";
}

}  // namespace

std::string PercentileName(double p) {
  std::ostringstream os;
  os << p;
  return os.str();
}

std::string CostErrorText(const CostModelError& e) {
  if (!e.known()) {
    return "unknown (the cost model's constants are set by hand; no "
           "measurement bounds its step times)";
  }
  return "+/-" + Fmt("%.1f", 100 * e.prefill) + "% on prefill steps (TTFT), +/-" +
         Fmt("%.1f", 100 * e.decode) + "% on decode steps (TPOT, ITL), from the " +
         e.source + "; near saturation latencies move more than steps do";
}

nlohmann::json CostErrorJson(const CostModelError& e) {
  if (!e.known()) return nullptr;
  return {{"prefill_step_pct", 100 * e.prefill},
          {"decode_step_pct", 100 * e.decode},
          {"source", e.source}};
}

std::string DeploymentText(const Scenario& sc) {
  std::string t;
  if (sc.num_replicas > 1) t += std::to_string(sc.num_replicas) + " replicas of ";
  t += std::to_string(sc.GpusPerReplica()) + "x " + sc.gpu.name + " (tp=" + std::to_string(sc.tp);
  if (sc.pp > 1) {
    t += ", pp=" + std::to_string(sc.pp) + " stages over " +
         (sc.pp_link.empty() ? "the GPU interconnect" : sc.pp_link);
  }
  if (sc.model.expert_parallel > 1) t += ", ep=" + std::to_string(sc.model.expert_parallel);
  if (sc.interconnect_given) {
    t += ", interconnect " + Fmt("%g", sc.gpu.interconnect_bytes_per_s / 1e9) +
         " GB/s per direction (given)";
  }
  if (sc.engine.kind == EngineKind::kSglang) {
    const SglangConfig& g = sc.engine.sglang;
    t += "), KV pool of " + std::to_string(g.max_total_tokens) + " tokens" +
         (sc.num_replicas > 1 ? " each" : "") + " in pages of " + std::to_string(g.page_size) +
         (sc.num_gpu_blocks_given ? " (max_total_tokens given)"
                                  : " (from memory at mem_fraction_static " +
                                        Fmt("%g", sc.gpu_memory_utilization) + ")");
    return t;
  }
  t += "), " + std::to_string(sc.engine.num_gpu_blocks) + " KV blocks" +
       (sc.num_replicas > 1 ? " each" : "") + " of " + std::to_string(sc.engine.block_size) +
       " tokens" + (sc.num_gpu_blocks_given ? " (given)" : " (derived from memory)");
  return t;
}

// The engine's settings, in its own words.
std::string EngineText(const EngineConfig& e) {
  if (e.kind == EngineKind::kSglang) {
    const SglangConfig& g = e.sglang;
    return "SGLang 0.5.23 scheduler: max_running_requests " +
           std::to_string(g.max_running_requests) + ", chunked_prefill_size " +
           (g.chunked_prefill_size > 0 ? std::to_string(g.chunked_prefill_size) : "off") +
           ", max_prefill_tokens " + std::to_string(g.max_prefill_tokens) +
           ", schedule_policy " + SglangPolicyName(g.schedule_policy) +
           ", " + (g.disable_overlap_schedule ? "normal" : "overlap") +
           " loop, new-token ratio " + Fmt("%g", g.init_new_token_ratio) + " x conservativeness " +
           Fmt("%g", g.schedule_conservativeness) + ", ignore_eos " +
           (e.sglang_ignore_eos ? "on" : "off") + ", radix cache on";
  }
  return "max_num_seqs " + std::to_string(e.max_num_seqs) + ", max_num_batched_tokens " +
         std::to_string(e.max_num_batched_tokens) + ", chunked prefill " +
         (e.chunked_prefill ? "on" : "off") + ", policy " + e.policy + ", prefix caching " +
         (e.prefix_caching ? "on" : "off") + ", " + (e.async_scheduling ? "async" : "sync") +
         " scheduling (vLLM 0.33.0 semantics)";
}

namespace {

// "; max_num_seqs and max_num_batched_tokens are vllm serve's default on a
// GPU of 70 GiB or more, not an A100": the limits a vLLM scenario left to
// vLLM's defaults for its GPU ("" when it gave both), after EngineText.
std::string BatchDefaultsNote(const Scenario& sc) {
  if (sc.disagg || sc.engine.kind != EngineKind::kVllm) return "";
  const bool seqs = !sc.max_num_seqs_given;
  const bool tokens = !sc.max_num_batched_tokens_given;
  if (!seqs && !tokens) return "";
  const std::string which = seqs && tokens ? "max_num_seqs and max_num_batched_tokens"
                            : seqs         ? "max_num_seqs"
                                           : "max_num_batched_tokens";
  return "; " + which + (seqs && tokens ? " are" : " is") + " vllm serve's default on " +
         VllmServeBatchDefaults(sc.gpu).why;
}

}  // namespace

void WriteConsoleReport(const Scenario& sc, const RunSummary& s,
                        std::ostream& os) {
  os << "servesim run: " << sc.file << "\n";
  os << "  model " << sc.model.Label() << " on ";
  if (sc.disagg) {
    const DisaggSpec& d = *sc.disagg;
    os << "a disaggregated deployment: " << d.prefill.replicas << " prefill x "
       << d.prefill.tp << "x " << d.prefill.gpu.name << " + " << d.decode.replicas
       << " decode x " << d.decode.tp << "x " << d.decode.gpu.name << " over "
       << d.link.name << " (pools below; the engine line is the decode pool's)\n";
  } else {
    os << DeploymentText(sc) << "\n";
  }
  os << "  cost model " << sc.cost_model->Describe() << "\n";
  os << "  engine " << EngineText(sc.engine) << BatchDefaultsNote(sc) << "\n";
  if (sc.engine.spec.on()) {
    const SpecDecodeConfig& sp = sc.engine.spec;
    os << "  speculative decoding: k " << sp.num_speculative_tokens
       << " draft tokens per step, acceptance ";
    if (sp.beta_a > 0) {
      os << "per request ~ Beta(" << sp.beta_a << ", " << sp.beta_b << ")";
    } else {
      os << sp.acceptance_rate << " per token";
    }
    os << ", draft pass " << sp.draft_cost_fraction
       << " of a target decode pass\n";
  }
  os << "  arrivals " << s.arrival;
  if (s.offered_rate > 0)
    os << ", offered " << Fmt("%.3f", s.offered_rate) << " req/s";
  os << "\n";
  if (sc.frontend.enabled) {
    const FrontendConfig& f = sc.frontend;
    os << "  frontend on: API server " << Fmt("%g", f.request_s * 1e3) << " ms + "
       << Fmt("%g", f.prompt_token_s * 1e6) << " us a prompt token (CV "
       << Fmt("%g", f.work_cv) << ", first come, first served";
    if (HasTokenizerWindow(f)) {
      os << "; tokenizer micro-batches: " << Fmt("%g", f.tokenizer_batch_wait_s * 1e3)
         << " ms window, up to " << f.tokenizer_max_batch;
    }
    os << "), hop " << Fmt("%g", f.engine_hop_s * 1e3) << " ms, output "
       << Fmt("%g", f.output_s * 1e3) << " ms a token, client turnaround "
       << Fmt("%g", f.client_turnaround_s * 1e3) << " ms";
    if (f.client_jitter_s > 0) os << " + U[0, " << Fmt("%g", f.client_jitter_s * 1e3) << ") ms";
    os << "\n";
  }
  if (!sc.workload.classes.empty()) {
    for (const RequestClass& c : sc.workload.classes) {
      os << "  class " << c.name << " (share " << c.share << ", priority "
         << c.priority << "): input " << c.input_len->Describe() << ", output "
         << c.output_len->Describe() << "\n";
    }
  } else if (sc.workload.input_len) {
    os << "  lengths: input " << sc.workload.input_len->Describe()
       << "\n           output " << sc.workload.output_len->Describe() << "\n";
    if (sc.workload.closed_loop && !sc.workload.sessions && sc.workload.think_time_s == 0 &&
        sc.workload.output_len->Constant()) {
      os << "  note: every output has the same length, so these clients stay in phase (each "
            "round's prompts are prefilled together); clients whose lengths vary drift apart "
            "(--random-range-ratio; sglang.bench_serving and InferenceMAX's client: "
            "--range-ratio-style sglang). docs/engine/frontend.md\n";
    }
  } else {
    os << "  lengths: from "
       << (sc.workload.trace ? "the trace" : "the prefix model") << "\n";
  }
  os << "  seed " << s.seed << "; warm-up excluded: " << s.excluded_warmup
     << " requests (warmup_s " << s.warmup_s << ", warmup_requests "
     << s.warmup_requests << "); " << PrefixContext(s) << "\n";
  if (sc.workload.prefix)
    os << "  prefixes " << sc.workload.prefix->Describe() << "\n";
  os << "  requests: " << s.created << " created, " << s.completed
     << " measured, " << s.rejected << " rejected, " << s.incomplete
     << " unfinished";
  if (s.aborted > 0) os << ", " << s.aborted << " aborted (their clients went away)";
  os << "\n";
  for (const auto& why : s.reject_reasons)
    os << "  rejected because: " << why << "\n";
  if (const auto& d = s.session_turns_dropped; d.total() > 0) {
    os << "  session turns never sent: " << d.total() << " of " << s.session_turns_read
       << " read (" << d.parent_rejected << " after a rejected turn, " << d.past_bound
       << " past the run's bound, " << d.waiting_at_end << " unsent at the end)\n";
  }
  if (s.unstable) {
    os << "  UNSTABLE: " << s.unstable_reason;
    if (s.cut_short) {
      os << " -- the run was cut short, before its request/time bound";
    }
    if (s.completed == 0 && s.rejected > 0) {
      os << "; every request was rejected (see \"rejected because\")\n";
    } else {
      os << "; arrivals outpace service, latencies below grow with run "
            "length\n";
    }
  }
  os << "\nThroughput over " << Fmt("%.1f", s.duration_s) << " s (" << LoadText(s)
     << ", prefix hit rate " << Fmt("%.1f", 100 * s.token_hit_rate) << "% of prompt tokens):\n"
     << "  " << Fmt("%.3f", s.request_throughput) << " req/s, "
     << Fmt("%.1f", s.output_throughput) << " output tok/s, "
     << Fmt("%.1f", s.total_token_throughput) << " total tok/s\n";
  if (!s.goodput_slo.empty()) {
    os << "  request goodput " << Fmt("%.3f", s.request_goodput) << " req/s: " << s.good
       << " of " << s.completed << " completed requests met " << DescribeGoodput(s.goodput_slo)
       << " (vllm bench serve --goodput)\n";
  }
  os << "\nLatency (ms), " << s.completed << " requests";
  if (s.offered_rate > 0)
    os << " at " << Fmt("%.3g", s.offered_rate) << " req/s offered";
  os << ", " << LoadText(s) << ", prefix hit rate " << Fmt("%.1f", 100 * s.token_hit_rate)
     << "%:\n";
  if (s.completed == 0) {
    os << "  nothing was measured: no request finished after the warm-up\n";
  } else {
    WriteLatencyTable(s, os);
  }
  os << "  step-cost error bar: " << CostErrorText(sc.cost_model->Error()) << "\n";
  if (!s.classes.empty()) WriteClassTables(sc, s, os);
  os << "\nReplica over the window of " << Fmt("%.1f", s.window_s)
     << " s (first to last measured arrival):\n"
     << "  KV cache usage mean " << Fmt("%.1f", 100 * s.kv_usage_mean)
     << "%, max " << Fmt("%.1f", 100 * s.kv_usage_max) << "%; preemptions "
     << s.preemptions << " (" << s.preempted_requests << " requests)\n"
     << "  engine busy " << Fmt("%.1f", 100 * s.gpu_busy_fraction)
     << "% of the window (a step of any size running: not GPU utilization; see MFU/MBU)\n";
  if (s.pipeline_stages > 1) {
    os << "  pipeline: " << s.pipeline_stages << " stages, their GPUs busy "
       << Fmt("%.1f", 100 * s.stage_busy_fraction) << "% of the run on average (one batch in "
       << "flight at a time: at most " << Fmt("%.1f", 100.0 / s.pipeline_stages) << "%)\n";
  }
  if (s.prefix_caching) {
    os << "  prefix cache: " << s.cached_blocks << " of "
       << s.prompt_full_blocks << " full prompt blocks hit ("
       << Fmt("%.1f", 100 * s.block_hit_rate) << "%), "
       << s.cached_prompt_tokens << " of " << s.prompt_tokens_admitted
       << " prompt tokens (" << Fmt("%.1f", 100 * s.token_hit_rate) << "%); "
       << s.evictions << " evictions; cached blocks "
       << Fmt("%.1f", 100 * s.cached_block_occupancy)
       << "% of the cache on average; " << s.resume_cached_tokens
       << " tokens of recompute avoided\n";
  }
  if (s.kv_offload) WriteOffload(s, os);
  if (s.frontend.enabled) WriteFrontend(s, os);
  if (s.spec_tokens > 0) {
    os << "  speculative decoding (whole run): " << s.spec_accepted_tokens << " of "
       << s.spec_draft_tokens << " draft tokens accepted ("
       << Fmt("%.1f", 100 * s.spec_acceptance_rate) << "%), mean acceptance length "
       << Fmt("%.3f", s.spec_mean_acceptance_length) << " tokens per verify over "
       << s.spec_drafts << " drafts; proposer " << Fmt("%.2f", s.spec_draft_s)
       << " s of step time\n";
  }
  os << "  in system " << Fmt("%.1f", s.mean_in_system) << ", waiting "
     << Fmt("%.1f", s.mean_waiting) << " (max " << s.max_waiting
     << "), running " << Fmt("%.1f", s.mean_running) << "\n"
     << "  " << s.steps << " steps, batch size mean "
     << Fmt("%.1f", s.mean_batch_size) << " p50 "
     << Fmt("%.0f", s.batch_size_p50) << " p99 "
     << Fmt("%.0f", s.batch_size_p99) << " max " << s.max_batch_size
     << ", tokens per step " << Fmt("%.1f", s.mean_tokens_per_step) << "\n";
  if (s.num_replicas > 1) {
    os << "  cluster of " << s.num_replicas << " replicas, router "
       << sc.router.name << ": routed-request imbalance (max/mean) "
       << Fmt("%.3f", s.routed_imbalance) << ", busy-time imbalance "
       << Fmt("%.3f", s.busy_imbalance) << "\n";
    for (size_t k = 0; k < s.replicas.size(); ++k) {
      const ReplicaStats& r = s.replicas[k];
      const double hit =
          r.prompt_tokens
              ? static_cast<double>(r.cached_prompt_tokens) / r.prompt_tokens
              : 0.0;
      os << "    replica " << k << ": " << r.routed << " requests, busy "
         << Fmt("%.1f", r.busy_s) << " s, " << r.steps
         << " steps, prefix hit rate " << Fmt("%.1f", 100 * hit) << "%\n";
    }
  }
  const StepCost& c = s.total_cost;
  const double total = std::max(1e-12, c.Total());
  os << "  step time split: GEMM " << Fmt("%.1f", 100 * c.gemm_s / total)
     << "%, prefill attention " << Fmt("%.1f", 100 * c.attn_prefill_s / total)
     << "%, decode attention " << Fmt("%.1f", 100 * c.attn_decode_s / total)
     << "%, communication " << Fmt("%.1f", 100 * c.comm_s / total)
     << "%, other " << Fmt("%.1f", 100 * c.other_s / total) << "%, overhead "
     << Fmt("%.1f", 100 * c.overhead_s / total) << "%\n";
}

// The keys of `vllm bench serve --save-result` (vllm/benchmarks/serve.py:
// benchmark() and main_async()) whose quantity servesim has with the same
// meaning, spelt as vLLM spells them. TTFT, TPOT, ITL and E2EL follow vLLM's
// definitions (see summary.cc). Omitted, and why:
//  - date: the wall-clock time of the run would break "same seed =>
//    byte-identical output"; a simulated benchmark has no date.
//  - rtfx: audio (ASR) only; ramp_up_*: servesim has no rate ramp-up.
//  - input_lens, output_lens, ttfts, itls, latencies, start_times,
//    queue_times, generated_texts, errors: per-request arrays, which vLLM
//    writes only with --save-detailed. servesim's per-request record is the
//    --save-detailed CSV (prompt and output tokens, send time, TTFT, E2EL,
//    slot wait, reject reason); per-token gaps (itls) are kept only as a
//    histogram, and there is no text.
// Written as null because servesim has no such setting (as vLLM does when
// it is not given): label (--label), tokenizer_id (lengths are token
// counts; no tokenizer runs). request_goodput is null, as vLLM's is 0 then,
// unless metrics.goodput (run --goodput) gives SLOs.
namespace {

// The replayed trace and what its reader decided, so that a result never
// hides a unit guess, 0-token rows read as 1 token, or rows left out.
nlohmann::json TraceJson(const Scenario& sc) {
  const TraceOptions& o = *sc.workload.trace;
  const TraceNotes& n = sc.trace_notes;
  nlohmann::json t = {{"path", o.path},
                      {"format", TraceFormatName(o.format)},
                      {"use_timestamps", o.use_timestamps},
                      {"time_scale", o.time_scale},
                      {"records", sc.trace_records},
                      {"data_lines", sc.trace_data_lines},
                      {"malformed_lines", sc.trace_bad_lines},
                      {"zero_token_prompts_read_as_1", n.zero_prompt_records},
                      {"zero_token_completions_read_as_1", n.zero_output_records},
                      {"filtered_lines", n.filtered_lines},
                      {"records_with_priority", n.priority_records}};
  if (n.numeric_timestamps) {
    t["timestamp_unit"] = TimestampUnitName(n.unit);
    t["timestamp_unit_reason"] = n.unit_reason;
  } else {
    t["timestamp_unit"] = nullptr;
  }
  if (!o.model_filter.empty()) t["model"] = o.model_filter;
  if (!o.log_type_filter.empty()) t["log_type"] = o.log_type_filter;
  return t;
}

// The SLOs request_goodput was counted against, and the count, so that a
// reader can check it: good / duration = request_goodput.
nlohmann::json GoodputJson(const RunSummary& s) {
  const GoodputSlo& g = s.goodput_slo;
  nlohmann::json slo = nlohmann::json::object();
  if (g.ttft_ms) slo["ttft_ms"] = *g.ttft_ms;
  if (g.tpot_ms) slo["tpot_ms"] = *g.tpot_ms;
  if (g.e2el_ms) slo["e2el_ms"] = *g.e2el_ms;
  return {{"slo", slo}, {"good_requests", s.good}, {"completed", s.completed},
          {"duration_s", s.duration_s}};
}

}  // namespace

nlohmann::json ResultJson(const Scenario& sc, const RunSummary& s) {
  nlohmann::json j;
  j["endpoint_type"] = "servesim";
  j["backend"] = "servesim";
  j["label"] = nullptr;
  j["model_id"] = sc.model.name;
  j["weight_dtype"] = sc.model.weight_dtype;    // servesim: quantization
  j["kv_cache_dtype"] = sc.model.kv_cache_dtype;
  // servesim: how far the cost model's steps may be from a real GPU's.
  j["cost_model_error"] = CostErrorJson(sc.cost_model->Error());
  j["tokenizer_id"] = nullptr;
  j["num_prompts"] = s.created;
  j["request_rate"] = s.offered_rate > 0 ? nlohmann::json(s.offered_rate)
                                         : nlohmann::json("inf");
  j["burstiness"] = 1.0;
  if (sc.json.contains("workload") && sc.json["workload"].contains("arrival") &&
      sc.json["workload"]["arrival"].contains("burstiness")) {
    j["burstiness"] = sc.json["workload"]["arrival"]["burstiness"];
  }
  j["max_concurrency"] =
      s.max_concurrency > 0
          ? nlohmann::json(s.max_concurrency)
          : (sc.workload.closed_loop ? nlohmann::json(sc.workload.concurrency)
                                     : nlohmann::json(nullptr));
  j["duration"] = s.duration_s;
  j["completed"] = s.completed;
  // vLLM's failed requests returned an error: here, the measured requests
  // rejected as unservable. (Unfinished ones, when the run stopped early,
  // are neither; "servesim"/"requests" counts them.)
  j["failed"] = s.failed;
  j["total_input_tokens"] = s.total_input_tokens;
  j["total_output_tokens"] = s.total_output_tokens;
  j["request_throughput"] = s.request_throughput;
  j["request_goodput"] = s.goodput_slo.empty() ? nlohmann::json(nullptr)
                                                : nlohmann::json(s.request_goodput);
  j["output_throughput"] = s.output_throughput;
  j["total_token_throughput"] = s.total_token_throughput;
  j["max_output_tokens_per_s"] = s.max_output_tokens_per_s >= 0
                                     ? nlohmann::json(s.max_output_tokens_per_s)
                                     : nlohmann::json(nullptr);
  j["max_concurrent_requests"] = s.max_concurrent_requests;
  AddLatency(j, "ttft", s.ttft_ms);
  AddLatency(j, "tpot", s.tpot_ms);
  AddLatency(j, "itl", s.itl_ms);
  AddLatency(j, "e2el", s.e2el_ms);
  if (s.max_concurrency > 0) {
    // As vLLM with --max-concurrency: the wait for a slot (its client-side
    // queue time) and the latency including it, from the intended arrival.
    AddLatency(j, "client_queue_time", s.slot_wait_ms);
    AddLatency(j, "e2el_including_client_queue", s.e2el_from_arrival_ms);
  }

  nlohmann::json& x = j["servesim"];
  x["scenario"] = sc.file;
  x["seed"] = s.seed;
  x["arrival"] = s.arrival;
  if (sc.workload.trace) x["trace"] = TraceJson(sc);
  x["offered_rate"] = s.offered_rate;
  x["gpu"] = sc.gpu.name;
  x["tp"] = sc.tp;
  x["cost_model"] = sc.cost_model->Describe();
  x["percentiles"] = s.percentiles;
  x["warmup"] = {{"warmup_s", s.warmup_s},
                 {"warmup_requests", s.warmup_requests},
                 {"excluded_requests", s.excluded_warmup}};
  x["requests"] = {{"created", s.created},
                   {"completed", s.completed},
                   {"rejected", s.rejected},
                   {"unfinished", s.incomplete},
                   {"aborted", s.aborted}};
  x["reject_reasons"] = s.reject_reasons;
  if (s.sessions_trace) {
    const auto& d = s.session_turns_dropped;
    x["session_turns"] = {{"read", s.session_turns_read},
                          {"never_sent", {{"after_rejected_turn", d.parent_rejected},
                                          {"past_run_bound", d.past_bound},
                                          {"unsent_at_end", d.waiting_at_end}}}};
  }
  if (!s.goodput_slo.empty()) x["goodput"] = GoodputJson(s);
  x["unstable"] = s.unstable;
  x["unstable_reason"] = s.unstable_reason;
  x["cut_short"] = s.cut_short;
  x["prefix_caching"] = s.prefix_caching;
  x["prefix_hit_rate"] = s.token_hit_rate;  // share of prompt tokens cached
  x["prefix_cache"] = {{"token_hit_rate", s.token_hit_rate},
                       {"block_hit_rate", s.block_hit_rate},
                       {"cached_prompt_tokens", s.cached_prompt_tokens},
                       {"prompt_tokens", s.prompt_tokens_admitted},
                       {"cached_blocks", s.cached_blocks},
                       {"prompt_full_blocks", s.prompt_full_blocks},
                       {"evictions", s.evictions},
                       {"cached_block_occupancy", s.cached_block_occupancy},
                       {"resume_cached_tokens", s.resume_cached_tokens}};
  if (s.kv_offload) {
    x["kv_offload"] = {{"cpu_blocks", s.cpu_blocks},
                       {"swap_preemption", s.swap_preemption},
                       {"gpu_tier_hit_rate", s.gpu_tier_hit_rate},
                       {"cpu_tier_hit_rate", s.cpu_tier_hit_rate},
                       {"cpu_cached_prompt_tokens", s.cpu_cached_prompt_tokens},
                       {"swap_preemptions", s.swap_preemptions},
                       {"swap_fallbacks", s.swap_fallbacks},
                       {"swap_out_blocks", s.swap_out_blocks},
                       {"swap_in_blocks", s.swap_in_blocks},
                       {"load_blocks", s.load_blocks},
                       {"store_blocks", s.store_blocks},
                       {"cpu_evictions", s.cpu_evictions},
                       {"bytes_to_cpu", s.bytes_to_cpu},
                       {"bytes_to_gpu", s.bytes_to_gpu},
                       {"transfer_stall_s", s.transfer_stall_s},
                       {"transfer_stall_fraction", s.transfer_stall_fraction}};
  }
  if (s.frontend.enabled) {
    const RunSummary::Frontend& f = s.frontend;
    x["frontend"] = {{"api_servers", f.api_servers},
                     {"output_ms", f.output_ms},
                     {"api_busy_fraction", f.api_busy_fraction},
                     {"send_to_engine_ms", StatsJson(f.to_engine_ms)},
                     {"engine_ttft_ms", StatsJson(f.engine_ttft_ms)}};
  }
  if (s.spec_tokens > 0) {
    x["speculative_decoding"] = {
        {"num_speculative_tokens", s.spec_tokens},
        {"num_drafts", s.spec_drafts},
        {"num_draft_tokens", s.spec_draft_tokens},
        {"num_accepted_tokens", s.spec_accepted_tokens},
        {"acceptance_rate", s.spec_acceptance_rate},
        {"mean_acceptance_length", s.spec_mean_acceptance_length},
        {"draft_s", s.spec_draft_s}};
  }
  x["input_throughput"] = s.input_throughput;
  x["ttft_from_arrival_ms"] = StatsJson(s.ttft_from_arrival_ms);
  x["e2el_from_arrival_ms"] = StatsJson(s.e2el_from_arrival_ms);
  x["queueing_delay_ms"] = StatsJson(s.queue_ms);
  x["slot_wait_ms"] = StatsJson(s.slot_wait_ms);
  x["itl_ms_source"] = "log-linear histogram (within 0.4%)";
  x["window_s"] = s.window_s;
  x["gpu_busy_fraction"] = s.gpu_busy_fraction;
  if (s.pipeline_stages > 1) {
    x["pipeline"] = {{"stages", s.pipeline_stages},
                     {"stage_busy_fraction", s.stage_busy_fraction}};
  }
  x["mfu"] = s.mfu >= 0 ? nlohmann::json(s.mfu) : nlohmann::json(nullptr);
  x["mbu"] = s.mbu >= 0 ? nlohmann::json(s.mbu) : nlohmann::json(nullptr);
  x["num_gpu_blocks"] = s.num_gpu_blocks;
  x["block_size"] = sc.engine.block_size;
  x["kv_usage_mean"] = s.kv_usage_mean;
  x["kv_usage_max"] = s.kv_usage_max;
  x["mean_in_system"] = s.mean_in_system;
  x["mean_waiting"] = s.mean_waiting;
  x["mean_running"] = s.mean_running;
  x["max_waiting"] = s.max_waiting;
  x["num_replicas"] = s.num_replicas;
  x["router"] = sc.router.name;
  x["routed_imbalance"] = s.routed_imbalance;
  x["busy_imbalance"] = s.busy_imbalance;
  nlohmann::json reps = nlohmann::json::array();
  for (const ReplicaStats& r : s.replicas) {
    reps.push_back({{"routed", r.routed},
                    {"steps", r.steps},
                    {"busy_s", r.busy_s},
                    {"cached_prompt_tokens", r.cached_prompt_tokens},
                    {"prompt_tokens", r.prompt_tokens}});
  }
  x["replicas"] = reps;
  x["preemptions"] = s.preemptions;
  x["preempted_requests"] = s.preempted_requests;
  x["steps"] = s.steps;
  x["policy"] = sc.engine.policy;
  if (!s.classes.empty()) x["classes"] = ClassesJson(s);
  x["mean_batch_size"] = s.mean_batch_size;
  x["max_batch_size"] = s.max_batch_size;
  x["mean_tokens_per_step"] = s.mean_tokens_per_step;
  const StepCost& c = s.total_cost;
  x["step_time_s"] = {{"gemm", c.gemm_s},
                      {"attention_prefill", c.attn_prefill_s},
                      {"attention_decode", c.attn_decode_s},
                      {"communication", c.comm_s},
                      {"other", c.other_s},
                      {"overhead", c.overhead_s}};
  return j;
}

const char* DetailedCsvHeader() {
  return "id,status,measured,client,replica,prompt_tokens,output_tokens,arrival_"
         "s,send_s,"
         "first_scheduled_s,first_token_s,finish_s,ttft_ms,e2el_ms,"
         "queueing_delay_ms,preemptions,reject_reason,class\n";
}

void AppendNanosAsFixed(int64_t ns, int decimals, std::string* out) {
  // ns * 1e-9 (or 1e-6) is within 2.3e-16 of its value relatively, under
  // half a unit of the last printed decimal below 1e15 ns, so printf's
  // correctly rounded output is the exact quotient's digits.
  if (ns < 0 || ns >= 1000000000000000 || (decimals != 9 && decimals != 6)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, decimals == 9 ? "%.9f" : "%.6f",
                  decimals == 9 ? ToSeconds(ns) : ToMillis(ns));
    out->append(buf);
    return;
  }
  const int64_t unit = decimals == 9 ? 1000000000 : 1000000;
  char buf[32];
  char* end = std::to_chars(buf, buf + sizeof buf, ns / unit).ptr;
  *end++ = '.';
  int64_t frac = ns % unit;
  for (int i = decimals - 1; i >= 0; --i) {
    end[i] = static_cast<char>('0' + frac % 10);
    frac /= 10;
  }
  out->append(buf, end + decimals);
}

void AppendDetailedCsvRow(const Request& r, const RequestClasses& classes,
                          std::string* row, SimTime client_lag) {
  char buf[64];
  auto num = [&](int64_t v) {
    const auto res = std::to_chars(buf, buf + sizeof buf, v);
    row->append(buf, res.ptr);
  };
  auto t = [&](SimTime x) {
    if (x >= 0) AppendNanosAsFixed(x, 9, row);
    row->push_back(',');
  };
  const char* status = r.status == RequestStatus::kFinished   ? "finished"
                       : r.status == RequestStatus::kRejected ? "rejected"
                       : r.status == RequestStatus::kAborted  ? "aborted"
                                                              : "unfinished";
  const bool fin = r.status == RequestStatus::kFinished;
  num(r.id);
  row->push_back(',');
  row->append(status);
  row->append(r.measured ? ",1," : ",0,");
  num(r.client);
  row->push_back(',');
  num(r.replica);
  row->push_back(',');
  num(r.prompt_len);
  row->push_back(',');
  num(r.output_len);
  row->push_back(',');
  t(r.arrival);
  t(r.send);
  t(r.first_scheduled);
  t(r.first_token);
  t(r.finish);
  if (fin) AppendNanosAsFixed(r.first_token + client_lag - r.send, 6, row);
  row->push_back(',');
  if (fin) AppendNanosAsFixed(r.finish + client_lag - r.send, 6, row);
  row->push_back(',');
  if (r.first_scheduled >= 0) AppendNanosAsFixed(r.first_scheduled - r.send, 6, row);
  row->push_back(',');
  num(r.preemptions);
  row->push_back(',');
  if (r.reject_reason) row->append(r.reject_reason);
  row->push_back(',');
  if (r.request_class >= 0 && r.request_class < static_cast<int32_t>(classes.size())) {
    AppendCsvField(classes[r.request_class].name, row);
  }
  row->push_back('\n');
}

void WriteDetailedCsv(const SimulationOutput& out, std::ostream& os,
                      const RequestClasses& classes) {
  os << DetailedCsvHeader();
  std::string row;
  for (const Request& r : out.requests) {
    row.clear();
    AppendDetailedCsvRow(r, classes, &row, out.client_lag);
    os << row;
  }
}

}  // namespace servesim
