// What `servesim loops` prints and writes: the side-by-side table and the
// report data (the "loops" section of the HTML report).
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "sim/analysis/loops.h"

namespace servesim {

void WriteLoopsTable(const Scenario& sc, const LoopsResult& r, std::ostream& os);
nlohmann::json LoopsReportJson(const Scenario& sc, const LoopsResult& r);

}  // namespace servesim
