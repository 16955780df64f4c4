// `servesim search`: the cheapest deployment meeting an SLO set at a target
// fleet rate, over GPU type x TP x max_num_seqs x max_num_batched_tokens x
// chunked prefill. Each candidate is the scenario with those values set
// (same seed: common random numbers across candidates) and gets the
// capacity search (capacity.h): its SLO max per replica, replicas =
// ceil(target / SLO max) under an ideal router (even split, as `capacity`),
// GPUs and fleet $/h. Pruning never changes the cheapest answer:
//  - a candidate that does not fit in GPU memory is listed, not run (the
//    base scenario's own hardware need not fit when --gpus/--tp replace
//    it); when no candidate can run, the search is an error;
//  - its saturation throughput mu bounds its SLO max from above (capacity
//    never passes a rate above mu's lower bound), so ceil(target / mu.lo)
//    replicas is a lower bound on its fleet; candidates are evaluated from
//    the lowest bound up, and one whose bound exceeds the cheapest fleet
//    found so far (or needs more than max_replicas) is listed as pruned.
// With routers given, the router is a ranking axis: every evaluated
// candidate is also run as one cluster behind each router at the target
// rate (RouterCheck), and the cheapest is the candidate x router whose
// fleet passes with the lowest $/h. A fleet of n replicas cannot carry
// more than n x mu, so ceil(target / mu.hi) replicas bound a routed fleet
// from below and prune as the even-split bound does.
// With `exhaustive` every fitting candidate is evaluated (the Pareto fronts
// then cover the whole grid; otherwise they cover the evaluated ones).
// Every candidate is one vLLM would start: with chunked prefill off vLLM
// needs max_num_batched_tokens >= --max-model-len (deploy_limits.h), so
// such a candidate's budget is raised to it before it is simulated (the
// row says so), and one that then equals an earlier row is listed, not run.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/analysis/capacity.h"
#include "sim/analysis/prices.h"
#include "sim/scenario/deploy_limits.h"

namespace servesim {

struct SearchSpace {
  std::vector<std::string> gpus;
  std::vector<int> tps;
  std::vector<int> max_num_seqs;
  std::vector<int> max_num_batched_tokens;
  std::vector<bool> chunked_prefill;
  // Routers, a ranking axis (empty: the ideal even split only). See
  // RouterCheck.
  std::vector<std::string> routers;
};

// The scenario's own values for every empty axis.
SearchSpace CompleteSpace(SearchSpace space, const Scenario& base);

struct SearchCandidate {
  std::string gpu;
  int tp = 1, max_num_seqs = 0, max_num_batched_tokens = 0;
  bool chunked_prefill = true;
  int pp = 1;  // the base scenario's pipeline stages (hardware.pp)
  int gpus() const { return tp * pp; }  // one replica's
  std::string Name() const;  // "h200 tp1 seqs256 tokens8192 chunked"
};

// A candidate run as a real cluster: copies behind `router` at the full
// target rate, judged by capacity's rules (EvaluateRate). The fewest
// replicas that pass, searched from the ideal count down (a router that
// balances by load can beat an even random split) and up (one that does
// not needs more).
struct RouterCheck {
  std::string router;
  int replicas = 0;           // fewest that pass; 0: none up to the limit
  int ideal_replicas = 0;     // ceil(target / SLO max per replica)
  RateEvaluation at;          // the verdict at `replicas` (or the last tried)
  std::vector<std::pair<int, bool>> tried;  // replicas, passed
};

struct SearchRow {
  SearchCandidate candidate;
  // kDuplicate: the same candidate as an earlier row once its budget was
  // raised (see above), not run.
  enum class Status { kEvaluated, kDoesNotFit, kInvalid, kPruned, kDuplicate };
  Status status = Status::kEvaluated;
  std::string note;    // why it was not evaluated (kDoesNotFit: a few words), or a caveat
  std::string detail;  // kDoesNotFit: the full one-line error (file, JSON path)
  // For a candidate that fits: the deployment's --max-model-len and the
  // KV capacity it is capped at.
  MaxModelLen deploy;
  // Chunked prefill off: the grid's max_num_batched_tokens when the search
  // raised it to max_model_len (candidate holds the raised one); 0: as given.
  int32_t asked_max_num_batched_tokens = 0;
  SaturationEstimate saturation;
  CapacityResult capacity;  // kEvaluated
  int64_t replicas = 0, gpus = 0;  // 0 replicas: the SLO is met at no rate
  std::optional<double> fleet_usd_per_hour, usd_per_million_output_tokens;
  double output_tokens_per_s_per_gpu = 0;  // at the SLO max
  double tokens_per_s_per_user = 0;        // 1000 / TPOT p50 at the SLO max
  double ttft_p99_ms = 0;                  // at the SLO max
  // The step-cost error bar and the SLO max if steps are that much slower
  // (MaxRateIfStepsSlower; 0 when unknown).
  CostModelError cost_error;
  double max_rate_if_slower = 0;
  // With routers: one check per router, in the order given, and the
  // cheapest passing one (index into `routed`) with its fleet $/h.
  std::vector<RouterCheck> routed;
  std::optional<size_t> best_router;
  std::optional<double> routed_fleet_usd_per_hour;
  bool pareto_throughput = false;  // tokens/s/GPU vs tokens/s/user
  bool pareto_cost = false;        // $/M output tokens vs TTFT p99
};

struct SearchOptions {
  CapacityOptions capacity;  // SLO, replications, precision, jobs
  double target_rate = 0;    // fleet requests/s; > 0
  int max_replicas = 64;
  bool exhaustive = false;
};

struct SearchResult {
  std::vector<SloTerm> slo;
  double target_rate = 0;
  PriceTable prices;
  std::vector<SearchRow> rows;  // in grid order
  // Index into rows: by the even-split fleet, or with routers by the
  // routed fleet (then rows[*cheapest].best_router says behind which).
  std::optional<size_t> cheapest;
  bool routed = false;  // routers were given
  // The cheapest deployment's fleet: replicas and, when routed, the router.
  int64_t CheapestReplicas() const;
  std::string CheapestRouter() const;  // "" without routers
};

StatusOr<SearchResult> SearchDeployments(const Scenario& base, const SearchSpace& space,
                                         const SearchOptions& o, PriceTable prices);

// A candidate as a `vllm serve` command (search_deploy.cc): the arguments
// after "vllm", and a line for each simulated setting the flags cannot
// carry or that differs from vLLM's behaviour.
// The command that starts the answer's engine: `vllm serve ...`, or for an
// SGLang scenario `python3 -m sglang.launch_server ...`.
struct VllmServeLine {
  std::string program = "vllm";
  std::vector<std::string> args;  // "serve", the Hugging Face id, flags
  std::vector<std::string> notes;
  std::string CommandLine() const;  // program and args, quoted for a POSIX shell
};
VllmServeLine VllmServe(const Scenario& base, const SearchRow& row);
std::string VllmServeCommand(const Scenario& base, const SearchRow& row);  // CommandLine()
// The --vllm-args file: the command line, then each note as a "# " line.
std::string VllmArgsFile(const Scenario& base, const SearchRow& row);
// The cheapest deployment as Kubernetes manifests (YAML documents separated
// by "---"): a Deployment of the fleet's replicas (each the GPU count and
// the serve flags, image pinned to the vLLM version servesim follows,
// HF_TOKEN from a Secret, /dev/shm in memory, startup/readiness/liveness
// probes on /health) and a ClusterIP Service on port 8000 in front.
std::string KubernetesManifest(const Scenario& base, const SearchResult& r);  // r.cheapest set
// The vLLM release servesim's engine follows (README, tools/vllm_conformance).
inline constexpr const char* kVllmVersion = "0.33.0";
// The SGLang release engine.kind "sglang" follows (docs/engine/sglang.md).
inline constexpr const char* kSglangVersion = "0.5.23";

void WriteSearchTable(const Scenario& sc, const SearchResult& r, std::ostream& os);
nlohmann::json SearchJson(const Scenario& sc, const SearchResult& r);
std::string SearchCsv(const SearchResult& r);

}  // namespace servesim
