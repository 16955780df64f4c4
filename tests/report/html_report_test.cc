// Tests for the HTML report writer: the page is self-contained (Chart.js
// inlined, nothing fetched), data cannot break out of its script element,
// and a missing library or a malformed section is an error with a path.
// The browser check is in html_report_chromium_test.cc.
#include "sim/report/html_report.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "tests/report/html_report_sample.h"

namespace servesim {
namespace {

using nlohmann::json;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t i = text.find(what); i != std::string::npos;
       i = text.find(what, i + 1)) {
    ++n;
  }
  return n;
}

// Points SERVESIM_CHARTJS at a small stand-in library for the test's
// duration, so these tests need no package and can find it in the page.
class HtmlReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("SERVESIM_CHARTJS");
    had_old_ = old != nullptr;
    if (had_old_) old_ = old;
    lib_ = (std::filesystem::temp_directory_path() /
            ("fake_chart_" + std::to_string(::getpid()) + ".js"))
               .string();
    std::ofstream(lib_) << "/* FAKE-CHART-JS */ window.Chart = function () {};";
    ::setenv("SERVESIM_CHARTJS", lib_.c_str(), 1);
  }
  void TearDown() override {
    std::filesystem::remove(lib_);
    if (had_old_) {
      ::setenv("SERVESIM_CHARTJS", old_.c_str(), 1);
    } else {
      ::unsetenv("SERVESIM_CHARTJS");
    }
  }

  std::string MustRender(const json& data) {
    StatusOr<std::string> page = RenderHtmlReport(data);
    EXPECT_TRUE(page.ok()) << page.status().message();
    return page.ok() ? *page : "";
  }

  std::string ErrorOf(const json& data) {
    StatusOr<std::string> page = RenderHtmlReport(data);
    EXPECT_FALSE(page.ok());
    return page.ok() ? "" : page.status().message();
  }

  std::string lib_;
  bool had_old_ = false;
  std::string old_;
};

TEST_F(HtmlReportTest, InlinesTheLibraryAndFetchesNothing) {
  const std::string page = MustRender(testing::SampleReportData());
  EXPECT_NE(page.find("<script>\n/* FAKE-CHART-JS */"), std::string::npos);
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_FALSE(std::regex_search(page, std::regex("<script[^>]*\\ssrc=")));
  EXPECT_FALSE(std::regex_search(page, std::regex("<link|@import|url\\(")));
  // One frame per section, the verdict slot, and the context block.
  for (const char* id : {"sec-sweep", "sec-cdfs", "sec-timeseries",
                         "sec-batch", "sec-loops", "sec-capacity",
                         "servesim-check"}) {
    EXPECT_NE(page.find(std::string("id=\"") + id + "\""), std::string::npos)
        << id;
  }
  EXPECT_NE(page.find("Arrival process and rate"), std::string::npos);
  EXPECT_NE(page.find("31.0%"), std::string::npos);  // prefix hit rate
  EXPECT_NE(page.find("p50, p90, p99"), std::string::npos);
  EXPECT_NE(page.find("<tr class=\"best\"><td>h200</td>"), std::string::npos);
}

TEST_F(HtmlReportTest, InlinesTheDebianChartJs) {
  ::unsetenv("SERVESIM_CHARTJS");
  EXPECT_EQ(ChartJsPath(), kDefaultChartJsPath);
  if (!std::filesystem::exists(kDefaultChartJsPath)) {
    GTEST_SKIP() << "libjs-chart.js is not installed";
  }
  const std::string page = MustRender(testing::SampleReportData());
  EXPECT_NE(page.find("Chart.js v3"), std::string::npos);
  EXPECT_FALSE(std::regex_search(page, std::regex("<script[^>]*\\ssrc=")));
  EXPECT_FALSE(std::regex_search(page, std::regex("<link")));
}

TEST_F(HtmlReportTest, DataCannotCloseItsScriptElement) {
  json data = testing::SampleReportData();
  data["title"] = "x</script><script>alert(1)</script>";
  data["context"]["scenario"] = "<!--</SCRIPT>";
  data["loops"]["explanation"] = "a < b & c";
  const std::string page = MustRender(data);
  // Only our six script elements close: hook, library, data, labels, charts,
  // check.
  EXPECT_EQ(Count(page, "</script"), 6u);
  EXPECT_EQ(Count(page, "</SCRIPT"), 0u);
  EXPECT_EQ(page.find("<!--"), std::string::npos);
  EXPECT_NE(page.find("x\\u003c/script>\\u003cscript>alert(1)"),
            std::string::npos);
  EXPECT_NE(page.find("<h1>x&lt;/script&gt;&lt;script&gt;alert(1)"),
            std::string::npos);
  EXPECT_NE(page.find("a &lt; b &amp; c"), std::string::npos);
}

TEST_F(HtmlReportTest, RendersOnlyThePresentSections) {
  const std::string page =
      MustRender({{"cdfs", {{"ttft_ms", {{1.0, 0.5}, {2.0, 1.0}}}}}});
  EXPECT_NE(page.find("id=\"sec-cdfs\""), std::string::npos);
  EXPECT_EQ(page.find("id=\"sec-sweep\""), std::string::npos);
  EXPECT_EQ(page.find("id=\"sec-capacity\""), std::string::npos);
  EXPECT_NE(page.find("<title>servesim report</title>"), std::string::npos);
  // Nulls are gaps (NaN serialises as null), not errors.
  MustRender({{"sweep",
               {{"knee_rate", nullptr},
                {"points", {{{"rate", 1.0},
                             {"metrics", {{"ttft_ms", {{"p99", {{"mean", nullptr}}}}}}}}}}}}});
}

TEST_F(HtmlReportTest, SweepListsItsUnstablePointsAndWhy) {
  const json stable = {
      {"rate", 5.0}, {"utilization", 0.5}, {"unstable", false}};
  const json over = {{"rate", 10.0},
                     {"utilization", 1.05},
                     {"stable_fraction", 0},
                     {"unstable", true},
                     {"unstable_reason",
                      "the offered 10 req/s is at or above mu's lower bound"}};
  // Older data without the flag: a stable fraction below 1 says it.
  const json old = {
      {"rate", 9.0}, {"utilization", 0.95}, {"stable_fraction", 0.6}};
  const std::string page =
      MustRender({{"sweep", {{"points", {stable, over, old}}}}});
  EXPECT_NE(page.find("<b>UNSTABLE</b>"), std::string::npos);
  EXPECT_NE(
      page.find(
          "<li>10.0 req/s (&rho; = 1.05): the offered 10 req/s is at or above "
          "mu&#39;s lower bound</li>"),
      std::string::npos);
  EXPECT_NE(page.find("<li>9 req/s (&rho; = 0.95)</li>"), std::string::npos);
  EXPECT_EQ(page.find("<li>5 req/s"), std::string::npos);
  // A stable sweep has no such list.
  EXPECT_EQ(
      MustRender({{"sweep", {{"points", {stable}}}}}).find("<b>UNSTABLE</b>"),
      std::string::npos);
  EXPECT_NE(
      ErrorOf({{"sweep", {{"points", {{{"rate", 1.0}, {"unstable", "yes"}}}}}}})
          .find("unstable"),
      std::string::npos);
}

TEST_F(HtmlReportTest, MissingLibraryNamesThePathAndPackage) {
  ::setenv("SERVESIM_CHARTJS", "/no/such/dir/chart.min.js", 1);
  const std::string err = ErrorOf(testing::SampleReportData());
  EXPECT_NE(err.find("/no/such/dir/chart.min.js"), std::string::npos) << err;
  EXPECT_NE(err.find("libjs-chart.js"), std::string::npos) << err;
}

TEST_F(HtmlReportTest, LibraryWithAClosingTagIsRefused) {
  std::ofstream(lib_) << "var s = '</Script>';";
  EXPECT_NE(ErrorOf(json::object()).find("cannot inline"), std::string::npos);
}

TEST_F(HtmlReportTest, MalformedSectionNamesTheJsonPath) {
  const json points = {{{"rate", "fast"}}};
  const struct {
    json data;
    const char* expect;
  } cases[] = {
      {json::array(), "report data: /: expected an object, got an array"},
      {{{"cdf", json::object()}}, "/cdf: unknown key (did you mean \"cdfs\"?)"},
      {{{"title", 3}}, "/title: expected a string, got 3"},
      {{{"sweep", {{"points", points}}}},
       "/sweep/points/0/rate: expected a number >= 0, got \"fast\""},
      {{{"sweep", {{"points", json::array({{{"rate", 1},
                                            {"metrics", {{"ttft_ms", 5}}}}})}}}},
       "/sweep/points/0/metrics/ttft_ms: expected an object, got 5"},
      {{{"sweep", {{"points", json::array()}, {"theory", {{"mm1_wait_ms", {{1}}}}}}}},
       "/sweep/theory/mm1_wait_ms/0: expected [number, number], got an array of 1"},
      {{{"cdfs", {{"ttft_ms", {{1.0, "a"}}}}}}, "/cdfs/ttft_ms/0: expected"},
      {{{"timeseries", {{"t_s", {0, 1}}, {"kv_usage", {0.5}}}}},
       "/timeseries/kv_usage: expected an array as long as t_s (2)"},
      {{{"timeseries", {{"t_s", {0}}, {"kv_usage", {50}}}}},
       "/timeseries/kv_usage/0: expected a number in [0, 1], got 50"},
      {{{"batch_size_hist", {{1, 2}, "x"}}},
       "/batch_size_hist/1: expected [number, number], got \"x\""},
      {{{"loops", {{"points", {{{"concurrency", 4}}}}}}},
       "/loops/points/0/throughput_rps: expected a number >= 0, got nothing"},
      {{{"capacity", {{"rows", {{{"tp", 1}}}}}}},
       "/capacity/rows/0/gpu: expected a non-empty string"},
      {{{"context", {{"percentiles", "p99"}}}},
       "/context/percentiles: expected a non-empty array of numbers"},
      {{{"context", {{"extra", {1, 2}}}}},
       "/context/extra: expected a string or a number, got an array"},
  };
  for (const auto& c : cases) {
    const std::string err = ErrorOf(c.data);
    EXPECT_NE(err.find(c.expect), std::string::npos)
        << "data: " << c.data.dump() << "\nerror: " << err;
  }
}

}  // namespace
}  // namespace servesim
