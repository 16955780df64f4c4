// What `servesim sweep` prints and writes: the console table, one CSV row
// per point, and the report data (the --json file and the HTML input).
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "sim/analysis/sweep.h"

namespace servesim {

void WriteSweepTable(const Scenario& sc, const SweepResult& r, std::ostream& os);
void WriteSweepCsv(const SweepResult& r, std::ostream& os);
// The whole report data object (html_report.h schema).
nlohmann::json SweepReportJson(const Scenario& sc, const SweepResult& r);

}  // namespace servesim
