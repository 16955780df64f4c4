// The Chrome-trace timeline (--save-timeline): parsed back with a JSON
// parser and checked against the trace event schema Perfetto and
// chrome://tracing read. Opening it in Perfetto's UI needs a browser and
// the network, so it is not tested here.
#include "sim/report/timeline.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/report/step_output_util.h"

namespace servesim {
namespace {

using nlohmann::json;
using testing::MustParse;
using testing::ReadAll;
using testing::ScratchDir;

struct Timeline {
  json trace;
  SimulationOutput out;
};

Timeline RunWithTimeline(const std::string& scenario, const std::string& path,
                         int64_t every = 1) {
  const StepFilter filter{.every = every};
  const Scenario sc = MustParse(scenario);
  SimulationInput in = sc.ToSimulationInput();
  auto w = TimelineWriter::Open(path, filter);
  EXPECT_TRUE(w.ok()) << w.status().message();
  in.on_step = [&](const StepRecord& r) { (*w)->Add(r); };
  Timeline t;
  t.out = RunSimulation(in);
  const Status st = (*w)->Finish(t.out.requests, t.out.end_time);
  EXPECT_TRUE(st.ok()) << st.message();
  t.trace = json::parse(ReadAll(path));
  return t;
}

TEST(Timeline, FollowsTheTraceEventSchema) {
  ScratchDir dir;
  const Timeline t =
      RunWithTimeline(testing::TwoReplicaScenario(500), dir.Path("t.json"));
  ASSERT_TRUE(t.trace.is_object());
  ASSERT_TRUE(t.trace.contains("traceEvents"));
  const json& events = t.trace["traceEvents"];
  ASSERT_TRUE(events.is_array());
  // (pid, tid) -> its slices as (start, end), microseconds.
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>>
      slices;
  std::map<std::string, int64_t> by_name;
  std::set<int64_t> request_tracks;
  for (const json& e : events) {
    SCOPED_TRACE(e.dump());
    for (const char* key : {"ph", "ts", "pid", "tid", "name"}) {
      ASSERT_TRUE(e.contains(key)) << key;
    }
    ASSERT_TRUE(e["ph"].is_string());
    ASSERT_TRUE(e["name"].is_string());
    ASSERT_TRUE(e["ts"].is_number());
    ASSERT_TRUE(e["pid"].is_number_integer());
    ASSERT_TRUE(e["tid"].is_number_integer());
    EXPECT_GE(e["ts"].get<double>(), 0);
    const std::string ph = e["ph"];
    // Steps (tid 0) and request phases share the names prefill / decode.
    ++by_name[ph + (e["tid"] == 0 ? ":" : ":request ") +
              e["name"].get<std::string>()];
    ASSERT_TRUE(ph == "X" || ph == "C" || ph == "i" || ph == "M") << ph;
    if (ph == "X") {
      ASSERT_TRUE(e.contains("dur"));
      ASSERT_TRUE(e["dur"].is_number());
      EXPECT_GE(e["dur"].get<double>(), 0);
      const double ts = e["ts"], dur = e["dur"];
      slices[{e["pid"], e["tid"]}].push_back({ts, ts + dur});
      ASSERT_TRUE(e["args"].is_object());
    }
    if (ph == "C") {
      ASSERT_TRUE(e["args"].is_object());
      for (const auto& [k, v] : e["args"].items())
        EXPECT_TRUE(v.is_number()) << k;
    }
    if (ph != "M" && e["tid"].get<int64_t>() > 0)
      request_tracks.insert(e["tid"].get<int64_t>());
  }
  // Slices of one track (a replica's steps, one request's phases) never
  // overlap.
  for (auto& [track, s] : slices) {
    std::sort(s.begin(), s.end());
    for (size_t k = 1; k < s.size(); ++k) {
      EXPECT_LE(s[k - 1].second, s[k].first + 1e-9)
          << "pid " << track.first << " tid " << track.second;
    }
  }
  // One step slice per step, with the --save-steps row as args.
  int64_t steps = 0;
  for (const auto& r : t.out.replicas) steps += r.steps;
  EXPECT_EQ(by_name["X:prefill"] + by_name["X:decode"] + by_name["X:mixed"],
            steps);
  EXPECT_EQ(by_name["C:running"], steps);
  EXPECT_EQ(by_name["C:kv_usage_pct"], steps);
  EXPECT_GT(by_name["C:waiting"], 0);
  EXPECT_EQ(by_name["M:process_name"], 2);
  // At most 200 requests have tracks, each queued → prefill → decode → done.
  EXPECT_EQ(request_tracks.size(), 200u);
  EXPECT_EQ(by_name["X:request queued"], 200);
  EXPECT_EQ(by_name["X:request prefill"], 200);
  EXPECT_EQ(by_name["i:request done"], 200);
  for (const json& e : events) {
    if (e["ph"] == "X" && e["tid"] == 0) {
      EXPECT_EQ(e["args"].size(), static_cast<size_t>(kNumStepColumns));
      EXPECT_NEAR(e["dur"].get<double>(),
                  e["args"]["duration_ms"].get<double>() * 1000, 1e-6);
      break;
    }
  }
}

TEST(Timeline, GoldenScenarioStepsAndLifecycles) {
  ScratchDir dir;
  const Timeline t =
      RunWithTimeline(testing::GoldenTwoRequestScenario(), dir.Path("t.json"));
  std::vector<std::string> steps;
  std::map<std::string, std::pair<double, double>> phases;  // "tid name"
  for (const json& e : t.trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const std::string name = e["name"];
    if (e["tid"] == 0) {
      steps.push_back(name + "@" + std::to_string(e["ts"].get<double>()));
    } else {
      phases[std::to_string(e["tid"].get<int>()) + " " + name] = {e["ts"],
                                                                  e["dur"]};
    }
  }
  EXPECT_EQ(steps, (std::vector<std::string>{
                       "prefill@0.000000", "mixed@2000.000000",
                       "decode@4500.000000", "decode@6500.000000"}));
  // A (tid 1): sent at 0, first step at 0, token at 2 ms, done at 6.5 ms.
  using P = std::pair<double, double>;
  EXPECT_EQ(phases["1 queued"], P(0, 0));
  EXPECT_EQ(phases["1 prefill"], P(0, 2000));
  EXPECT_EQ(phases["1 decode"], P(2000, 4500));
  // B (tid 2): sent at 1 ms, waits for step 2 at 2 ms, token at 4.5, done at 8.
  EXPECT_EQ(phases["2 queued"], P(1000, 1000));
  EXPECT_EQ(phases["2 prefill"], P(2000, 2500));
  EXPECT_EQ(phases["2 decode"], P(4500, 3500));
}

TEST(Timeline, ThinnedStepsAndNothingLeftOnFailure) {
  ScratchDir dir;
  const Timeline t =
      RunWithTimeline(testing::TwoReplicaScenario(100), dir.Path("t.json"), 10);
  int64_t steps = 0, slices = 0;
  for (const auto& r : t.out.replicas) steps += r.steps;
  for (const json& e : t.trace["traceEvents"]) {
    slices += e["ph"] == "X" && e["tid"] == 0;
  }
  EXPECT_EQ(slices, (steps + 9) / 10);
  {
    auto w = TimelineWriter::Open(dir.Path("failed.json"));
    ASSERT_TRUE(w.ok());
  }
  EXPECT_EQ(dir.List(), "t.json");
  auto bad = TimelineWriter::Open(dir.Path("missing/t.json"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            dir.Path("missing/t.json") +
                ": cannot open for writing: No such file or directory");
}

}  // namespace
}  // namespace servesim
