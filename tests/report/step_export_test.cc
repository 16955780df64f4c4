// The per-step export (--save-steps): the rows of the hand-worked golden
// scenario exactly, JSON lines, thinning, step durations adding up to busy
// time, and atomic output (nothing appears on failure).
#include "sim/report/step_export.h"

#include <gtest/gtest.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "tests/report/step_output_util.h"

namespace servesim {
namespace {

using testing::MustParse;
using testing::ReadAll;
using testing::ScratchDir;
using testing::WriteAll;

// Runs `json` streaming every step into an exporter at `path`.
SimulationOutput RunExporting(const std::string& json, const std::string& path,
                              StepFilter filter = {}) {
  const Scenario sc = MustParse(json);
  SimulationInput in = sc.ToSimulationInput();
  in.check_invariants = true;
  auto e = StepExporter::Open(path, filter);
  EXPECT_TRUE(e.ok()) << e.status().message();
  in.on_step = [&](const StepRecord& r) { (*e)->Add(r); };
  SimulationOutput out = RunSimulation(in);
  const Status st = (*e)->Finish();
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream is(text);
  for (std::string l; std::getline(is, l);) lines.push_back(l);
  return lines;
}

// Engine.GoldenEventSequence's steps, worked by hand (times in ms):
//  step 0 [0, 2]     A prefill 10            gemm 10 x 0.1
//  step 1 [2, 4.5]   A decode, B prefill 10  gemm 10 x 0.1 + 0.5
//  step 2 [4.5, 6.5] A, B decode; A finishes gemm 2 x 0.5
//  step 3 [6.5, 8]   B decode; B finishes    gemm 0.5
// Every step pays the 1 ms overhead; a 10-token prompt fills one block and
// its decodes fit in it. The cache has 60,000 blocks, one of them vLLM's
// null block. After scheduling, the running queue holds A; A and B; A and
// B (A leaves when its last token is committed); B; nobody waits.
TEST(StepExport, GoldenRowsExactly) {
  ScratchDir dir;
  const std::string path = dir.Path("steps.csv");
  const SimulationOutput out =
      RunExporting(testing::GoldenTwoRequestScenario(), path);
  const std::string want =
      "step,replica,scheduled_ms,start_ms,end_ms,duration_ms,num_seqs,"
      "num_prefill_seqs,num_decode_seqs,num_tokens,prefill_tokens,"
      "decode_tokens,context_tokens,num_admitted,num_preempted,"
      "num_finishing,cached_tokens,kv_blocks_used,kv_blocks_free,"
      "kv_blocks_total,gemm_ms,attn_prefill_ms,attn_decode_ms,comm_ms,"
      "other_ms,overhead_ms,num_running,num_waiting,first_stage_end_ms,"
      "last_stage_start_ms,busy_ms\n"
      "0,0,0,0,2,2,1,1,0,10,10,0,0,1,0,0,0,1,59998,59999,1,0,0,0,0,1,1,0,2,0,2\n"
      "1,0,2,2,4.5,2.5,2,1,1,11,10,1,10,1,0,0,0,2,59997,59999,1.5,0,0,0,0,1,2,0,4.5,2,2.5\n"
      "2,0,4.5,4.5,6.5,2,2,0,2,2,0,2,21,0,0,1,0,2,59997,59999,1,0,0,0,0,1,2,0,6.5,4.5,2\n"
      "3,0,6.5,6.5,8,1.5,1,0,1,1,0,1,11,0,0,1,0,1,59998,59999,0.5,0,0,0,0,1,1,0,8,6.5,1.5\n";
  EXPECT_EQ(ReadAll(path), want);
  EXPECT_EQ(dir.List(), "steps.csv");  // no temporary file left behind
  // 2 + 2.5 + 2 + 1.5 ms of steps: the replica's busy time.
  EXPECT_NEAR(out.replicas[0].busy_s, 8e-3, 1e-15);
}

TEST(StepExport, JsonLinesByExtensionCarryTheSameColumns) {
  ScratchDir dir;
  RunExporting(testing::GoldenTwoRequestScenario(), dir.Path("steps.csv"));
  RunExporting(testing::GoldenTwoRequestScenario(), dir.Path("steps.jsonl"));
  const std::vector<std::string> csv = Lines(ReadAll(dir.Path("steps.csv")));
  const std::vector<std::string> jsonl =
      Lines(ReadAll(dir.Path("steps.jsonl")));
  ASSERT_EQ(csv.size(), jsonl.size() + 1);  // the header
  std::istringstream header(csv[0]);
  std::vector<std::string> columns;
  for (std::string c; std::getline(header, c, ',');) columns.push_back(c);
  ASSERT_EQ(columns.size(), static_cast<size_t>(kNumStepColumns));
  for (size_t k = 0; k < jsonl.size(); ++k) {
    const nlohmann::json j = nlohmann::json::parse(jsonl[k]);
    ASSERT_EQ(j.size(), columns.size());
    std::istringstream row(csv[k + 1]);
    size_t c = 0;
    for (std::string v; std::getline(row, v, ','); ++c) {
      SCOPED_TRACE(columns[c]);
      ASSERT_TRUE(j.contains(columns[c]));
      EXPECT_DOUBLE_EQ(j[columns[c]].get<double>(), std::stod(v));
    }
    EXPECT_EQ(c, columns.size());
  }
  EXPECT_EQ(nlohmann::json::parse(jsonl[1])["duration_ms"].get<double>(), 2.5);
}

// Fixed-point milliseconds back to integer nanoseconds (exact).
// Exact nanoseconds from "S[.F]" milliseconds (F: 1 to 6 digits).
int64_t ParseNanos(const std::string& ms) {
  const size_t dot = ms.find('.');
  const int64_t whole = std::stoll(ms.substr(0, dot)) * 1'000'000;
  if (dot == std::string::npos) return whole;
  std::string frac = ms.substr(dot + 1);
  frac.resize(6, '0');
  return whole + std::stoll(frac);
}

TEST(StepExport, StepDurationsAddUpToEachReplicasBusyTime) {
  ScratchDir dir;
  const std::string path = dir.Path("steps.csv");
  const SimulationOutput out =
      RunExporting(testing::TwoReplicaScenario(400), path);
  const std::vector<std::string> lines = Lines(ReadAll(path));
  std::vector<int64_t> busy_ns(2, 0), steps(2, 0);
  int64_t preempted = 0, previous = -1;
  for (size_t k = 1; k < lines.size(); ++k) {
    std::istringstream row(lines[k]);
    std::vector<std::string> v;
    for (std::string s; std::getline(row, s, ',');) v.push_back(s);
    ASSERT_EQ(v.size(), static_cast<size_t>(kNumStepColumns));
    EXPECT_EQ(std::stoll(v[0]), previous + 1);  // every step, in order
    previous = std::stoll(v[0]);
    const int r = std::stoi(v[1]);
    busy_ns[r] += ParseNanos(v[5]);
    EXPECT_EQ(ParseNanos(v[4]) - ParseNanos(v[3]), ParseNanos(v[5]));
    EXPECT_EQ(std::stoll(v[17]) + std::stoll(v[18]), std::stoll(v[19]));
    ++steps[r];
    preempted += std::stoll(v[14]);
  }
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(steps[r], out.replicas[r].steps);
    EXPECT_EQ(busy_ns[r], FromSeconds(out.replicas[r].busy_s))
        << "replica " << r;
  }
  EXPECT_GT(preempted, 0);  // the scenario exercises preemption
}

// Pipeline stages: rows overlap (each spans first stage in to last stage
// out), the stage columns lie inside the span, and busy_ms, not the
// durations, adds up to the replica's busy time.
TEST(StepExport, PipelineRowsCarryTheirStagesAndBusyShare) {
  ScratchDir dir;
  const std::string path = dir.Path("steps.csv");
  const SimulationOutput out = RunExporting(
      R"({"seed": 2, "model": "llama-3.1-8b", "hardware": {"gpu": "h100-sxm", "pp": 2},
          "engine": {"pipeline_decode_balance": true},
          "workload": {"arrival": {"process": "poisson", "rate": 30},
                       "input_len": {"dist": "uniform", "min": 20, "max": 600},
                       "output_len": {"dist": "uniform", "min": 5, "max": 200},
                       "num_requests": 200}})",
      path);
  const std::vector<std::string> lines = Lines(ReadAll(path));
  int64_t busy_ns = 0, duration_ns = 0, overlaps = 0, previous_end = -1;
  for (size_t k = 1; k < lines.size(); ++k) {
    std::istringstream row(lines[k]);
    std::vector<std::string> v;
    for (std::string s; std::getline(row, s, ',');) v.push_back(s);
    ASSERT_EQ(v.size(), static_cast<size_t>(kNumStepColumns));
    const int64_t start = ParseNanos(v[3]), end = ParseNanos(v[4]);
    const int64_t first_out = ParseNanos(v[28]), last_in = ParseNanos(v[29]);
    EXPECT_LT(start, first_out);
    EXPECT_LE(first_out, last_in);
    EXPECT_LT(last_in, end);
    busy_ns += ParseNanos(v[30]);
    duration_ns += ParseNanos(v[5]);
    overlaps += start < previous_end;
    previous_end = end;
  }
  EXPECT_EQ(busy_ns, FromSeconds(out.replicas[0].busy_s));
  EXPECT_GT(duration_ns, busy_ns);  // spans count both stages
  EXPECT_GT(overlaps, 0);
}

TEST(StepExport, EveryNthStepKeepsItsIndex) {
  ScratchDir dir;
  RunExporting(testing::TwoReplicaScenario(100), dir.Path("all.csv"));
  RunExporting(testing::TwoReplicaScenario(100), dir.Path("thin.csv"),
               StepFilter{.every = 7});
  const std::vector<std::string> all = Lines(ReadAll(dir.Path("all.csv")));
  const std::vector<std::string> thin = Lines(ReadAll(dir.Path("thin.csv")));
  ASSERT_GT(all.size(), 50u);
  ASSERT_EQ(thin.size(), 1 + (all.size() - 1 + 6) / 7);
  for (size_t k = 1; k < thin.size(); ++k)
    EXPECT_EQ(thin[k], all[1 + 7 * (k - 1)]);
}

TEST(StepExport, ATimeWindowKeepsTheStepsStartingInIt) {
  ScratchDir dir;
  RunExporting(testing::TwoReplicaScenario(100), dir.Path("all.csv"));
  const SimTime from = 500'000'000, until = 1'500'000'000;  // [0.5 s, 1.5 s)
  RunExporting(testing::TwoReplicaScenario(100), dir.Path("window.csv"),
               StepFilter{.from = from, .until = until});
  std::vector<std::string> want;
  for (const std::string& l : Lines(ReadAll(dir.Path("all.csv")))) {
    const size_t c2 = l.find(',', l.find(',') + 1);
    if (!std::isdigit(l[0])) continue;  // header
    const std::string start = l.substr(l.find(',', c2 + 1) + 1);
    const int64_t ns = ParseNanos(start.substr(0, start.find(',')));
    if (ns >= from && ns < until) want.push_back(l);
  }
  const std::vector<std::string> got = Lines(ReadAll(dir.Path("window.csv")));
  ASSERT_GT(want.size(), 10u);
  EXPECT_EQ(std::vector<std::string>(got.begin() + 1, got.end()), want);
}

TEST(StepExport, ManyBatchesThroughTheWriterThreadKeepOrderAndContent) {
  // More rows than the batches in flight can hold, so the run blocks on the
  // writer and the writer drains batch after batch: the file must equal
  // formatting each row in order.
  ScratchDir dir;
  const std::string path = dir.Path("steps.csv");
  auto e = StepExporter::Open(path);
  ASSERT_TRUE(e.ok());
  const int64_t n =
      3 * StepExporter::kBatchRows * StepExporter::kMaxBatchesInFlight + 17;
  std::string want = std::string(StepColumnsCsv()) + "\n";
  char buf[kMaxStepRowBytes];
  for (int64_t k = 0; k < n; ++k) {
    StepRecord r;
    r.replica = static_cast<int32_t>(k % 3);
    r.start = 1000 * k + 7;
    r.end = r.start + 250 + k;
    r.num_seqs = static_cast<int32_t>(k % 257);
    r.gemm_s = 1e-9 * static_cast<double>(k);
    (*e)->Add(r);
    want.append(buf, FormatStepCsv(k, r, buf));
  }
  ASSERT_TRUE((*e)->Finish().ok());
  EXPECT_EQ((*e)->rows(), n);
  EXPECT_TRUE(ReadAll(path) == want);  // not EXPECT_EQ: megabytes of diff
}

TEST(StepExport, UnwritablePathFailsAtOpen) {
  ScratchDir dir;
  const std::string path = dir.Path("no_such_dir/steps.csv");
  auto e = StepExporter::Open(path);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(),
            path + ": cannot open for writing: No such file or directory");
}

TEST(StepExport, NothingAppearsUnlessFinished) {
  ScratchDir dir;
  {
    auto e = StepExporter::Open(dir.Path("steps.csv"));
    ASSERT_TRUE(e.ok());
    (*e)->Add(StepRecord{});
    EXPECT_NE(dir.List().find("steps.csv.tmp."), std::string::npos);
  }  // dropped without Finish(): the run failed
  EXPECT_EQ(dir.List(), "");
}

TEST(StepExport, ClosedExportReplacesTheOldFileWholeEvenUnfinished) {
  // Close() hands the file to the writer thread, which puts it in place
  // while the caller goes on (the summary); Finish() waits for it. Dropped
  // after Close() (a later output failed) the export is still whole.
  ScratchDir dir;
  const std::string path = dir.Path("steps.csv");
  WriteAll(path, "old\n");  // an earlier run's file
  std::string want = std::string(StepColumnsCsv()) + "\n";
  char buf[kMaxStepRowBytes];
  {
    auto e = StepExporter::Open(path);
    ASSERT_TRUE(e.ok());
    for (int64_t k = 0; k < 3000; ++k) {
      StepRecord r;
      r.start = 10 * k;
      r.end = r.start + 7;
      (*e)->Add(r);
      want.append(buf, FormatStepCsv(k, r, buf));
    }
    (*e)->Close();
  }
  EXPECT_EQ(dir.List(), "steps.csv");
  EXPECT_TRUE(ReadAll(path) == want);
  auto e = StepExporter::Open(path);
  ASSERT_TRUE(e.ok());
  (*e)->Close();
  ASSERT_TRUE((*e)->Finish().ok());
  EXPECT_EQ(ReadAll(path), std::string(StepColumnsCsv()) + "\n");
  EXPECT_EQ(dir.List(), "steps.csv");
}

TEST(StepExport, MillisecondsAreExactAndShortest) {
  char buf[64];
  auto f = [&](int64_t ns) {
    return std::string(buf, FormatNanosAsMillis(ns, buf));
  };
  EXPECT_EQ(f(0), "0");
  EXPECT_EQ(f(1), "0.000001");
  EXPECT_EQ(f(4'500'000), "4.5");
  EXPECT_EQ(f(2'000'000), "2");
  EXPECT_EQ(f(10'000'000), "10");
  EXPECT_EQ(f(1'000'010), "1.00001");
  EXPECT_EQ(f(1'230'000), "1.23");
  EXPECT_EQ(f(123'456'789'012), "123456.789012");
  EXPECT_EQ(f(-1'500'000), "-1.5");
  EXPECT_EQ(f(-1'000'000), "-1");
}

}  // namespace
}  // namespace servesim
