// Scenario: a JSON file describing one deployment and its traffic, strictly
// validated into everything a simulation needs. The key names are the
// project's contract with users and scripts: extend them, never rename.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/status.h"
#include "sim/cost/cost_model.h"
#include "sim/engine/simulation.h"
#include "sim/model/model_spec.h"

namespace servesim {

// One pool of a disaggregated deployment: its own GPU, tp, engine limits,
// memory plan, cost model, instance count and router.
struct PoolSpec {
  ModelSpec model;  // the scenario's, with this pool's KV cache dtype
  GpuSpec gpu;
  int tp = 1;
  EngineConfig engine;
  double gpu_memory_utilization = 0.9;
  double kv_cache_bytes = 0;
  bool num_gpu_blocks_given = false;
  std::shared_ptr<const CostModel> cost_model;
  std::shared_ptr<const StepWorkCounter> work_counter;
  int32_t replicas = 1;
  RouterConfig router;
};

// /disaggregation: prefill and decode pools joined by a KV link.
struct DisaggSpec {
  PoolSpec prefill, decode;
  LinkSpec link;
};

// Why one replica's GPU memory leaves no KV block (weights + activation
// reserve > gpu_memory_utilization x memory): set only by a parse with the
// fit check deferred (ScenarioParseOptions), for a scenario whose hardware
// analysis commands replace (capacity --candidates, search --gpus/--tp).
struct NoRoom {
  // A few words, no file or JSON path: "131.4 GiB of weights + 3.0 GiB of
  // activation reserve per GPU > 126.9 GiB usable".
  std::string note;
  // The one-line error a strict parse gives (file, JSON path, the fix).
  std::string message;
};

struct ScenarioParseOptions {
  // Record a memory plan that leaves no KV block in Scenario::no_room
  // instead of failing (the co-located plan; a disaggregated pool's still
  // fails).
  bool defer_fit = false;
  // An edit of the JSON after the --set overrides, before validation
  // (run's vllm bench serve flags, sim/cli/bench_flags.h); its error is
  // returned as is.
  std::function<Status(nlohmann::json*)> edit = nullptr;
};

struct Scenario {
  std::string file;     // where it came from, for reports and errors
  nlohmann::json json;  // the effective JSON, after --set overrides
  uint64_t seed = 1;
  ModelSpec model;
  GpuSpec gpu;
  int tp = 1;
  bool interconnect_given = false;  // hardware.interconnect_gb_per_s set
  // Pipeline parallelism (hardware.pp): stages of tp GPUs each, and the
  // link between them (hardware.pp_link, a models/links name; empty: the
  // GPUs' own interconnect, stages in one server).
  int pp = 1;
  std::string pp_link;
  int GpusPerReplica() const { return tp * pp; }
  EngineConfig engine;
  double gpu_memory_utilization = 0.9;
  double activation_reserve_bytes = -1;  // < 0: derived from the model
  double kv_cache_bytes = 0;     // memory left for KV on each GPU
  // Set aside on each GPU for sliding-window layers' KV (memory_plan.cc).
  double windowed_kv_reserve_bytes = 0;
  // Every run of it checks the run-level invariants (capacity and
  // search's --check-invariants; not a scenario key).
  bool check_invariants = false;
  bool num_gpu_blocks_given = false;
  // engine.max_num_seqs / max_num_batched_tokens set by the scenario (or a
  // pool's engine); a vLLM engine that leaves one out takes `vllm serve`'s
  // default for its GPU (vllm_batch_defaults.h).
  bool max_num_seqs_given = false;
  bool max_num_batched_tokens_given = false;
  bool kv_beyond_gpu_memory = false;  // engine.kv_beyond_gpu_memory: allowed
  // engine.kv_offload as given (resolved into engine.cpu_blocks etc. once
  // the model, GPU, tp and block size are known): CPU memory of the
  // instance (all its GPUs' shards), one GPU's host link (0: the GPU's
  // pcie_gb_per_s) and its per-transfer latency.
  double kv_offload_cpu_gib = 0;
  double kv_offload_pcie_bytes_per_s = 0;
  double kv_offload_latency_s = 0;
  std::shared_ptr<const CostModel> cost_model;
  // Model FLOPs and bytes per step, for MFU and MBU (sim/cost/step_work.h).
  std::shared_ptr<const StepWorkCounter> work_counter;
  WorkloadConfig workload;
  MetricsConfig metrics;
  LimitsConfig limits;
  FrontendConfig frontend;
  int32_t num_replicas = 1;
  RouterConfig router;
  // Malformed trace lines skipped under /workload/trace/max_bad_fraction:
  // said in ArrivalDescription() so they are never dropped silently.
  int64_t trace_bad_lines = 0, trace_data_lines = 0;
  int64_t trace_records = 0;      // good records
  // The trace's longest record (prompt + output tokens) and its line.
  int64_t trace_longest_tokens = 0, trace_longest_line = 0;
  std::string trace_first_error;  // "<path>:<line>: <what>"
  // Every record has a timestamp; the last one (the replay's span).
  bool trace_timed = false;
  double trace_last_s = 0;
  // Disaggregated prefill/decode. Then gpu, tp, engine, cost_model and the
  // memory plan above are the decode pool's, and num_replicas counts both
  // pools' instances.
  std::optional<DisaggSpec> disagg;
  // What the reader decided (timestamp unit, 0-token rows, filtered rows):
  // said in ArrivalDescription() and the result JSON.
  TraceNotes trace_notes;
  // Set only with ScenarioParseOptions::defer_fit: this hardware cannot
  // hold the model, so the scenario must not be run (ToSimulationInput
  // aborts).
  std::optional<NoRoom> no_room;

  SimulationInput ToSimulationInput() const;
  // One line describing the traffic, e.g. "poisson(rate=10/s)".
  std::string ArrivalDescription() const;
  // ", skipping 2 malformed of 1000 trace lines (first: t.jsonl:17: ...)",
  // then "; timestamps in ms (...)" and the other trace notes, or "" when
  // there is nothing to say.
  std::string TraceSkipNote() const;
  double OfferedRate() const;  // requests/s; 0 for closed loop
};

// The default scenario compiled into the binary (scenarios/default_chat.json).
const char* EmbeddedDefaultScenario();

// Parses and validates. `label` names the source in error messages.
StatusOr<Scenario> ParseScenario(const std::string& text,
                                 const std::string& label,
                                 const std::vector<std::string>& overrides,
                                 const ScenarioParseOptions& options = {});
StatusOr<Scenario> LoadScenarioFile(const std::string& path,
                                    const std::vector<std::string>& overrides,
                                    const ScenarioParseOptions& options = {});

// `base` with its effective JSON replaced by `json` (an edit of base.json),
// validated and derived exactly as a file holding `json` would be, without
// text and without reading a trace again when /workload/trace is unchanged.
// The analysis commands edit through scenario_edits.h, not this.
StatusOr<Scenario> Rederive(const Scenario& base, nlohmann::json json,
                            const ScenarioParseOptions& options = {});

// Applies "a.b.c=value" to json: value is parsed as JSON when it parses
// (numbers, true, null, {...}), else taken as a string.
Status ApplyOverride(nlohmann::json* json, const std::string& assignment);

}  // namespace servesim
