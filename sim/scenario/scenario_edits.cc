// Typed scenario variants (see scenario_edits.h).
#include "sim/scenario/scenario_edits.h"

#include <utility>

namespace servesim {

StatusOr<Scenario> WithRate(const Scenario& base, double rate) {
  nlohmann::json j = base.json;
  j["workload"]["arrival"]["rate"] = rate;
  return Rederive(base, std::move(j));
}

StatusOr<Scenario> WithOpenLoop(const Scenario& base, double rate, double burstiness) {
  nlohmann::json j = base.json;
  nlohmann::json a = {{"process", "poisson"}, {"rate", rate}};
  if (burstiness > 0) {
    a["process"] = "gamma";
    a["burstiness"] = burstiness;
  }
  j["workload"]["arrival"] = std::move(a);
  j["workload"].erase("max_concurrency");
  return Rederive(base, std::move(j));
}

StatusOr<Scenario> WithClosedLoop(const Scenario& base, int n) {
  nlohmann::json j = base.json;
  j["workload"]["arrival"] = {{"process", "closed"}, {"concurrency", n}, {"think_time_s", 0}};
  j["workload"].erase("max_concurrency");
  return Rederive(base, std::move(j));
}

StatusOr<Scenario> WithSaturatingLoop(const Scenario& base, int n) {
  nlohmann::json j = base.json;
  j["workload"]["arrival"] = {{"process", "closed"}, {"concurrency", n}, {"think_time_s", 0}};
  j["workload"].erase("max_concurrency");
  if (base.frontend.enabled) {
    for (const char* key : {"engine_hop_s", "output_s", "client_turnaround_s", "client_jitter_s"}) {
      j["frontend"][key] = 0;
    }
  }
  return Rederive(base, std::move(j));
}

StatusOr<Scenario> WithNumRequests(const Scenario& base, int64_t n) {
  nlohmann::json j = base.json;
  j["workload"]["num_requests"] = n;
  return Rederive(base, std::move(j));
}

StatusOr<Scenario> WithWarmupRequests(const Scenario& base, int64_t n) {
  nlohmann::json j = base.json;
  j["metrics"]["warmup_requests"] = n;
  return Rederive(base, std::move(j));
}

StatusOr<Scenario> WithFleet(const Scenario& base, int replicas, const std::string& router) {
  nlohmann::json j = base.json;
  j["cluster"]["replicas"] = replicas;
  j["cluster"]["router"] = router;
  return Rederive(base, std::move(j));
}

StatusOr<Scenario> WithPdSplit(const Scenario& base, int prefill, int decode) {
  nlohmann::json j = base.json;
  j["disaggregation"]["prefill"]["replicas"] = prefill;
  j["disaggregation"]["decode"]["replicas"] = decode;
  return Rederive(base, std::move(j));
}

StatusOr<Scenario> WithDeployment(const Scenario& base, const Deployment& d) {
  nlohmann::json j = base.json;
  j["hardware"]["gpu"] = d.gpu;
  j["hardware"]["tp"] = d.tp;
  if (d.pp > 0) j["hardware"]["pp"] = d.pp;
  if (base.engine.kind == EngineKind::kSglang) {
    // The same limits in SGLang's words: running requests, and the chunk
    // (or, without chunking, the prefill budget).
    // (0: SGLang's default for this GPU.)
    nlohmann::json& g = j["engine"]["sglang"];
    if (!g.is_object()) g = nlohmann::json::object();
    if (d.max_num_seqs.value_or(0) > 0) g["max_running_requests"] = *d.max_num_seqs;
    const bool chunked = d.chunked_prefill.value_or(base.engine.chunked_prefill);
    if (d.chunked_prefill && !chunked) g["chunked_prefill_size"] = -1;
    if (d.chunked_prefill && chunked && g.value("chunked_prefill_size", 0) < 0) {
      g.erase("chunked_prefill_size");
    }
    if (d.max_num_batched_tokens.value_or(0) > 0) {
      g[chunked ? "chunked_prefill_size" : "max_prefill_tokens"] = *d.max_num_batched_tokens;
    }
    return Rederive(base, std::move(j), {.defer_fit = true});
  }
  // (0: vLLM's default for the GPU, unless the base gives its own.)
  if (d.max_num_seqs.value_or(0) > 0) j["engine"]["max_num_seqs"] = *d.max_num_seqs;
  if (d.max_num_batched_tokens.value_or(0) > 0) {
    j["engine"]["max_num_batched_tokens"] = *d.max_num_batched_tokens;
  }
  if (d.chunked_prefill) j["engine"]["chunked_prefill"] = *d.chunked_prefill;
  return Rederive(base, std::move(j), {.defer_fit = true});
}

StatusOr<Scenario> WithEngine(const Scenario& base, EngineKind kind) {
  if (base.engine.kind == kind) return base;
  nlohmann::json j = base.json;
  nlohmann::json e = {{"kind", kind == EngineKind::kSglang ? "sglang" : "vllm"}};
  if (j.contains("engine") && j["engine"].contains("kv_cache_dtype")) {
    e["kv_cache_dtype"] = j["engine"]["kv_cache_dtype"];
  }
  j["engine"] = e;
  return Rederive(base, std::move(j), {.defer_fit = true});
}

}  // namespace servesim
