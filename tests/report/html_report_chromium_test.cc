// Opens the full sample report in headless Chromium and reads back the
// verdict the page writes into <pre id="servesim-check"> (see
// html_report_js.cc): every chart must have drawn coloured (data) pixels,
// and no JavaScript error may have happened. Skipped where Chromium or
// libjs-chart.js is missing; CI installs both.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "sim/report/html_report.h"
#include "tests/report/html_report_sample.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

// Charts in the full sample: sweep (throughput + 4 metrics), 3 CDFs,
// KV + queue, batch sizes, 2 loop charts, 2 search fronts, the latency-vs-
// rate trails of one search candidate (1 SLO term) and one capacity row (2).
constexpr int kSampleCharts = 18;
// A plot whose data drew has thousands of coloured pixels; axes and text
// alone have none.
constexpr int kMinColouredPixels = 300;

std::string FindChromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (fs::exists(path)) return path;
  }
  return "";
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class ChromiumRender : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = FindChromium();
    if (chromium_.empty()) GTEST_SKIP() << "chromium is not installed";
    if (!fs::exists(ChartJsPath())) GTEST_SKIP() << ChartJsPath() << " missing";
    std::string dir = (fs::temp_directory_path() / "servesim_report_XXXXXX");
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    if (!dir_.empty() && !std::getenv("SERVESIM_KEEP_REPORT")) {
      fs::remove_all(dir_);
    }
  }

  // Renders the page and returns the dumped DOM; the console log goes to
  // dir_/console.log.
  std::string DumpDom(const std::string& page) {
    const fs::path html = dir_ / "report.html";
    std::ofstream(html) << page;
    const std::string cmd =
        "timeout 60 " + chromium_ +
        " --headless --no-sandbox --disable-gpu --no-first-run"
        " --disable-background-networking --user-data-dir=" +
        (dir_ / "profile").string() +
        " --virtual-time-budget=5000 --window-size=1280,2000"
        " --enable-logging=stderr --v=0 --dump-dom file://" +
        html.string() + " > " + (dir_ / "dom.html").string() + " 2> " +
        (dir_ / "console.log").string();
    const int rc = std::system(cmd.c_str());
    EXPECT_EQ(rc, 0) << cmd << "\n" << ReadFile(dir_ / "console.log");
    return ReadFile(dir_ / "dom.html");
  }

  std::string chromium_;
  fs::path dir_;
};

TEST_F(ChromiumRender, EveryChartDrawsWithoutJavaScriptErrors) {
  StatusOr<std::string> page = RenderHtmlReport(testing::SampleReportData());
  ASSERT_TRUE(page.ok()) << page.status().message();
  const std::string dom = DumpDom(*page);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      dom, m, std::regex("<pre id=\"servesim-check\"[^>]*>([^<]*)</pre>")))
      << dom.substr(0, 2000);
  const std::string verdict = m[1];
  ASSERT_NE(verdict, "pending") << "the page script never finished";

  ASSERT_TRUE(std::regex_search(verdict, m, std::regex("charts: (\\d+)")));
  EXPECT_EQ(std::stoi(m[1]), kSampleCharts) << verdict;
  const std::regex canvas("canvas (\\S+) ink=(\\d+) colour=(\\d+)");
  int seen = 0;
  for (auto it = std::sregex_iterator(verdict.begin(), verdict.end(), canvas);
       it != std::sregex_iterator(); ++it, ++seen) {
    EXPECT_GT(std::stoi((*it)[3]), kMinColouredPixels)
        << (*it)[1] << " drew no data\n" << verdict;
  }
  EXPECT_EQ(seen, kSampleCharts) << verdict;
  EXPECT_NE(verdict.find("js-errors: 0"), std::string::npos) << verdict;

  // Errors thrown before the hook ran would only show in Chromium's log.
  const std::string log = ReadFile(dir_ / "console.log");
  EXPECT_EQ(log.find("Uncaught"), std::string::npos) << log;
}

// Gaps, single points and empty series are drawn without errors.
TEST_F(ChromiumRender, SparseDataDrawsWithoutErrors) {
  const nlohmann::json gap = {{"mean", nullptr}};
  StatusOr<std::string> page = RenderHtmlReport(
      {{"sweep",
        {{"points",
          {{{"rate", 1.0}},
           {{"rate", 2.0},
            {"metrics", {{"ttft_ms", {{"p50", gap}, {"p99", {{"mean", 0}}}}},
                         {"queue_ms", {{"mean", {{"mean", 3.0}}}}}}}}}},
         {"theory", {{"mm1_wait_ms", nlohmann::json::array()}}}}},
       {"cdfs", {{"ttft_ms", nlohmann::json::array()}, {"odd", {{0.0, 0.0}, {1.0, 1.0}}}}},
       {"timeseries", {{"t_s", {0.0}}, {"waiting", {2.0}}}},
       {"batch_size_hist", nlohmann::json::array()},
       {"loops", {{"points", {{{"concurrency", 1}, {"throughput_rps", 0}}}}}},
       {"capacity", {{"rows", nlohmann::json::array()}}}});
  ASSERT_TRUE(page.ok()) << page.status().message();
  const std::string dom = DumpDom(*page);
  EXPECT_NE(dom.find("js-errors: 0"), std::string::npos)
      << dom.substr(dom.size() > 3000 ? dom.size() - 3000 : 0);
}

// The verdict must catch a failure, or the test above proves nothing.
TEST_F(ChromiumRender, VerdictReportsErrors) {
  StatusOr<std::string> page = RenderHtmlReport(
      {{"cdfs", {{"ttft_ms", {{1.0, 0.5}, {2.0, 1.0}}}}}});
  ASSERT_TRUE(page.ok()) << page.status().message();
  // One error the page script catches (a builder throws) and one it does
  // not (a later script element).
  std::string broken = std::regex_replace(
      *page, std::regex("function buildCdfs\\(cdfs\\) \\{"),
      "function buildCdfs(cdfs) { undefinedFunction();");
  broken = std::regex_replace(broken, std::regex("</body>"),
                              "<script>alsoUndefined();</script></body>");
  const std::string dom = DumpDom(broken);
  EXPECT_NE(dom.find("js-errors: 2"), std::string::npos)
      << dom.substr(dom.size() > 2000 ? dom.size() - 2000 : 0);
  EXPECT_NE(dom.find("charts: 0"), std::string::npos);
}

}  // namespace
}  // namespace servesim
