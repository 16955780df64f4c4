// Tests for the JSON-lines request-log reader: field names, numeric and
// calendar timestamps, and one case per way a line can be wrong.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/core/status.h"
#include "tests/workload/trace_test_util.h"

namespace servesim {
namespace {

using testing::OnlyError;
using testing::ReadTrace;
using testing::WriteTraceFile;

TEST(JsonlTraceReader, ReadsCountsAndNumericTimestamps) {
  const auto r = ReadTrace(
      TraceFormat::kJsonl, "j_good.jsonl",
      R"({"prompt_tokens": 10, "completion_tokens": 3, "timestamp": 100.5, "id": "a"}
{"prompt_tokens": 11.0, "completion_tokens": 4, "timestamp": 100.5}
{"completion_tokens": 5, "prompt_tokens": 12, "timestamp": 101.75, "extra": [1, {"x": null}]}
)");
  ASSERT_EQ(r.finish_error, "");
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.records[1].input_tokens, 11);
  EXPECT_EQ(r.records[2].output_tokens, 5);
  EXPECT_EQ(r.records[0].timestamp_s, 0.0);
  EXPECT_EQ(r.records[1].timestamp_s, 0.0);
  EXPECT_EQ(r.records[2].timestamp_s, 1.25);
  EXPECT_EQ(r.records[2].line, 3);
}

TEST(JsonlTraceReader, TimestampIsOptionalAndIsoStringsAreExact) {
  const auto none =
      ReadTrace(TraceFormat::kJsonl, "j_none.jsonl",
                "{\"prompt_tokens\": 1, \"completion_tokens\": 2}\n"
                "{\"prompt_tokens\": 1, \"completion_tokens\": 2, "
                "\"timestamp\": null}\n");
  ASSERT_EQ(none.finish_error, "");
  EXPECT_TRUE(std::isnan(none.records[1].timestamp_s));
  const auto iso = ReadTrace(
      TraceFormat::kJsonl, "j_iso.jsonl",
      R"({"prompt_tokens": 1, "completion_tokens": 2, "timestamp": "2024-05-01T12:00:00Z"}
{"prompt_tokens": 1, "completion_tokens": 2, "timestamp": "2024-05-01 12:00:00.250"}
{"prompt_tokens": 1, "completion_tokens": 2, "timestamp": "2024-05-01T14:00:01+02:00"}
)");
  ASSERT_EQ(iso.finish_error, "");
  EXPECT_EQ(iso.records[1].timestamp_s, 0.25);
  EXPECT_EQ(iso.records[2].timestamp_s, 1.0);
}

TEST(JsonlTraceReader, FieldNamesAreConfigurable) {
  TraceOptions o;
  o.path = WriteTraceFile("j_fields.jsonl",
                          R"({"usage": 1, "in": 7, "out": 9, "t": 3})"
                          "\n");
  o.format = TraceFormat::kJsonl;
  o.prompt_field = "in";
  o.completion_field = "out";
  o.timestamp_field = "t";
  auto reader = OpenTrace(o);
  TraceRecord rec;
  ASSERT_TRUE(reader->Next(&rec));
  EXPECT_EQ(rec.input_tokens, 7);
  EXPECT_EQ(rec.output_tokens, 9);
  EXPECT_EQ(rec.timestamp_s, 0.0);
  EXPECT_FALSE(reader->Next(&rec));
  EXPECT_NO_THROW(reader->Finish());
  EXPECT_EQ(reader->block_tokens(), 0);
}

// vLLM's per-request priority: optional, any int32 (negative too), absent or
// null reads as vLLM's default 0, and each record says whether it gave one.
TEST(JsonlTraceReader, ReadsOptionalPriority) {
  const auto r = ReadTrace(
      TraceFormat::kJsonl, "j_priority.jsonl",
      R"({"prompt_tokens": 1, "completion_tokens": 2, "priority": 3}
{"prompt_tokens": 1, "completion_tokens": 2, "priority": -2147483648}
{"prompt_tokens": 1, "completion_tokens": 2}
{"prompt_tokens": 1, "completion_tokens": 2, "priority": null}
{"prompt_tokens": 1, "completion_tokens": 2, "priority": 2147483647}
)");
  ASSERT_EQ(r.finish_error, "");
  ASSERT_EQ(r.records.size(), 5u);
  const int32_t want[] = {3, INT32_MIN, 0, 0, INT32_MAX};
  const bool given[] = {true, true, false, false, true};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(r.records[i].priority, want[i]) << i;
    EXPECT_EQ(r.records[i].has_priority, given[i]) << i;
  }
}

struct BadCase {
  const char* name;
  const char* line;
  const char* message;
};

TEST(JsonlTraceReader, CountsEveryKindOfBadLine) {
  const BadCase cases[] = {
      {"truncated", R"({"prompt_tokens": 12, "compl)", "invalid JSON"},
      {"truncated_end", R"({"prompt_tokens": 12, "completion_tokens": 3)",
       "unexpected end of input"},
      {"non_numeric", R"({"prompt_tokens": "12", "completion_tokens": 3})",
       "field \"prompt_tokens\": expected an integer token count in [0, 16777216], got "
       "\"12\""},
      {"negative", R"({"prompt_tokens": 12, "completion_tokens": -3})",
       "got -3"},
      {"fraction", R"({"prompt_tokens": 12.5, "completion_tokens": 1})",
       "got 12.5"},
      {"boolean", R"({"prompt_tokens": true, "completion_tokens": 1})",
       "got true"},
      {"missing", R"({"prompt_tokens": 12})",
       "missing field \"completion_tokens\""},
      {"not_object", "[12, 3]", "expected a JSON object, got an array"},
      {"overflow", R"({"prompt_tokens": 1e999, "completion_tokens": 1})",
       "invalid JSON: /prompt_tokens: number out of range: 1e999"},
      {"duplicate_field",
       R"({"prompt_tokens": 12, "prompt_tokens": 99, "completion_tokens": 1})",
       "invalid JSON: /prompt_tokens: duplicate key"},
      {"too_deep", R"({"x": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[)",
       "nesting deeper than 64 levels"},
      {"too_many_tokens", R"({"prompt_tokens": 2147483000, "completion_tokens": 1})",
       "expected an integer token count in [0, 16777216], got 2147483000"},
      {"bad_stamp",
       R"({"prompt_tokens": 1, "completion_tokens": 1, "timestamp": "noon"})",
       "field \"timestamp\": expected a number"},
      {"backwards",
       R"({"prompt_tokens": 1, "completion_tokens": 1, "timestamp": 4})",
       "backwards"},
      {"no_stamp", R"({"prompt_tokens": 1, "completion_tokens": 1})",
       "missing timestamp"},
      {"fractional_priority",
       R"({"prompt_tokens": 1, "completion_tokens": 1, "timestamp": 6, "priority": 1.5})",
       "field \"priority\": expected an integer priority in [-2^31, 2^31)"},
      {"text_priority",
       R"({"prompt_tokens": 1, "completion_tokens": 1, "timestamp": 6, "priority": "high"})",
       "got \"high\""},
      {"huge_priority",
       R"({"prompt_tokens": 1, "completion_tokens": 1, "timestamp": 6, "priority": 2147483648})",
       "got 2147483648"},
      {"mixed_stamp",
       R"({"prompt_tokens": 1, "completion_tokens": 1, "timestamp": "2024-01-01 00:00:00"})",
       "written differently"},
  };
  const std::string good =
      "{\"prompt_tokens\": 1, \"completion_tokens\": 1, \"timestamp\": 5}\n";
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    const auto r = ReadTrace(TraceFormat::kJsonl, std::string("j_") + c.name,
                             good + good + c.line + "\n" + good);
    EXPECT_EQ(r.records.size(), 3u);
    const std::string e = OnlyError(r);
    EXPECT_NE(e.find(":3: "), std::string::npos) << e;
    EXPECT_NE(e.find(c.message), std::string::npos) << e;
  }
}

TEST(JsonlTraceReader, TruncatedLastLineAndEmptyFile) {
  const auto r = ReadTrace(TraceFormat::kJsonl, "j_trunc_last.jsonl",
                           "{\"prompt_tokens\": 1, \"completion_tokens\": 1}\n"
                           "{\"prompt_tokens\": 1, \"comp");
  EXPECT_NE(OnlyError(r).find(":2: invalid JSON"), std::string::npos);
  EXPECT_NE(r.finish_error.find("1 of 2 data lines malformed (50% > "),
            std::string::npos)
      << r.finish_error;
  const auto empty = ReadTrace(TraceFormat::kJsonl, "j_empty.jsonl", "");
  EXPECT_NE(empty.open_error.find("j_empty.jsonl: empty trace file"),
            std::string::npos);
  // An error line stays one printable line whatever the input holds.
  const auto bin =
      ReadTrace(TraceFormat::kJsonl, "j_bin.jsonl", "{\"a\x01\xff\": \x02}\n");
  ASSERT_EQ(bin.first_errors.size(), 1u);
  for (char ch : bin.first_errors[0]) {
    EXPECT_GE(static_cast<unsigned char>(ch), 0x20);
    EXPECT_LT(static_cast<unsigned char>(ch), 0x7f);
  }
}

}  // namespace
}  // namespace servesim
