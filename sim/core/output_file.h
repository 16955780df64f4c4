// Writing an output file (reports, profiles, CSVs) with the errors every
// command reports the same way: "<path>: cannot open for writing" or
// "<path>: write failed".
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "sim/core/status.h"

namespace servesim {

Status WriteFileWith(const std::string& path,
                     const std::function<void(std::ostream&)>& write);
Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace servesim
