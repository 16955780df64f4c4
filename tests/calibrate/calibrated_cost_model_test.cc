// Tests of the calibrated cost model on profiles fitted to synthetic
// (roofline) timings: it must agree with the roofline it was fitted to,
// refuse a profile for another model or tp, and label projection.
#include "sim/cost/calibrated_cost_model.h"

#include <gtest/gtest.h>

#include "sim/core/status.h"
#include "tests/calibrate/dry_run_profile.h"

namespace servesim::calibrate {
namespace {

std::unique_ptr<CostModel> Make(const std::string& profile,
                                const std::string& model, int tp,
                                const std::string& gpu = "h200") {
  nlohmann::json cfg = {{"type", "calibrated"}, {"profile", profile}};
  return MakeCostModel(JsonView(cfg, "s.json", "/cost_model"),
                       LoadModelSpec(model), LoadGpuSpec(gpu), tp,
                       HostWork::kBetweenSteps);
}

// Profiles fitted on noise-free roofline timings without a launch
// constant, so the calibrated model should reproduce the roofline.
const std::string& PureRooflineProfile() {
  static const std::string path = [] {
    SyntheticOptions so;
    so.launch_s = 0;
    so.noise_sigma = 0.005;
    return testing::WriteTemp(testing::DryRunProfile("llama-3.1-8b", 1, so),
                              "pure_roofline.json");
  }();
  return path;
}

BatchShape Mixed(int decodes, int context, int chunk, int cached) {
  BatchShape b;
  for (int i = 0; i < decodes; ++i) {
    b.seqs.push_back({1, context + 37 * i, true});
  }
  if (chunk > 0) b.seqs.push_back({chunk, cached, true});
  return b;
}

TEST(CalibratedCostModelTest, SyntheticTimingsSumToTheRoofline) {
  // The dry-run source prices each op as RooflineCostModel's datasheet
  // preset does.
  const ModelSpec m = LoadModelSpec("llama-3.1-8b");
  const GpuSpec g = LoadGpuSpec("h200");
  const RooflineParams r = RooflineParams::Datasheet();
  const int64_t t = 300;
  double gemm = 0;
  for (OpKind k : {OpKind::kGemmQkv, OpKind::kGemmO, OpKind::kGemmGateUp,
                   OpKind::kGemmDown}) {
    gemm += m.num_layers * RooflineOpTime(m, g, 1, {k, t, 0, 0}, r);
  }
  gemm += RooflineOpTime(m, g, 1, {OpKind::kGemmLmHead, 1, 0, 0}, r);
  const RooflineCostModel roof(m, g, 1, r);
  const StepCost c = roof.StepTime(BatchShape{{{300, 0, true}}});
  EXPECT_NEAR(gemm, c.gemm_s, 1e-9 * c.gemm_s);
  const double pre =
      m.num_layers *
      RooflineOpTime(m, g, 1, {OpKind::kPrefillAttention, 300, 1, 0}, r);
  EXPECT_NEAR(pre, c.attn_prefill_s, 1e-9 * c.attn_prefill_s);
  const double ew = m.num_layers *
                    RooflineOpTime(m, g, 1, {OpKind::kElementwise, t, 0, 0}, r);
  EXPECT_NEAR(ew, c.other_s, 0.05 * c.other_s);  // roofline adds embed+norm
}

TEST(CalibratedCostModelTest, PredictsCloseToTheRooflineItWasFittedOn) {
  const auto cal = Make(PureRooflineProfile(), "llama-3.1-8b", 1);
  nlohmann::json rc = {{"type", "roofline"}, {"preset", "datasheet"}};
  const auto roof =
      MakeCostModel(JsonView(rc, "s.json", "/cost_model"),
                    LoadModelSpec("llama-3.1-8b"), LoadGpuSpec("h200"), 1,
                    HostWork::kBetweenSteps);
  for (const BatchShape& b :
       {Mixed(1, 1000, 0, 0), Mixed(32, 3000, 0, 0), Mixed(256, 1200, 0, 0),
        Mixed(0, 0, 2048, 0), Mixed(0, 0, 700, 9000),
        Mixed(48, 2500, 1024, 512)}) {
    const double want = roof->StepTime(b).Total();
    const double got = cal->StepTime(b).Total();
    EXPECT_NEAR(got, want, 0.03 * want)
        << b.seqs.size() << " seqs, first new=" << b.seqs[0].new_tokens;
  }
  EXPECT_EQ(cal->StepTime(BatchShape{}).Total(), 0);
}

TEST(CalibratedCostModelTest, DescribeNamesProfileDeviceAndError) {
  const auto cal = Make(PureRooflineProfile(), "llama-3.1-8b", 1);
  const std::string d = cal->Describe();
  EXPECT_NE(d.find("calibrated (profile "), std::string::npos) << d;
  EXPECT_NE(d.find("device dry-run (synthetic"), std::string::npos) << d;
  EXPECT_NE(d.find("held-out MAPE"), std::string::npos) << d;
  EXPECT_EQ(d.find("PROJECTED"), std::string::npos) << d;
}

TEST(CalibratedCostModelTest, RefusesAModelOrTpMismatch) {
  try {
    Make(PureRooflineProfile(), "qwen2.5-7b", 1);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("s.json: /cost_model/profile: "), std::string::npos) << m;
    EXPECT_NE(m.find("calibrated for llama-3.1-8b at tp=1, but the scenario "
                     "runs qwen2.5-7b at tp=1"),
              std::string::npos)
        << m;
  }
  try {
    Make(PureRooflineProfile(), "llama-3.1-8b", 2);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("runs llama-3.1-8b at tp=2"),
              std::string::npos)
        << e.what();
  }
}

TEST(CalibratedCostModelTest, ProjectsToAnotherGpuAndSaysSo) {
  const auto h200 = Make(PureRooflineProfile(), "llama-3.1-8b", 1);
  const auto a100 = Make(PureRooflineProfile(), "llama-3.1-8b", 1, "a100-80gb");
  const std::string d = a100->Describe();
  EXPECT_NE(d.find("PROJECTED from h200 to a100-80gb (±"), std::string::npos)
      << d;
  // Memory-bound decode scales by the bandwidth ratio (4.8 / 2.039 TB/s);
  // compute-bound prefill by the FLOP ratio (989 / 312 TFLOP/s).
  const BatchShape decode = Mixed(8, 2000, 0, 0);
  const double r =
      a100->StepTime(decode).gemm_s / h200->StepTime(decode).gemm_s;
  EXPECT_NEAR(r, 4.8 / 2.039, 0.05);
  const BatchShape prefill = Mixed(0, 0, 4096, 0);
  const double rp =
      a100->StepTime(prefill).gemm_s / h200->StepTime(prefill).gemm_s;
  EXPECT_NEAR(rp, 989.0 / 312, 0.1);
}

TEST(CalibratedCostModelTest, MissingProfileIsAConfigError) {
  EXPECT_THROW(Make("models/profiles/no-such.json", "llama-3.1-8b", 1),
               ConfigError);
}

}  // namespace
}  // namespace servesim::calibrate
