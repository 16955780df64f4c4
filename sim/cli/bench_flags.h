// `vllm bench serve`'s load flags on `servesim run`, for people who arrive
// with its command lines (GuideLLM and aiperf share most of them). Each is
// an alias of scenario keys: ApplyBenchFlags writes them into the scenario's
// JSON after the file and the --set edits, before validation, so a bad
// value gets the loader's one-line error like any scenario value.
//
//   --request-rate R [--burstiness B]  workload.arrival: poisson, or gamma
//                                      with shape B (vLLM's draw); R = inf:
//                                      every request at t = 0 (a closed loop
//                                      of num_requests clients)
//   --max-concurrency N                workload.max_concurrency; with
//                                      --request-rate inf a closed loop of N
//   --num-prompts N                    workload.num_requests
//   --random-input-len/--isl L,        workload.input_len/output_len: fixed,
//   --random-output-len/--osl L,       or uniform integers in
//   --random-range-ratio r             [floor(L(1-r)), ceil(L(1+r))]
//   --range-ratio-style sglang         ... or, as sglang.bench_serving (and
//                                      vLLM's benchmark_serving.py before
//                                      0.9) draw them, [max(floor(L r), 1), L]
//   --goodput ttft:MS tpot:MS e2el:MS  metrics.goodput
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "sim/core/status.h"
#include "sim/metrics/goodput.h"

namespace servesim {

struct BenchFlags {
  // Absent: not given (the scenario's value stands).
  std::optional<std::string> request_rate;  // a number > 0, or "inf"
  std::optional<std::string> burstiness;    // a number > 0, or "inf"
  std::optional<int64_t> num_prompts, max_concurrency;
  std::optional<int64_t> random_input_len, random_output_len, isl, osl;
  std::optional<double> random_range_ratio;
  std::optional<std::string> range_ratio_style;  // "vllm" (default) or "sglang"
  std::vector<std::string> goodput;  // "ttft:500", ...

  bool any() const;
};

// Registers the flags on `run` (each value's own range is checked there).
void AddBenchFlags(CLI::App* run, BenchFlags* flags);

// vLLM's --goodput specs, KEY:VALUE with KEY ttft, tpot or e2el and VALUE
// milliseconds >= 0; a key given twice is an error.
StatusOr<GoodputSlo> ParseGoodputFlag(const std::vector<std::string>& specs);

// The checks that need no scenario: flags that conflict, rate and
// burstiness text, the goodput specs.
Status CheckBenchFlags(const BenchFlags& f);

// A flag and a --set edit of the key it aliases (or a key under it), e.g.
// --request-rate with --set workload.arrival.rate=5: an error naming both,
// since one would silently override the other.
Status CheckBenchFlagsAgainstSets(const BenchFlags& f,
                                  const std::vector<std::string>& sets);

// Writes the flags into a scenario's JSON (CheckBenchFlags first).
Status ApplyBenchFlags(const BenchFlags& f, nlohmann::json* scenario);

}  // namespace servesim
