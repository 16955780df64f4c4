// Search table, JSON and CSV (see search.h; the deployment files are in
// search_deploy.cc).
#include <cstdio>
#include <sstream>
#include <vector>

#include "sim/analysis/capacity_plan.h"
#include "sim/analysis/report_data.h"
#include "sim/analysis/search.h"
#include "sim/report/csv_field.h"
#include "sim/report/json_numbers.h"
#include "sim/report/writers.h"

namespace servesim {
namespace {

const char* StatusName(SearchRow::Status s) {
  switch (s) {
    case SearchRow::Status::kEvaluated: return "evaluated";
    case SearchRow::Status::kDoesNotFit: return "does not fit";
    case SearchRow::Status::kInvalid: return "invalid";
    case SearchRow::Status::kPruned: return "pruned";
    case SearchRow::Status::kDuplicate: return "duplicate";
  }
  return "?";
}

void WriteRouterCheck(const RouterCheck& c, std::ostream& os) {
  os << "    " << c.router << ": ";
  if (c.replicas > 0) {
    os << c.replicas << " replicas (even split: " << c.ideal_replicas << ")";
  } else {
    os << "no fleet up to the replica limit meets the SLO (even split: " << c.ideal_replicas
       << ")";
  }
  os << "; tried";
  for (const auto& [n, ok] : c.tried) os << " " << n << (ok ? " pass" : " fail");
  for (const SloCheck& k : c.at.checks) {
    os << "; " << k.name << " " << Fmt("%.1f", k.value_ms.mean) << " ms ["
       << Fmt("%.1f", k.value_ms.lo) << ", " << Fmt("%.1f", k.value_ms.hi) << "]";
  }
  os << " at " << (c.replicas > 0 ? c.replicas : c.tried.back().first) << " replicas\n";
}

nlohmann::json RouterCheckJson(const RouterCheck& c) {
  nlohmann::json tried = nlohmann::json::array();
  for (const auto& [n, ok] : c.tried) tried.push_back({{"replicas", n}, {"passed", ok}});
  nlohmann::json slo_at = nlohmann::json::object();
  for (const SloCheck& k : c.at.checks) {
    slo_at[k.name] = {{"limit_ms", k.limit_ms}, {"value_ms", IntervalJson(k.value_ms)}};
  }
  return {{"router", c.router},
          {"replicas", c.replicas > 0 ? nlohmann::json(c.replicas) : nlohmann::json(nullptr)},
          {"even_split_replicas", c.ideal_replicas},
          {"tried", tried},
          {"slo", slo_at}};
}

}  // namespace

void WriteSearchTable(const Scenario& sc, const SearchResult& r, std::ostream& os) {
  os << "servesim search: " << sc.file << " (" << sc.model.Label() << ", "
     << sc.ArrivalDescription() << " shape), target " << Fmt("%g", r.target_rate)
     << " req/s, SLO";
  for (const SloTerm& t : r.slo) os << " " << t.name << " <= " << Fmt("%g", t.limit_ms) << " ms";
  os << "\nprices: " << r.prices.file << " (" << r.prices.note << ")\n"
     << "every candidate: the capacity search (steady state, >= 3 replications, seeds "
     << sc.seed << "...: common random numbers across candidates); replicas = "
        "ceil(target / SLO max) under an ideal router"
     << (r.routed ? "; the cheapest is ranked by real routers' fleets (below)" : "") << "\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-42s %-12s %9s %9s %5s %5s %9s %9s %9s %9s %3s %s\n",
                "candidate", "status", "mu/s", "SLO max/s", "repl", "gpus", "fleet $/h",
                "$/M out", "tok/s/GPU", "tok/s/usr", "PF", "note");
  os << line;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const SearchRow& row = r.rows[i];
    const bool ran = row.status == SearchRow::Status::kEvaluated;
    std::snprintf(
        line, sizeof line, "%-42s %-12s %9s %9s %5s %5s %9s %9s %9s %9s %3s %s%s\n",
        row.candidate.Name().c_str(), StatusName(row.status),
        row.saturation.mu_rps > 0 ? Fmt("%.2f", row.saturation.mu_rps).c_str() : "-",
        ran ? Fmt("%.2f", row.capacity.max_rate).c_str() : "-",
        ran ? std::to_string(row.replicas).c_str() : "-",
        ran ? std::to_string(row.gpus).c_str() : "-",
        row.fleet_usd_per_hour ? Fmt("%.2f", *row.fleet_usd_per_hour).c_str() : "-",
        row.usd_per_million_output_tokens ? Fmt("%.3f", *row.usd_per_million_output_tokens).c_str()
                                          : "-",
        ran ? Fmt("%.0f", row.output_tokens_per_s_per_gpu).c_str() : "-",
        ran ? Fmt("%.1f", row.tokens_per_s_per_user).c_str() : "-",
        (std::string(row.pareto_throughput ? "T" : "") + (row.pareto_cost ? "C" : "")).c_str(),
        r.cheapest == i ? "CHEAPEST " : "", row.note.c_str());
    os << line;
  }
  os << "\nPF: on the Pareto front of T = tokens/s per GPU vs tokens/s per user (1000 / "
        "TPOT p50), C = $ per million output tokens vs TTFT p99 (both at the SLO max"
     << (r.rows.empty() ? "" : ", among evaluated candidates") << ")\n";
  if (r.cheapest) {
    const SearchRow& best = r.rows[*r.cheapest];
    const int64_t replicas = r.CheapestReplicas();
    os << "\ncheapest meeting the SLO at " << Fmt("%g", r.target_rate) << " req/s: "
       << best.candidate.Name() << ", " << replicas << (replicas == 1 ? " replica" : " replicas");
    if (r.routed) os << " behind " << r.CheapestRouter();
    const int64_t gpus = replicas * best.candidate.gpus();
    os << ", " << gpus << (gpus == 1 ? " GPU" : " GPUs") << ", $"
       << Fmt("%.2f", r.routed ? *best.routed_fleet_usd_per_hour : *best.fleet_usd_per_hour)
       << "/h\n";
    const VllmServeLine serve = VllmServe(sc, best);
    os << "  " << serve.CommandLine() << "\n";
    for (const std::string& note : serve.notes) os << "  # " << note << "\n";
    if (best.cost_error.known()) {
      const double e = best.cost_error.worst();
      os << "  margin: step costs +/-" << Fmt("%.1f", 100 * e) << "% ("
         << best.cost_error.source << "); if every step is " << Fmt("%.1f", 100 * e)
         << "% slower, its SLO max is ";
      if (best.max_rate_if_slower > 0) {
        const int64_t n = ReplicasFor(r.target_rate, best.max_rate_if_slower);
        os << Fmt("%.2f", best.max_rate_if_slower) << "/s per replica: " << n
           << (n == 1 ? " replica" : " replicas") << " for the target\n";
      } else {
        os << "below every rate tried\n";
      }
    } else {
      os << "  margin: unknown (the cost model's constants are set by hand)\n";
    }
  } else {
    os << "\nno candidate meets the SLO at the target within the replica limit\n";
  }
  if (r.routed) {
    os << "\nrouters: each evaluated candidate run as one cluster at " << Fmt("%g", r.target_rate)
       << " req/s behind each router (same rules as a capacity rate; the table's replicas "
          "assume an even split); the cheapest above is ranked by these fleets\n";
    for (const SearchRow& row : r.rows) {
      if (row.routed.empty()) continue;
      os << "  " << row.candidate.Name() << "\n";
      for (const RouterCheck& c : row.routed) WriteRouterCheck(c, os);
    }
  }
}

nlohmann::json SearchJson(const Scenario& sc, const SearchResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const SearchRow& row : r.rows) {
    const SearchCandidate& c = row.candidate;
    nlohmann::json j = {{"gpu", c.gpu},
                        {"tp", c.tp},
                        {"max_num_seqs", c.max_num_seqs},
                        {"max_num_batched_tokens", c.max_num_batched_tokens},
                        {"chunked_prefill", c.chunked_prefill},
                        {"status", StatusName(row.status)},
                        {"note", row.note}};
    if (!row.detail.empty()) j["detail"] = row.detail;
    if (row.deploy.tokens > 0) {
      j["max_model_len"] = row.deploy.tokens;
      j["kv_token_capacity"] = row.deploy.kv_tokens;
    }
    if (row.asked_max_num_batched_tokens > 0) {
      j["asked_max_num_batched_tokens"] = row.asked_max_num_batched_tokens;
    }
    if (row.saturation.mu_rps > 0) {
      j["saturation_rps"] = row.saturation.mu_rps;
      j["saturation_ci"] = IntervalJson(row.saturation.mu);
    }
    if (row.status == SearchRow::Status::kEvaluated) {
      j["max_rate_per_replica"] = row.capacity.max_rate;
      j["cost_model_error"] = CostErrorJson(row.cost_error);
      j["max_rate_if_steps_slower"] = row.cost_error.known()
                                          ? nlohmann::json(row.max_rate_if_slower)
                                          : nlohmann::json(nullptr);
      j["replicas"] = row.replicas;
      j["gpus"] = row.gpus;
      j["fleet_usd_per_hour"] = OrNull(row.fleet_usd_per_hour);
      j["usd_per_million_output_tokens"] = OrNull(row.usd_per_million_output_tokens);
      j["output_tokens_per_s_per_gpu"] = row.output_tokens_per_s_per_gpu;
      j["tokens_per_s_per_user"] = row.tokens_per_s_per_user;
      j["ttft_p99_ms_at_max"] = row.ttft_p99_ms;
      if (r.routed) {
        nlohmann::json routed = nlohmann::json::array();
        for (const RouterCheck& c : row.routed) routed.push_back(RouterCheckJson(c));
        j["routers"] = routed;
        j["best_router"] =
            row.best_router ? nlohmann::json(row.routed[*row.best_router].router) : nullptr;
        j["routed_fleet_usd_per_hour"] = OrNull(row.routed_fleet_usd_per_hour);
      }
      j["pareto_throughput"] = row.pareto_throughput;
      j["pareto_cost"] = row.pareto_cost;
      nlohmann::json trail = nlohmann::json::array();
      for (const RateEvaluation& e : row.capacity.trail) trail.push_back(RateEvaluationJson(e));
      j["evaluations"] = trail;
    }
    rows.push_back(j);
  }
  nlohmann::json slo = nlohmann::json::object();
  for (const SloTerm& t : r.slo) slo[t.name + "_ms"] = t.limit_ms;
  nlohmann::json data;
  data["title"] = "servesim search: " + sc.file;
  data["context"] = {{"scenario", sc.file},
                     {"model", sc.model.Label()},
                     {"arrival", sc.ArrivalDescription() + " (rate searched per candidate)"},
                     {"seed", sc.seed},
                     {"target_rate", r.target_rate},
                     {"prices", r.prices.file + ": " + r.prices.note},
                     {"warmup", "warmup_s " + Fmt("%g", sc.metrics.warmup_s) +
                                    ", warmup_requests " +
                                    std::to_string(sc.metrics.warmup_requests) +
                                    ", then MSER-5 on each replication"},
                     {"router", r.routed ? "ranked: each candidate run as a cluster behind "
                                           "each router (rows[].routers); replicas also given "
                                           "for an even split, ceil(target / SLO max)"
                                         : "ideal (even split); replicas = ceil(target / SLO max)"}};
  data["search"] = {{"slo", slo}, {"rows", rows}};
  if (r.cheapest) {
    const SearchRow& best = r.rows[*r.cheapest];
    data["search"]["cheapest"] = {{"index", *r.cheapest},
                                  {"name", best.candidate.Name()},
                                  {"replicas", r.CheapestReplicas()},
                                  {"router", r.routed ? nlohmann::json(r.CheapestRouter())
                                                      : nlohmann::json(nullptr)},
                                  {"vllm_serve", VllmServeCommand(sc, best)},
                                  {"vllm_serve_notes", VllmServe(sc, best).notes},
                                  {"max_model_len", best.deploy.tokens},
                                  {"kv_token_capacity", best.deploy.kv_tokens}};
  } else {
    data["search"]["cheapest"] = nullptr;
  }
  return data;
}

std::string SearchCsv(const SearchResult& r) {
  std::ostringstream os;
  os << "gpu,tp,max_num_seqs,max_num_batched_tokens,chunked_prefill,status,saturation_rps,"
        "max_rate_per_replica,replicas,gpus,fleet_usd_per_hour,usd_per_million_output_tokens,"
        "output_tokens_per_s_per_gpu,tokens_per_s_per_user,ttft_p99_ms,pareto_throughput,"
        "pareto_cost,cheapest,best_router,routed_replicas,routed_fleet_usd_per_hour\n";
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const SearchRow& row = r.rows[i];
    const SearchCandidate& c = row.candidate;
    const bool ran = row.status == SearchRow::Status::kEvaluated;
    auto num = [](bool have, double x) { return have ? Fmt("%.6g", x) : std::string(); };
    os << CsvField(c.gpu) << ',' << c.tp << ',' << c.max_num_seqs << ',' << c.max_num_batched_tokens
       << ',' << (c.chunked_prefill ? "true" : "false") << ',' << StatusName(row.status) << ','
       << num(row.saturation.mu_rps > 0, row.saturation.mu_rps) << ','
       << num(ran, row.capacity.max_rate) << ',' << num(ran, row.replicas) << ','
       << num(ran, row.gpus) << ','
       << num(row.fleet_usd_per_hour.has_value(), row.fleet_usd_per_hour.value_or(0)) << ','
       << num(row.usd_per_million_output_tokens.has_value(),
              row.usd_per_million_output_tokens.value_or(0))
       << ',' << num(ran, row.output_tokens_per_s_per_gpu) << ','
       << num(ran, row.tokens_per_s_per_user) << ',' << num(ran, row.ttft_p99_ms) << ','
       << (row.pareto_throughput ? "true" : "false") << ','
       << (row.pareto_cost ? "true" : "false") << ',' << (r.cheapest == i ? "true" : "false")
       << ',';
    if (row.best_router) {
      const RouterCheck& b = row.routed[*row.best_router];
      os << CsvField(b.router) << ',' << b.replicas << ',' << Fmt("%.6g", *row.routed_fleet_usd_per_hour);
    } else {
      os << ",,";
    }
    os << '\n';
  }
  return os.str();
}

}  // namespace servesim
