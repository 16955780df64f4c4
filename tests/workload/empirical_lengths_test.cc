// Tests for the empirical length distribution and its CSV column reader:
// agreement with the real ShareGPT trace parsed independently here, and one
// temp file per way a CSV can be wrong.
#include "sim/workload/empirical_lengths.h"

#include <gtest/gtest.h>

#include "tests/text_assertions.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/paths.h"
#include "sim/core/status.h"
#include "sim/workload/length_distribution.h"

namespace servesim {
namespace {

constexpr char kShareGpt[] =
    "../shared/traces/sharegpt_8k_filtered_stats_llama2_tokenizer.csv";

using testing::Contains;

std::string WriteTemp(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + "servesim_empirical_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

std::string ReadError(const std::string& path, const std::string& column) {
  try {
    ReadLengthColumn(path, column);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string TracePath() {
  const std::string path = ResolveDataPath(kShareGpt);
  return std::filesystem::exists(path) ? path : "";
}

// The column parsed the simple way, as an independent reference.
std::vector<int32_t> ReferenceColumn(const std::string& path, int index) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  std::vector<int32_t> out;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string field;
    for (int i = 0; i <= index; ++i) std::getline(row, field, ',');
    out.push_back(std::stoi(field));
  }
  return out;
}

TEST(EmpiricalLengthsTest, ReadsEveryRowOfTheShareGptTrace) {
  const std::string path = TracePath();
  if (path.empty()) GTEST_SKIP() << kShareGpt << " is not present";
  const std::vector<int32_t> prefill =
      ReadLengthColumn(path, "num_prefill_tokens");
  EXPECT_EQ(prefill.size(), 30731u);
  EXPECT_EQ(prefill, ReferenceColumn(path, 0));
  EXPECT_EQ(ReadLengthColumn(path, "num_decode_tokens"),
            ReferenceColumn(path, 1));
}

TEST(EmpiricalLengthsTest, SampleMeanMatchesTheColumnMean) {
  const std::string path = TracePath();
  if (path.empty()) GTEST_SKIP() << kShareGpt << " is not present";
  const std::vector<int32_t> column = ReferenceColumn(path, 0);
  double sum = 0, sum2 = 0;
  for (int32_t x : column) sum += x, sum2 += double(x) * x;
  const double mean = sum / column.size();
  const double sd = std::sqrt(sum2 / column.size() - mean * mean);

  const nlohmann::json j = {{"dist", "empirical"},
                            {"path", kShareGpt},
                            {"column", "num_prefill_tokens"}};
  auto d = MakeLengthDistribution(JsonView(j, "s.json", "/workload/input_len"));
  const int n = 400000;
  Rng rng(9, "input_len");
  double s = 0;
  std::vector<int32_t> xs(n);
  for (auto& x : xs) s += (x = d->Sample(rng));
  // Resampling with replacement: the sd of the sample mean is sd/sqrt(n).
  const double tolerance = 0.01 * mean;
  ASSERT_GT(tolerance, 5 * sd / std::sqrt(n));
  EXPECT_NEAR(s / n, mean, tolerance);
  // Every draw is a value of the column, and both extremes are drawn.
  const std::set<int32_t> values(column.begin(), column.end());
  for (int32_t x : xs) ASSERT_TRUE(values.count(x)) << x;
  EXPECT_EQ(*std::min_element(xs.begin(), xs.end()), *values.begin());
  EXPECT_EQ(*std::max_element(xs.begin(), xs.end()), *values.rbegin());
  EXPECT_TRUE(Contains(d->Describe(), {"num_prefill_tokens", "30731 rows"}));
}

TEST(EmpiricalLengthsTest, RealTraceRatioColumnIsRejected) {
  const std::string path = TracePath();
  if (path.empty()) GTEST_SKIP() << kShareGpt << " is not present";
  EXPECT_TRUE(Contains(ReadError(path, "pd_ratio"),
                       {":2: column pd_ratio: expected a non-negative integer",
                        "got '0.0806100217864923'"}));
}

TEST(EmpiricalLengthsTest, ClampsApplyToDrawnValues) {
  const std::string path = WriteTemp("clamp.csv", "n\n1\n50\n5000\n");
  const nlohmann::json j = {{"dist", "empirical"},
                            {"path", path},
                            {"column", "n"},
                            {"min", 10},
                            {"max", 100}};
  auto d = MakeLengthDistribution(JsonView(j, "s.json"));
  Rng rng(1, "input_len");
  std::set<int32_t> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(d->Sample(rng));
  EXPECT_EQ(seen, (std::set<int32_t>{10, 50, 100}));
}

TEST(EmpiricalLengthsTest, AcceptsIntegralFloatsCrlfQuotesAndTrailingBlank) {
  const std::string path = WriteTemp(
      "ok.csv", "\"name, quoted\",n\r\n\"a,b\",1730.0\r\nc,  12 \r\n\r\n");
  EXPECT_EQ(ReadLengthColumn(path, "n"), (std::vector<int32_t>{1730, 12}));
}

TEST(EmpiricalLengthsTest, WrongFieldCountNamesTheLine) {
  const std::string path = WriteTemp("fields.csv", "a,b\n1,2\n3\n");
  EXPECT_EQ(ReadError(path, "a"),
            path + ":3: expected 2 fields (as in the header), got 1");
  const std::string extra = WriteTemp("extra.csv", "a,b\n1,2,3\n");
  EXPECT_TRUE(
      Contains(ReadError(extra, "b"), {":2: expected 2 fields", "got 3"}));
}

TEST(EmpiricalLengthsTest, BadValuesAreNeverSkipped) {
  for (const char* value : {"abc", "-5", "12abc", "12.5", "12 34", "", "nan",
                            "inf", "99999999999"}) {
    const std::string path =
        WriteTemp("bad.csv", std::string("a,n\nx,7\ny,") + value + "\n");
    EXPECT_TRUE(
        Contains(ReadError(path, "n"),
                 {path + ":3: column n: expected a non-negative integer",
                  "got '" + std::string(value) + "'"}))
        << value;
  }
}

TEST(EmpiricalLengthsTest, MissingColumnListsColumnsAndSuggests) {
  const std::string path =
      WriteTemp("cols.csv", "num_prefill_tokens,num_decode_tokens\n1,2\n");
  EXPECT_TRUE(Contains(ReadError(path, "num_prefil_tokens"),
                       {path + ":1: no column named \"num_prefil_tokens\"",
                        "did you mean \"num_prefill_tokens\"",
                        "num_prefill_tokens, num_decode_tokens"}));
}

TEST(EmpiricalLengthsTest, EmptyHeaderOnlyAndMissingFilesAreErrors) {
  const std::string empty = WriteTemp("empty.csv", "");
  EXPECT_TRUE(Contains(ReadError(empty, "n"), {empty + ": empty file"}));
  const std::string header = WriteTemp("header.csv", "n,m\n");
  EXPECT_EQ(ReadError(header, "n"),
            header + ": column n has no data rows (only a header)");
  const std::string missing = ::testing::TempDir() + "servesim_no_such.csv";
  EXPECT_TRUE(Contains(ReadError(missing, "n"),
                       {missing + ": cannot open: No such file"}));
}

TEST(EmpiricalLengthsTest, BlankLineBetweenRowsIsAnError) {
  const std::string path = WriteTemp("blank.csv", "n\n1\n\n2\n");
  EXPECT_EQ(ReadError(path, "n"), path + ":3: blank line between data rows");
}

TEST(EmpiricalLengthsTest, FactoryErrorsSayWhichConfigPointedThere) {
  const nlohmann::json j = {
      {"dist", "empirical"}, {"path", "no/such/trace.csv"}, {"column", "n"}};
  try {
    MakeLengthDistribution(JsonView(j, "s.json", "/workload/output_len"));
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(Contains(e.what(), {"no/such/trace.csv: cannot open",
                                    "(from s.json: /workload/output_len)"}));
  }
  const nlohmann::json no_column = {{"dist", "empirical"}, {"path", "x.csv"}};
  EXPECT_THROW(MakeLengthDistribution(JsonView(no_column, "s.json")),
               ConfigError);
}

}  // namespace
}  // namespace servesim
