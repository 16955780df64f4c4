// The offline fit of the roofline's kernel constants (calibrate/
// roofline_fit.cc) recovers known constants from noise-free samples
// priced by the model's own KernelTime, so the shipped constants are what
// the fit of the measured tables found, not an artefact of the optimiser.
#include "calibrate/roofline_fit.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace servesim::calibrate
