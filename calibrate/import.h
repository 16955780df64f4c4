// servesim-calibrate import: calibrated profiles from public measured
// kernel tables (aiconfigurator's vLLM timings: 0.24.0 on H100-SXM, H200,
// B200, L40S and RTX PRO 6000, 0.14.0 on A100; its SGLang 0.5.14 timings
// on H100-SXM, H200 and B200; read in place from
// ../shared/calibration-data/, data_folders.h), in the same profile format
// the GPU harness writes. Provenance (engine and NCCL versions, device,
// source files) comes from the folder's manifest.json; which kernel's rows
// are read where a table times several, from engine_kernels.h.
//
// Per model, tp and GPU: each layer GEMM and the LM head is a line over M
// (the table interpolated in log n and log k to the model's shard, at every
// measured M); decode attention is the measured batch x context grid at the
// shard's heads; prefill attention the measured batch x length grid (from
// an empty cache; chunks after a cached prefix are looked up at the
// equal-FLOP length, see op_features.h); the all-reduce is vLLM's custom
// all-reduce below 8 MiB and NCCL above, at tp GPUs. Elementwise kernels
// are not in the tables: the roofline's memory term, marked unmeasured.
//
// Interpolation is of the residual against the roofline's price of each
// measured kernel (residual_base.h, GridBase), so the profiles carry that
// base beside their grids.
//
// Held-out error: each table's rows are split by a seeded shuffle into 80%
// and 20%; every held-out row is predicted from the 80% by the same nested
// log-space interpolation, once along each axis the profile varies (the
// held-out cell bracketed by its measured neighbours on that axis), and the
// mean absolute percentage error is reported per op kind, separately for
// rows inside the grid and rows only reachable by extrapolation. The
// shipped profiles then use every row, so grid points return their
// measurement exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibrate/data_folders.h"
#include "calibrate/engine_kernels.h"
#include "calibrate/measured_tables.h"
#include "sim/cost/calibration_profile.h"

namespace servesim::calibrate {

struct ImportOptions {
  // One table folder for every GPU (.../aiconfigurator-vllm-0.24.0);
  // empty: per GPU, the folder under data_root whose manifest lists it.
  std::string data_dir;
  std::string data_root;  // .../calibration-data
  std::string out_dir;    // profiles are written here
  uint64_t seed = 1;
  double heldout_fraction = 0.2;
  std::vector<std::string> gpus = {"h100-sxm", "h200", "b200"};
  std::vector<std::string> models = {"llama-3.1-8b", "llama-3.1-70b"};
  std::vector<int> tps = {1, 2, 4, 8};
  std::string date;  // import date (ISO 8601); empty: now
  // fp8 weights (W8A8 GEMM rows) and an fp8 KV cache (fp8 attention rows):
  // profiles <gpu>-<model>-tp<N>-fp8.json.
  bool fp8 = false;
  // The tables of one vLLM version where a data folder keeps them beside
  // the GPU's newest (<gpu dir>-vllm-<version>, e.g. RTX PRO 6000's 0.19.0,
  // the engine of the measured serving runs); "" the newest. Profiles are
  // named <gpu>-<model>-tp<N>-vllm-<version>.json; NCCL collectives come
  // from the GPU's main folder when the versioned one has none (they are
  // NCCL's, not vLLM's).
  std::string engine_version;
  // Interpolate log(t / roofline) between grid neighbours (residual_base.h)
  // rather than log t; false reproduces the plain log-log lookup.
  bool residual_base = true;
  // "vllm" or "sglang": whose tables (folders and kernels,
  // engine_kernels.h). "": the --data folder's manifest says, else vllm.
  // SGLang profiles are named <gpu>-<model>-tp<N>[-fp8]-sglang.json.
  std::string engine;
  // SGLang only: the attention kernel_source to read instead of its
  // default backend (e.g. flashinfer on B200); profiles then end in
  // -sglang-<backend>.json.
  std::string attention_backend;
};

// Held-out error of one op kind on one GPU.
struct KindError {
  std::string gpu, kind;
  int rows = 0;                       // rows used (after the physical filter)
  int dropped = 0;                    // rows dropped by the physical filter
  int heldout = 0, extrapolated = 0;  // predictions inside / outside grid
  double mape_pct = 0, extrapolated_mape_pct = 0, p90_ape_pct = 0;
  double max_ape_pct = 0;  // worst prediction inside the grid
};

// The base a held-out evaluation interpolates against, built from the
// training rows only (so nothing held out can inform it); empty: none.
using BaseFromTraining = std::function<TableBase(const MeasuredTable& train)>;

// Held-out error of `t` with the axes in `vary` interpolated in turn.
KindError HeldoutError(const MeasuredTable& t, const std::vector<int>& vary,
                       uint64_t seed, double fraction,
                       const BaseFromTraining& base = BaseFromTraining());

struct ImportResult {
  std::string engine;  // the engine whose tables were read
  std::vector<KindError> errors;
  std::vector<std::string> written;  // profile paths
  std::vector<std::string> skipped;  // "model tp=N on gpu: why"
};

// One profile from loaded tables (tests call this directly).
struct GpuTables {
  std::string gpu, device;     // device: the tables' constant "device"
  std::string nccl_version;    // of nccl.csv, from the manifest
  bool fp8 = false;            // W8A8 GEMM rows and fp8-KV attention rows
  bool residual_base = true;   // ImportOptions::residual_base
  MeasuredTable gemm, decode, prefill;
  MeasuredTable lm_head_gemm;  // bf16 GEMMs: the LM head stays bf16 under fp8
  std::map<int, MeasuredTable> allreduce;  // by GPU count
  EngineKernels kernels;       // whose rows these are
  std::string engine_version;  // of gemm.csv, from the manifest
};
CalibrationProfile ImportProfile(const GpuTables& tables, const ModelSpec& m,
                                 const GpuSpec& gpu, int tp,
                                 const std::vector<KindError>& errors);
// Throws naming the file (and column) on unreadable tables. gpu_dir: the
// GPU's table directory in data_dir ("" : DataGpuDir of the GPU).
GpuTables LoadGpuTables(const std::string& data_dir, const GpuSpec& gpu,
                        bool fp8 = false, const std::string& gpu_dir = "",
                        const EngineKernels& kernels = EngineKernels());

// Why `m` at `tp` gets no profile from tables `t` ("" when it gets one):
// attention rows missing at its per-GPU heads, all-reduce rows at tp GPUs.
std::string TableGapReason(const GpuTables& t, const ModelSpec& m, int tp);

// The residual bases of an import (residual_base.h) per table of `t`:
// GEMMs (the LM head's bf16 table too), decode and prefill attention at
// the tables' head_dim of 128, all-reduce at `gpus` GPUs fitted to `rows`.
TableBase GemmBaseOf(const GpuTables& t, const GpuSpec& gpu, bool lm_head);
TableBase DecodeBaseOf(const GpuTables& t, const GpuSpec& gpu);
TableBase PrefillBaseOf(const GpuTables& t, const GpuSpec& gpu);
TableBase AllReduceBaseOf(const MeasuredTable& rows, const GpuSpec& gpu,
                          int gpus, bool symm_mem = true);

// Everything: read, check, split, evaluate, write. Throws
// std::runtime_error on unreadable input.
ImportResult ImportAll(const ImportOptions& o);
std::string ImportTable(const ImportResult& r);

}  // namespace servesim::calibrate
