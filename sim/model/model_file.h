// The text of a model file (models/llm/*.json) for a ModelSpec: the keys in
// the shipped files' order, two-space indent, a final newline, so the same
// spec always gives the same bytes.
#pragma once

#include <string>

#include "sim/model/model_spec.h"

namespace servesim {

// served_hf_id is written only when set.
std::string ModelFileText(const ModelSpec& m);

}  // namespace servesim
