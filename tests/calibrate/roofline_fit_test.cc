// The offline fit of the roofline's kernel constants (calibrate/
// roofline_fit.cc) recovers known constants from noise-free samples
// priced by the model's own KernelTime, so the shipped constants are what
// the fit of the measured tables found, not an artefact of the optimiser.
#include "calibrate/roofline_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "sim/core/paths.h"
#include "sim/cost/roofline_cost_model.h"
#include "sim/model/model_loader.h"

namespace servesim::calibrate {
namespace {

TEST(RooflineFitTest, RecoversKnownGemmConstants) {
  const std::vector<GpuSpec> gpus = {LoadGpuSpec("h100-sxm"),
                                     LoadGpuSpec("h200")};
  const KernelRates truth{5e-6, 0.7, 0.9, 3.0, 0};
  std::vector<KernelSample> samples;
  for (int gi = 0; gi < 2; ++gi) {
    for (double m = 1; m <= 16384; m *= 2) {
      for (double n : {1024.0, 4096.0, 14336.0}) {
        for (double k : {1024.0, 8192.0}) {
          KernelSample s;
          s.flops = 2 * m * n * k;
          s.bytes = 2 * (k * n + m * k + m * n);
          s.gpu_index = gi;
          s.train = true;
          s.seconds = KernelTime(truth, gpus[gi], s.flops, s.bytes);
          samples.push_back(s);
        }
      }
    }
  }
  const KernelRates got =
      FitKernelRates(samples, gpus, {3e-6, 0.5, 0.6, 2.0, 0}, FreeParams{});
  EXPECT_NEAR(got.floor_s, truth.floor_s, 0.02 * truth.floor_s);
  EXPECT_NEAR(got.compute_efficiency, 0.7, 0.01);
  EXPECT_NEAR(got.memory_efficiency, 0.9, 0.01);
  EXPECT_NEAR(got.crossover_p, 3.0, 0.1);
}

TEST(RooflineFitTest, RecoversAPerItemCost) {
  const std::vector<GpuSpec> gpus = {LoadGpuSpec("h200")};
  const KernelRates truth{12e-6, 0.8, 0.9, 1.0, 20e-9};
  std::vector<KernelSample> samples;
  for (double batch = 1; batch <= 1024; batch *= 2) {
    for (double ctx = 1; ctx <= 65536; ctx *= 4) {
      AttentionWork w;
      AddDecodeAttention(32, 8, 128, 2, ctx, &w);
      KernelSample s;
      s.flops = batch * w.flops;
      s.bytes = batch * w.bytes;
      s.items = batch * w.items;
      s.train = true;
      s.seconds = KernelTime(truth, gpus[0], s.flops, s.bytes, s.items);
      samples.push_back(s);
    }
  }
  FreeParams f;
  f.item = true;
  f.p = false;  // held at its true value 1 (p >= 1 is fitted as 1 + e^x)
  const KernelRates got =
      FitKernelRates(samples, gpus, {8e-6, 0.5, 0.7, 1.0, 5e-9}, f);
  EXPECT_NEAR(got.floor_s, 12e-6, 0.3e-6);
  EXPECT_NEAR(got.per_item_s, 20e-9, 1e-9);
  EXPECT_NEAR(got.memory_efficiency, 0.9, 0.01);
}

// Each GPU generation's constants (RooflineParams::Kernels(generation)) are
// what fit-roofline finds on that generation's measured tables, rounded to
// three significant figures; a crossover exponent beyond 100 is shipped as
// the sharp maximum (0). The fused MoE is compared only where it is shipped.
// Within the rounding to three significant figures.
bool Near(double shipped, double fit) { return std::fabs(shipped - fit) <= 0.006 * std::fabs(fit); }

void ExpectRates(const KernelRates& shipped, const KernelRates& fit, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_TRUE(Near(shipped.floor_s, fit.floor_s)) << shipped.floor_s << " vs " << fit.floor_s;
  EXPECT_TRUE(Near(shipped.compute_efficiency, fit.compute_efficiency))
      << shipped.compute_efficiency << " vs " << fit.compute_efficiency;
  EXPECT_TRUE(Near(shipped.memory_efficiency, fit.memory_efficiency))
      << shipped.memory_efficiency << " vs " << fit.memory_efficiency;
  if (fit.crossover_p > 100) {
    EXPECT_EQ(shipped.crossover_p, 0);
  } else {
    EXPECT_TRUE(Near(shipped.crossover_p, fit.crossover_p))
        << shipped.crossover_p << " vs " << fit.crossover_p;
  }
  EXPECT_TRUE(Near(shipped.per_item_s, fit.per_item_s))
      << shipped.per_item_s << " vs " << fit.per_item_s;
}

TEST(RooflineFitTest, GenerationConstantsAreTheirTablesFit) {
  const std::string root = RepoRoot() + "/../shared/calibration-data";
  if (!std::filesystem::exists(root + "/aiconfigurator-vllm-more-gpus")) {
    GTEST_SKIP() << "no measured tables at " << root;
  }
  for (const char* gpu : {"a100-80gb", "l40s", "rtx-pro-6000", "b200"}) {
    const GpuSpec spec = LoadGpuSpec(gpu);
    SCOPED_TRACE(std::string(gpu) + " (" + spec.roofline_fit + ")");
    RooflineFitOptions o;
    o.data_root = root;
    o.train_gpus = {gpu};
    o.heldout_gpus = {};
    const RooflineFit f = FitRoofline(o);
    const RooflineParams shipped = RooflineParams::Kernels(spec.roofline_fit);
    ExpectRates(shipped.gemm, f.fitted.gemm, "gemm");
    ExpectRates(shipped.prefill_attention, f.fitted.prefill_attention, "prefill attention");
    ExpectRates(shipped.decode_attention, f.fitted.decode_attention, "decode attention");
    if (spec.fp8_flops > 0) {
      ExpectRates(shipped.gemm_fp8, f.fitted.gemm_fp8, "gemm fp8");
      ExpectRates(shipped.prefill_attention_fp8_kv, f.fitted.prefill_attention_fp8_kv,
                  "prefill attention fp8 KV");
      ExpectRates(shipped.decode_attention_fp8_kv, f.fitted.decode_attention_fp8_kv,
                  "decode attention fp8 KV");
    }
    if (spec.roofline_fit == "blackwell") ExpectRates(shipped.moe, f.fitted.moe, "fused MoE");
    EXPECT_TRUE(Near(shipped.allreduce.custom_latency_s, f.fitted.allreduce.custom_latency_s));
    EXPECT_TRUE(Near(shipped.allreduce.custom_efficiency, f.fitted.allreduce.custom_efficiency));
    EXPECT_TRUE(Near(shipped.allreduce.nccl_latency_s, f.fitted.allreduce.nccl_latency_s));
    EXPECT_TRUE(Near(shipped.allreduce.nccl_efficiency, f.fitted.allreduce.nccl_efficiency));
    EXPECT_TRUE(Near(shipped.allreduce.symm_latency_s, f.fitted.allreduce.symm_latency_s));
    EXPECT_TRUE(Near(shipped.allreduce.symm_efficiency, f.fitted.allreduce.symm_efficiency));
    // The held-out rows: the fitted constants beat the datasheet preset on
    // every kind with rows.
    for (const RooflineKindError& e : f.errors) {
      if (e.rows >= 100) {
        EXPECT_LT(e.after_mape, e.before_mape) << e.kind;
      }
    }
  }
}

// Marlin's MXFP4 rates (gpt-oss's experts on Ampere and Ada) are the fit
// of H100's and H200's Marlin MXFP4 rows, and beat the bf16 fused-MoE
// constants on the held-out ones.
TEST(RooflineFitTest, MarlinMxfp4RatesAreTheHopperTablesFit) {
  const std::string root = RepoRoot() + "/../shared/calibration-data";
  if (!std::filesystem::exists(root + "/aiconfigurator-vllm-0.24.0")) {
    GTEST_SKIP() << "no measured tables at " << root;
  }
  RooflineFitOptions o;
  o.data_root = root;
  o.train_gpus = {"h100-sxm", "h200"};
  o.heldout_gpus = {};
  const RooflineFit f = FitRoofline(o);
  ExpectRates(MarlinMxfp4Rates(), f.fitted.moe_mxfp4, "fused MoE MXFP4");
  for (const char* g : {"ampere", "ada"}) {
    ExpectRates(RooflineParams::Kernels(g).moe_mxfp4, MarlinMxfp4Rates(), g);
  }
  int kinds = 0;
  for (const RooflineKindError& e : f.errors) {
    if (e.kind != "fused MoE MXFP4") continue;
    ++kinds;
    EXPECT_GE(e.rows, 50) << e.gpu;
    EXPECT_LT(e.after_mape, e.before_mape) << e.gpu;
    EXPECT_LT(e.after_mape, 20) << e.gpu;
  }
  EXPECT_EQ(kinds, 2);
}

}  // namespace
}  // namespace servesim::calibrate
