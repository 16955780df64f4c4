// Imported profiles (calibrate/import.h) against the measured tables read
// by hand: grid points return the CSV's latency exactly, points between
// grid neighbours are the log-space interpolation of those neighbours and
// lie between them, and every shipped profile runs the default scenario.
// The tables are read in place from ../shared/; without them these skip.
#include "calibrate/import.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "sim/core/paths.h"
#include "sim/cost/calibrated_cost_model.h"
#include "sim/engine/simulation.h"
#include "sim/model/model_loader.h"
#include "sim/scenario/scenario.h"

namespace servesim::calibrate {
namespace {

std::string DataDir() {
  return RepoRoot() + "/../shared/calibration-data/aiconfigurator-vllm-0.24.0";
}

// The H200 tables and the Llama-3.1-8B tp=1 profile built from them.
struct H200 {
  GpuTables tables;
  CalibrationProfile p8b;
  ModelSpec m8b;
};
const H200* Data() {
  static const H200* d = []() -> const H200* {
    if (!std::filesystem::exists(DataDir() + "/h200_sxm/gemm.csv")) {
      return nullptr;
    }
    auto* h = new H200;
    const GpuSpec g = LoadGpuSpec("h200");
    h->tables = LoadGpuTables(DataDir(), g);
    h->m8b = LoadModelSpec("llama-3.1-8b");
    h->p8b = ImportProfile(h->tables, h->m8b, g, 1, {});
    return h;
  }();
  return d;
}

#define REQUIRE_DATA() \
  if (Data() == nullptr) GTEST_SKIP() << "no tables at " << DataDir()

double Op(const H200& d, ProfileOp op, OpShape s) {
  return PredictOp(d.p8b.Fit(op), FeaturesOf(op, s, d.m8b, 1));
}

// Log-space interpolation by hand: y at x between (x0, y0) and (x1, y1).
double LogLerp(double x, double x0, double y0, double x1, double y1) {
  const double w = std::log(x / x0) / std::log(x1 / x0);
  return std::exp(std::log(y0) + w * (std::log(y1) - std::log(y0)));
}

TEST(ImportTest, GridPointsReturnTheMeasuredRow) {
  REQUIRE_DATA();
  const H200& d = *Data();
  // h200_sxm/gemm.csv: bfloat16, n=6144, k=4096 (8B QKV at tp 1), ms.
  EXPECT_NEAR(Op(d, ProfileOp::kGemmQkv, {17, 0, 0}), 0.016524444023768108e-3,
              1e-9 * 0.0165e-3);
  EXPECT_NEAR(Op(d, ProfileOp::kGemmQkv, {64, 0, 0}), 0.017793777916166518e-3,
              1e-9 * 0.0178e-3);
  EXPECT_NEAR(Op(d, ProfileOp::kGemmQkv, {4096, 0, 0}), 0.24821599324544272e-3,
              1e-9 * 0.248e-3);
  // generation_attention.csv: batch 64, 32 heads / 8 kv heads, step 4095.
  EXPECT_NEAR(Op(d, ProfileOp::kDecodeAttention, {64, 64, 4095}),
              0.2709226608276367e-3, 1e-9 * 0.27e-3);
  EXPECT_NEAR(Op(d, ProfileOp::kDecodeAttention, {32, 32, 2047}),
              0.07724800209204356e-3, 1e-9 * 0.077e-3);
  // context_attention.csv: batch 1, isl 2048, empty cache.
  EXPECT_NEAR(Op(d, ProfileOp::kPrefillAttention, {2048, 1, 0}),
              0.08744000395139058e-3, 1e-9 * 0.087e-3);
  // custom_allreduce.csv: 2 GPUs, 4096 bf16 elements = 8192 bytes (graph).
  const CalibrationProfile p2 =
      ImportProfile(d.tables, d.m8b, LoadGpuSpec("h200"), 2, {});
  EXPECT_NEAR(EvalGrid(p2.allreduce, 1, 8192), 0.004639680087566376e-3,
              1e-9 * 0.0046e-3);
  bool out = true;
  EvalGrid(p2.allreduce, 1, 8192, &out);
  EXPECT_FALSE(out);
}

TEST(ImportTest, BetweenNeighboursIsTheLogInterpolation) {
  REQUIRE_DATA();
  const H200& d = *Data();
  // m = 24 between the measured m = 17 and 32.
  const double lo = 0.016524444023768108e-3, hi = 0.01769333415561252e-3;
  const double t24 = Op(d, ProfileOp::kGemmQkv, {24, 0, 0});
  EXPECT_NEAR(t24, LogLerp(24, 17, lo, 32, hi), 1e-9 * lo);
  EXPECT_GT(t24, lo);
  EXPECT_LT(t24, hi);
  // Gate+up of the 8B at tp 1: n = 28672 lies between the measured
  // n = 16384 and 51200 (k = 4096); at m = 32 and m = 64 by hand.
  const double g32 = LogLerp(28672, 16384, 0.039048890272776283e-3, 51200,
                             0.12379288673400879e-3);
  const double g64 = LogLerp(28672, 16384, 0.03980177640914917e-3, 51200,
                             0.1234933270348443e-3);
  EXPECT_NEAR(Op(d, ProfileOp::kGemmGateUp, {32, 0, 0}), g32, 1e-9 * g32);
  EXPECT_NEAR(Op(d, ProfileOp::kGemmGateUp, {64, 0, 0}), g64, 1e-9 * g64);
  // Decode: context 3000 between 2047 and 4095, batch 48 between 32 and 64;
  // monotone in each coordinate.
  const double c32 =
      LogLerp(3000, 2047, 0.07724800209204356e-3, 4095, 0.13551466663678488e-3);
  const double c64 =
      LogLerp(3000, 2047, 0.13988799850145975e-3, 4095, 0.2709226608276367e-3);
  EXPECT_NEAR(Op(d, ProfileOp::kDecodeAttention, {32, 32, 3000}), c32,
              1e-9 * c32);
  const double b48 = Op(d, ProfileOp::kDecodeAttention, {48, 48, 3000});
  EXPECT_NEAR(b48, LogLerp(48, 32, c32, 64, c64), 1e-9 * c32);
  EXPECT_GT(b48, c32);
  EXPECT_LT(b48, c64);
  double prev = 0;
  for (int ctx = 2047; ctx <= 4095; ctx += 256) {
    const double t = Op(d, ProfileOp::kDecodeAttention, {48, 48, ctx});
    EXPECT_GE(t, prev) << ctx;
    prev = t;
  }
  // Prefill: length 2500 between 2048 and 3072.
  const double p = Op(d, ProfileOp::kPrefillAttention, {2500, 1, 0});
  EXPECT_NEAR(
      p,
      LogLerp(2500, 2048, 0.08744000395139058e-3, 3072, 0.16745599110921225e-3),
      1e-9 * p);
}

TEST(ImportTest, ExtrapolationIsFlagged) {
  REQUIRE_DATA();
  const H200& d = *Data();
  const OpFit& dec = d.p8b.Fit(ProfileOp::kDecodeAttention);
  EXPECT_FALSE(OpExtrapolates(
      dec, FeaturesOf(ProfileOp::kDecodeAttention, {64, 64, 4095}, d.m8b, 1)));
  EXPECT_TRUE(OpExtrapolates(dec, FeaturesOf(ProfileOp::kDecodeAttention,
                                             {4096, 4096, 100}, d.m8b, 1)));
  // The 8B LM head (n = 128256) lies beyond the largest measured n.
  EXPECT_NE(d.p8b.Fit(ProfileOp::kGemmLmHead).note.find("EXTRAPOLATED"),
            std::string::npos);
  EXPECT_EQ(d.p8b.Fit(ProfileOp::kGemmQkv).note.find("EXTRAPOLATED"),
            std::string::npos);
  EXPECT_FALSE(d.p8b.Fit(ProfileOp::kElementwise).measured);
}

TEST(ImportTest, HeldOutSplitIsSeededAndDisjoint) {
  REQUIRE_DATA();
  MeasuredTable train, held, train2, held2;
  SplitTable(Data()->tables.decode, 7, 0.2, &train, &held);
  SplitTable(Data()->tables.decode, 7, 0.2, &train2, &held2);
  EXPECT_EQ(held.rows, held2.rows);
  EXPECT_EQ(train.rows.size() + held.rows.size(),
            Data()->tables.decode.rows.size());
  EXPECT_EQ(held.rows.size(),
            static_cast<size_t>(0.2 * Data()->tables.decode.rows.size()));
  for (const auto& [key, s] : held.rows) EXPECT_EQ(train.rows.count(key), 0u);
}

// Every shipped imported profile runs the default scenario with its model,
// GPU, tp and dtypes (what `servesim run --set cost_model.type=calibrated --set
// cost_model.profile=...` does).
TEST(ImportTest, EveryShippedProfileRunsTheDefaultScenario) {
  int n = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(RepoRoot() + "/models/profiles")) {
    if (e.path().extension() != ".json") continue;
    const std::string path = e.path().string();
    const CalibrationProfile p = LoadCalibrationProfile(path);
    StatusOr<Scenario> sc = ParseScenario(
        EmbeddedDefaultScenario(), "default",
        {"model=" + p.model, "hardware.gpu=" + p.gpu,
         "hardware.tp=" + std::to_string(p.tp), "cost_model.type=calibrated",
         "cost_model.profile=" + path, "model.weight_dtype=" + p.dtype,
         "engine.kv_cache_dtype=" + p.kv_cache_dtype});
    ASSERT_TRUE(sc.ok()) << path << ": " << sc.status().message();
    const SimulationOutput out = RunSimulation(sc->ToSimulationInput());
    EXPECT_GT(out.total_cost.Total(), 0) << path;
    EXPECT_GT(out.end_time, 0) << path;
    ++n;
  }
  EXPECT_GE(n, 1);
}

}  // namespace
}  // namespace servesim::calibrate
