// servesim-calibrate fit-roofline: the roofline's per-kernel constants
// (floor, efficiencies, crossover exponent, per-item cost; all-reduce
// latency and efficiency per backend) fitted once, offline, to the public
// measured kernel tables (aiconfigurator's vLLM 0.24.0 timings, read in
// place from ../shared/calibration-data/), and their error on rows the fit
// never saw.
//
// Each op kind's samples are priced by the very formulas RooflineCostModel
// uses (KernelTime, AddDecodeAttention, AddPrefillAttention,
// AllReduceTime), so a fitted constant means what the model does with it.
// The fit minimises the mean squared log error (every row counts by its
// relative error, from 5 us kernels to 80 ms ones) by Nelder-Mead over the
// logarithms of the parameters (efficiencies through a logistic map into
// (0, 1), the crossover exponent kept >= 1 so it stays a norm), on a
// seeded random 80% of the training GPUs' rows. Reported per
// op kind and GPU: MAPE and mean signed error of the datasheet preset (the
// model before) and of the fitted constants, on the held-out 20% of the
// training GPUs and on every row of the held-out GPUs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cost/roofline_cost_model.h"

namespace servesim::calibrate {

struct RooflineFitOptions {
  // One table folder for every GPU (.../aiconfigurator-vllm-0.24.0); empty:
  // per GPU, the folder under data_root whose manifest lists it.
  std::string data_dir;
  std::string data_root;  // .../calibration-data
  uint64_t seed = 1;
  double heldout_fraction = 0.2;
  std::vector<std::string> train_gpus = {"h100-sxm", "h200"};
  std::vector<std::string> heldout_gpus = {"b200"};
};

// One priced row of a measured table.
struct KernelSample {
  double flops = 0, bytes = 0, items = 0;
  double msg_bytes = 0;  // all-reduce: the buffer; gpus: GPUs taking part
  int gpus = 0;
  double seconds = 0;
  int gpu_index = 0;   // into the fit's GPU list
  bool train = false;  // in the fit (else held out)
  // All-reduce: an NCCL row inside symmetric memory's range, which vLLM
  // does not run there but an engine without symmetric memory (SGLang)
  // does: priced with symm_mem off, so NCCL's pair is fitted from 8 MiB.
  bool nccl_in_symm_range = false;
};

struct RooflineKindError {
  std::string kind, gpu, split;  // split: "held-out 20%" or "all rows"
  int rows = 0;
  double before_mape = 0, before_bias = 0;  // datasheet preset
  double after_mape = 0, after_bias = 0;    // fitted
};

struct RooflineFit {
  RooflineParams fitted;  // kernels preset with the fitted kinds replaced
  std::vector<RooflineKindError> errors;
  std::vector<std::string> notes;  // rows per kind, filters
};

// Which KernelRates fields a fit moves; the rest keep their start value.
struct FreeParams {
  bool floor = true, compute = true, memory = true, p = true, item = false;
};

// The KernelRates minimising the mean squared log error over the samples
// with train set (each priced on gpus[gpu_index]), from `start`.
KernelRates FitKernelRates(const std::vector<KernelSample>& samples,
                           const std::vector<GpuSpec>& gpus,
                           const KernelRates& start, const FreeParams& free);

// Reads the tables, splits, fits, evaluates. Throws std::runtime_error on
// unreadable input.
RooflineFit FitRoofline(const RooflineFitOptions& o);

// The fitted constants as C++ initialisers and the error table.
std::string RooflineFitReport(const RooflineFit& f);

}  // namespace servesim::calibrate
