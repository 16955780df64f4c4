// Pieces of the HTML report (see html_report.h), split so each file keeps
// one job: schema checks, the static HTML (header, tables, section frames),
// and the page's chart-building script.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace servesim::html_report_internal {

// The name errors give the data, in place of a file name.
inline constexpr char kDataName[] = "report data";

// obj[key] when it is a string, else `def` (absent and null alike).
inline std::string StringOr(const nlohmann::json& obj, const char* key,
                            const std::string& def) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : def;
}

// Checks every section's types; throws ConfigError naming the JSON path.
void ValidateReportData(const nlohmann::json& data);

// Text safe inside HTML elements and double-quoted attributes.
std::string HtmlEscape(std::string_view text);

// A table cell's number: enough digits to read, few enough to scan a
// column; null is a dash, a string is escaped.
std::string FormatNumber(const nlohmann::json& v);
// Utilization with the same digits everywhere a report prints it.
std::string FormatUtilization(const nlohmann::json& v, int digits);

// The data tables beside the charts (html_report_tables.cc): the numbers
// each chart plots, with their units, so a printout needs no console.
std::string SweepTable(const nlohmann::json& sweep);
std::string LoopsTable(const nlohmann::json& loops);

// The <body> content before the scripts: title, context block, and one
// <section id="sec-NAME"> per present section with its notes, tables, and
// an empty <div class="charts"> for the script to fill.
std::string RenderBody(const nlohmann::json& data);

// Page stylesheet.
extern const char kReportStyle[];
// Runs before Chart.js loads: collects errors for the verdict.
extern const char kErrorHookScript[];
// Defines servesimLabels: non-overlapping point labels on a chart.
extern const char kLabelScript[];
// Builds the charts from #servesim-data.
extern const char kReportScript[];
// After load, writes the pixel and error verdict into #servesim-check.
extern const char kVerdictScript[];

}  // namespace servesim::html_report_internal
