// Sessions traces: the reader's parent links (by id, by session, root
// markers, think times, every broken line) and the replay, hand-worked on a
// tiny trace: a later turn is sent at max(parent's arrival + the trace's
// gap, parent's finish + think time), shares its session's stream, and is
// dropped with its own later turns when its parent is rejected.
#include <gtest/gtest.h>

#include <fstream>

#include "sim/core/paths.h"
#include "sim/core/status.h"
#include "sim/engine/run_invariants.h"
#include "tests/test_util.h"
#include "tests/workload/trace_test_util.h"

namespace servesim {
namespace {

using testing::LinearScenario;
using testing::MustParse;
using testing::OnlyError;
using testing::RunScenario;
using testing::WriteTraceFile;

std::vector<TraceRecord> ReadSessions(const std::string& name,
                                      const std::string& content) {
  TraceOptions o;
  o.path = WriteTraceFile(name, content);
  o.format = TraceFormat::kSessions;
  SetSessionFieldDefaults(&o);
  auto reader = OpenTrace(o);
  std::vector<TraceRecord> out;
  TraceRecord rec;
  while (reader->Next(&rec)) out.push_back(rec);
  reader->Finish();
  return out;
}

TEST(SessionTraceReader, ParentsByIdBySessionAndRootMarkers) {
  const auto r = ReadSessions("s_links.jsonl",
      R"({"chat_id": 10, "parent_chat_id": -1, "timestamp": 0, "input_length": 5, "output_length": 2}
{"chat_id": "a", "parent_chat_id": null, "timestamp": 1, "input_length": 5, "output_length": 2}
{"chat_id": 11, "parent_chat_id": "10", "timestamp": 2, "input_length": 9, "output_length": 2, "time_to_parent_chat": 0.25}
{"chat_id": 12, "parent_chat_id": 10, "timestamp": 2, "input_length": 9, "output_length": 0}
{"chat_id": 13, "parent_chat_id": "a", "timestamp": 3, "input_length": 9, "output_length": 2}
{"session_id": "s", "timestamp": 4, "input_length": 5, "output_length": 2}
{"session_id": "s", "timestamp": 5, "input_length": 9, "output_length": 2}
{"chat_id": 14, "parent_chat_id": 13, "session_id": "t", "timestamp": 6, "input_length": 9, "output_length": 2}
{"chat_id": 15, "parent_chat_id": "", "timestamp": 7, "input_length": 9, "output_length": 2}
)");
  ASSERT_EQ(r.size(), 9u);
  const int64_t parent[] = {-1, -1, 0, 0, 1, -1, 5, 4, -1};
  const int64_t root[] = {0, 1, 0, 0, 1, 5, 5, 1, 8};
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].parent, parent[i]) << i;
    EXPECT_EQ(r[i].root, root[i]) << i;
  }
  EXPECT_EQ(r[2].think_time_s, 0.25);
  EXPECT_TRUE(std::isnan(r[3].think_time_s));
  EXPECT_EQ(r[3].output_tokens, 1);  // the 0-token rule
  EXPECT_EQ(r[6].timestamp_s, 5.0);
}

TEST(SessionTraceReader, EveryBrokenLineNamesFileLineAndWhat) {
  const std::string first =
      R"({"chat_id": 1, "parent_chat_id": -1, "session_id": "s", "timestamp": 0, "input_length": 5, "output_length": 2})"
      "\n";
  const std::pair<const char*, const char*> cases[] = {
      {R"({"chat_id": 2, "parent_chat_id": 7, "timestamp": 1, "input_length": 5, "output_length": 2})",
       "field \"parent_chat_id\": '7' names no earlier request (expected the "
       "chat_id of an earlier line)"},
      {R"({"chat_id": 1, "parent_chat_id": -1, "timestamp": 1, "input_length": 5, "output_length": 2})",
       "field \"chat_id\": id '1' was used by an earlier request"},
      {R"({"chat_id": 2, "parent_chat_id": 1, "session_id": "u", "timestamp": 1, "input_length": 5, "output_length": 2})",
       "field \"session_id\": session 'u' differs from its parent's 's'"},
      {R"({"chat_id": 2, "parent_chat_id": 1, "timestamp": 1, "input_length": 5, "output_length": 2, "time_to_parent_chat": -1})",
       "field \"time_to_parent_chat\": expected seconds >= 0"},
      {R"({"chat_id": 2, "parent_chat_id": 1, "input_length": 5, "output_length": 2})",
       "missing field \"timestamp\" (a session turn needs its arrival time)"},
      {R"({"chat_id": [2], "parent_chat_id": 1, "timestamp": 1, "input_length": 5, "output_length": 2})",
       "field \"chat_id\": expected a request id (a string or an integer)"},
      {R"({"chat_id": 2, "parent_chat_id": 1.5, "timestamp": 1, "input_length": 5, "output_length": 2})",
       "field \"parent_chat_id\": expected the id of an earlier request"},
      {R"({"chat_id": 2, "parent_chat_id": 1, "timestamp": 1, "input_length": 5})",
       "missing field \"output_length\""},
  };
  for (const auto& [line, message] : cases) {
    SCOPED_TRACE(line);
    TraceOptions o;
    o.path = WriteTraceFile("s_bad.jsonl", first + line + "\n");
    o.format = TraceFormat::kSessions;
    SetSessionFieldDefaults(&o);
    auto reader = OpenTrace(o);
    TraceRecord rec;
    while (reader->Next(&rec)) {
    }
    ASSERT_EQ(reader->bad_lines(), 1);
    EXPECT_NE(reader->first_errors()[0].find(o.path + ":2: " + message),
              std::string::npos)
        << reader->first_errors()[0];
    EXPECT_THROW(reader->Finish(), ConfigError);
  }
  // A line whose parent was itself a bad line is bad too (never silently
  // a first turn).
  TraceOptions o;
  o.path = WriteTraceFile(
      "s_bad_chain.jsonl",
      first +
          R"({"chat_id": 2, "parent_chat_id": 1, "timestamp": "x", "input_length": 5, "output_length": 2}
{"chat_id": 3, "parent_chat_id": 2, "timestamp": 2, "input_length": 5, "output_length": 2}
)");
  o.format = TraceFormat::kSessions;
  SetSessionFieldDefaults(&o);
  o.max_bad_fraction = 1;
  auto reader = OpenTrace(o);
  TraceRecord rec;
  int n = 0;
  while (reader->Next(&rec)) ++n;
  EXPECT_EQ(n, 1);
  EXPECT_EQ(reader->bad_lines(), 2);
  EXPECT_NE(reader->first_errors()[1].find(":3: field \"parent_chat_id\": '2' "
                                           "names no earlier request"),
            std::string::npos)
      << reader->first_errors()[1];
}

// Linear costs, no prefix caching, sync scheduling: a lone request of P
// prompt and O output tokens takes 1 + 0.1 P ms to its first token and
// 1.5 ms per later token.
std::string SessionsScenario(const std::string& trace_path,
                     const std::string& extra_trace = "",
                     const std::string& engine = "") {
  return LinearScenario(
      R"("step_s": 0.001, "prefill_token_s": 0.0001, "decode_seq_s": 0.0005)",
      R"("trace": {"path": ")" + trace_path +
          R"(", "format": "sessions")" + extra_trace + "}",
      R"("prefix_caching": false, "async_scheduling": false)" + engine);
}

TEST(TraceSessionsReplay, HandWorkedTimes) {
  // Session A: turns 1 -> 2 -> 3 -> 4; session B: turn 5.
  //  1 at 0 s: P 10, O 3: finishes 1 + 1 + 3 ms = 5 ms.
  //  2: gap 1.0 s from 1's arrival binds (1 finished at 5 ms): 1.0 s;
  //     P 20, O 3: finishes 1.0 s + 3 + 3 ms = 1.006 s.
  //  3: gap 1 ms would give 1.001 s, before 2's answer: 1.006 s; P 30, O 2:
  //     finishes 1.006 + 4 + 1.5 ms = 1.0115 s.
  //  4: think time 0.5 s after 3's answer (1.5115 s) beats the gap (3's
  //     arrival + 0.199 s = 1.205 s); P 40, O 2: finishes 1.518 s.
  //  5 at 2.0 s, alone: finishes 2.005 s.
  const std::string path = WriteTraceFile("s_golden.jsonl",
      R"({"chat_id": 1, "parent_chat_id": -1, "timestamp": 0, "input_length": 10, "output_length": 3}
{"chat_id": 2, "parent_chat_id": 1, "timestamp": 1.0, "input_length": 20, "output_length": 3}
{"chat_id": 3, "parent_chat_id": 2, "timestamp": 1.001, "input_length": 30, "output_length": 2}
{"chat_id": 4, "parent_chat_id": 3, "timestamp": 1.2, "input_length": 40, "output_length": 2, "time_to_parent_chat": 0.5}
{"chat_id": 5, "parent_chat_id": -1, "timestamp": 2.0, "input_length": 10, "output_length": 3}
)");
  const servesim::Scenario sc = MustParse(SessionsScenario(path));
  SimulationOutput out;
  RunScenario(sc, &out, /*check_invariants=*/true);
  ASSERT_EQ(out.requests.size(), 5u);
  const double arrival_ms[] = {0, 1000, 1006, 1511.5, 2000};
  const double finish_ms[] = {5, 1006, 1011.5, 1518, 2005};
  const int32_t turn[] = {0, 1, 2, 3, 0};
  const int64_t parent[] = {-1, 0, 1, 2, -1};
  for (size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    const Request& r = out.requests[i];
    // Step times are summed in nanoseconds: within a nanosecond of each.
    EXPECT_NEAR(r.arrival, FromSeconds(arrival_ms[i] / 1e3), 2);
    EXPECT_EQ(r.send, r.arrival);
    EXPECT_NEAR(r.finish, FromSeconds(finish_ms[i] / 1e3), 2);
    EXPECT_EQ(r.session_turn, turn[i]);
    EXPECT_EQ(out.parent_request[i], parent[i]);
    EXPECT_EQ(r.content.stream_id, out.requests[i < 4 ? 0 : 4].content.stream_id);
  }
  EXPECT_NE(out.requests[0].content.stream_id, out.requests[4].content.stream_id);
  EXPECT_EQ(out.session_turns_dropped.total(), 0);
  EXPECT_NE(sc.ArrivalDescription().find("later turns sent after their "
                                         "parent's answer"),
            std::string::npos);
  // time_scale stretches the gaps and the think time alike.
  const servesim::Scenario slow =
      MustParse(SessionsScenario(path, R"(, "time_scale": 2)"));
  SimulationOutput out2;
  RunScenario(slow, &out2, true);
  EXPECT_EQ(out2.requests[1].arrival, FromSeconds(2.0));
  EXPECT_EQ(out2.requests[3].arrival,
            out2.requests[2].finish + FromSeconds(1.0));
  EXPECT_EQ(out2.requests[4].arrival, FromSeconds(4.0));
}

TEST(TraceSessionsReplay, LaterTurnsHitTheirSessionsCachedHistory) {
  // With prefix caching, turn 2's prompt (the history plus new input)
  // finds turn 1's prompt and answer cached; an unrelated session's first
  // turn of the same length finds nothing.
  const std::string path = WriteTraceFile("s_cache.jsonl",
      R"({"chat_id": 1, "parent_chat_id": -1, "timestamp": 0, "input_length": 64, "output_length": 17}
{"chat_id": 2, "parent_chat_id": 1, "timestamp": 1, "input_length": 100, "output_length": 2}
{"chat_id": 3, "parent_chat_id": -1, "timestamp": 2, "input_length": 100, "output_length": 2}
)");
  const servesim::Scenario sc = MustParse(LinearScenario(
      R"("step_s": 0.001, "prefill_token_s": 0.0001, "decode_seq_s": 0.0005)",
      R"("trace": {"path": ")" + path + R"(", "format": "sessions"})",
      R"("prefix_caching": true)"));
  SimulationOutput out;
  RunScenario(sc, &out, true);
  ASSERT_EQ(out.requests.size(), 3u);
  EXPECT_EQ(out.requests[1].cached_tokens, 80);  // 5 full blocks of 16
  EXPECT_EQ(out.requests[2].cached_tokens, 0);
}

TEST(TraceSessionsReplay, RejectedParentDropsItsLaterTurnsAndBoundsDropToo) {
  // Turn 1's prompt cannot fit the KV cache (rejected); its turns 2 and 3
  // are never created; session B runs.
  const std::string path = WriteTraceFile("s_drop.jsonl",
      R"({"chat_id": 1, "parent_chat_id": -1, "timestamp": 0, "input_length": 5000, "output_length": 3}
{"chat_id": 9, "parent_chat_id": -1, "timestamp": 0.5, "input_length": 10, "output_length": 3}
{"chat_id": 2, "parent_chat_id": 1, "timestamp": 1, "input_length": 5100, "output_length": 3}
{"chat_id": 3, "parent_chat_id": 2, "timestamp": 2, "input_length": 5200, "output_length": 3}
{"chat_id": 10, "parent_chat_id": 9, "timestamp": 3, "input_length": 30, "output_length": 3}
)");
  const servesim::Scenario sc =
      MustParse(SessionsScenario(path, "", R"(, "num_gpu_blocks": 100)"));
  SimulationOutput out;
  RunScenario(sc, &out, true);
  ASSERT_EQ(out.requests.size(), 3u);
  EXPECT_EQ(out.requests[0].status, RequestStatus::kRejected);
  EXPECT_EQ(out.requests[2].arrival, FromSeconds(3.0));
  EXPECT_EQ(out.parent_request[2], 1);
  EXPECT_EQ(out.session_turns_dropped.parent_rejected, 2);
  EXPECT_EQ(out.session_turns_dropped.total(), 2);
  // num_requests 2: the third request is never created.
  const servesim::Scenario two = MustParse(
      SessionsScenario(path, "", R"(, "num_gpu_blocks": 100)"),
      {"workload.num_requests=2"});
  SimulationOutput out2;
  RunScenario(two, &out2, true);
  EXPECT_EQ(out2.requests.size(), 2u);
}

TEST(TraceSessionsReplay, ScenarioChecks) {
  const std::string path = WriteTraceFile("s_check.jsonl",
      R"({"chat_id": 1, "parent_chat_id": -1, "timestamp": 0, "input_length": 10, "output_length": 3})"
      "\n");
  const StatusOr<servesim::Scenario> sc = ParseScenario(
      SessionsScenario(path, R"(, "use_timestamps": false)"), "s.json", {});
  ASSERT_FALSE(sc.ok());
  EXPECT_NE(sc.status().message().find(
                "s.json: /workload/trace/use_timestamps: expected true: the "
                "sessions format"),
            std::string::npos)
      << sc.status().message();
  EXPECT_EQ(GuessTraceFormat(path), TraceFormat::kSessions);
}

// The shipped agentic fixture (187 turns in 60 sessions, fan-outs, given
// think times, 0-token answers) on a small cluster under every invariant.
TEST(TraceSessionsReplay, AgenticFixtureUnderInvariants) {
  const servesim::Scenario sc = MustParse(LinearScenario(
      R"("step_s": 0.004, "prefill_token_s": 0.00002, "decode_seq_s": 0.0002)",
      R"("trace": {"path": "tests/workload/data/agentic_sessions.jsonl",
                   "format": "sessions", "time_scale": 0.2})",
      R"("prefix_caching": true, "max_num_seqs": 8)"));
  SimulationOutput out;
  RunScenario(sc, &out, true);
  EXPECT_EQ(static_cast<int64_t>(out.requests.size()) +
                out.session_turns_dropped.total(),
            187);
  EXPECT_EQ(out.session_turns_dropped.total(), 0);
  EXPECT_GT(sc.trace_notes.zero_output_records, 0);
  int64_t later = 0, hits = 0;
  for (const Request& r : out.requests) {
    if (out.parent_request[r.id] < 0) continue;
    ++later;
    hits += r.cached_tokens > 0;
  }
  EXPECT_EQ(later, 127);
  EXPECT_GT(hits, later / 2);
}

}  // namespace
}  // namespace servesim
