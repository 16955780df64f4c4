// A Hugging Face config.json mapped to a ModelSpec (`servesim model import`).
// Only decoders servesim can cost faithfully are accepted: a gated MLP (or
// routed experts of one) after GQA/MHA attention, plus DeepSeek's MLA,
// shared experts and dense first layers (deepseek_v2/v3), and sliding-window
// layers beside full-attention ones with sinks (gpt-oss; docs/models.md).
// What it does not model yet (a window in every layer, those keys in other
// families, vision/audio towers, linear or hybrid attention) is refused
// with one line naming the file, the JSON path and why, never imported
// with wrong numbers.
#pragma once

#include <string>

#include "sim/core/json_view.h"
#include "sim/model/model_spec.h"

namespace servesim {

struct HfImportOptions {
  std::string name;          // the model file's name (required)
  std::string source;        // where the config came from; the importer
                             // appends what it read (RoPE included)
  std::string served_hf_id;  // "": the config's _name_or_path if an id
};

// Throws ConfigError "<file>: /<key>: <why>".
ModelSpec ImportHfConfig(const JsonView& config, const HfImportOptions& options);
// Reads and parses `path` (strictly) first.
ModelSpec ImportHfConfigFile(const std::string& path, const HfImportOptions& options);

}  // namespace servesim
