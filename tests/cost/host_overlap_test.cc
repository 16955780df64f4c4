// The host's per-step work when the engine overlaps it with the GPU
// (vLLM's async scheduling, SGLang's overlap scheduler): the roofline and
// calibrated models charge only the gap between steps, or the host's
// excess over the GPU's step; between steps they charge all of it. The
// linear model's per-step constant is not host time and never changes.
#include <gtest/gtest.h>

#include <string>

#include "sim/core/status.h"
#include "sim/cost/cost_model.h"
#include "sim/model/model_loader.h"
#include "sim/scenario/scenario.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

std::unique_ptr<CostModel> Make(const nlohmann::json& cfg, HostWork host) {
  return MakeCostModel(JsonView(cfg, "s.json", "/cost_model"), LoadModelSpec("llama-3.1-8b"),
                       LoadGpuSpec("h100-sxm"), 1, host);
}

BatchShape Decodes(int n, int context) {
  BatchShape b;
  b.seqs.assign(n, SeqWork{1, context, true});
  return b;
}

// The GPU's part of a step: everything but the host.
double Device(const StepCost& c) { return c.Total() - c.overhead_s; }

TEST(HostOverlap, ChargedIsTheGapTheExcessOrTheHostItself) {
  HostTiming t{.work = HostWork::kOverlapped, .gap_s = 1.5e-4};
  EXPECT_DOUBLE_EQ(t.Charged(4e-4, 5e-3), 1.5e-4);  // hidden behind a 5 ms step
  EXPECT_DOUBLE_EQ(t.Charged(8e-3, 5e-3), 3e-3);    // the host is the slower
  EXPECT_DOUBLE_EQ(t.Charged(1e-4, 5e-3), 1e-4);    // less host than the gap
  EXPECT_DOUBLE_EQ(t.Charged(0, 5e-3), 0);
  t.work = HostWork::kBetweenSteps;
  EXPECT_DOUBLE_EQ(t.Charged(4e-4, 5e-3), 4e-4);
}

TEST(HostOverlap, RooflineDecodeStepPaysTheGapNotTheHost) {
  const nlohmann::json cfg = {{"type", "roofline"}};
  const BatchShape b = Decodes(32, 1000);
  const StepCost serial = Make(cfg, HostWork::kBetweenSteps)->StepTime(b);
  const StepCost overlapped = Make(cfg, HostWork::kOverlapped)->StepTime(b);
  // 0.3 ms + 1 us for each of the 32 sequences, between steps.
  EXPECT_NEAR(serial.overhead_s, 3.32e-4, 1e-12);
  EXPECT_DOUBLE_EQ(overlapped.overhead_s, 1.5e-4);
  // The GPU's kernels are the same bits either way.
  EXPECT_EQ(Device(serial), Device(overlapped));
  EXPECT_NEAR(serial.Total() - overlapped.Total(), 1.82e-4, 1e-12);
}

TEST(HostOverlap, AHostSlowerThanTheGpuSetsTheStep) {
  // A 20 ms host (say, a slow CPU) in front of a ~5 ms decode step: the
  // step lasts as long as the host, whose work no longer hides.
  const nlohmann::json cfg = {{"type", "roofline"}, {"step_overhead_s", 0.02},
                              {"per_sequence_overhead_s", 0}};
  const StepCost c = Make(cfg, HostWork::kOverlapped)->StepTime(Decodes(1, 100));
  EXPECT_LT(Device(c), 0.02);
  EXPECT_NEAR(c.Total(), 0.02, 1e-12);
  EXPECT_NEAR(c.overhead_s, 0.02 - Device(c), 1e-12);
}

TEST(HostOverlap, GapIsAKeyOfBothHardwareModels) {
  const BatchShape b = Decodes(8, 500);
  const StepCost roofline =
      Make({{"type", "roofline"}, {"host_gap_s", 5e-5}}, HostWork::kOverlapped)->StepTime(b);
  EXPECT_DOUBLE_EQ(roofline.overhead_s, 5e-5);
  const nlohmann::json calibrated = {
      {"type", "calibrated"}, {"profile", "models/profiles/h100-sxm-llama-3.1-8b-tp1.json"}};
  const StepCost between = Make(calibrated, HostWork::kBetweenSteps)->StepTime(b);
  const StepCost over = Make(calibrated, HostWork::kOverlapped)->StepTime(b);
  EXPECT_DOUBLE_EQ(between.overhead_s, 3e-4);  // the profile's step_overhead_s
  EXPECT_DOUBLE_EQ(over.overhead_s, 1.5e-4);
  nlohmann::json gap = calibrated;
  gap["host_gap_s"] = 0;
  EXPECT_DOUBLE_EQ(Make(gap, HostWork::kOverlapped)->StepTime(b).overhead_s, 0);
  gap["host_gap_s"] = -1;
  EXPECT_THROW(Make(gap, HostWork::kOverlapped), ConfigError);
}

TEST(HostOverlap, LinearStepConstantIsNotHostTime) {
  const nlohmann::json cfg = {{"type", "linear"}, {"step_s", 0.01}};
  const BatchShape b = Decodes(4, 100);
  EXPECT_DOUBLE_EQ(Make(cfg, HostWork::kOverlapped)->StepTime(b).Total(),
                   Make(cfg, HostWork::kBetweenSteps)->StepTime(b).Total());
}

// The scenario takes the engine's choice: async scheduling (vLLM's
// default) and SGLang's overlap scheduler overlap; --no-async-scheduling,
// --disable-overlap-schedule, speculative decoding and pipelines do not.
TEST(HostOverlap, ScenarioFollowsTheEngine) {
  const BatchShape b = Decodes(16, 800);
  auto overhead = [&](const std::string& engine) {
    const Scenario s = testing::MustParse(
        R"({"model": "llama-3.1-8b", "hardware": {"gpu": "h100-sxm"}, "engine": )" + engine +
        R"(, "workload": {"num_requests": 1, "arrival": {"process": "poisson", "rate": 1},
        "input_len": {"dist": "fixed", "value": 8}, "output_len": {"dist": "fixed", "value": 8}}})");
    return s.cost_model->StepTime(b).overhead_s;
  };
  EXPECT_DOUBLE_EQ(overhead("{}"), 1.5e-4);
  EXPECT_NEAR(overhead(R"({"async_scheduling": false})"), 3.16e-4, 1e-12);
  EXPECT_DOUBLE_EQ(overhead(R"({"kind": "sglang"})"), 1.5e-4);
  EXPECT_NEAR(overhead(R"({"kind": "sglang", "sglang": {"disable_overlap_schedule": true}})"),
              3.16e-4, 1e-12);
}

}  // namespace
}  // namespace servesim
