// Pipeline parallelism (hardware.pp): vLLM's split of the layers, stages
// that partition the model's memory and work, what pipelining does and does
// not buy (one stream is never faster; a full pipeline is), the KV cache
// of a pipeline against tensor parallelism on the same GPUs, the run-level
// invariants on runs and on broken records, and the combinations refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/cost/pipeline_cost_model.h"
#include "sim/model/model_loader.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

using testing::MustParse;
using testing::RunScenario;

std::vector<int> StageLayers(int layers, int pp) {
  std::vector<int> n;
  for (int r = 0; r < pp; ++r) {
    n.push_back(PipelineStageStart(layers, pp, r + 1) - PipelineStageStart(layers, pp, r));
  }
  return n;
}

// vLLM's get_pp_indices: layers / pp each, one more each for the
// remainder's stages counted back from the one before the last.
TEST(Pipeline, StagesSplitTheLayersAsVllmDoes) {
  EXPECT_EQ(StageLayers(80, 4), (std::vector<int>{20, 20, 20, 20}));
  EXPECT_EQ(StageLayers(80, 3), (std::vector<int>{27, 27, 26}));
  EXPECT_EQ(StageLayers(61, 8), (std::vector<int>{7, 7, 8, 8, 8, 8, 8, 7}));
  EXPECT_EQ(StageLayers(36, 5), (std::vector<int>{7, 7, 7, 8, 7}));
  EXPECT_EQ(StageLayers(7, 3), (std::vector<int>{2, 3, 2}));
}

// The stages hold every layer once, the dense and windowed ones included,
// and between them the whole model's weights and KV (a tied embedding
// once more: the first and the last stage each keep the matrix).
TEST(Pipeline, StagesPartitionTheModel) {
  for (const char* name : {"llama-3.1-70b", "deepseek-v3", "gpt-oss-120b", "qwen3-1.7b"}) {
    const ModelSpec m = LoadModelSpec(name);
    for (int pp : {2, 3, 4, 7}) {
      SCOPED_TRACE(std::string(name) + " pp=" + std::to_string(pp));
      int layers = 0, dense = 0, windowed = 0;
      double weights = 0, kv = 0;
      for (int r = 0; r < pp; ++r) {
        const ModelSpec s = m.PipelineStage(pp, r);
        layers += s.num_layers;
        dense += s.dense_layers;
        windowed += s.sliding_window_layers;
        weights += s.WeightBytesPerGpu(1);
        kv += s.KvBytesPerTokenPerGpu(1);
        EXPECT_EQ(s.holds_embedding, r == 0);
        EXPECT_EQ(s.holds_lm_head, r == pp - 1);
      }
      EXPECT_EQ(layers, m.num_layers);
      EXPECT_EQ(dense, m.dense_layers);
      EXPECT_EQ(windowed, m.sliding_window_layers);
      const double embed = static_cast<double>(m.vocab_size) * m.hidden_size * m.dtype_bytes;
      const double whole = m.WeightBytesPerGpu(1) + (m.tie_word_embeddings ? embed : 0);
      EXPECT_NEAR(weights / whole, 1.0, 1e-12);
      EXPECT_NEAR(kv / m.KvBytesPerTokenPerGpu(1), 1.0, 1e-12);
    }
  }
}

BatchShape MixedBatch() {
  BatchShape b;
  for (int i = 0; i < 40; ++i) b.seqs.push_back({1, 300 + 17 * i, true});
  b.seqs.push_back({700, 128, true});
  b.decode_seqs = 60;
  b.decode_context = 60 * 900;
  return b;
}

// Every per-layer term belongs to one stage and the embedding and LM head
// to the ends, so the stages' kernels add up to the whole model's; each
// stage pays the per-step host overhead of its own worker.
TEST(Pipeline, StageCostsAddUpToTheWholeModel) {
  const std::vector<std::string> cost_models = {
      R"({"type": "roofline"})",
      R"({"type": "calibrated", "profile": "models/profiles/h200-llama-3.1-8b-tp1.json"})"};
  for (const std::string& cm : cost_models) {
    SCOPED_TRACE(cm);
    const std::string rest = R"(, "workload": {"arrival": {"process": "poisson", "rate": 1},
        "input_len": {"dist": "fixed", "value": 8}, "output_len": {"dist": "fixed", "value": 8},
        "num_requests": 1}})";
    // Synchronous, as a pipeline runs (its host work between steps).
    const Scenario whole = MustParse(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "h200"},
        "engine": {"async_scheduling": false}, "cost_model": )" + cm + rest);
    const Scenario piped = MustParse(R"({"model": "llama-3.1-8b",
        "hardware": {"gpu": "h200", "pp": 3}, "cost_model": )" + cm + rest);
    const PipelineCostModel* p = AsPipeline(piped.cost_model.get());
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(p->num_stages(), 3);
    const BatchShape b = MixedBatch();
    std::vector<double> stage(3);
    double send = 0;
    const StepCost sum = p->Stages(b, stage.data(), &send);
    const StepCost one = whole.cost_model->StepTime(b);
    EXPECT_NEAR(sum.gemm_s / one.gemm_s, 1.0, 1e-9);
    EXPECT_NEAR(sum.attn_prefill_s / one.attn_prefill_s, 1.0, 1e-9);
    EXPECT_NEAR(sum.attn_decode_s / one.attn_decode_s, 1.0, 1e-9);
    EXPECT_NEAR(sum.other_s / one.other_s, 1.0, 1e-9);
    EXPECT_NEAR(sum.overhead_s, 3 * one.overhead_s, 1e-15);
    // Two sends of hidden states and residual: 2 x 4096 x 2 B a token.
    const double tokens = 40 + 700 + 60;
    EXPECT_NEAR(sum.comm_s - one.comm_s, 2 * send, 1e-15);
    EXPECT_NEAR(send, 1e-5 + tokens * 2 * 4096 * 2 / LoadGpuSpec("h200").interconnect_bytes_per_s,
                1e-15);
    // 32 layers: 11, 11, 10; the last stage adds the LM head.
    EXPECT_GT(stage[0], stage[2] * 0.9);
    EXPECT_NEAR(stage[0] + stage[1] + stage[2], sum.Total() - 2 * send, 1e-12);
    EXPECT_NEAR(sum.Total(), p->StepTime(b).Total(), 1e-15);
  }
}

// Llama-3.1-8B on H100s, `n` requests at once of 512 prompt and 128 output
// tokens, everything in one burst.
std::string Burst(int n, const std::string& hardware, const std::string& engine = "{}",
                  const std::string& model = "llama-3.1-8b") {
  return R"({"seed": 3, "model": ")" + model + R"(", "hardware": )" + hardware +
         R"(, "engine": )" + engine + R"(,
      "workload": {"arrival": {"process": "constant", "rate": 100000},
                   "input_len": {"dist": "fixed", "value": 512},
                   "output_len": {"dist": "fixed", "value": 128},
                   "num_requests": )" + std::to_string(n) + "}}";
}

double MeanTpot(const SimulationOutput& out) {
  double sum = 0;
  int n = 0;
  for (const Request& r : out.requests) {
    if (r.status != RequestStatus::kFinished || r.num_output < 2) continue;
    sum += ToSeconds(r.last_token - r.first_token) / (r.num_output - 1);
    ++n;
  }
  return sum / n;
}

// Pipelining overlaps different batches, never one batch's layers: a lone
// stream walks every stage in turn (and sends between them), so two stages
// are no faster than one GPU, where tensor parallelism over the same two
// GPUs is.
TEST(Pipeline, OneStreamIsNoFasterThanOneGpu) {
  SimulationOutput one, pp2, tp2;
  RunScenario(MustParse(Burst(1, R"({"gpu": "h100-sxm"})")), &one, true);
  RunScenario(MustParse(Burst(1, R"({"gpu": "h100-sxm", "pp": 2})")), &pp2, true);
  RunScenario(MustParse(Burst(1, R"({"gpu": "h100-sxm", "tp": 2})")), &tp2, true);
  const double a = MeanTpot(one), b = MeanTpot(pp2), c = MeanTpot(tp2);
  EXPECT_GE(b, a);
  EXPECT_LT(b, 1.1 * a) << "a second stage adds a send and a host step, not a second pass";
  EXPECT_LT(c, 0.8 * b);
}

// Many streams fill the pipeline: the running requests spread over one
// micro-batch per stage (each waits for its token before its next step),
// the stages run different micro-batches at once, and two H100s decode
// faster than one (each stage reads half the weights a step) but not
// twice as fast per GPU-pair as two independent replicas could.
TEST(Pipeline, ManyStreamsFillEveryStage) {
  SimulationOutput one, pp2;
  const std::string engine = R"({"max_num_seqs": 128})";
  RunScenario(MustParse(Burst(256, R"({"gpu": "h100-sxm"})", engine)), &one, true);
  RunScenario(MustParse(Burst(256, R"({"gpu": "h100-sxm", "pp": 2})", engine)), &pp2, true);
  const double t1 = ToSeconds(one.end_time), t2 = ToSeconds(pp2.end_time);
  EXPECT_LT(t2, 0.8 * t1);
  EXPECT_GT(t2, 0.5 * t1);
  // In the decode phase two micro-batches are in flight: some step starts
  // before the one launched before it ended, none before the one two back.
  int overlapped = 0;
  for (size_t j = 1; j < pp2.steps.size(); ++j) {
    overlapped += pp2.steps[j].start < pp2.steps[j - 1].end;
    EXPECT_EQ(pp2.steps[j].pipeline_stages, 2);
    if (j >= 2) {
      EXPECT_GE(pp2.steps[j].scheduled, pp2.steps[j - 2].end);
    }
  }
  EXPECT_GT(overlapped, static_cast<int>(pp2.steps.size()) / 2);
  // Each micro-batch holds about half the running requests.
  double seqs = 0;
  int decode_steps = 0;
  for (const StepRecord& s : pp2.steps) {
    if (s.num_prefill_seqs > 0 || s.num_running < 128) continue;
    seqs += s.num_seqs;
    ++decode_steps;
  }
  ASSERT_GT(decode_steps, 50);
  EXPECT_NEAR(seqs / decode_steps, 64, 4);
}

// Open-loop chat on two stages. vLLM 0.33 schedules every ready request
// into the next batch, so decoding requests stay with the batch they were
// admitted with: requests arriving one at a time, each prefilled while the
// running ones are in flight, end up in one micro-batch and the stages take
// turns (vllm-project/vllm issues #15330, #41682). pipeline_decode_balance
// (PRs #50410, #57433) caps each batch's decodes at half of them: two
// micro-batches of about equal size, the stages busy at once, and TPOT
// lower for the same GPUs: at 40 req/s each micro-batch of the uneven
// pipeline holds every running request (the stage time of a batch twice
// as large), where the balanced one holds half.
TEST(Pipeline, DecodesStayWithTheirBatchUnlessBalanced) {
  const std::string chat = R"({"seed": 5, "model": "llama-3.1-8b",
      "hardware": {"gpu": "h100-sxm", "pp": 2},
      "workload": {"arrival": {"process": "poisson", "rate": 40},
                   "input_len": {"dist": "lognormal", "median": 120, "p99": 2048},
                   "output_len": {"dist": "lognormal", "median": 200, "p99": 1500},
                   "num_requests": 1500}, "metrics": {"warmup_requests": 150}})";
  struct Shape {
    double overlapped = 0;  // share of steps launched before the last one ended
    double batch_over_running = 0;  // mean decode batch / running requests
    double tpot = 0;
    double stage_busy = 0;  // the report's share of the run the stages' GPUs work
  };
  const auto shape = [&](bool balance) {
    SimulationOutput out;
    const RunSummary s = RunScenario(
        MustParse(chat, {std::string("engine.pipeline_decode_balance=") +
                         (balance ? "true" : "false")}),
        &out, /*check_invariants=*/true);
    Shape r;
    int steps = 0, decode_steps = 0;
    for (size_t j = 1; j < out.steps.size(); ++j) {
      const StepRecord& a = out.steps[j];
      ++steps;
      r.overlapped += a.start < out.steps[j - 1].end;
      if (a.num_prefill_seqs == 0 && a.num_running >= 8) {
        r.batch_over_running += static_cast<double>(a.num_seqs) / a.num_running;
        ++decode_steps;
      }
    }
    r.overlapped /= steps;
    r.batch_over_running /= decode_steps;
    r.tpot = s.tpot_ms.mean;
    EXPECT_EQ(s.pipeline_stages, 2);
    r.stage_busy = s.stage_busy_fraction;
    return r;
  };
  const Shape vllm = shape(false), balanced = shape(true);
  EXPECT_LT(vllm.overlapped, 0.35);
  EXPECT_GT(vllm.batch_over_running, 0.8);
  EXPECT_GT(balanced.overlapped, 0.9);
  EXPECT_NEAR(balanced.batch_over_running, 0.5, 0.05);
  EXPECT_LT(balanced.tpot, 0.8 * vllm.tpot);
  // One batch in flight at a time keeps two stages busy half the time at
  // most; balanced, they overlap.
  EXPECT_LT(vllm.stage_busy, 0.55);
  EXPECT_GT(balanced.stage_busy, 0.7);
}

// Two stages of one H200 each hold half the layers' weights and KV, as
// tensor parallelism over the same two GPUs does: the caches differ only
// by where the embedding and LM head live (whole on an end stage, split
// two ways under tp).
TEST(Pipeline, KvCacheAsLargeAsTensorParallelOnTheSameGpus) {
  const auto blocks = [](const std::string& hw) {
    return MustParse(Burst(1, hw, "{}", "llama-3.1-70b")).engine.num_gpu_blocks;
  };
  const double pp2 = blocks(R"({"gpu": "h200", "pp": 2})");
  const double tp2 = blocks(R"({"gpu": "h200", "tp": 2})");
  EXPECT_NEAR(pp2 / tp2, 1.0, 0.03);
  EXPECT_LT(pp2, tp2);  // a whole 1 GiB embedding beside each stage's layers
  // And a model too large for one GPU fits on two stages.
  EXPECT_FALSE(
      ParseScenario(Burst(1, R"({"gpu": "h100-sxm"})", "{}", "llama-3.1-70b"), "<t>", {}).ok());
  EXPECT_GT(blocks(R"({"gpu": "h100-sxm", "pp": 2})"), 1000);
}

// Stages in different servers send over the network: slower than NVLink.
TEST(Pipeline, AStageLinkBetweenServersSlowsEachStep) {
  SimulationOutput nv, ib;
  RunScenario(MustParse(Burst(1, R"({"gpu": "h100-sxm", "pp": 2})")), &nv, true);
  RunScenario(MustParse(Burst(1, R"({"gpu": "h100-sxm", "pp": 2,
                                     "pp_link": "infiniband-ndr-400g"})")),
              &ib, true);
  EXPECT_GT(MeanTpot(ib), MeanTpot(nv));
}

// Every mode pipelined, with the full KV/scheduler check after each step
// and the run-level invariants: preemption, prefix caching, chunked prefill
// off, a cluster, fp8, an MoE with expert parallelism, windowed layers.
TEST(Pipeline, RunsOfEveryModeKeepEveryInvariant) {
  const std::string chat = R"(, "workload": {"arrival": {"process": "poisson", "rate": 30},
      "input_len": {"dist": "lognormal", "median": 200, "p99": 3000, "max": 6000},
      "output_len": {"dist": "lognormal", "median": 80, "p99": 600, "max": 1000},
      "num_requests": 300}})";
  const std::vector<std::string> cases = {
      R"({"model": "llama-3.1-8b", "hardware": {"gpu": "h100-sxm", "pp": 2})" + chat,
      R"({"model": "llama-3.1-8b", "hardware": {"gpu": "h100-sxm", "pp": 4},
          "engine": {"num_gpu_blocks": 400})" + chat,
      R"({"model": "llama-3.1-8b", "hardware": {"gpu": "h100-sxm", "pp": 3},
          "engine": {"prefix_caching": true, "max_num_batched_tokens": 512})" + chat,
      R"({"model": "llama-3.1-8b", "hardware": {"gpu": "l40s", "pp": 2},
          "engine": {"chunked_prefill": false, "max_num_batched_tokens": 8192,
                     "async_scheduling": true})" + chat,
      R"({"model": "llama-3.1-70b", "hardware": {"gpu": "h100-sxm", "tp": 2, "pp": 2},
          "cluster": {"replicas": 2, "router": "least_outstanding"})" + chat,
      R"({"model": {"name": "mixtral-8x7b", "weight_dtype": "fp8"},
          "hardware": {"gpu": "h200", "tp": 2, "ep": 2, "pp": 2})" + chat,
      R"({"model": "gpt-oss-120b", "hardware": {"gpu": "h100-sxm", "pp": 2})" + chat,
  };
  for (const std::string& json : cases) {
    SCOPED_TRACE(json);
    SimulationOutput out;
    const RunSummary s = RunScenario(MustParse(json), &out, /*check_invariants=*/true);
    EXPECT_EQ(s.completed + s.rejected, 300);
    EXPECT_GT(s.completed, 250);
  }
}

// The run-level invariants catch a stage running two micro-batches at
// once and a batch scheduled while the queue was full.
TEST(Pipeline, InvariantsCatchABrokenPipeline) {
  const Scenario sc = MustParse(Burst(64, R"({"gpu": "h100-sxm", "pp": 2})"));
  SimulationInput in = sc.ToSimulationInput();
  in.record_steps = true;
  const SimulationOutput good = RunSimulation(in);
  ASSERT_TRUE(CheckRunInvariants(in, good).empty());
  size_t j = 0;  // a step that overlaps the one before it
  while (j + 1 < good.steps.size() && !(good.steps[j + 1].start < good.steps[j].end)) ++j;
  ASSERT_LT(j + 1, good.steps.size());
  const auto has = [](const std::vector<std::string>& lines, const std::string& what) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
      return l.find(what) != std::string::npos;
    });
  };
  SimulationOutput first = good;  // the first stage takes a batch while busy
  first.steps[j + 1].start = first.steps[j].first_stage_end - 1;
  EXPECT_TRUE(has(CheckRunInvariants(in, first), "a pipeline stage runs two batches"));
  SimulationOutput last = good;  // the last stage takes one while busy
  last.steps[j + 1].last_stage_start = last.steps[j].end - 1;
  EXPECT_TRUE(has(CheckRunInvariants(in, last), "a pipeline stage runs two batches"));
  SimulationOutput queue = good;  // three batches in flight on two stages
  ASSERT_GE(j, 1u);
  queue.steps[j + 1].scheduled = queue.steps[j - 1].end - 1;
  queue.steps[j + 1].scheduled = std::min(queue.steps[j + 1].scheduled, queue.steps[j + 1].start);
  EXPECT_TRUE(has(CheckRunInvariants(in, queue), "batch queue"));
  SimulationOutput span = good;  // busier than its stages can be
  span.steps[j].busy = span.steps[j].end - span.steps[j].start + 1;
  EXPECT_TRUE(has(CheckRunInvariants(in, span), "step span"));
}

void ExpectRefused(const std::string& text, const std::string& fragment) {
  nlohmann::json j = nlohmann::json::parse(text);
  j["workload"] = nlohmann::json::parse(R"({"arrival": {"process": "poisson", "rate": 1},
      "input_len": {"dist": "fixed", "value": 8}, "output_len": {"dist": "fixed", "value": 8},
      "num_requests": 1})");
  const std::string json = j.dump();
  const StatusOr<Scenario> sc = ParseScenario(json, "s.json", {});
  ASSERT_FALSE(sc.ok()) << json;
  EXPECT_NE(sc.status().message().find(fragment), std::string::npos) << sc.status().message();
  EXPECT_EQ(sc.status().message().find('\n'), std::string::npos);
}

TEST(Pipeline, CombinationsItDoesNotModelAreRefused) {
  const std::string hw = R"("model": "llama-3.1-8b", "hardware": {"gpu": "h200", "pp": 2})";
  ExpectRefused("{" + hw + R"(, "cost_model": {"type": "linear", "step_s": 0.001,
                "prefill_token_s": 1e-5, "decode_seq_s": 1e-4}})",
                "s.json: /cost_model/type: expected \"roofline\" or \"calibrated\"");
  ExpectRefused("{" + hw + R"(, "engine": {"speculative_decoding":
                {"num_speculative_tokens": 3, "acceptance_rate": 0.7}}})",
                "/engine/speculative_decoding: expected none with hardware.pp > 1");
  ExpectRefused("{" + hw + R"(, "engine": {"kv_offload": {"cpu_gib": 10}}})",
                "/engine/kv_offload: KV offload and swap preemption are not modelled with "
                "hardware.pp");
  ExpectRefused("{" + hw + R"(, "engine": {"kind": "sglang"}})",
                "/engine/kind: expected \"vllm\" with hardware.pp > 1");
  ExpectRefused(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "h200", "pp": 17}})",
                "/hardware/pp: expected at most 16");
  ExpectRefused(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "h200", "pp_link": "nvlink-4"}})",
                "/hardware/pp_link: expected no pp_link without hardware.pp > 1");
  ExpectRefused(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "h200", "pp": 2,
                "pp_link": "carrier-pigeon"}})", "/hardware/pp_link: expected a link");
  ExpectRefused(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "h200", "pp": 2},
      "disaggregation": {"prefill": {}, "decode": {}, "link": "nvlink-4"}})",
                "/hardware/pp: expected 1 with disaggregation");
}

}  // namespace
}  // namespace servesim
