// Tests for the `servesim fit` writers: the fitted scenario loads with the
// project's scenario loader in every arrival case, the console report has
// the planner's numbers, and the SVG is sane for any data.
#include "sim/report/log_fit_writers.h"

#include <gtest/gtest.h>

#include <sstream>

#include "sim/report/histogram_svg.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

LogFit MakeFit(std::vector<double> prompt, std::vector<double> completion,
               const std::vector<double>& times) {
  LogFit fit;
  fit.records = fit.data_lines = static_cast<int64_t>(prompt.size());
  fit.prompt = FitLengths(std::move(prompt));
  fit.completion = FitLengths(std::move(completion));
  fit.arrival = FitArrivals(times);
  return fit;
}

Scenario MustLoad(const LogFit& fit) {
  const std::string text = FitScenarioJson(fit, "t.jsonl").dump(2);
  StatusOr<Scenario> sc = ParseScenario(text, "<fit>", {});
  EXPECT_TRUE(sc.ok()) << sc.status().message() << "\n" << text;
  if (!sc.ok()) throw std::runtime_error(sc.status().message());
  return std::move(sc.value());
}

TEST(FitScenarioJson, LoadsWithGammaArrivalsAndClampedLognormals) {
  const LogFit fit =
      MakeFit({100, 200, 300, 1000}, {10, 20, 5, 40}, {0, 0.1, 0.5, 0.6});
  const nlohmann::json j = FitScenarioJson(fit, "t.jsonl");
  EXPECT_EQ(j["model"], "llama-3.1-8b");
  EXPECT_EQ(j["hardware"]["gpu"], "h200");
  EXPECT_EQ(j["workload"]["num_requests"], 4);
  EXPECT_EQ(j["workload"]["arrival"]["process"], "gamma");
  EXPECT_DOUBLE_EQ(j["workload"]["arrival"]["rate"].get<double>(), 5.0);
  EXPECT_EQ(j["workload"]["input_len"]["dist"], "lognormal");
  EXPECT_EQ(j["workload"]["input_len"]["mu"], fit.prompt.lognormal.mu);
  EXPECT_EQ(j["workload"]["input_len"]["min"], 100);
  EXPECT_EQ(j["workload"]["output_len"]["max"], 40);
  const Scenario sc = MustLoad(fit);
  EXPECT_EQ(sc.workload.num_requests, 4);
  EXPECT_NE(sc.ArrivalDescription().find("gamma"), std::string::npos);
  EXPECT_NEAR(sc.OfferedRate(), 5.0, 1e-9);
}

TEST(FitScenarioJson, LoadsWithoutTimestampsAndWithOneLength) {
  const LogFit fit = MakeFit({64, 64}, {8, 9}, {});
  const nlohmann::json j = FitScenarioJson(fit, "t.csv");
  EXPECT_EQ(j["workload"]["arrival"]["process"], "poisson");
  EXPECT_EQ(j["workload"]["input_len"]["dist"], "fixed");
  EXPECT_EQ(j["workload"]["input_len"]["value"], 64);
  MustLoad(fit);
  // Evenly spaced arrivals have no variance: a constant-rate process.
  const LogFit even = MakeFit({1, 2, 3}, {1, 2, 3}, {0, 1, 2});
  EXPECT_EQ(FitScenarioJson(even, "t")["workload"]["arrival"]["process"],
            "constant");
  MustLoad(even);
}

TEST(WriteFitReport, ShowsPercentilesRateAndReuse) {
  LogFit fit = MakeFit({100, 200, 300, 1000}, {10, 20, 5, 40}, {0, 1, 2, 4});
  ReuseCounter reuse;
  reuse.Add({1, 2});
  reuse.Add({1, 3});
  fit.reuse = reuse.Result(512);
  std::ostringstream os;
  WriteFitReport(fit, "t.jsonl (mooncake)", os);
  const std::string s = os.str();
  for (const char* part :
       {"t.jsonl (mooncake): 4 requests", "p50", "p99.9", "max", "share < 50",
        "lognormal mu", "KS distance", "0.750 req/s", "burstiness",
        "Prefix reuse: 25.0% of 4 hash ids"}) {
    EXPECT_NE(s.find(part), std::string::npos) << part << "\n" << s;
  }
}

size_t Count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t p = s.find(part); p != std::string::npos; p = s.find(part, p + 1))
    ++n;
  return n;
}

TEST(HistogramSvg, SaneForAnyData) {
  const std::vector<std::vector<double>> samples[] = {
      {{100, 150, 2000, 14050}, {1, 5, 1000}},
      {{7}, {7}},
      {{}, {}},
      {{1e12}, {0.5}},
  };
  for (const auto& s : samples) {
    std::ostringstream os;
    WriteLengthHistogramSvg(s[0], s[1], os);
    const std::string svg = os.str();
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
    EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""),
              std::string::npos);
    EXPECT_EQ(Count(svg, "</svg>"), 1u);
    EXPECT_EQ(Count(svg, "<text"), Count(svg, "</text>"));
    EXPECT_EQ(Count(svg, "<g "), Count(svg, "</g>"));
    EXPECT_EQ(Count(svg, "tokens (log scale)"), 2u);
    EXPECT_EQ(Count(svg, "share of requests"), 2u);
    EXPECT_NE(svg.find("prompt tokens"), std::string::npos);
    EXPECT_NE(svg.find("completion tokens"), std::string::npos);
    EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
    EXPECT_EQ(svg.find("inf"), std::string::npos) << svg;
    EXPECT_EQ(svg.find("href"), std::string::npos);  // self-contained
    EXPECT_EQ(Count(svg, "<rect"),
              1 + (s[0].empty() ? 0u : 1u) + (s[1].empty() ? 0u : 1u) +
                  (s[0].size() > 1 ? 3u : 0u) + (s[1].size() > 1 ? 2u : 0u))
        << svg;
  }
  std::ostringstream os;
  WriteLengthHistogramSvg({100, 150, 2000, 14050}, {1, 5, 1000}, os);
  for (const char* tick : {">1<", ">10<", ">100<", ">1k<", ">10k<", ">100k<"}) {
    EXPECT_NE(os.str().find(tick), std::string::npos) << tick;
  }
}

}  // namespace
}  // namespace servesim
