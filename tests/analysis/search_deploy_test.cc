// `servesim search`'s deployment files (sim/analysis/search_deploy.cc): a
// vllm serve line vLLM starts with (--max-model-len within the simulated KV
// cache, a token budget >= it with chunked prefill off, the served instruct
// id), the simulated settings as vLLM flags or notes, and the manifests.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "sim/analysis/capacity_plan.h"
#include "sim/analysis/runs.h"
#include "sim/analysis/search.h"
#include "sim/core/paths.h"
#include "sim/engine/scheduler.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

Scenario Load(const std::vector<std::string>& sets) {
  StatusOr<Scenario> sc = LoadScenarioFile(ResolveDataPath("scenarios/capacity_plan.json"), sets);
  EXPECT_TRUE(sc.ok()) << sc.status().message();
  return sc.ok() ? *sc : Scenario{};
}

// The value after `flag` in args, or "" when the flag is absent.
std::string ArgAfter(const std::vector<std::string>& args, const std::string& flag) {
  const auto it = std::find(args.begin(), args.end(), flag);
  return it == args.end() || it + 1 == args.end() ? "" : *(it + 1);
}

bool HasArg(const std::vector<std::string>& args, const std::string& arg) {
  return std::find(args.begin(), args.end(), arg) != args.end();
}

SearchOptions Options(double target_rate) {
  SearchOptions o;
  StatusOr<std::vector<SloTerm>> slo = ParseSlo("ttft_p99=1s,tpot_p99=50ms");
  EXPECT_TRUE(slo.ok());
  o.capacity.slo = *slo;
  o.capacity.progress = false;
  o.target_rate = target_rate;
  return o;
}

// Issue 28 item 5: Llama-3.1-70B on 2 x H100 holds ~27k tokens of KV, far
// below the model's 131072-token context that vLLM would default to.
TEST(SearchDeploy, SeventyBOnTwoH100sServesWhatItsKvCacheHolds) {
  const Scenario base = Load({"model=llama-3.1-70b", "hardware.tp=2", "hardware.gpu=h100-sxm",
                              "workload.num_requests=400", "metrics.warmup_requests=40"});
  SearchSpace space;
  space.chunked_prefill = {true, false};
  StatusOr<PriceTable> prices = LoadPriceTable(DefaultPriceTablePath());
  ASSERT_TRUE(prices.ok());
  StatusOr<SearchResult> r = SearchDeployments(base, space, Options(20), *prices);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 2u);
  for (const SearchRow& row : r->rows) {
    const SearchCandidate& c = row.candidate;
    ASSERT_TRUE(row.status == SearchRow::Status::kEvaluated ||
                row.status == SearchRow::Status::kPruned)
        << c.Name() << ": " << row.note;
    // The KV cache of the candidate as simulated, sized independently.
    StatusOr<Scenario> sim = testing::Reloaded(base, [&c](nlohmann::json& j) {
      j["engine"]["max_num_batched_tokens"] = c.max_num_batched_tokens;
      j["engine"]["chunked_prefill"] = c.chunked_prefill;
    });
    ASSERT_TRUE(sim.ok()) << sim.status().message();
    const int64_t kv_tokens =
        int64_t{sim->engine.num_gpu_blocks - Scheduler::kReservedBlocks} * sim->engine.block_size;
    const VllmServeLine line = VllmServe(base, row);
    EXPECT_EQ(line.args[0], "serve");
    EXPECT_EQ(line.args[1], "meta-llama/Llama-3.1-70B-Instruct");
    const int64_t max_model_len = std::stoll(ArgAfter(line.args, "--max-model-len"));
    EXPECT_GT(max_model_len, 8192) << c.Name();
    EXPECT_LE(max_model_len, kv_tokens) << c.Name();
    EXPECT_LT(max_model_len, base.model.max_context);
    // The workload's lengths are unbounded (default clamps): capped, and said.
    ASSERT_FALSE(line.notes.empty());
    EXPECT_NE(line.notes[0].find("is all the KV cache holds"), std::string::npos) << line.notes[0];
    // The budget on the line is the one simulated.
    const int64_t budget = std::stoll(ArgAfter(line.args, "--max-num-batched-tokens"));
    EXPECT_EQ(budget, c.max_num_batched_tokens);
    EXPECT_EQ(budget, sim->engine.max_num_batched_tokens);
    if (c.chunked_prefill) {
      EXPECT_EQ(budget, 8192);
      EXPECT_TRUE(HasArg(line.args, "--enable-chunked-prefill"));
    } else {
      // vLLM refuses max_num_batched_tokens < max_model_len without
      // chunking; raised no further than that (to within a KV block: one
      // token less of budget, and max_model_len would exceed it).
      EXPECT_GE(budget, max_model_len);
      EXPECT_LE(budget, max_model_len + sim->engine.block_size);
      EXPECT_EQ(row.asked_max_num_batched_tokens, 8192);
      EXPECT_NE(row.note.find("raised from 8192"), std::string::npos) << row.note;
      EXPECT_TRUE(HasArg(line.args, "--no-enable-chunked-prefill"));
    }
  }
}

// Two unchunked budgets below a bounded workload's longest request both
// rise to it: the second is the same candidate, listed and not run.
TEST(SearchDeploy, RaisedBudgetsThatMeetAreRunOnce) {
  const Scenario base = Load({"workload.input_len.max=3000", "workload.output_len.max=1000",
                              "workload.num_requests=400", "metrics.warmup_requests=40"});
  SearchSpace space;
  space.max_num_batched_tokens = {1024, 2048, 8192};
  space.chunked_prefill = {false};
  StatusOr<PriceTable> prices = LoadPriceTable(DefaultPriceTablePath());
  ASSERT_TRUE(prices.ok());
  SearchOptions o = Options(20);
  o.exhaustive = true;
  StatusOr<SearchResult> r = SearchDeployments(base, space, o, *prices);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 3u);
  EXPECT_EQ(r->rows[0].candidate.max_num_batched_tokens, 4000);
  EXPECT_EQ(r->rows[0].status, SearchRow::Status::kEvaluated);
  EXPECT_EQ(r->rows[1].candidate.max_num_batched_tokens, 4000);
  EXPECT_EQ(r->rows[1].status, SearchRow::Status::kDuplicate);
  EXPECT_NE(r->rows[1].note.find("the same candidate as row 1"), std::string::npos);
  EXPECT_EQ(r->rows[2].candidate.max_num_batched_tokens, 8192);  // already enough
  EXPECT_EQ(r->rows[2].asked_max_num_batched_tokens, 0);
  EXPECT_EQ(r->rows[2].deploy.tokens, 4000);
  EXPECT_EQ(r->rows[2].deploy.note, "");
}

// One row as the search leaves it, without running the search.
SearchRow RowOf(const Scenario& sc) {
  SearchRow row;
  row.candidate = {sc.gpu.name, sc.tp, sc.engine.max_num_seqs, sc.engine.max_num_batched_tokens,
                   sc.engine.chunked_prefill};
  row.deploy = PlanMaxModelLen(sc);
  row.replicas = 3;
  return row;
}

// A limit the search left to vLLM (0: its default for the candidate's GPU)
// is written as the value simulated there, never as 0.
TEST(SearchDeploy, LimitsLeftToVllmAreWrittenAsTheGpusDefaults) {
  const Scenario base = Load({});
  for (const auto& [gpu, seqs, tokens] :
       {std::tuple<const char*, const char*, const char*>{"h100-sxm", "1024", "8192"},
        {"a100-80gb", "256", "2048"}}) {
    SearchRow row = RowOf(base);
    row.candidate.gpu = gpu;
    row.candidate.max_num_seqs = 0;
    row.candidate.max_num_batched_tokens = 0;
    const VllmServeLine line = VllmServe(base, row);
    EXPECT_EQ(ArgAfter(line.args, "--max-num-seqs"), seqs) << gpu;
    EXPECT_EQ(ArgAfter(line.args, "--max-num-batched-tokens"), tokens) << gpu;
  }
}

TEST(SearchDeploy, SimulatedSettingsBecomeVllmFlagsOrNotes) {
  const Scenario plain = Load({"model.served_hf_id=acme/Llama-FT"});
  const VllmServeLine p = VllmServe(plain, RowOf(plain));
  EXPECT_EQ(p.args[1], "acme/Llama-FT");
  EXPECT_FALSE(HasArg(p.args, "--scheduling-policy"));
  EXPECT_FALSE(HasArg(p.args, "--speculative-config"));

  const Scenario prio = Load({"engine.policy=priority"});
  EXPECT_EQ(ArgAfter(VllmServe(prio, RowOf(prio)).args, "--scheduling-policy"), "priority");

  const Scenario lpm = Load({"engine.policy=lpm"});
  const VllmServeLine l = VllmServe(lpm, RowOf(lpm));
  EXPECT_FALSE(HasArg(l.args, "--scheduling-policy"));
  EXPECT_NE(l.notes.back().find("engine.policy lpm was simulated"), std::string::npos);

  const Scenario spec = Load(
      {R"(engine.speculative_decoding={"num_speculative_tokens": 3, "acceptance_rate": 0.7})"});
  const VllmServeLine s = VllmServe(spec, RowOf(spec));
  EXPECT_EQ(ArgAfter(s.args, "--speculative-config"),
            R"({"method": "ngram", "num_speculative_tokens": 3})");
  EXPECT_TRUE(HasArg(s.args, "--no-async-scheduling"));
  // A shell reads the JSON as one word.
  EXPECT_NE(s.CommandLine().find(
                R"( --speculative-config '{"method": "ngram", "num_speculative_tokens": 3}')"),
            std::string::npos)
      << s.CommandLine();
  EXPECT_NE(s.notes.back().find("mean acceptance 0.70"), std::string::npos);

  const Scenario offload =
      Load({"engine.prefix_caching=true", "engine.preemption=swap",
            R"(engine.kv_offload={"cpu_gib": 64})"});
  const VllmServeLine o = VllmServe(offload, RowOf(offload));
  EXPECT_EQ(ArgAfter(o.args, "--kv-offloading-size"), "64");
  EXPECT_EQ(ArgAfter(o.args, "--kv-offloading-backend"), "native");
  EXPECT_NE(o.notes.back().find("preemption swap"), std::string::npos);
  EXPECT_FALSE(HasArg(o.args, "--swap-space"));  // not a vLLM v1 flag
}

TEST(SearchDeploy, ManifestsAreADeploymentAndAServiceThatRunThePlan) {
  const Scenario sc = Load({"model=llama-3.1-70b", "hardware.tp=2", "hardware.gpu=h100-sxm",
                            R"(engine.speculative_decoding={"num_speculative_tokens": 2,
                               "acceptance_rate": 0.6})"});
  SearchResult r;
  r.rows = {RowOf(sc)};
  r.cheapest = 0;
  const std::string yaml = KubernetesManifest(sc, r);
  const size_t sep = yaml.find("\n---\n");
  ASSERT_NE(sep, std::string::npos);
  EXPECT_EQ(yaml.find("\n---\n", sep + 1), std::string::npos);
  const std::string deployment = yaml.substr(0, sep), service = yaml.substr(sep + 5);
  for (const char* want :
       {"kind: Deployment\n", "  replicas: 3\n", "image: vllm/vllm-openai:v0.33.0\n",
        "            - \"meta-llama/Llama-3.1-70B-Instruct\"\n",
        "            - \"--max-model-len\"\n            - \"" , "name: HF_TOKEN\n",
        "secretKeyRef:\n", "nvidia.com/gpu: 2\n", "mountPath: /dev/shm\n", "medium: Memory\n",
        "startupProbe:\n", "readinessProbe:\n", "livenessProbe:\n", "path: /health\n",
        R"(- "{\"method\": \"ngram\", \"num_speculative_tokens\": 2}")"}) {
    EXPECT_NE(deployment.find(want), std::string::npos) << want << "\n" << deployment;
  }
  EXPECT_NE(deployment.find("# --max-model-len " + std::to_string(r.rows[0].deploy.tokens)),
            std::string::npos);
  for (const char* want : {"kind: Service\n", "type: ClusterIP\n", "app: vllm-llama-3-1-70b\n",
                           "port: 8000\n"}) {
    EXPECT_NE(service.find(want), std::string::npos) << want << "\n" << service;
  }
}

}  // namespace
}  // namespace servesim
