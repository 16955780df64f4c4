// Loads ModelSpec / GpuSpec from JSON: by name (models/llm/<name>.json,
// models/gpu/<name>.json under the repository root) or by file path.
// Unknown keys, missing fields and impossible values are ConfigErrors.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/core/json_view.h"
#include "sim/model/model_spec.h"

namespace servesim {

// Throw ConfigError naming the file and the JSON path.
ModelSpec LoadModelSpec(const std::string& name_or_path);
GpuSpec LoadGpuSpec(const std::string& name_or_path);
LinkSpec LoadLinkSpec(const std::string& name_or_path);  // models/links
ModelSpec ParseModelSpec(const JsonView& v);
GpuSpec ParseGpuSpec(const JsonView& v);
LinkSpec ParseLinkSpec(const JsonView& v);
// Names available under models/llm and models/gpu (for error suggestions).
std::vector<std::string> AvailableModels();
std::vector<std::string> AvailableGpus();
std::vector<std::string> AvailableLinks();

// What a GPU name given by a user stands for: the shipped file's stem
// ("h200"), the GPU an alias names ("h100" -> "h100-sxm", "a100" ->
// "a100-80gb": only aliases of GPUs that ship) or the name in lower case
// ("H200" -> "h200"); a path ending in .json is returned as given; "" when
// nothing ships under that name. The same for models, whose aliases are
// their Hugging Face ids ("meta-llama/Llama-3.1-8B-Instruct", and the
// repository of the config.json the file cites, "meta-llama/Llama-3.1-8B").
std::string FindGpuName(const std::string& name_or_path);
std::string FindModelName(const std::string& name_or_path);
// Aliases of shipped GPUs, "alias" -> "shipped name", sorted by alias.
std::vector<std::pair<std::string, std::string>> GpuAliases();
// Why `name` names no GPU (model), for an error line after the caller's
// file/JSON path or flag: `unknown GPU "h100x" (did you mean "h100-sxm"?);
// available: a100-80gb, ...; aliases: a100 = a100-80gb, ...`. The nearest
// names are those within a typo (edit distance, aliases included), else
// those sharing the longest prefix of 3 or more characters ("h100-pcie" ->
// "h100-sxm").
std::string UnknownGpuText(const std::string& name);
std::string UnknownModelText(const std::string& name);

}  // namespace servesim
