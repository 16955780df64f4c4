// Which engine features run together: the one statement of it. The
// scenario loader refuses every other combination with the rule's message
// (naming the key to change), the simulation fuzzer draws only what it
// allows (tests/fuzz/scenario_gen.cc), and `servesim run --help` lists the
// rules (docs/ quote that list). A new feature adds its flag here and a
// rule for each combination it does not model.
#pragma once

#include <optional>
#include <span>

namespace servesim {

struct EngineFeatures {
  bool speculative_decoding = false;
  bool async_scheduling = false;  // asked for explicitly
  bool kv_offload = false;        // a CPU tier (engine.kv_offload.cpu_gib > 0)
  bool swap_preemption = false;
  bool disaggregation = false;
  bool sglang = false;           // engine.kind "sglang"
  bool hashed_trace = false;     // a trace naming its blocks by hash (Mooncake)
  bool sliding_window = false;   // the model has sliding-window layers
  bool pipeline_parallel = false;  // hardware.pp > 1
};

struct EngineRule {
  const char* key;       // the engine key a refusal names
  const char* expected;  // what the refusal says is expected
  // True if `f` breaks the rule.
  bool (*breaks)(const EngineFeatures& f);
};

// Every rule, in the order the loader checks them.
std::span<const EngineRule> EngineRules();

// The first rule `f` breaks, or nullopt if the engine runs it.
std::optional<EngineRule> Unsupported(const EngineFeatures& f);

}  // namespace servesim
