// Glue shared by the analysis subcommands (sweep, loops, capacity): loading
// the scenario argument and writing the report files.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "sim/core/status.h"
#include "sim/scenario/scenario.h"

namespace servesim {

// Options every analysis subcommand takes.
struct AnalysisCliOptions {
  std::string scenario;
  std::vector<std::string> sets;
  int replications = 5;
  int jobs = 0;
  std::string json, html;
  bool quiet = false;  // -q: no progress on stderr (the report is printed)
};

// Registers the scenario argument, --set, -r (`per` says per what),
// -j, --json, --html and -q.
void AddAnalysisOptions(CLI::App* cmd, AnalysisCliOptions* o, const char* per);

// The file, or the embedded default scenario when `path` is empty.
// `options.defer_fit` for commands that replace the hardware (capacity
// --candidates, search --gpus/--tp): the scenario's own GPU need not hold
// the model.
StatusOr<Scenario> LoadScenarioArg(const std::string& path,
                                   const std::vector<std::string>& sets,
                                   const ScenarioParseOptions& options = {});
// capacity and search size one deployment of identical replicas; a
// disaggregated scenario is refused with one line saying so.
Status DisaggregationUnsupported(const Scenario& sc, const std::string& command);
// Writes `data` as JSON to json_path and as the HTML report to html_path;
// empty paths are skipped.
Status WriteReportFiles(const nlohmann::json& data, const std::string& json_path,
                        const std::string& html_path);
// "0.5,0.7,1" -> numbers; `what` names the option in errors.
StatusOr<std::vector<double>> ParseNumberList(const std::string& text,
                                              const std::string& what);

}  // namespace servesim
