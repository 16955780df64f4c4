// Spec and result encoding (see run_codec.h). Every field of RunSummary is
// listed once, in SummaryFields, and that one list both writes and reads,
// so the two directions cannot drift apart; a size check below stops the
// build when RunSummary gains a field not listed there.
#include "python/src/run_codec.h"

#include <optional>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

namespace servesim {

// ADL picks these up for the nested structs of a summary.
void to_json(nlohmann::json& j, const SampleStats& s) {
  j = {s.count, s.mean, s.stddev, s.median, s.min, s.max, s.percentiles};
}
void from_json(const nlohmann::json& j, SampleStats& s) {
  j.at(0).get_to(s.count), j.at(1).get_to(s.mean), j.at(2).get_to(s.stddev);
  j.at(3).get_to(s.median), j.at(4).get_to(s.min), j.at(5).get_to(s.max);
  j.at(6).get_to(s.percentiles);
}
void to_json(nlohmann::json& j, const ReplicaStats& s) {
  j = {s.routed, s.steps, s.busy_s, s.cached_prompt_tokens, s.prompt_tokens,
       s.busy_in_run_s};
}
void from_json(const nlohmann::json& j, ReplicaStats& s) {
  j.at(0).get_to(s.routed), j.at(1).get_to(s.steps), j.at(2).get_to(s.busy_s);
  j.at(3).get_to(s.cached_prompt_tokens), j.at(4).get_to(s.prompt_tokens);
  j.at(5).get_to(s.busy_in_run_s);
}
void to_json(nlohmann::json& j, const SimulationOutput::SessionTurnDrops& d) {
  j = {d.parent_rejected, d.past_bound, d.waiting_at_end};
}
void from_json(const nlohmann::json& j, SimulationOutput::SessionTurnDrops& d) {
  j.at(0).get_to(d.parent_rejected), j.at(1).get_to(d.past_bound);
  j.at(2).get_to(d.waiting_at_end);
}
void to_json(nlohmann::json& j, const StepCost& c) {
  j = {c.gemm_s, c.attn_prefill_s, c.attn_decode_s, c.comm_s, c.other_s, c.overhead_s};
}
void from_json(const nlohmann::json& j, StepCost& c) {
  j.at(0).get_to(c.gemm_s), j.at(1).get_to(c.attn_prefill_s);
  j.at(2).get_to(c.attn_decode_s), j.at(3).get_to(c.comm_s);
  j.at(4).get_to(c.other_s), j.at(5).get_to(c.overhead_s);
}
void to_json(nlohmann::json& j, const ClassSummary& c) {
  j = {c.name,          c.share,         c.priority,      c.ttft_slo_ms,
       c.tpot_slo_ms,   c.created,       c.completed,     c.excluded_warmup,
       c.rejected,      c.failed,        c.unfinished,    c.input_tokens,
       c.output_tokens, c.preemptions,   c.good,          c.slo_attainment,
       c.goodput_rps,   c.request_throughput, c.ttft_ms,  c.tpot_ms,
       c.e2el_ms,       c.queue_ms};
}
void from_json(const nlohmann::json& j, ClassSummary& c) {
  j.at(0).get_to(c.name), j.at(1).get_to(c.share), j.at(2).get_to(c.priority);
  j.at(3).get_to(c.ttft_slo_ms), j.at(4).get_to(c.tpot_slo_ms);
  j.at(5).get_to(c.created), j.at(6).get_to(c.completed);
  j.at(7).get_to(c.excluded_warmup), j.at(8).get_to(c.rejected);
  j.at(9).get_to(c.failed), j.at(10).get_to(c.unfinished);
  j.at(11).get_to(c.input_tokens), j.at(12).get_to(c.output_tokens);
  j.at(13).get_to(c.preemptions), j.at(14).get_to(c.good);
  j.at(15).get_to(c.slo_attainment), j.at(16).get_to(c.goodput_rps);
  j.at(17).get_to(c.request_throughput), j.at(18).get_to(c.ttft_ms);
  j.at(19).get_to(c.tpot_ms), j.at(20).get_to(c.e2el_ms), j.at(21).get_to(c.queue_ms);
}
void to_json(nlohmann::json& j, const RunSummary::Frontend& f) {
  j = {f.enabled, f.api_servers, f.output_ms, f.to_engine_ms, f.engine_ttft_ms,
       f.api_busy_fraction};
}
void from_json(const nlohmann::json& j, RunSummary::Frontend& f) {
  j.at(0).get_to(f.enabled), j.at(1).get_to(f.api_servers), j.at(2).get_to(f.output_ms);
  j.at(3).get_to(f.to_engine_ms), j.at(4).get_to(f.engine_ttft_ms);
  j.at(5).get_to(f.api_busy_fraction);
}
// An SLO not given is null.
void to_json(nlohmann::json& j, const GoodputSlo& g) {
  const auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  j = {opt(g.ttft_ms), opt(g.tpot_ms), opt(g.e2el_ms)};
}
void from_json(const nlohmann::json& j, GoodputSlo& g) {
  const auto opt = [](const nlohmann::json& v) {
    return v.is_null() ? std::optional<double>() : std::optional<double>(v.get<double>());
  };
  g.ttft_ms = opt(j.at(0)), g.tpot_ms = opt(j.at(1)), g.e2el_ms = opt(j.at(2));
}
void to_json(nlohmann::json& j, const Interval& i) { j = {i.mean, i.lo, i.hi, i.n}; }
void from_json(const nlohmann::json& j, Interval& i) {
  j.at(0).get_to(i.mean), j.at(1).get_to(i.lo), j.at(2).get_to(i.hi), j.at(3).get_to(i.n);
}

namespace py {
namespace {

// A field added to RunSummary or SaturationEstimate changes its size: this
// stops the build until the field is listed below (then update the size).
// A result that crosses to a Ray task without it would differ from a local
// one (the tests compare them, but only where a report shows the field).
static_assert(sizeof(RunSummary) == 1736,
              "RunSummary changed: list the new field in SummaryFields "
              "(python/src/run_codec.cc) and update this size");
static_assert(sizeof(ClassSummary) == 456,
              "ClassSummary changed: list the new field in its to_json/from_json "
              "(python/src/run_codec.cc) and update this size");
static_assert(sizeof(SaturationEstimate) == 104,
              "SaturationEstimate changed: list the new field in SaturationFields "
              "(python/src/run_codec.cc) and update this size");

// f(name, field) for every field of a summary, in one place for both ways.
template <typename S, typename F>
void SummaryFields(S& s, F&& f) {
  f("seed", s.seed), f("arrival", s.arrival), f("offered_rate", s.offered_rate);
  f("max_concurrency", s.max_concurrency), f("block_size", s.block_size);
  f("percentiles", s.percentiles), f("warmup_s", s.warmup_s);
  f("warmup_requests", s.warmup_requests), f("created", s.created);
  f("completed", s.completed), f("excluded_warmup", s.excluded_warmup);
  f("rejected", s.rejected), f("failed", s.failed), f("incomplete", s.incomplete);
  f("aborted", s.aborted);
  f("total_input_tokens", s.total_input_tokens);
  f("total_output_tokens", s.total_output_tokens), f("preemptions", s.preemptions);
  f("preempted_requests", s.preempted_requests), f("duration_s", s.duration_s);
  f("request_throughput", s.request_throughput);
  f("input_throughput", s.input_throughput);
  f("output_throughput", s.output_throughput);
  f("total_token_throughput", s.total_token_throughput);
  f("arrival_window_s", s.arrival_window_s);
  f("steady_request_throughput", s.steady_request_throughput);
  f("steady_output_throughput", s.steady_output_throughput);
  f("steady_input_throughput", s.steady_input_throughput);
  f("backlog_first_half", s.backlog_first_half);
  f("backlog_second_half", s.backlog_second_half);
  f("max_concurrent_requests", s.max_concurrent_requests);
  f("max_output_tokens_per_s", s.max_output_tokens_per_s);
  f("goodput_slo", s.goodput_slo), f("good", s.good);
  f("request_goodput", s.request_goodput);
  f("ttft_ms", s.ttft_ms), f("ttft_from_arrival_ms", s.ttft_from_arrival_ms);
  f("tpot_ms", s.tpot_ms), f("itl_ms", s.itl_ms), f("e2el_ms", s.e2el_ms);
  f("e2el_from_arrival_ms", s.e2el_from_arrival_ms), f("queue_ms", s.queue_ms);
  f("slot_wait_ms", s.slot_wait_ms), f("window_s", s.window_s);
  f("gpu_busy_fraction", s.gpu_busy_fraction), f("mfu", s.mfu), f("mbu", s.mbu);
  f("pipeline_stages", s.pipeline_stages), f("stage_busy_fraction", s.stage_busy_fraction);
  f("kv_usage_mean", s.kv_usage_mean), f("kv_usage_max", s.kv_usage_max);
  f("num_gpu_blocks", s.num_gpu_blocks), f("mean_in_system", s.mean_in_system);
  f("mean_waiting", s.mean_waiting), f("mean_running", s.mean_running);
  f("max_waiting", s.max_waiting), f("steps", s.steps);
  f("mean_batch_size", s.mean_batch_size);
  f("mean_tokens_per_step", s.mean_tokens_per_step);
  f("max_batch_size", s.max_batch_size), f("batch_size_p50", s.batch_size_p50);
  f("batch_size_p99", s.batch_size_p99), f("total_cost", s.total_cost);
  f("prefix_caching", s.prefix_caching);
  f("prompt_tokens_admitted", s.prompt_tokens_admitted);
  f("cached_prompt_tokens", s.cached_prompt_tokens);
  f("prompt_full_blocks", s.prompt_full_blocks), f("cached_blocks", s.cached_blocks);
  f("token_hit_rate", s.token_hit_rate), f("block_hit_rate", s.block_hit_rate);
  f("resume_cached_tokens", s.resume_cached_tokens), f("evictions", s.evictions);
  f("cached_block_occupancy", s.cached_block_occupancy);
  f("kv_offload", s.kv_offload), f("swap_preemption", s.swap_preemption);
  f("cpu_blocks", s.cpu_blocks);
  f("cpu_cached_prompt_tokens", s.cpu_cached_prompt_tokens);
  f("gpu_tier_hit_rate", s.gpu_tier_hit_rate), f("cpu_tier_hit_rate", s.cpu_tier_hit_rate);
  f("swap_preemptions", s.swap_preemptions), f("swap_fallbacks", s.swap_fallbacks);
  f("swap_out_blocks", s.swap_out_blocks), f("swap_in_blocks", s.swap_in_blocks);
  f("load_blocks", s.load_blocks), f("store_blocks", s.store_blocks);
  f("cpu_evictions", s.cpu_evictions);
  f("bytes_to_cpu", s.bytes_to_cpu), f("bytes_to_gpu", s.bytes_to_gpu);
  f("transfer_stall_s", s.transfer_stall_s);
  f("transfer_stall_fraction", s.transfer_stall_fraction);
  f("spec_tokens", s.spec_tokens), f("spec_drafts", s.spec_drafts);
  f("spec_draft_tokens", s.spec_draft_tokens);
  f("spec_accepted_tokens", s.spec_accepted_tokens);
  f("spec_acceptance_rate", s.spec_acceptance_rate);
  f("spec_mean_acceptance_length", s.spec_mean_acceptance_length);
  f("spec_draft_s", s.spec_draft_s), f("frontend", s.frontend);
  f("num_replicas", s.num_replicas), f("replicas", s.replicas);
  f("routed_imbalance", s.routed_imbalance), f("busy_imbalance", s.busy_imbalance);
  f("cut_short", s.cut_short), f("unstable", s.unstable);
  f("unstable_reason", s.unstable_reason), f("reject_reasons", s.reject_reasons);
  f("sessions_trace", s.sessions_trace), f("session_turns_read", s.session_turns_read);
  f("session_turns_dropped", s.session_turns_dropped);
  f("classes", s.classes);
}

template <typename S, typename F>
void SaturationFields(S& e, F&& f) {
  f("mu_rps", e.mu_rps), f("mu", e.mu), f("settled", e.settled);
  f("requests", e.requests), f("mean_service_s", e.mean_service_s), f("scv", e.scv);
  f("clients", e.clients), f("departures", e.departures), f("window_s", e.window_s);
  f("output_tokens_per_s", e.output_tokens_per_s);
}

nlohmann::json SummaryToJson(const RunSummary& s) {
  nlohmann::json j = nlohmann::json::object();
  SummaryFields(s, [&j](const char* k, const auto& v) { j[k] = v; });
  return j;
}

void SummaryFromJson(const nlohmann::json& j, RunSummary* s) {
  SummaryFields(*s, [&j](const char* k, auto& v) { j.at(k).get_to(v); });
}

}  // namespace

std::optional<std::string> EncodeSpec(const RunSpec& spec) {
  if (spec.inspect || spec.collect || spec.keep_output || spec.record_steps) {
    return std::nullopt;
  }
  nlohmann::json slo = nlohmann::json::array();
  for (const SloTerm& t : spec.slo) {
    slo.push_back({static_cast<int>(t.metric), t.percentile, t.limit_ms, t.name});
  }
  const nlohmann::json j = {{"scenario", spec.scenario->json.dump()},
                            {"file", spec.scenario->file},
                            {"replication", spec.replication},
                            {"extra_percentiles", spec.extra_percentiles},
                            {"truncate_warmup", spec.truncate_warmup},
                            {"slo", slo},
                            {"saturation", spec.saturation},
                            {"check_invariants", spec.scenario->check_invariants}};
  const std::vector<uint8_t> bytes = nlohmann::json::to_cbor(j);
  return std::string(bytes.begin(), bytes.end());
}

std::string RunEncodedSpec(const std::string& spec_bytes) {
  const nlohmann::json j = nlohmann::json::from_cbor(spec_bytes);
  // The same text through the same parser: the scenario the caller built.
  StatusOr<Scenario> sc = ParseScenario(j.at("scenario").get<std::string>(),
                                        j.at("file").get<std::string>(), {});
  if (!sc.ok()) throw std::runtime_error(sc.status().message());
  // Not a scenario key: capacity --check-invariants set it on the caller's.
  sc.value().check_invariants = j.value("check_invariants", false);
  RunSpec spec;
  spec.scenario = std::make_shared<const Scenario>(std::move(sc.value()));
  j.at("replication").get_to(spec.replication);
  j.at("extra_percentiles").get_to(spec.extra_percentiles);
  j.at("truncate_warmup").get_to(spec.truncate_warmup);
  j.at("saturation").get_to(spec.saturation);
  for (const nlohmann::json& t : j.at("slo")) {
    SloTerm term;
    term.metric = static_cast<SloMetric>(t.at(0).get<int>());
    t.at(1).get_to(term.percentile), t.at(2).get_to(term.limit_ms), t.at(3).get_to(term.name);
    spec.slo.push_back(term);
  }
  const RunResult r = RunHere(spec);
  nlohmann::json out = {{"summary", SummaryToJson(r.summary)},
                        {"truncation",
                         {r.truncation.requests, r.truncation.settled, r.truncation.drift}},
                        {"collected", r.collected},
                        {"inspected", r.inspected}};
  if (r.saturation) {
    nlohmann::json e = nlohmann::json::object();
    SaturationFields(*r.saturation, [&e](const char* k, const auto& v) { e[k] = v; });
    out["saturation"] = e;
  }
  const std::vector<uint8_t> bytes = nlohmann::json::to_cbor(out);
  return std::string(bytes.begin(), bytes.end());
}

RunResult DecodeResult(const std::string& result_bytes) {
  const nlohmann::json j = nlohmann::json::from_cbor(result_bytes);
  RunResult r;
  SummaryFromJson(j.at("summary"), &r.summary);
  const nlohmann::json& t = j.at("truncation");
  t.at(0).get_to(r.truncation.requests), t.at(1).get_to(r.truncation.settled);
  t.at(2).get_to(r.truncation.drift);
  j.at("collected").get_to(r.collected);
  j.at("inspected").get_to(r.inspected);
  if (j.contains("saturation")) {
    SaturationEstimate e;
    SaturationFields(e, [&j](const char* k, auto& v) { j.at("saturation").at(k).get_to(v); });
    r.saturation = e;
  }
  return r;
}

}  // namespace py
}  // namespace servesim
