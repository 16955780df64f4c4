// Prefix models: how prompts share prefixes. Configured by the object at
// /workload/prefix, e.g. {"model": "zipf", "num_prefixes": 100, ...}. A
// model draws, for each request, its shared prefix (id and length) and may
// also set the prompt and output lengths when the model defines them
// (vLLM's prefix_repetition, SGLang's generated-shared-prefix).
#pragma once

#include <memory>
#include <string>

#include "sim/core/json_view.h"
#include "sim/core/rng.h"
#include "sim/workload/prompt_content.h"

namespace servesim {

class PrefixModel {
 public:
  virtual ~PrefixModel() = default;
  // `spec` arrives with lengths drawn from workload.input_len/output_len
  // (when configured) and content.stream_id set (unique per request). The
  // model sets content.prefix_id / prefix_len and, if it defines them,
  // prompt_len and output_len. Shared prefix ids must be >= 1 and must not
  // collide between different prefixes.
  virtual void Apply(Rng& rng, RequestSpec* spec) const = 0;
  // True when the model sets prompt/output lengths itself, so
  // workload.input_len / output_len must be absent.
  virtual bool DefinesLengths() const = 0;
  // The longest prompt and output the model leaves, given that the drawn
  // ones are at most *prompt and *output (both 0 when the model defines
  // the lengths): what a deployment must accept (vLLM's --max-model-len).
  virtual void BoundLengths(int64_t* prompt, int64_t* output) const = 0;
  // e.g. "zipf(100 prefixes of 1024 tokens, s=1.1) + suffix from input_len"
  virtual std::string Describe() const = 0;
};

// Throws ConfigError naming the JSON path for bad or unknown parameters.
std::unique_ptr<PrefixModel> MakePrefixModel(const JsonView& cfg);

}  // namespace servesim
