// Tests for the Mooncake trace reader: millisecond timestamps, hash ids per
// 512-token block, the bad-line cases, and the real synthetic trace.
#include <gtest/gtest.h>

#include <filesystem>

#include "sim/core/paths.h"
#include "sim/report/log_fit.h"
#include "tests/workload/trace_test_util.h"

namespace servesim {
namespace {

using testing::OnlyError;
using testing::ReadTrace;

TEST(MooncakeTraceReader, ReadsMillisecondsAndHashIds) {
  const auto r = ReadTrace(
      TraceFormat::kMooncake, "m_good.jsonl",
      R"({"timestamp": 1000, "input_length": 512, "output_length": 6, "hash_ids": [0]}
{"timestamp": 1000, "input_length": 513, "output_length": 1, "hash_ids": [0, 1]}
{"timestamp": 3500, "input_length": 1, "output_length": 2, "hash_ids": [18446744073709551615]}
)");
  ASSERT_EQ(r.finish_error, "");
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.records[1].timestamp_s, 0.0);
  EXPECT_EQ(r.records[2].timestamp_s, 2.5);
  EXPECT_EQ(r.records[1].hash_ids, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(r.records[2].hash_ids[0], 18446744073709551615ULL);
  EXPECT_EQ(r.records[0].input_tokens, 512);
}

TEST(MooncakeTraceReader, CountsEveryKindOfBadLine) {
  const struct {
    const char* name;
    const char* line;
    const char* message;
  } cases[] = {
      {"truncated",
       R"({"timestamp": 9, "input_length": 5, "output_length": 1, "hash_ids": [1,)",
       "invalid JSON"},
      {"non_numeric",
       R"({"timestamp": 9, "input_length": "5", "output_length": 1, "hash_ids": [1]})",
       "field \"input_length\": expected an integer token count in [0, 16777216]"},
      {"negative",
       R"({"timestamp": 9, "input_length": 5, "output_length": -1, "hash_ids": [1]})",
       "field \"output_length\""},
      {"missing_ids",
       R"({"timestamp": 9, "input_length": 5, "output_length": 1})",
       "missing field \"hash_ids\""},
      {"missing_stamp",
       R"({"input_length": 5, "output_length": 1, "hash_ids": [1]})",
       "missing field \"timestamp\""},
      {"stamp_string",
       R"({"timestamp": "9", "input_length": 5, "output_length": 1, "hash_ids": [1]})",
       "expected milliseconds"},
      {"ids_not_array",
       R"({"timestamp": 9, "input_length": 5, "output_length": 1, "hash_ids": 1})",
       "expected an array of non-negative integers, got 1"},
      {"negative_id",
       R"({"timestamp": 9, "input_length": 5, "output_length": 1, "hash_ids": [-1]})",
       "field \"hash_ids\"[0]: expected a non-negative integer, got -1"},
      {"float_id",
       R"({"timestamp": 9, "input_length": 5, "output_length": 1, "hash_ids": [1.5]})",
       "got 1.5"},
      {"string_id",
       R"({"timestamp": 9, "input_length": 5, "output_length": 1, "hash_ids": ["a"]})",
       "got \"a\""},
      {"too_few_ids",
       R"({"timestamp": 9, "input_length": 1025, "output_length": 1, "hash_ids": [1, 2]})",
       "has 2 ids, expected ceil(input_length / 512) = 3"},
      {"too_many_ids",
       R"({"timestamp": 9, "input_length": 512, "output_length": 1, "hash_ids": [1, 2]})",
       "expected ceil(input_length / 512) = 1"},
      {"backwards",
       R"({"timestamp": 4, "input_length": 5, "output_length": 1, "hash_ids": [1]})",
       "backwards"},
  };
  const std::string good =
      R"({"timestamp": 5, "input_length": 5, "output_length": 1, "hash_ids": [7]})"
      "\n";
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto r = ReadTrace(TraceFormat::kMooncake, std::string("m_") + c.name,
                             good + c.line + "\n" + good);
    EXPECT_EQ(r.records.size(), 2u);
    const std::string e = OnlyError(r);
    EXPECT_NE(e.find(":2: "), std::string::npos) << e;
    EXPECT_NE(e.find(c.message), std::string::npos) << e;
  }
  const auto empty = ReadTrace(TraceFormat::kMooncake, "m_empty.jsonl", "");
  EXPECT_NE(empty.open_error.find("empty trace file"), std::string::npos);
}

TEST(MooncakeTraceReader, SyntheticTraceRecordsAndReuse) {
  TraceOptions o;
  o.path = RepoRoot() + "/../shared/traces/synthetic_trace.jsonl";
  if (!std::filesystem::exists(o.path)) GTEST_SKIP() << o.path << " absent";
  o.format = TraceFormat::kMooncake;
  auto reader = OpenTrace(o);
  EXPECT_EQ(reader->block_tokens(), 512);
  const LogFit fit = FitTrace(reader.get());
  EXPECT_EQ(fit.records, 3993);
  EXPECT_EQ(fit.bad_lines, 0);
  ASSERT_TRUE(fit.reuse.has_value());
  EXPECT_EQ(fit.reuse->block_tokens, 512);
  // The trace's README: 64.0% of block ids were seen earlier.
  EXPECT_NEAR(fit.reuse->fraction, 0.640, 0.0005);
  ASSERT_TRUE(fit.arrival.has_value());
}

}  // namespace
}  // namespace servesim
