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

#include <nlohmann/json.hpp>

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

  // Renders the page `width` px wide with a probe script appended that
  // measures it once the charts have drawn, and returns what it measured:
  // {"scroll": [scrollWidth, clientWidth], "tables": {id: rows},
  //  "canvases": {id: {"series": [...], "labels": [[x, y, w, h, text]...],
  //  "wanted": n}}, "summaries": [note cells' visible text]}.
  nlohmann::json Probe(const std::string& page, int width) {
    static const char kProbe[] = R"js(
window.addEventListener('load', function () { setTimeout(function () {
  var d = document.documentElement, out = {scroll: [d.scrollWidth, d.clientWidth],
                                           tables: {}, canvases: {}, summaries: []};
  document.querySelectorAll('table').forEach(function (t, i) {
    out.tables[t.id || 'table' + i] = t.rows.length;
  });
  document.querySelectorAll('canvas').forEach(function (c) {
    out.canvases[c.id] = {series: JSON.parse(c.dataset.series || '[]'),
                          labels: JSON.parse(c.dataset.labels || '[]'),
                          wanted: +(c.dataset.labelsWanted || 0)};
  });
  document.querySelectorAll('td.note').forEach(function (td) {
    var s = td.querySelector('summary');
    out.summaries.push((s || td).textContent);
  });
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}, 200); });
)js";
    std::string probed = page;
    probed.insert(probed.rfind("</body>"), std::string("<script>") + kProbe + "</script>");
    const fs::path html = dir_ / "probe.html";
    std::ofstream(html) << probed;
    const std::string cmd =
        "timeout 60 " + chromium_ +
        " --headless --no-sandbox --disable-gpu --no-first-run"
        " --disable-background-networking --user-data-dir=" + (dir_ / "profile").string() +
        " --virtual-time-budget=5000 --window-size=" + std::to_string(width) +
        ",2000 --dump-dom file://" + html.string() + " > " + (dir_ / "probe_dom.html").string() +
        " 2> /dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const std::string dom = ReadFile(dir_ / "probe_dom.html");
    std::smatch m;
    if (!std::regex_search(dom, m, std::regex("<pre id=\"probe\">([^<]*)</pre>"))) {
      ADD_FAILURE() << "no probe output\n" << dom.substr(0, 2000);
      return nlohmann::json::object();
    }
    // The DOM dump escapes the text node's &, < and >; JSON has no others.
    std::string text = std::regex_replace(std::string(m[1]), std::regex("&quot;"), "\"");
    text = std::regex_replace(text, std::regex("&lt;"), "<");
    text = std::regex_replace(text, std::regex("&gt;"), ">");
    text = std::regex_replace(text, std::regex("&amp;"), "&");
    return nlohmann::json::parse(text);
  }

  std::string chromium_;
  fs::path dir_;
};

bool Overlap(const nlohmann::json& a, const nlohmann::json& b) {
  const double ax = a[0], ay = a[1], aw = a[2], ah = a[3];
  const double bx = b[0], by = b[1], bw = b[2], bh = b[3];
  return ax < bx + bw && bx < ax + aw && ay < by + bh && by < ay + ah;
}

// Reports read on paper: at a print-like width nothing runs off the right
// edge, every section has its data table, the search's Pareto points and
// the loops' N are labelled without overlaps, and the loops charts carry
// the M/M/1 curve and the saturation line.
TEST_F(ChromiumRender, ReadsAtPrintWidth) {
  nlohmann::json data = testing::SampleReportData();
  // A long note with a file path, as capacity writes for a GPU without room.
  data["capacity"]["rows"].push_back(
      {{"gpu", "l4"}, {"tp", 1}, {"fits", false},
       {"note", "weights need 16.1 GB but /etc/servesim/gpus/l4.json gives 24 GB less "
                "activations; no KV cache block fits"}});
  StatusOr<std::string> page = RenderHtmlReport(data);
  ASSERT_TRUE(page.ok()) << page.status().message();
  const nlohmann::json probe = Probe(*page, 800);
  ASSERT_TRUE(probe.contains("scroll")) << probe.dump();
  EXPECT_LE(probe["scroll"][0].get<int>(), probe["scroll"][1].get<int>()) << probe.dump();

  const nlohmann::json& tables = probe["tables"];
  EXPECT_EQ(tables.value("table-sweep", 0), 1 + 10) << tables.dump();
  EXPECT_EQ(tables.value("table-loops", 0), 2 + 7) << tables.dump();
  EXPECT_EQ(tables.value("table-search", 0), 1 + 6) << tables.dump();

  ASSERT_FALSE(probe["summaries"].empty());
  EXPECT_NE(probe["summaries"].dump().find("does not fit: weights need 16.1 GB but"),
            std::string::npos) << probe["summaries"].dump();
  for (const auto& s : probe["summaries"]) {
    EXPECT_EQ(s.get<std::string>().find('/'), std::string::npos) << s;
    EXPECT_LE(s.get<std::string>().size(), 60u) << s;
  }

  int search_charts = 0, loops_charts = 0;
  for (auto it = probe["canvases"].begin(); it != probe["canvases"].end(); ++it) {
    const nlohmann::json& c = *it;
    const nlohmann::json& labels = c["labels"];
    for (size_t i = 0; i < labels.size(); ++i) {
      for (size_t j = i + 1; j < labels.size(); ++j) {
        EXPECT_FALSE(Overlap(labels[i], labels[j]))
            << it.key() << ": " << labels[i].dump() << " overlaps " << labels[j].dump();
      }
    }
    if (it.key().rfind("chart-search-", 0) == 0 && c["wanted"].get<int>() > 0) {
      ++search_charts;
      EXPECT_EQ(c["wanted"].get<int>(), 2) << it.key();  // the sample's front
      EXPECT_EQ(labels.size(), 2u) << it.key() << " " << labels.dump();
      for (const auto& l : labels) EXPECT_NE(l[4].get<std::string>().find("h200"), std::string::npos);
    }
    if (it.key().rfind("chart-loops-", 0) == 0) {
      ++loops_charts;
      EXPECT_EQ(labels.size(), 7u) << it.key() << " " << labels.dump();  // N = 1 ... 64
      const std::string series = c["series"].dump();
      EXPECT_NE(series.find("saturation"), std::string::npos) << series;
      if (series.find("Queue") != std::string::npos || series.find("mean") != std::string::npos) {
        EXPECT_NE(series.find("M/M/1"), std::string::npos) << series;
      }
    }
  }
  EXPECT_EQ(search_charts, 2);
  EXPECT_EQ(loops_charts, 2);
}

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
