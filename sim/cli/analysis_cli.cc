// Shared CLI glue for the analysis subcommands (see analysis_cli.h).
#include "sim/cli/analysis_cli.h"
#include "sim/core/json_view.h"

#include <cmath>
#include <sstream>

#include "sim/analysis/report_data.h"
#include "sim/cli/commands.h"
#include "sim/scenario/run_memory.h"
#include "sim/report/html_report.h"

namespace servesim {

StatusOr<Scenario> LoadScenarioArg(const std::string& path,
                                   const std::vector<std::string>& sets,
                                   const ScenarioParseOptions& options) {
  StatusOr<Scenario> sc =
      path.empty() ? ParseScenario(EmbeddedDefaultScenario(),
                                   "<embedded default: scenarios/default_chat.json>", sets,
                                   options)
                   : LoadScenarioFile(path, sets, options);
  if (!sc.ok()) return sc;
  // One run at a time is the floor: a scenario whose single run cannot fit
  // is refused before any of its replications start.
  if (Status st = CheckRunMemory(*sc); !st.ok()) return st;
  return sc;
}

Status DisaggregationUnsupported(const Scenario& sc, const std::string& command) {
  return Status::Error(sc.file + ": /disaggregation: `servesim " + command +
                       "` sizes co-located replicas; size prefill/decode pools with "
                       "`servesim capacity SCENARIO --target-rate R --slo ...`, which "
                       "finds the cheapest P:D split");
}

Status WriteReportFiles(const nlohmann::json& data, const std::string& json_path,
                        const std::string& html_path) {
  if (!json_path.empty()) {
    Status st = WriteTextFile(json_path, DumpOutputJson(data, 2) + "\n");
    if (!st.ok()) return st;
  }
  if (!html_path.empty()) {
    StatusOr<std::string> page = RenderHtmlReport(data);
    if (!page.ok()) return page.status();
    return WriteTextFile(html_path, *page);
  }
  return Status::Ok();
}

StatusOr<std::vector<double>> ParseNumberList(const std::string& text,
                                              const std::string& what) {
  std::vector<double> xs;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    double x = 0;
    try {
      x = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || !std::isfinite(x) || x <= 0) {
      return Status::Error(what + " " + text +
                           ": expected comma-separated numbers > 0, got \"" +
                           item + "\"");
    }
    xs.push_back(x);
  }
  if (xs.empty()) {
    return Status::Error(what + ": expected comma-separated numbers > 0, got \"" +
                         text + "\"");
  }
  return xs;
}

void AddAnalysisOptions(CLI::App* cmd, AnalysisCliOptions* o, const char* per) {
  cmd->add_option("scenario", o->scenario, "Scenario JSON file (default: embedded chat)");
  cmd->add_option("--set", o->sets, "Override a scenario value (repeatable)")
      ->check(NotAnOption());
  cmd->add_option("-r,--replications", o->replications,
                  std::string("Independent replications ") + per +
                      "; replication k uses seed = scenario seed + k")
      ->check(NumberIn(1, 1000));
  cmd->add_option("-j,--jobs", o->jobs, "Threads (default: all cores)")
      ->check(NumberIn(0, 4096));
  cmd->add_option("--json", o->json, "Write the report data as JSON")
      ->check(NotAnOption());
  cmd->add_option("--html", o->html, "Write the self-contained HTML report")
      ->check(NotAnOption());
  cmd->add_flag("-q,--quiet", o->quiet,
                "No progress on stderr (shown after ~2 s; the report is printed as usual)");
}

}  // namespace servesim
