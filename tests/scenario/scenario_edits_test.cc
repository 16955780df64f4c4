// Typed scenario edits (sim/scenario/scenario_edits.h) against the loader:
// each variant must be exactly what loading a file with its JSON gives (the
// same effective JSON, the same run, the same refusal), must change what it
// names, and must not read a trace again.
#include "sim/scenario/scenario_edits.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/analysis/saturation.h"
#include "sim/analysis/search.h"
#include "sim/core/paths.h"
#include "sim/report/writers.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

Scenario Load(const std::string& file, const std::vector<std::string>& sets = {}) {
  StatusOr<Scenario> sc = LoadScenarioFile(ResolveDataPath(file), sets);
  if (!sc.ok()) throw std::runtime_error(sc.status().message());
  return std::move(sc.value());
}

std::string RunJson(const Scenario& sc) {
  return ResultJson(sc, testing::RunScenario(sc)).dump();
}

// The edit succeeded and equals the loader given its JSON, run included.
void ExpectAsLoaded(const StatusOr<Scenario>& edited, const std::string& what,
                    const ScenarioParseOptions& options = {}) {
  ASSERT_TRUE(edited.ok()) << what << ": " << edited.status().message();
  StatusOr<Scenario> loaded = ParseScenario(edited->json.dump(), edited->file, {}, options);
  ASSERT_TRUE(loaded.ok()) << what << ": " << loaded.status().message();
  EXPECT_EQ(edited->json, loaded->json) << what;
  EXPECT_EQ(edited->engine.num_gpu_blocks, loaded->engine.num_gpu_blocks) << what;
  EXPECT_EQ(edited->trace_records, loaded->trace_records) << what;
  EXPECT_EQ(edited->ArrivalDescription(), loaded->ArrivalDescription()) << what;
  if (!edited->no_room) {
    EXPECT_EQ(RunJson(edited.value()), RunJson(loaded.value())) << what;
  }
}

// Small runs of the default chat scenario.
Scenario Chat() { return Load("scenarios/default_chat.json", {"workload.num_requests=300"}); }

TEST(ScenarioEdits, TrafficEditsAreWhatTheLoaderGives) {
  const Scenario base = Chat();
  StatusOr<Scenario> rate = WithRate(base, 7.5);
  ExpectAsLoaded(rate, "rate");
  EXPECT_DOUBLE_EQ(rate->OfferedRate(), 7.5);

  StatusOr<Scenario> gamma = WithOpenLoop(base, 6, 0.25);
  ExpectAsLoaded(gamma, "gamma");
  EXPECT_NE(gamma->ArrivalDescription().find("gamma"), std::string::npos);

  StatusOr<Scenario> closed = WithClosedLoop(base, 12);
  ExpectAsLoaded(closed, "closed loop");
  EXPECT_TRUE(closed->workload.closed_loop);
  EXPECT_EQ(closed->workload.concurrency, 12);

  StatusOr<Scenario> n = WithNumRequests(base, 123);
  ExpectAsLoaded(n, "num_requests");
  EXPECT_EQ(n->workload.num_requests, 123);

  StatusOr<Scenario> w = WithWarmupRequests(base, 40);
  ExpectAsLoaded(w, "warmup_requests");
  EXPECT_EQ(w->metrics.warmup_requests, 40);

  StatusOr<Scenario> fleet = WithFleet(base, 3, "least_outstanding");
  ExpectAsLoaded(fleet, "fleet");
  EXPECT_EQ(fleet->num_replicas, 3);
  EXPECT_EQ(fleet->router.name, "least_outstanding");
}

// The saturating loop for mu: a client's own time outside the server is
// not service. With 8 clients, 10 ms of output streaming and up to 40 ms of
// jitter per request left this engine (4 sequences a step, steps of a few
// ms) mostly idle, and mu came out 2.3 times below what a 19-client closed
// loop of the same scenario achieved (fuzzer seed 901430); the API
// server's work stays in.
TEST(ScenarioEdits, TheSaturatingLoopLeavesNoClientTimeOutsideTheServer) {
  const Scenario base = Load("scenarios/default_chat.json",
                             {"workload.num_requests=300", "engine.max_num_seqs=4",
                              R"(workload.input_len={"dist": "fixed", "value": 16})",
                              R"(workload.output_len={"dist": "fixed", "value": 2})",
                              R"(frontend={"enabled": true, "output_s": 0.01,
                                           "client_jitter_s": 0.04, "request_s": 0.001})"});
  StatusOr<Scenario> sat = WithSaturatingLoop(base, 8);
  ExpectAsLoaded(sat, "saturating loop");
  EXPECT_TRUE(sat->workload.closed_loop);
  EXPECT_EQ(sat->workload.concurrency, 8);
  EXPECT_TRUE(sat->frontend.enabled);
  EXPECT_EQ(sat->frontend.output_s, 0);
  EXPECT_EQ(sat->frontend.client_turnaround_s, 0);
  EXPECT_EQ(sat->frontend.client_jitter_s, 0);
  EXPECT_EQ(sat->frontend.engine_hop_s, 0);
  EXPECT_EQ(sat->frontend.request_s, 0.001);
  // mu with the frontend's client time is no more than a few percent off
  // mu without a frontend at all (the API server adds its 1 ms a request,
  // in parallel with the engine's steps).
  StatusOr<SaturationEstimate> with = EstimateSaturation(base);
  StatusOr<Scenario> bare = ParseScenario(base.json.dump(), base.file,
                                          {R"(frontend={"enabled": false})"});
  ASSERT_TRUE(with.ok() && bare.ok());
  StatusOr<SaturationEstimate> without = EstimateSaturation(bare.value());
  ASSERT_TRUE(without.ok());
  EXPECT_NEAR(with->mu_rps / without->mu_rps, 1, 0.05)
      << with->mu_rps << " vs " << without->mu_rps;
  // (The plain closed loop of the same clients, its client time kept, is
  // what the estimate used to run: a third below.)
  StatusOr<Scenario> kept = WithClosedLoop(base, 8);
  ASSERT_TRUE(kept.ok());
  SimulationOutput kept_out;
  testing::RunScenario(kept.value(), &kept_out);
  const SaturationEstimate low = SaturationFromRequests(kept_out.requests);
  EXPECT_LT(low.mu_rps, 0.8 * without->mu_rps) << low.mu_rps << " vs " << without->mu_rps;
  // Without a frontend it is the plain closed loop.
  StatusOr<Scenario> plain = WithSaturatingLoop(bare.value(), 8);
  StatusOr<Scenario> closed = WithClosedLoop(bare.value(), 8);
  ASSERT_TRUE(plain.ok() && closed.ok());
  EXPECT_EQ(plain->json, closed->json);
}

TEST(ScenarioEdits, DeploymentReplansMemoryAndCost) {
  const Scenario base = Chat();
  Deployment d;
  d.gpu = "h100-sxm";
  d.tp = 2;
  d.max_num_seqs = 64;
  d.max_num_batched_tokens = 4096;
  d.chunked_prefill = false;
  StatusOr<Scenario> sc = WithDeployment(base, d);
  ExpectAsLoaded(sc, "deployment", {.defer_fit = true});
  EXPECT_EQ(sc->gpu.name, "h100-sxm");
  EXPECT_EQ(sc->tp, 2);
  EXPECT_EQ(sc->engine.max_num_seqs, 64);
  EXPECT_EQ(sc->engine.max_num_batched_tokens, 4096);
  EXPECT_FALSE(sc->engine.chunked_prefill);
  EXPECT_NE(sc->engine.num_gpu_blocks, base.engine.num_gpu_blocks);  // replanned

  // A GPU too small for the model: recorded, not refused (the caller says
  // which candidates fit).
  Deployment small;
  small.gpu = "l40s";
  const Scenario big = Load("scenarios/default_chat.json", {"model=llama-3.1-70b",
                                                              "hardware.tp=4"});
  StatusOr<Scenario> unfit = WithDeployment(big, small);
  ASSERT_TRUE(unfit.ok()) << unfit.status().message();
  EXPECT_TRUE(unfit->no_room.has_value());
}

// Another engine on its own defaults, and the deployment's limits in its
// words: SGLang's request limit, chunk or prefill budget; a limit of 0 left
// to SGLang's default for the GPU.
TEST(ScenarioEdits, EngineAndItsLimitsInItsOwnWords) {
  const Scenario base = Chat();
  StatusOr<Scenario> sg = WithEngine(base, EngineKind::kSglang);
  ExpectAsLoaded(sg, "sglang", {.defer_fit = true});
  EXPECT_EQ(sg->engine.kind, EngineKind::kSglang);
  EXPECT_EQ(sg->json["engine"], nlohmann::json({{"kind", "sglang"}}));
  EXPECT_EQ(sg->engine.sglang.chunked_prefill_size, 8192);  // an H200's default
  StatusOr<Scenario> back = WithEngine(*sg, EngineKind::kVllm);
  ExpectAsLoaded(back, "vllm", {.defer_fit = true});
  EXPECT_EQ(back->engine.kind, EngineKind::kVllm);
  // vLLM's defaults for an H200, nothing of SGLang's.
  EXPECT_EQ(back->engine.max_num_seqs, 1024);
  EXPECT_EQ(back->engine.max_num_batched_tokens, 8192);
  EXPECT_EQ(back->engine.block_size, 16);

  Deployment d;
  d.gpu = "h100-sxm";
  d.tp = 1;
  d.max_num_seqs = 64;
  d.max_num_batched_tokens = 0;  // SGLang's default for an H100
  d.chunked_prefill = true;
  StatusOr<Scenario> dep = WithDeployment(*sg, d);
  ExpectAsLoaded(dep, "sglang deployment", {.defer_fit = true});
  EXPECT_EQ(dep->engine.sglang.max_running_requests, 64);
  EXPECT_EQ(dep->engine.sglang.chunked_prefill_size, 8192);
  EXPECT_FALSE(dep->json["engine"]["sglang"].contains("chunked_prefill_size"));
  d.chunked_prefill = false;
  d.max_num_batched_tokens = 4096;
  StatusOr<Scenario> unchunked = WithDeployment(*sg, d);
  ExpectAsLoaded(unchunked, "sglang unchunked", {.defer_fit = true});
  EXPECT_EQ(unchunked->engine.sglang.chunked_prefill_size, -1);
  EXPECT_EQ(unchunked->engine.sglang.max_prefill_tokens, 4096);
}

// vLLM on another GPU: limits the scenario left out (0) are vllm serve's
// for that GPU; limits it gives travel with it.
TEST(ScenarioEdits, VllmDeploymentTakesTheGpusDefaultsUnlessGiven) {
  Deployment on_a100;  // both limits left to vLLM (0)
  on_a100.gpu = "a100-80gb";
  on_a100.max_num_seqs = 0;
  on_a100.max_num_batched_tokens = 0;
  const Scenario base = Chat();  // gives neither limit
  StatusOr<Scenario> a100 = WithDeployment(base, on_a100);
  ExpectAsLoaded(a100, "a100", {.defer_fit = true});
  EXPECT_EQ(a100->engine.max_num_seqs, 256);
  EXPECT_EQ(a100->engine.max_num_batched_tokens, 2048);
  EXPECT_FALSE(a100->json["engine"].contains("max_num_seqs"));
  const SearchSpace space = CompleteSpace({}, base);
  EXPECT_EQ(space.max_num_seqs, std::vector<int>{0});
  EXPECT_EQ(space.max_num_batched_tokens, std::vector<int>{0});

  const Scenario given = Load("scenarios/default_chat.json",
                              {"workload.num_requests=300", "engine.max_num_seqs=64"});
  StatusOr<Scenario> moved = WithDeployment(given, on_a100);
  ExpectAsLoaded(moved, "a100 given", {.defer_fit = true});
  EXPECT_EQ(moved->engine.max_num_seqs, 64);
  EXPECT_EQ(moved->engine.max_num_batched_tokens, 2048);
  EXPECT_EQ(CompleteSpace({}, given).max_num_seqs, std::vector<int>{64});
}

TEST(ScenarioEdits, PdSplitResizesThePools) {
  const Scenario base = Load("scenarios/disagg_arxiv_pd_ratio.json",
                             {"workload.num_requests=200", "metrics.warmup_requests=20"});
  StatusOr<Scenario> sc = WithPdSplit(base, 2, 4);
  ExpectAsLoaded(sc, "split");
  ASSERT_TRUE(sc->disagg.has_value());
  EXPECT_EQ(sc->disagg->prefill.replicas, 2);
  EXPECT_EQ(sc->disagg->decode.replicas, 4);
  EXPECT_EQ(sc->num_replicas, 6);
}

TEST(ScenarioEdits, RefusalsAreTheLoadersOwn) {
  const Scenario base = Chat();
  StatusOr<Scenario> bad = WithRate(base, -1);
  ASSERT_FALSE(bad.ok());
  nlohmann::json j = base.json;
  j["workload"]["arrival"]["rate"] = -1;
  StatusOr<Scenario> loaded = ParseScenario(j.dump(), base.file, {});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(bad.status().message(), loaded.status().message());
  EXPECT_NE(bad.status().message().find("/workload/arrival/rate"), std::string::npos);

  // Sessions need open-loop arrivals: a closed loop is refused by the
  // sessions check, as a file with it would be.
  const Scenario sessions = Load("scenarios/multi_turn_chat.json");
  StatusOr<Scenario> closed = WithClosedLoop(sessions, 4);
  ASSERT_FALSE(closed.ok());
  EXPECT_NE(closed.status().message().find("/workload"), std::string::npos)
      << closed.status().message();

  StatusOr<Scenario> tp = WithDeployment(base, {.gpu = "h200", .tp = 3, .max_num_seqs = {},
                                                .max_num_batched_tokens = {},
                                                .chunked_prefill = {}});
  ASSERT_FALSE(tp.ok());
  EXPECT_NE(tp.status().message().find("/hardware/tp"), std::string::npos)
      << tp.status().message();
}

// An edit keeps the scan of an unchanged trace: the file is not read again
// (here it is gone), and its facts carry over; a changed /workload/trace is
// read afresh.
TEST(ScenarioEdits, ATraceIsNotReadAgain) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "servesim_scenario_edits_test";
  std::filesystem::create_directories(dir);
  const std::string trace = (dir / "t.jsonl").string();
  std::ofstream(trace) << R"({"prompt_tokens": 10, "completion_tokens": 5}
not json
{"prompt_tokens": 700, "completion_tokens": 77}
{"prompt_tokens": 20, "completion_tokens": 60}
)";
  const std::string spec = R"({"path": ")" + trace +
                           R"(", "format": "jsonl", "use_timestamps": false,
                               "max_bad_fraction": 0.5})";
  const Scenario base = Load("scenarios/default_chat.json",
                             {"workload.input_len=null", "workload.output_len=null",
                              "workload.num_requests=0", "workload.trace=" + spec});
  EXPECT_EQ(base.trace_records, 3);
  EXPECT_EQ(base.trace_bad_lines, 1);
  ExpectAsLoaded(WithRate(base, 3), "rate on a trace");

  std::filesystem::remove(trace);
  StatusOr<Scenario> rate = WithRate(base, 4);
  ASSERT_TRUE(rate.ok()) << rate.status().message();
  EXPECT_EQ(rate->trace_records, 3);
  EXPECT_EQ(rate->trace_bad_lines, 1);
  EXPECT_EQ(rate->trace_longest_tokens, 777);
  EXPECT_EQ(rate->TraceSkipNote(), base.TraceSkipNote());

  // Not the same trace: read, and here refused as missing.
  nlohmann::json j = base.json;
  j["workload"]["trace"]["max_bad_fraction"] = 0.6;
  StatusOr<Scenario> other = Rederive(base, j);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("t.jsonl"), std::string::npos)
      << other.status().message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace servesim
