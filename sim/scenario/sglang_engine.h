// engine.kind "sglang": the engine object in SGLang's own vocabulary
// (engine.sglang: its server arguments and the three new-token-ratio
// environment variables), with SGLang 0.5.23's defaults where the user
// gives none, and the replica described in the vLLM fields the memory
// plan, the invariants and the reports read.
#pragma once

#include "sim/core/json_view.h"

namespace servesim {

struct Scenario;

// Parses engine.sglang into s->engine (the engine object `v` has kind
// "sglang"); refuses vLLM keys beside it. Sets the memory
// plan's inputs: mem_fraction_static as the usable share, no separate
// activation reserve (SGLang keeps it outside the fraction), the page as
// the block, and max_total_tokens as a given pool.
void ParseSglangEngine(const JsonView& v, Scenario* s);

// Refuses what EngineRules says SGLang's engine does not model
// (disaggregation, a trace of hashed blocks, sliding windows); after the
// workload is parsed.
void CheckSglangSupport(const JsonView& root, const Scenario& s);

// After the memory plan: the pool (max_total_tokens), SGLang's default
// max_running_requests for it, and the vLLM fields derived from them.
void ResolveSglangPool(const JsonView& root, Scenario* s);

}  // namespace servesim
