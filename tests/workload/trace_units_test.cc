// Tests for what users' traces bring: the unit of numeric timestamps (given,
// the format's own, or detected and reported), 0-token rows read as 1 token
// and counted, UTC offsets in calendar times, a length table's arrived_at
// column, and the BurstGPT CSV with its row filters.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "sim/core/json_view.h"
#include "sim/core/paths.h"
#include "sim/core/status.h"
#include "sim/report/log_fit.h"
#include "tests/workload/trace_test_util.h"

namespace servesim {
namespace {

using testing::OnlyError;
using testing::ReadTrace;
using testing::WriteTraceFile;

std::string JsonlStamps(const std::vector<double>& stamps) {
  std::string s;
  char buf[160];
  for (double t : stamps) {
    std::snprintf(buf, sizeof buf,
                  "{\"prompt_tokens\": 5, \"completion_tokens\": 2, "
                  "\"timestamp\": %.17g}\n",
                  t);
    s += buf;
  }
  return s;
}

struct Notes {
  std::vector<TraceRecord> records;
  TraceNotes notes;
};

Notes ReadWithNotes(TraceFormat format, const std::string& name,
                    const std::string& content,
                    TimestampUnit unit = TimestampUnit::kAuto) {
  TraceOptions o;
  o.path = WriteTraceFile(name, content);
  o.format = format;
  o.timestamp_unit = unit;
  Notes n;
  auto reader = OpenTrace(o);
  TraceRecord rec;
  while (reader->Next(&rec)) n.records.push_back(rec);
  reader->Finish();
  n.notes = reader->notes();
  return n;
}

TEST(DetectTimestampUnit, EpochMagnitudeThenMedianGap) {
  std::string why;
  EXPECT_EQ(DetectTimestampUnit({1.7e9, 1.7e9 + 0.2}, &why),
            TimestampUnit::kSeconds);
  EXPECT_NE(why.find("epoch time in s"), std::string::npos) << why;
  EXPECT_EQ(DetectTimestampUnit({1.7e12}, &why), TimestampUnit::kMillis);
  EXPECT_EQ(DetectTimestampUnit({1.7e15, 1.7e15 + 5e5}, &why),
            TimestampUnit::kMicros);
  // Relative stamps: the median positive gap (equal stamps do not count).
  EXPECT_EQ(DetectTimestampUnit({0, 0.2, 0.2, 0.5, 9.0}, &why),
            TimestampUnit::kSeconds);
  EXPECT_EQ(DetectTimestampUnit({0, 10, 20}, &why), TimestampUnit::kSeconds);
  EXPECT_EQ(DetectTimestampUnit({0, 11, 22}, &why), TimestampUnit::kMillis);
  EXPECT_NE(why.find("median gap 11 "), std::string::npos) << why;
  EXPECT_NE(why.find("0.011 s read as ms"), std::string::npos) << why;
  EXPECT_EQ(DetectTimestampUnit({0, 180, 300, 10000 + 300}, &why),
            TimestampUnit::kMillis);
  EXPECT_EQ(DetectTimestampUnit({0, 180000, 400000}, &why),
            TimestampUnit::kMicros);
  EXPECT_EQ(DetectTimestampUnit({7, 7, 7}, &why), TimestampUnit::kSeconds);
  EXPECT_NE(why.find("no two distinct timestamps"), std::string::npos);
}

TEST(TimestampUnit, MillisecondJsonlIsDetectedReportedAndOverridable) {
  const std::string log = JsonlStamps({1000, 1180, 1180, 1400, 2000});
  const Notes a = ReadWithNotes(TraceFormat::kJsonl, "u_ms.jsonl", log);
  ASSERT_EQ(a.records.size(), 5u);
  EXPECT_TRUE(a.notes.numeric_timestamps);
  EXPECT_EQ(a.notes.unit, TimestampUnit::kMillis);
  EXPECT_NE(a.notes.unit_reason.find("auto: median gap 220"),
            std::string::npos)
      << a.notes.unit_reason;
  EXPECT_EQ(a.records[1].timestamp_s, 0.18);
  EXPECT_EQ(a.records[4].timestamp_s, 1.0);
  EXPECT_NE(DescribeTraceNotes(a.notes).find("timestamps in ms (auto: "),
            std::string::npos);
  // An explicit unit wins over the detection.
  const Notes s = ReadWithNotes(TraceFormat::kJsonl, "u_ms_as_s.jsonl", log,
                                TimestampUnit::kSeconds);
  EXPECT_EQ(s.notes.unit, TimestampUnit::kSeconds);
  EXPECT_EQ(s.notes.unit_reason, "given (timestamp_unit)");
  EXPECT_EQ(s.records[4].timestamp_s, 1000.0);
  const Notes us = ReadWithNotes(TraceFormat::kJsonl, "u_ms_as_us.jsonl", log,
                                 TimestampUnit::kMicros);
  EXPECT_EQ(us.records[4].timestamp_s, 0.001);
  // Seconds stay seconds.
  const Notes sec = ReadWithNotes(TraceFormat::kJsonl, "u_s.jsonl",
                                  JsonlStamps({100.5, 100.75, 101.5}));
  EXPECT_EQ(sec.notes.unit, TimestampUnit::kSeconds);
  EXPECT_EQ(sec.records[2].timestamp_s, 1.0);
}

TEST(TimestampUnit, EpochMicrosecondsAndTheSampleBoundary) {
  // Epoch microseconds (beyond the old 1e15 bound), decided on the first.
  const Notes us = ReadWithNotes(
      TraceFormat::kJsonl, "u_epoch_us.jsonl",
      JsonlStamps({1714564800000000.0, 1714564800250000.0}));
  EXPECT_EQ(us.notes.unit, TimestampUnit::kMicros);
  EXPECT_EQ(us.records[1].timestamp_s, 0.25);
  // More records than the detection sample: the held records and those
  // read after the decision are converted alike, in file order.
  std::vector<double> stamps;
  for (int i = 0; i < 2500; ++i) stamps.push_back(i * 100.0 + (i % 7 == 0));
  const Notes n =
      ReadWithNotes(TraceFormat::kJsonl, "u_many.jsonl", JsonlStamps(stamps));
  ASSERT_EQ(n.records.size(), stamps.size());
  EXPECT_EQ(n.notes.unit, TimestampUnit::kMillis);
  EXPECT_NE(n.notes.unit_reason.find("the first 1000 timestamps"),
            std::string::npos)
      << n.notes.unit_reason;
  for (size_t i = 0; i < stamps.size(); i += 333) {
    EXPECT_EQ(n.records[i].timestamp_s, (stamps[i] - stamps[0]) / 1e3) << i;
    EXPECT_EQ(n.records[i].line, static_cast<int64_t>(i) + 1);
  }
  // No numeric stamps: no unit to report.
  const Notes none = ReadWithNotes(
      TraceFormat::kJsonl, "u_none.jsonl",
      "{\"prompt_tokens\": 1, \"completion_tokens\": 1}\n");
  EXPECT_FALSE(none.notes.numeric_timestamps);
  EXPECT_EQ(DescribeTraceNotes(none.notes), "");
}

TEST(TimestampUnit, MooncakeKeepsItsDocumentedMilliseconds) {
  const Notes m = ReadWithNotes(
      TraceFormat::kMooncake, "u_mc.jsonl",
      R"({"timestamp": 5, "input_length": 3, "output_length": 1, "hash_ids": [1]}
{"timestamp": 5000000, "input_length": 3, "output_length": 1, "hash_ids": [1]}
)");
  EXPECT_EQ(m.notes.unit, TimestampUnit::kMillis);
  EXPECT_EQ(m.notes.unit_reason, "the mooncake format's unit");
  EXPECT_EQ(m.records[1].timestamp_s, 4999.995);
}

TEST(ZeroTokens, CountedAndReadAsOneToken) {
  const auto r = ReadTrace(TraceFormat::kJsonl, "z.jsonl",
                           R"({"prompt_tokens": 0, "completion_tokens": 0}
{"prompt_tokens": 7, "completion_tokens": 0}
{"prompt_tokens": 7, "completion_tokens": 3}
{"prompt_tokens": 7, "completion_tokens": -1}
)",
                           0.5);
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.records[0].input_tokens, 1);
  EXPECT_EQ(r.records[0].output_tokens, 1);
  EXPECT_EQ(r.records[1].output_tokens, 1);
  EXPECT_EQ(r.records[2].output_tokens, 3);
  EXPECT_EQ(r.bad_lines, 1);  // a negative count is still bad
  const Notes n = ReadWithNotes(TraceFormat::kLengthTable, "z.csv",
                                "num_prefill_tokens,num_decode_tokens\n"
                                "0,5\n4,0\n4,0\n4,4\n");
  EXPECT_EQ(n.notes.zero_prompt_records, 1);
  EXPECT_EQ(n.notes.zero_output_records, 2);
  EXPECT_EQ(DescribeTraceNotes(n.notes),
            "1 prompts of 0 tokens read as 1 token; 2 completions of 0 "
            "tokens read as 1 token");
  // A Mooncake row with a 0-token prompt has no hash ids.
  const Notes m = ReadWithNotes(
      TraceFormat::kMooncake, "z_mc.jsonl",
      R"({"timestamp": 1, "input_length": 0, "output_length": 4, "hash_ids": []})"
      "\n");
  EXPECT_EQ(m.records[0].input_tokens, 1);
  EXPECT_EQ(m.notes.zero_prompt_records, 1);
}

TEST(UtcOffsets, AzureAndJsonlTimesWithOffsetsAreExact) {
  const auto r = ReadTrace(TraceFormat::kAzureCsv, "off.csv",
                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                           "2024-05-10 00:00:00.009930+00:00,10,2\n"
                           "2024-05-10 00:00:01.5+0000,10,2\n"
                           "2024-05-10 02:00:02+02:00,10,2\n"
                           "2024-05-09 19:00:03.25-05,10,2\n"
                           "2024-05-10T00:00:04Z,10,2\n"
                           "2024-05-10 00:00:05 UTC,10,2\n"
                           "2024-05-10 05:30:06 +05:30,10,2\n");
  ASSERT_EQ(r.finish_error, "");
  ASSERT_EQ(r.records.size(), 7u);
  EXPECT_DOUBLE_EQ(r.records[1].timestamp_s, 1.49007);
  EXPECT_DOUBLE_EQ(r.records[2].timestamp_s, 1.99007);
  EXPECT_DOUBLE_EQ(r.records[3].timestamp_s, 3.24007);
  EXPECT_DOUBLE_EQ(r.records[4].timestamp_s, 3.99007);
  EXPECT_DOUBLE_EQ(r.records[5].timestamp_s, 4.99007);
  EXPECT_DOUBLE_EQ(r.records[6].timestamp_s, 5.99007);
  for (const char* bad : {"2024-05-10 00:00:07+24:00", "2024-05-10 00:00:07+0",
                          "2024-05-10 00:00:07+00:0", "2024-05-10 00:00:07  Z",
                          "2024-05-10 00:00:07 EST"}) {
    SCOPED_TRACE(bad);
    const auto b = ReadTrace(
        TraceFormat::kAzureCsv, "off_bad.csv",
        std::string("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                    "2024-05-10 00:00:00,1,1\n") +
            bad + ",1,1\n");
    EXPECT_NE(OnlyError(b).find(":3: column TIMESTAMP: expected a time like"),
              std::string::npos)
        << OnlyError(b);
  }
}

TEST(ArrivedAt, LengthTablesWithArrivalTimesAreTimedTraces) {
  const auto r = ReadTrace(TraceFormat::kLengthTable, "arr.csv",
                           "arrived_at,num_prefill_tokens,num_decode_tokens\n"
                           "0.5,100,10\n0.75,200,20\n0.75,300,30\n2.5,1,1\n");
  ASSERT_EQ(r.finish_error, "");
  ASSERT_EQ(r.records.size(), 4u);
  EXPECT_EQ(r.records[0].timestamp_s, 0.0);
  EXPECT_EQ(r.records[1].timestamp_s, 0.25);
  EXPECT_EQ(r.records[3].timestamp_s, 2.0);
  EXPECT_EQ(r.records[2].input_tokens, 300);
  // fit then sees timestamps.
  TraceOptions o;
  o.path = WriteTraceFile("arr.csv",
                          "arrived_at,num_prefill_tokens,num_decode_tokens\n"
                          "0.5,100,10\n0.75,200,20\n0.75,300,30\n2.5,1,1\n");
  o.format = TraceFormat::kLengthTable;
  auto reader = OpenTrace(o);
  const LogFit fit = FitTrace(reader.get());
  ASSERT_TRUE(fit.arrival.has_value());
  EXPECT_EQ(fit.arrival->gaps, 3);
  EXPECT_DOUBLE_EQ(fit.arrival->span_s, 2.0);
  for (const auto& [row, message] :
       std::vector<std::pair<std::string, std::string>>{
           {"x,1,1", "column arrived_at: expected an arrival time"},
           {",1,1", "column arrived_at: expected an arrival time (a number, in "
                    "timestamp_unit), got ''"},
           {"1e300,1,1", "column arrived_at: expected an arrival time (a "
                         "number, in timestamp_unit), got '1e300'"},
           {"0.1,1,1", "timestamp goes backwards"}}) {
    SCOPED_TRACE(row);
    const auto b = ReadTrace(
        TraceFormat::kLengthTable, "arr_bad.csv",
        "arrived_at,num_prefill_tokens,num_decode_tokens\n0.5,1,1\n" + row +
            "\n");
    EXPECT_NE(OnlyError(b).find(":3: " + message), std::string::npos)
        << OnlyError(b);
  }
}

constexpr char kBurstHeader[] =
    "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n";

std::string BurstRows() {
  return std::string(kBurstHeader) +
         "5,ChatGPT,472,18,490,Conversation log\n"
         "45,ChatGPT,1087,0,1087,Conversation log\n"  // a failure
         "45,GPT-4,417,276,693,API log\n"
         "118,ChatGPT,1360,133,1493,API log\n"
         "186.5,GPT-4,3,0,3,Conversation log\n";
}

TEST(BurstGpt, ReadsSecondsAndFailureRowsAndFilters) {
  EXPECT_EQ(GuessTraceFormat(WriteTraceFile("b_guess.csv", BurstRows())),
            TraceFormat::kBurstGpt);
  const Notes all = ReadWithNotes(TraceFormat::kBurstGpt, "b.csv", BurstRows());
  ASSERT_EQ(all.records.size(), 5u);
  EXPECT_EQ(all.records[1].timestamp_s, 40.0);
  EXPECT_EQ(all.records[4].timestamp_s, 181.5);
  EXPECT_EQ(all.records[1].input_tokens, 1087);
  EXPECT_EQ(all.records[1].output_tokens, 1);
  EXPECT_EQ(all.notes.zero_output_records, 2);
  EXPECT_EQ(all.notes.unit, TimestampUnit::kSeconds);
  EXPECT_EQ(all.notes.unit_reason, "the burstgpt format's unit");
  TraceOptions o;
  o.path = WriteTraceFile("b_f.csv", BurstRows());
  o.format = TraceFormat::kBurstGpt;
  o.model_filter = "ChatGPT";
  auto reader = OpenTrace(o);
  std::vector<TraceRecord> kept;
  TraceRecord rec;
  while (reader->Next(&rec)) kept.push_back(rec);
  reader->Finish();
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[2].timestamp_s, 113.0);  // from the first kept row
  EXPECT_EQ(reader->notes().filtered_lines, 2);
  EXPECT_EQ(reader->data_lines(), 5);
  EXPECT_EQ(reader->good_records(), 3);
  EXPECT_EQ(DescribeTraceNotes(reader->notes()),
            "timestamps in s (the burstgpt format's unit); 1 completions of 0 "
            "tokens read as 1 token; 2 rows left out (keeping Model ChatGPT)");
  o.model_filter = "";
  o.log_type_filter = "API log";
  reader = OpenTrace(o);
  kept.clear();
  while (reader->Next(&rec)) kept.push_back(rec);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[1].input_tokens, 1360);
}

TEST(BurstGpt, EveryBrokenLineNamesFileLineAndWhat) {
  const std::pair<const char*, const char*> cases[] = {
      {"9,ChatGPT,1,1,2", "expected 6 fields (as in the header), got 5"},
      {"nine,ChatGPT,1,1,2,API log", "column Timestamp: expected seconds"},
      {"9,ChatGPT,-1,1,0,API log", "column Request tokens: expected"},
      {"9,ChatGPT,1,1.5,2,API log", "column Response tokens: expected"},
      {"1,ChatGPT,1,1,2,API log", "timestamp goes backwards"},
      // Broken rows of a filtered-out model are still broken.
      {"9,GPT-4,x,1,2,API log", "column Request tokens"},
  };
  for (const auto& [row, message] : cases) {
    SCOPED_TRACE(row);
    TraceOptions o;
    o.path = WriteTraceFile("b_bad.csv", std::string(kBurstHeader) +
                                             "5,ChatGPT,1,1,2,API log\n" +
                                             row + "\n");
    o.format = TraceFormat::kBurstGpt;
    o.model_filter = "ChatGPT";
    auto reader = OpenTrace(o);
    TraceRecord rec;
    while (reader->Next(&rec)) {
    }
    try {
      reader->Finish();
      ADD_FAILURE() << "accepted " << row;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(o.path + ":3: " + message),
                std::string::npos)
          << e.what();
    }
  }
  const auto missing = ReadTrace(TraceFormat::kBurstGpt, "b_missing.csv",
                                 "Timestamp,Model,Request tokens\n1,a,1\n");
  EXPECT_NE(missing.open_error.find("no column named \"Response tokens\""),
            std::string::npos)
      << missing.open_error;
}

TEST(ParseTraceOptions, UnitAndFilterKeys) {
  auto parse = [](const char* text) {
    const nlohmann::json j = nlohmann::json::parse(text);
    return ParseTraceOptions(JsonView(j, "s.json", "/workload/trace"));
  };
  EXPECT_EQ(parse(R"({"path": "x", "format": "jsonl", "timestamp_unit": "ms"})")
                .timestamp_unit,
            TimestampUnit::kMillis);
  EXPECT_EQ(parse(R"({"path": "x", "format": "jsonl"})").timestamp_unit,
            TimestampUnit::kAuto);
  const TraceOptions b = parse(
      R"({"path": "x", "format": "burstgpt", "model": "GPT-4", "log_type": "API log"})");
  EXPECT_EQ(b.model_filter, "GPT-4");
  EXPECT_EQ(b.log_type_filter, "API log");
  const std::pair<const char*, const char*> bad[] = {
      {R"({"path": "x", "format": "jsonl", "timestamp_unit": "sec"})",
       "/workload/trace/timestamp_unit: expected one of auto, s, ms, us"},
      {R"({"path": "x", "format": "azure", "timestamp_unit": "s"})",
       "calendar times"},
      {R"({"path": "x", "format": "jsonl", "model": "a"})",
       "/workload/trace/model: only the burstgpt format"},
      {R"({"path": "x", "format": "lengths", "log_type": "a"})",
       "/workload/trace/log_type: only the burstgpt format"},
  };
  for (const auto& [text, message] : bad) {
    try {
      parse(text);
      ADD_FAILURE() << "accepted " << text;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
          << e.what();
    }
  }
}

// The shared Mooncake trace read as plain JSON lines (its lengths under
// other names): auto detection must find its milliseconds, and the times
// must equal those of the Mooncake reader, which knows the unit.
TEST(TimestampUnit, SharedMooncakeTraceAsJsonlIsDetectedAsMilliseconds) {
  const std::string path =
      RepoRoot() + "/../shared/traces/synthetic_trace.jsonl";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " absent";
  TraceOptions j;
  j.path = path;
  j.format = TraceFormat::kJsonl;
  j.prompt_field = "input_length";
  j.completion_field = "output_length";
  TraceOptions m = j;
  m.format = TraceFormat::kMooncake;
  auto a = OpenTrace(j);
  auto b = OpenTrace(m);
  TraceRecord ra, rb;
  int64_t n = 0;
  while (a->Next(&ra)) {
    ASSERT_TRUE(b->Next(&rb));
    ASSERT_EQ(ra.timestamp_s, rb.timestamp_s) << "record " << n;
    ++n;
  }
  EXPECT_FALSE(b->Next(&rb));
  EXPECT_EQ(n, 3993);
  EXPECT_EQ(a->notes().unit, TimestampUnit::kMillis);
  EXPECT_NE(a->notes().unit_reason.find("auto: median gap"),
            std::string::npos);
}

}  // namespace
}  // namespace servesim
