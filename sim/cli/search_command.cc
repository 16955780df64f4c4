// `servesim search`: the cheapest deployment meeting an SLO at a target
// rate, over GPU x TP x engine settings, with Pareto fronts and ready-to-use
// deployment files.
#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>

#include "sim/analysis/search.h"
#include "sim/cli/analysis_cli.h"
#include "sim/cli/commands.h"
#include "sim/cli/validation_cli.h"
#include "sim/cluster/router.h"
#include "sim/core/json_view.h"
#include "sim/core/output_file.h"
#include "sim/model/model_loader.h"
#include "sim/report/format.h"
#include "sim/scenario/scenario_edits.h"

namespace servesim {
namespace {

struct SearchCliOptions : AnalysisCliOptions {
  SearchCliOptions() { replications = 3; }
  std::string slo, prices, csv, vllm_args, k8s;
  std::string gpus, tps, seqs, tokens, chunked, routers, engines;
  double target_rate = 0;
  int max_replications = 20, max_replicas = 64;
  double precision = 0.05;
  bool exhaustive = false;
  ValidationOptions validation;
};

StatusOr<std::vector<int>> Ints(const std::string& text, const std::string& what) {
  std::vector<int> xs;
  if (text.empty()) return xs;
  StatusOr<std::vector<double>> ds = ParseNumberList(text, what);
  if (!ds.ok()) return ds.status();
  for (double d : *ds) {
    if (d != static_cast<int>(d) || d < 1) {
      return Status::Error(what + ": expected comma-separated integers >= 1, got \"" + text +
                           "\"");
    }
    xs.push_back(static_cast<int>(d));
  }
  return xs;
}

StatusOr<std::vector<bool>> Bools(const std::string& text) {
  std::vector<bool> xs;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (item == "on" || item == "true") xs.push_back(true);
    else if (item == "off" || item == "false") xs.push_back(false);
    else return Status::Error("--chunked-prefill: expected on,off (or true,false), got \"" + item + "\"");
  }
  return xs;
}

// --gpus: shipped names or aliases ("h100" -> "h100-sxm").
StatusOr<std::vector<std::string>> ParseGpus(const std::string& text) {
  // Each GPU goes into a candidate's scenario JSON, which must be UTF-8.
  if (!IsValidUtf8(text)) {
    return Status::Error("--gpus " + text +
                         ": invalid UTF-8; expected names like h100-sxm,h200");
  }
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string g; std::getline(in, g, ',');) {
    if (g.empty()) return Status::Error("--gpus: expected names like h100-sxm,h200");
    const std::string gpu = FindGpuName(g);
    if (gpu.empty()) return Status::Error("--gpus " + text + ": " + UnknownGpuText(g));
    out.push_back(gpu);
  }
  return out;
}

// --engines: vllm and/or sglang, each once.
StatusOr<std::vector<EngineKind>> ParseEngines(const std::string& text) {
  std::vector<EngineKind> out;
  std::istringstream in(text);
  for (std::string name; std::getline(in, name, ',');) {
    EngineKind k;
    if (name == "vllm") {
      k = EngineKind::kVllm;
    } else if (name == "sglang") {
      k = EngineKind::kSglang;
    } else {
      return Status::Error("--engines: unknown engine \"" + name + "\"; expected vllm,sglang");
    }
    if (std::find(out.begin(), out.end(), k) != out.end()) {
      return Status::Error("--engines " + text + ": " + name + " given twice");
    }
    out.push_back(k);
  }
  return out;
}

const char* EngineName(EngineKind k) { return k == EngineKind::kSglang ? "sglang" : "vllm"; }

std::string EngineLabel(EngineKind k) {
  return k == EngineKind::kSglang ? std::string("SGLang ") + kSglangVersion
                                  : std::string("vLLM ") + kVllmVersion;
}

// The cheapest deployment's fleet $/h (routed when routers were given).
std::optional<double> CheapestCost(const SearchResult& r) {
  if (!r.cheapest) return std::nullopt;
  const SearchRow& row = r.rows[*r.cheapest];
  return r.routed ? row.routed_fleet_usd_per_hour : row.fleet_usd_per_hour;
}

// One search per engine, the same SLO and target; which engine's answer is
// cheaper.
struct EngineSearch {
  EngineKind kind;
  Scenario scenario;
  SearchResult result;
};

void WriteEngineComparison(const std::vector<EngineSearch>& runs, const EngineSearch* best,
                           std::ostream& os) {
  os << "\nEngines compared at the same SLO and target rate (each on its own defaults "
        "unless the grid sets the limits):\n";
  for (const EngineSearch& e : runs) {
    const std::optional<double> cost = CheapestCost(e.result);
    os << "  " << EngineLabel(e.kind) << ": ";
    if (!cost) {
      os << "no candidate meets the SLO\n";
      continue;
    }
    const SearchRow& row = e.result.rows[*e.result.cheapest];
    os << row.candidate.Name() << " x " << e.result.CheapestReplicas() << " replicas, $"
       << Fmt("%.2f", *cost) << "/h, SLO max " << Fmt("%.2f", row.capacity.max_rate)
       << " req/s per replica\n";
  }
  if (best != nullptr) {
    os << "  answer: " << EngineLabel(best->kind)
       << " (the cheaper fleet; at equal cost, the higher SLO max)\n";
  }
}

// With several engines the JSON holds each search, and the CSV one block
// of rows per engine with an engine column first.
nlohmann::json EnginesJson(const std::vector<EngineSearch>& runs, const EngineSearch* best) {
  nlohmann::json j = {{"engines", nlohmann::json::array()}};
  for (const EngineSearch& e : runs) {
    nlohmann::json one = SearchJson(e.scenario, e.result);
    one["engine"] = EngineName(e.kind);
    j["engines"].push_back(std::move(one));
  }
  j["cheapest_engine"] = best ? nlohmann::json(EngineName(best->kind)) : nlohmann::json();
  return j;
}

std::string EnginesCsv(const std::vector<EngineSearch>& runs) {
  std::string out;
  for (const EngineSearch& e : runs) {
    std::istringstream in(SearchCsv(e.result));
    bool header = true;
    for (std::string line; std::getline(in, line);) {
      if (header && !out.empty()) {
        header = false;
        continue;
      }
      out += (header ? std::string("engine,") : std::string(EngineName(e.kind)) + ",") + line +
             "\n";
      header = false;
    }
  }
  return out;
}

// The grid: --gpus, --tp, the engine limits and --routers.
Status ParseSpace(const SearchCliOptions& o, SearchSpace* space) {
  StatusOr<std::vector<std::string>> gpus = ParseGpus(o.gpus);
  if (!gpus.ok()) return gpus.status();
  space->gpus = *gpus;
  auto tps = Ints(o.tps, "--tp");
  auto seqs = Ints(o.seqs, "--max-num-seqs");
  auto tokens = Ints(o.tokens, "--max-num-batched-tokens");
  auto chunked = Bools(o.chunked);
  for (const Status* st : {&tps.status(), &seqs.status(), &tokens.status(), &chunked.status()}) {
    if (!st->ok()) return *st;
  }
  space->tps = *tps;
  space->max_num_seqs = *seqs;
  space->max_num_batched_tokens = *tokens;
  space->chunked_prefill = *chunked;
  const std::vector<std::string> known = RouterNames();
  std::istringstream in(o.routers);
  for (std::string name; std::getline(in, name, ',');) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      return Status::Error("--routers: unknown router \"" + name + "\"; expected some of " +
                           list);
    }
    space->routers.push_back(name);
  }
  return Status::Ok();
}

// The report files, and the answer's deployment files (`best`: null when
// no engine's candidate meets the SLO).
Status WriteOutputs(const SearchCliOptions& o, const std::vector<EngineSearch>& runs,
                    const EngineSearch* best) {
  if (runs.size() > 1) {
    WriteEngineComparison(runs, best, std::cout);
    if (Status st = WriteReportFiles(EnginesJson(runs, best), o.json, ""); !st.ok()) return st;
    if (!o.csv.empty()) {
      if (Status st = WriteTextFile(o.csv, EnginesCsv(runs)); !st.ok()) return st;
    }
  } else {
    if (Status st = WriteReportFiles(SearchJson(runs[0].scenario, runs[0].result), o.json, o.html);
        !st.ok()) {
      return st;
    }
    if (!o.csv.empty()) {
      if (Status st = WriteTextFile(o.csv, SearchCsv(runs[0].result)); !st.ok()) return st;
    }
  }
  if ((!o.vllm_args.empty() || !o.k8s.empty()) && best == nullptr) {
    return Status::Error("search: no candidate meets the SLO at the target rate, so there is "
                         "no deployment to write (--vllm-args/--k8s)");
  }
  if (!o.vllm_args.empty()) {
    const std::string text = VllmArgsFile(best->scenario, best->result.rows[*best->result.cheapest]);
    if (Status st = WriteTextFile(o.vllm_args, text); !st.ok()) return st;
  }
  if (!o.k8s.empty()) {
    const std::string yaml = KubernetesManifest(best->scenario, best->result);
    if (Status st = WriteTextFile(o.k8s, yaml); !st.ok()) return st;
  }
  return Status::Ok();
}

Status RunSearchCommand(const SearchCliOptions& o) {
  if (Status st = CheckOutputPaths({{"--json", o.json}, {"--html", o.html}, {"--csv", o.csv},
                                    {"--vllm-args", o.vllm_args}, {"--k8s", o.k8s}},
                                    {o.scenario});
      !st.ok()) {
    return st;
  }
  StatusOr<std::vector<SloTerm>> slo = ParseSlo(o.slo);
  if (!slo.ok()) return slo.status();
  SearchSpace space;
  if (Status st = ParseSpace(o, &space); !st.ok()) return st;
  StatusOr<PriceTable> prices =
      LoadPriceTable(o.prices.empty() ? DefaultPriceTablePath() : o.prices);
  if (!prices.ok()) return prices.status();
  // --gpus/--tp replace the scenario's hardware, so its own GPU need not
  // hold the model (each candidate's memory plan is checked).
  StatusOr<Scenario> sc = LoadScenarioArg(
      o.scenario, o.sets, {.defer_fit = !space.gpus.empty() || !space.tps.empty()});
  if (!sc.ok()) return sc.status();
  if (sc->disagg) return DisaggregationUnsupported(*sc, "search");
  SearchOptions so;
  so.capacity.slo = *slo;
  so.capacity.replications = o.replications;
  so.capacity.max_replications = std::max(o.max_replications, o.replications);
  so.capacity.precision = o.precision;
  so.capacity.jobs = o.jobs;
  so.capacity.progress = !o.quiet;
  so.capacity.validation = o.validation;
  so.target_rate = o.target_rate;
  so.max_replicas = o.max_replicas;
  so.exhaustive = o.exhaustive;
  StatusOr<std::vector<EngineKind>> kinds = ParseEngines(o.engines);
  if (!kinds.ok()) return kinds.status();
  if (kinds->empty()) kinds->push_back(sc->engine.kind);
  if (kinds->size() > 1 && !o.html.empty()) {
    return Status::Error("--html: one engine at a time (the report draws one search); with "
                         "--engines " + o.engines + " use --json");
  }
  std::vector<EngineSearch> runs;
  for (EngineKind k : *kinds) {
    StatusOr<Scenario> esc = WithEngine(*sc, k);
    if (!esc.ok()) return Status::Error("--engines " + std::string(EngineName(k)) + ": " +
                                        esc.status().message());
    if (kinds->size() > 1) std::cout << "== " << EngineLabel(k) << "\n";
    StatusOr<SearchResult> r = SearchDeployments(*esc, space, so, *prices);
    if (!r.ok()) return r.status();
    WriteSearchTable(*esc, *r, std::cout);
    runs.push_back({k, std::move(*esc), std::move(*r)});
  }
  // The answer: the cheapest deployment over the engines; at equal cost
  // the one with more headroom (a higher SLO max per replica), then the
  // first given.
  const EngineSearch* best = nullptr;
  const auto headroom = [](const EngineSearch& e) {
    return e.result.rows[*e.result.cheapest].capacity.max_rate;
  };
  for (const EngineSearch& e : runs) {
    const std::optional<double> cost = CheapestCost(e.result);
    if (!cost) continue;
    const double best_cost = best ? *CheapestCost(best->result) : 0;
    if (best == nullptr || *cost < best_cost ||
        (*cost == best_cost && headroom(e) > headroom(*best))) {
      best = &e;
    }
  }
  return WriteOutputs(o, runs, best);
}

}  // namespace

Command AddSearchCommand(CLI::App* app) {
  auto o = std::make_shared<SearchCliOptions>();
  CLI::App* cmd = app->add_subcommand(
      "search",
      "Cheapest deployment meeting an SLO at a target rate over GPU x TP x engine "
      "settings: Pareto fronts, a vllm serve line and a Kubernetes manifest");
  AddAnalysisOptions(cmd, o.get(), "per rate at least (>= 3), as capacity");
  cmd->add_option("--slo", o->slo, "SLO terms, e.g. ttft_p99=2s,tpot_p99=100ms")
      ->required()
      ->check(NotAnOption());
  cmd->add_option("--target-rate", o->target_rate, "Fleet requests/s to serve")
      ->required()
      ->check(PositiveNumber());
  cmd->add_option("--gpus", o->gpus, "GPU types, e.g. h100-sxm,h200 (default: the scenario's)")
      ->check(NotAnOption());
  cmd->add_option("--tp", o->tps, "Tensor-parallel degrees, e.g. 1,2 (default: the scenario's)")
      ->check(NotAnOption());
  cmd->add_option("--max-num-seqs", o->seqs, "e.g. 64,256 (default: the scenario's)")
      ->check(NotAnOption());
  cmd->add_option("--max-num-batched-tokens", o->tokens, "e.g. 2048,8192 (default: the scenario's)")
      ->check(NotAnOption());
  cmd->add_option("--chunked-prefill", o->chunked, "on,off (default: the scenario's)")
      ->check(NotAnOption());
  cmd->add_option("--engines", o->engines,
                  "Compare engines at the same SLO and target rate, e.g. vllm,sglang: one "
                  "search each (each on its own defaults unless the grid sets the limits), "
                  "the answer the cheaper (default: the scenario's engine)")
      ->check(NotAnOption());
  cmd->add_option("--routers", o->routers,
                  "Rank by real routers: every evaluated candidate is run as a cluster "
                  "behind each at the target rate, e.g. round_robin,least_outstanding "
                  "(default: an ideal even split)")
      ->check(NotAnOption());
  cmd->add_option("--max-replicas", o->max_replicas, "Largest fleet per candidate (default 64)")
      ->check(NumberIn(1, 100000));
  cmd->add_option("--max-replications", o->max_replications, "Budget per rate (default 20)")
      ->check(NumberIn(3, 1000));
  cmd->add_option("--precision", o->precision, "Relative 95% half-width (default 0.05)")
      ->check(NumberIn(1e-4, 0.99));
  AddValidationOptions(cmd, &o->validation);
  cmd->add_flag("--exhaustive", o->exhaustive,
                "Evaluate every fitting candidate (no cost pruning): complete Pareto fronts");
  cmd->add_option("--prices", o->prices, "$/GPU-hour table (default models/gpu_prices.json)")
      ->check(NotAnOption());
  cmd->add_option("--csv", o->csv, "Write one row per candidate as CSV")->check(NotAnOption());
  cmd->add_option("--vllm-args", o->vllm_args,
                  "Write the cheapest deployment's serve line: vllm serve, or python3 -m "
                  "sglang.launch_server for SGLang (and '# ' notes)")
      ->check(NotAnOption());
  cmd->add_option("--k8s", o->k8s,
                  "Write the cheapest deployment as Kubernetes manifests (YAML: a "
                  "Deployment and a Service)")
      ->check(NotAnOption());
  return [cmd, o]() -> Status {
    if (!cmd->parsed()) return Status::Ok();
    return RunSearchCommand(*o);
  };
}

}  // namespace servesim
