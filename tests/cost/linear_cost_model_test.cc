// Tests of the linear cost model: exact step times worked out by hand, and
// the checks on its configuration (including the factory's type choice).
#include "sim/cost/linear_cost_model.h"

#include <gtest/gtest.h>

#include "sim/core/status.h"
#include "sim/model/model_loader.h"

namespace servesim {
namespace {

std::unique_ptr<CostModel> Make(const nlohmann::json& cfg, int tp = 1) {
  return MakeCostModel(JsonView(cfg, "s.json", "/cost_model"),
                       LoadModelSpec("llama-3.1-8b"), LoadGpuSpec("h200"), tp,
                       HostWork::kBetweenSteps);
}

std::string ErrorOf(const nlohmann::json& cfg, int tp = 1) {
  try {
    Make(cfg, tp);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(LinearCostModelTest, ExactMixedBatch) {
  const auto model = Make({{"type", "linear"},
                           {"step_s", 0.002},
                           {"prefill_token_s", 1e-4},
                           {"decode_seq_s", 5e-4},
                           {"kv_token_s", 1e-6}});
  BatchShape b;
  b.seqs = {
      {100, 0, true},    // whole prompt: 100 prompt tokens, attends 100
      {50, 200, false},  // prompt chunk: 50 prompt tokens, attends 250
      {1, 1000, true},   // decode: attends 1001
      {1, 10, true},     // decode: attends 11
      {1, 0, true},      // one-token prompt counts as prefill, attends 1
      {0, 500, false},   // scheduled but computes nothing
  };
  const StepCost c = model->StepTime(b);
  // 151 prompt tokens, 2 decoding sequences, 351 + 1012 tokens attended.
  EXPECT_DOUBLE_EQ(c.overhead_s, 0.002);
  EXPECT_NEAR(c.gemm_s, 151 * 1e-4 + 2 * 5e-4, 1e-15);
  EXPECT_NEAR(c.attn_prefill_s, 351e-6, 1e-15);
  EXPECT_NEAR(c.attn_decode_s, 1012e-6, 1e-15);
  EXPECT_EQ(c.comm_s, 0);
  EXPECT_EQ(c.other_s, 0);
  EXPECT_NEAR(c.Total(), 0.019463, 1e-12);
}

TEST(LinearCostModelTest, DefaultsAreZeroAndEmptyBatchIsFree) {
  const auto model = Make({{"type", "linear"}, {"decode_seq_s", 0.01}});
  BatchShape b;
  EXPECT_EQ(model->StepTime(b).Total(), 0);
  b.seqs = {{0, 100, false}};
  EXPECT_EQ(model->StepTime(b).Total(), 0);
  b.seqs = {{1, 100, true}, {1, 7, true}, {300, 0, true}};
  EXPECT_NEAR(model->StepTime(b).Total(), 0.02, 1e-15);  // prefill is free
  EXPECT_NE(model->Describe().find("linear"), std::string::npos);
}

TEST(LinearCostModelTest, ConfigErrors) {
  std::string e = ErrorOf({{"type", "linear"}, {"prefill_tokens_s", 1e-4}});
  EXPECT_NE(e.find("s.json: /cost_model/prefill_tokens_s: unknown key"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("did you mean \"prefill_token_s\""), std::string::npos) << e;
  e = ErrorOf({{"type", "linear"}, {"step_s", -1e-3}});
  EXPECT_NE(e.find("/cost_model/step_s: expected a number in [0, 60], got -0.001"),
            std::string::npos)
      << e;
  e = ErrorOf({{"type", "linear"}, {"step_s", 1e12}});
  EXPECT_NE(e.find("/cost_model/step_s: expected a number in [0, 60], got 1e+12"),
            std::string::npos)
      << e;
  e = ErrorOf({{"type", "linear"}, {"step_s", 0}});
  EXPECT_NE(e.find("/cost_model: expected at least one"), std::string::npos)
      << e;
  e = ErrorOf({{"type", "linaer"}, {"step_s", 1e-3}});
  EXPECT_NE(e.find("/cost_model/type: expected one of linear, roofline"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("did you mean \"linear\""), std::string::npos) << e;
  e = ErrorOf({{"step_s", 1e-3}});
  EXPECT_NE(e.find("/cost_model/type: expected one of"), std::string::npos)
      << e;
  // 32 heads cannot be split 3 ways, whatever prices the steps.
  e = ErrorOf({{"type", "linear"}, {"step_s", 1e-3}}, 3);
  EXPECT_NE(e.find("tp=3 cannot shard llama-3.1-8b"), std::string::npos) << e;
}

}  // namespace
}  // namespace servesim
