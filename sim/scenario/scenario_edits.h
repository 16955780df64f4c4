// Typed variants of a parsed scenario: what the analysis commands vary (a
// rate, an arrival process, a run's length or warm-up, a fleet, a
// prefill:decode split, a GPU and the engine's limits), each one named
// function with typed arguments. An edit writes its values into the
// scenario's effective JSON and derives the variant with the loader's own
// stages (Rederive), never through text and never reading a trace again,
// so a variant is exactly what a file with those values gives: the same
// checks, messages and memory plan, and a JSON that says what ran (reports
// print it; `compare` compares it). tests/scenario/scenario_edits_test.cc
// holds each edit to the loader given the same file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/core/status.h"
#include "sim/scenario/scenario.h"

namespace servesim {

// Same open-loop process (poisson, gamma, constant), another rate.
StatusOr<Scenario> WithRate(const Scenario& base, double rate);
// Poisson at `rate`, or gamma with `burstiness` when burstiness > 0; any
// max_concurrency cap is removed.
StatusOr<Scenario> WithOpenLoop(const Scenario& base, double rate, double burstiness);
// A closed loop of n clients with no think time (max_concurrency removed).
StatusOr<Scenario> WithClosedLoop(const Scenario& base, int n);
// The closed loop that saturates the deployment, for its service rate mu:
// n clients with no think time and, with the frontend on, no time outside
// the servers either (the hop to the engine core, output streaming,
// turnaround and jitter are delays, not service: with them a few clients
// can leave the engine idle and mu comes out low). The API servers' work
// stays: it is service, and can be the bottleneck.
StatusOr<Scenario> WithSaturatingLoop(const Scenario& base, int n);
// workload.num_requests = n.
StatusOr<Scenario> WithNumRequests(const Scenario& base, int64_t n);
// metrics.warmup_requests = n.
StatusOr<Scenario> WithWarmupRequests(const Scenario& base, int64_t n);
// n co-located replicas behind `router`.
StatusOr<Scenario> WithFleet(const Scenario& base, int replicas, const std::string& router);
// A disaggregated scenario's pool sizes.
StatusOr<Scenario> WithPdSplit(const Scenario& base, int prefill, int decode);

// A co-located deployment: the GPU (a name or file, as /hardware/gpu), tp
// and, where given, the engine's limits (for SGLang: max_running_requests,
// chunked_prefill_size or, without chunking, max_prefill_tokens; a limit of
// 0 leaves SGLang's default for the GPU).
struct Deployment {
  std::string gpu;
  int tp = 1;
  int pp = 0;  // pipeline stages; 0: the base's
  std::optional<int> max_num_seqs, max_num_batched_tokens;
  std::optional<bool> chunked_prefill;
};
// Parsed with the fit check deferred: a memory plan that leaves no KV block
// is recorded in Scenario::no_room (the caller says which candidates fit).
StatusOr<Scenario> WithDeployment(const Scenario& base, const Deployment& d);
// The same scenario served by another engine on that engine's defaults
// (its limits and cache settings; the KV cache dtype kept); `base` itself
// when it already runs `kind`.
StatusOr<Scenario> WithEngine(const Scenario& base, EngineKind kind);

}  // namespace servesim
