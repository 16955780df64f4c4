// The long-window validation flags shared by `capacity` and `search`
// (sim/analysis/capacity_validation.h).
#pragma once

#include <CLI/CLI.hpp>

#include "sim/analysis/capacity_validation.h"

namespace servesim {

// --window, --window-share, --rate-precision, --max-windows.
void AddValidationOptions(CLI::App* cmd, ValidationOptions* o);

}  // namespace servesim
