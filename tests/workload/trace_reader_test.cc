// Tests for the CSV trace readers (Azure, length tables), the bad-line
// policy every reader shares, ParseTraceOptions and format guessing.
#include "sim/workload/trace_reader.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "sim/core/paths.h"
#include "tests/workload/trace_test_util.h"

namespace servesim {
namespace {

using testing::OnlyError;
using testing::ReadTrace;
using testing::WriteTraceFile;

constexpr char kAzureHeader[] = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
constexpr char kLengthHeader[] = "num_prefill_tokens,num_decode_tokens,x\n";

std::string AzureRows(int n) {
  std::string s = kAzureHeader;
  for (int i = 0; i < n; ++i) {
    s += "2023-11-16 18:15:" + std::to_string(10 + i) + ".5000000,100,20\n";
  }
  return s;
}

TEST(AzureTraceReader, ParsesCalendarTimesExactly) {
  const auto r = ReadTrace(TraceFormat::kAzureCsv, "az_good.csv",
                           std::string(kAzureHeader) +
                               "2023-11-16 18:15:46.6805900,374,44\r\n"
                               "2023-11-16 18:15:50.9951690,396,109\n"
                               "2023-11-16 18:15:50.9951690,1,1\n"
                               "2023-12-31 23:59:59.5,7,8\n"
                               "2024-01-01 00:00:00.25,7,8\n"
                               "2024-02-28 12:00:00,7,8\n"
                               "2024-03-01 12:00:00,7,8\n\n\n");
  ASSERT_EQ(r.finish_error, "");
  ASSERT_EQ(r.records.size(), 7u);
  EXPECT_EQ(r.data_lines, 7);
  EXPECT_EQ(r.records[0].line, 2);
  EXPECT_EQ(r.records[0].timestamp_s, 0.0);
  EXPECT_EQ(r.records[0].input_tokens, 374);
  EXPECT_EQ(r.records[0].output_tokens, 44);
  EXPECT_DOUBLE_EQ(r.records[1].timestamp_s, 4.314579);
  EXPECT_EQ(r.records[2].timestamp_s, r.records[1].timestamp_s);
  EXPECT_DOUBLE_EQ(r.records[4].timestamp_s - r.records[3].timestamp_s, 0.75);
  // 2024 is a leap year: Feb 28 noon to Mar 1 noon is two days.
  EXPECT_DOUBLE_EQ(r.records[6].timestamp_s - r.records[5].timestamp_s,
                   2 * 86400.0);
  EXPECT_TRUE(r.records[0].hash_ids.empty());
}

struct BadCase {
  const char* name;
  const char* row;
  const char* message;  // part of the bad line's message
};

TEST(AzureTraceReader, CountsEveryKindOfBadLine) {
  const BadCase cases[] = {
      {"truncated", "2023-11-16 18:16:00.0,37", "expected 3 fields"},
      {"truncated_stamp", "2023-11-16 18:1", "expected 3 fields"},
      {"non_numeric", "2023-11-16 18:16:00.0,12x,5",
       "ContextTokens: expected "
       "an integer token count "
       "in [0, 16777216], got '12x'"},
      {"negative", "2023-11-16 18:16:00.0,12,-3", "GeneratedTokens"},
      {"empty_field", "2023-11-16 18:16:00.0,,5", "got ''"},
      {"bad_date", "2023-02-30 18:16:00.0,12,5", "column TIMESTAMP"},
      {"bad_stamp", "yesterday,12,5", "column TIMESTAMP"},
      {"backwards", "2023-11-16 18:15:00.0,12,5", "backwards"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    const auto r =
        ReadTrace(TraceFormat::kAzureCsv, std::string("az_") + c.name,
                  AzureRows(2) + c.row + "\n" + "2023-11-16 18:16:30.0,1,1\n");
    EXPECT_EQ(r.records.size(), 3u);
    EXPECT_EQ(r.data_lines, 4);
    const std::string e = OnlyError(r);
    EXPECT_NE(e.find(":4: "), std::string::npos) << e;
    EXPECT_NE(e.find(c.message), std::string::npos) << e;
  }
}

TEST(AzureTraceReader, FileLevelErrors) {
  const auto missing = ReadTrace(TraceFormat::kAzureCsv, "az_missing.csv",
                                 "TIMESTAMP,ContextTokens,GeneratedTokes\n");
  EXPECT_NE(missing.open_error.find(
                ":1: no column named \"GeneratedTokens\" (did you mean "
                "\"GeneratedTokes\"?)"),
            std::string::npos)
      << missing.open_error;
  const auto empty = ReadTrace(TraceFormat::kAzureCsv, "az_empty.csv", "");
  EXPECT_NE(empty.open_error.find("az_empty.csv: empty trace file"),
            std::string::npos);
  const auto blank = ReadTrace(TraceFormat::kAzureCsv, "az_blank.csv", "\n \n");
  EXPECT_NE(blank.open_error.find("empty trace file"), std::string::npos);
  const auto header =
      ReadTrace(TraceFormat::kAzureCsv, "az_header.csv", kAzureHeader);
  EXPECT_NE(header.finish_error.find("no data lines after the header"),
            std::string::npos);
  TraceOptions o;
  o.path = ::testing::TempDir() + "no_such_trace.csv";
  o.format = TraceFormat::kAzureCsv;
  o.origin = "x.json: /workload/trace";
  try {
    OpenTrace(o);
    ADD_FAILURE() << "opened a missing file";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "no_such_trace.csv: cannot open trace: No such file or "
                  "directory (from x.json: /workload/trace)"),
              std::string::npos)
        << e.what();
  }
}

TEST(AzureTraceReader, BlankLineBetweenRowsIsBad) {
  const auto r = ReadTrace(
      TraceFormat::kAzureCsv, "az_hole.csv",
      AzureRows(1) + "\n" + AzureRows(2).substr(sizeof(kAzureHeader) - 1));
  EXPECT_EQ(r.records.size(), 3u);
  EXPECT_NE(OnlyError(r).find(":3: blank line between data lines"),
            std::string::npos);
}

TEST(LengthTableReader, ReadsCountsWithoutTimestamps) {
  const auto r =
      ReadTrace(TraceFormat::kLengthTable, "len_good.csv",
                std::string(kLengthHeader) + "12,34,a\n\"5\",6.0,b\n");
  ASSERT_EQ(r.finish_error, "");
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[1].input_tokens, 5);
  EXPECT_EQ(r.records[1].output_tokens, 6);
  EXPECT_TRUE(std::isnan(r.records[0].timestamp_s));
}

TEST(LengthTableReader, CountsEveryKindOfBadLine) {
  const BadCase cases[] = {
      {"truncated", "12", "expected 3 fields"},
      {"non_numeric", "abc,5,x",
       "num_prefill_tokens: expected an integer "
       "token count in [0, 16777216], got 'abc'"},
      {"negative", "-4,5,x", "got '-4'"},
      {"fraction", "4.5,5,x", "got '4.5'"},
      {"too_big", "4,99999999999,x", "num_decode_tokens"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    const auto r =
        ReadTrace(TraceFormat::kLengthTable, std::string("len_") + c.name,
                  std::string(kLengthHeader) + "1,2,x\n" + c.row + "\n3,4,x");
    EXPECT_EQ(r.records.size(), 2u);
    const std::string e = OnlyError(r);
    EXPECT_NE(e.find(":3: "), std::string::npos) << e;
    EXPECT_NE(e.find(c.message), std::string::npos) << e;
  }
  const auto missing = ReadTrace(TraceFormat::kLengthTable, "len_missing.csv",
                                 "num_prefill_tokens,decode\n1,2\n");
  EXPECT_NE(missing.open_error.find("no column named \"num_decode_tokens\""),
            std::string::npos);
  const auto empty = ReadTrace(TraceFormat::kLengthTable, "len_empty.csv", "");
  EXPECT_NE(empty.open_error.find("empty trace file"), std::string::npos);
}

TEST(TraceReaderPolicy, MaxBadFractionUnderAndOver) {
  std::string content = kLengthHeader;
  for (int i = 0; i < 10; ++i)
    content += i == 2 || i == 6 ? "x,1,x\n" : "1,1,x\n";
  // 2 of 10 bad: 20% passes a 0.2 limit (only more than the share fails).
  EXPECT_EQ(
      ReadTrace(TraceFormat::kLengthTable, "pol_a", content, 0.2).finish_error,
      "");
  EXPECT_EQ(
      ReadTrace(TraceFormat::kLengthTable, "pol_b", content, 0.5).finish_error,
      "");
  const auto r = ReadTrace(TraceFormat::kLengthTable, "pol_c", content, 0.1);
  EXPECT_EQ(r.records.size(), 8u);
  const std::string path = WriteTraceFile("pol_c", content);
  EXPECT_EQ(r.finish_error,
            path +
                ": 2 of 10 data lines malformed (20% > max_bad_fraction "
                "10%); first: " +
                path +
                ":4: column num_prefill_tokens: "
                "expected an integer token count in [0, 16777216], got 'x', " +
                path +
                ":8: column num_prefill_tokens: expected an integer token "
                "count in [0, 16777216], got 'x'");
  // The default tolerates nothing.
  EXPECT_NE(ReadTrace(TraceFormat::kLengthTable, "pol_d", content)
                .finish_error.find("(20% > max_bad_fraction 0%)"),
            std::string::npos);
}

TEST(TraceReaderPolicy, KeepsFiveErrorsAndNeedsOneGoodRecord) {
  std::string content = kLengthHeader;
  for (int i = 0; i < 8; ++i) content += "bad\n";
  const auto r =
      ReadTrace(TraceFormat::kLengthTable, "pol_all_bad", content, 1.0);
  EXPECT_EQ(r.bad_lines, 8);
  EXPECT_EQ(r.first_errors.size(), 5u);
  EXPECT_NE(r.first_errors[4].find(":6: "), std::string::npos);
  EXPECT_NE(
      r.finish_error.find("no good records (8 of 8 data lines malformed)"),
      std::string::npos)
      << r.finish_error;
}

TEST(ParseTraceOptions, ReadsEveryKeyAndRejectsBadOnes) {
  const nlohmann::json j = nlohmann::json::parse(R"({"path": "/tmp/x.jsonl",
      "format": "jsonl", "fields": {"prompt_tokens": "in", "timestamp": "t"},
      "max_bad_fraction": 0.01, "use_timestamps": false, "time_scale": 2})");
  const TraceOptions o =
      ParseTraceOptions(JsonView(j, "s.json", "/workload/trace"));
  EXPECT_EQ(o.path, "/tmp/x.jsonl");
  EXPECT_EQ(o.format, TraceFormat::kJsonl);
  EXPECT_EQ(o.prompt_field, "in");
  EXPECT_EQ(o.completion_field, "completion_tokens");
  EXPECT_EQ(o.timestamp_field, "t");
  EXPECT_EQ(o.max_bad_fraction, 0.01);
  EXPECT_FALSE(o.use_timestamps);
  EXPECT_EQ(o.time_scale, 2.0);
  EXPECT_EQ(o.origin, "s.json: /workload/trace");
  const std::pair<const char*, const char*> bad[] = {
      {R"({"path": "x", "format": "azur"})",
       "/workload/trace/format: expected "
       "one of jsonl, azure, mooncake, lengths, burstgpt, sessions (did you "
       "mean "
       "\"azure\"?)"},
      {R"({"path": "x"})", "/workload/trace/format: expected one of"},
      {R"({"format": "azure"})", "/workload/trace/path: expected a non-empty"},
      {R"({"path": "x", "format": "azure", "fields": {}})", "only the jsonl"},
      {R"({"path": "x", "format": "jsonl", "fields": {"prompt_token": "a"}})",
       "/workload/trace/fields/prompt_token: unknown key (did you mean "
       "\"prompt_tokens\"?)"},
      {R"({"path": "x", "format": "lengths", "max_bad_fraction": 2})",
       "max_bad_fraction: expected a number in [0, 1], got 2"},
      {R"({"path": "x", "format": "lengths", "time_scale": 0})",
       "time_scale: expected a number > 0, got 0"},
      {R"({"path": "x", "format": "lengths", "use_timestamp": true})",
       "unknown key (did you mean \"use_timestamps\"?)"},
  };
  for (const auto& [text, message] : bad) {
    const nlohmann::json b = nlohmann::json::parse(text);
    try {
      ParseTraceOptions(JsonView(b, "s.json", "/workload/trace"));
      ADD_FAILURE() << "accepted " << text;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
          << e.what();
    }
  }
}

TEST(GuessTraceFormat, FromTheFirstLine) {
  EXPECT_EQ(GuessTraceFormat(WriteTraceFile("g1", AzureRows(1))),
            TraceFormat::kAzureCsv);
  EXPECT_EQ(GuessTraceFormat(WriteTraceFile("g2", kLengthHeader)),
            TraceFormat::kLengthTable);
  EXPECT_EQ(GuessTraceFormat(WriteTraceFile("g3",
                                            "\n{\"timestamp\": 1, "
                                            "\"hash_ids\": []}\n")),
            TraceFormat::kMooncake);
  EXPECT_EQ(GuessTraceFormat(WriteTraceFile("g4", "{\"prompt_tokens\": 1}")),
            TraceFormat::kJsonl);
  EXPECT_THROW(GuessTraceFormat(WriteTraceFile("g5", "a,b\n")), ConfigError);
  EXPECT_THROW(GuessTraceFormat(WriteTraceFile("g6", "")), ConfigError);
}

TEST(TraceReaders, ReadTheSharedTracesWithoutBadLines) {
  const std::pair<const char*, TraceFormat> traces[] = {
      {"AzureLLMInferenceTrace_conv.csv", TraceFormat::kAzureCsv},
      {"sharegpt_8k_filtered_stats_llama2_tokenizer.csv",
       TraceFormat::kLengthTable},
      {"synthetic_trace.jsonl", TraceFormat::kMooncake}};
  for (const auto& [file, format] : traces) {
    TraceOptions o;
    o.path = RepoRoot() + "/../shared/traces/" + file;
    if (!std::filesystem::exists(o.path)) GTEST_SKIP() << o.path << " absent";
    o.format = format;
    EXPECT_EQ(GuessTraceFormat(o.path), format);
    auto reader = OpenTrace(o);
    TraceRecord rec;
    int64_t n = 0;
    while (reader->Next(&rec)) ++n;
    EXPECT_NO_THROW(reader->Finish());
    EXPECT_EQ(reader->bad_lines(), 0) << file;
    EXPECT_EQ(reader->data_lines(), n);
  }
}

}  // namespace
}  // namespace servesim
