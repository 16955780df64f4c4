// Loads ModelSpec / GpuSpec from JSON: by name (models/llm/<name>.json,
// models/gpu/<name>.json under the repository root) or by file path.
// Unknown keys, missing fields and impossible values are ConfigErrors.
#pragma once

#include <string>
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

}  // namespace servesim
