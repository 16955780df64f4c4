// Assembles the self-contained HTML report (see html_report.h): the static
// body, the error hook, the inlined Chart.js, the data as JSON, the script
// that draws the charts, and the self-check verdict, in that order.
#include "sim/report/html_report.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sim/report/html_report_internal.h"

namespace servesim {
namespace {

namespace internal = html_report_internal;

bool ContainsScriptClose(const std::string& text) {
  for (size_t i = text.find("</"); i != std::string::npos;
       i = text.find("</", i + 1)) {
    static const char kTag[] = "script";
    size_t k = 0;
    while (k < 6 && i + 2 + k < text.size() &&
           std::tolower(static_cast<unsigned char>(text[i + 2 + k])) ==
               kTag[k]) {
      ++k;
    }
    if (k == 6) return true;
  }
  return false;
}

StatusOr<std::string> ReadChartJs() {
  const std::string path = ChartJsPath();
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || text.str().empty()) {
    return Status::Error(
        "cannot read Chart.js from " + path +
        " (install the Debian package libjs-chart.js, or set SERVESIM_CHARTJS "
        "to a Chart.js 3.x UMD file)");
  }
  // Inlined verbatim, so a closing tag inside it would end the script early.
  if (ContainsScriptClose(text.str())) {
    return Status::Error(path + ": contains \"</script\"; cannot inline it");
  }
  return text.str();
}

// JSON that cannot end its <script> element: '<' appears in JSON only inside
// strings, where \u003c means the same character, so "</script" and "<!--"
// both vanish. Invalid UTF-8 is replaced rather than thrown.
std::string EmbedJson(const nlohmann::json& data) {
  const std::string text =
      data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + 64);
  for (char ch : text) {
    if (ch == '<') {
      out += "\\u003c";
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

std::string ChartJsPath() {
  const char* env = std::getenv("SERVESIM_CHARTJS");
  return env && *env ? env : kDefaultChartJsPath;
}

StatusOr<std::string> RenderHtmlReport(const nlohmann::json& data) {
  Status valid = CatchConfigErrors([&] {
    internal::ValidateReportData(data);
    return true;
  }).status();
  if (!valid.ok()) return valid;
  StatusOr<std::string> chartjs = ReadChartJs();
  if (!chartjs.ok()) return chartjs.status();

  const std::string title = internal::StringOr(data, "title", "servesim report");
  std::string page;
  page.reserve(chartjs->size() + 65536);
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<title>" + internal::HtmlEscape(title) + "</title>\n";
  page += "<style>" + std::string(internal::kReportStyle) + "</style>\n";
  page += "<script>" + std::string(internal::kErrorHookScript) + "</script>\n";
  page += "</head>\n<body>\n" + internal::RenderBody(data);
  page += "<script>\n" + *chartjs + "\n</script>\n";
  page += "<script type=\"application/json\" id=\"servesim-data\">" +
          EmbedJson(data) + "</script>\n";
  page += "<script>" + std::string(internal::kLabelScript) + "</script>\n";
  page += "<script>" + std::string(internal::kReportScript) + "</script>\n";
  page += "<script>" + std::string(internal::kVerdictScript) + "</script>\n";
  page += "</body>\n</html>\n";
  return page;
}

}  // namespace servesim
