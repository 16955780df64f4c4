// The physical models an imported profile's grids are interpolated
// against (GridBase, sim/cost/calibration_profile.h): each measured table's
// kernel priced by the roofline's formulas, so that interpolation between
// grid neighbours only has to carry the residual log(measured / model).
//
// GEMM and attention use the roofline's kernels preset (KernelRates fitted
// by `servesim-calibrate fit-roofline` on the seed-1 80% of the H100-SXM
// and H200 rows of these same tables: the same loaders, seed and fraction
// as the import's split, so no row the import holds out informed them;
// B200 was never in that fit). The all-reduce's latency and efficiency are
// fitted here, per GPU count and backend, on the rows the caller passes
// (the training rows when measuring held-out error), because fit-roofline
// split those tables with another seed.
#pragma once

#include <functional>
#include <vector>

#include "calibrate/measured_tables.h"
#include "sim/cost/calibration_profile.h"
#include "sim/cost/kernel_time.h"

namespace servesim::calibrate {

// A GEMM [m x k] x [k x n] along m: inputs and weights of `in_bytes`, bf16
// output; W8A8 (in_bytes 1) also quantizes its bf16 input (m k items).
GridBasePiece GemmPiece(const KernelRates& r, const GpuSpec& gpu, double n,
                        double k, double in_bytes);
// Decode attention at (batch, context) and prefill attention from an empty
// cache at (batch, length), for one shard's heads; KV of `kv_bytes`.
GridBasePiece DecodePiece(const KernelRates& r, const GpuSpec& gpu,
                          double heads, double kv_heads, double head_dim,
                          double kv_bytes);
GridBasePiece PrefillPiece(const KernelRates& r, const GpuSpec& gpu,
                           double heads, double kv_heads, double head_dim,
                           double kv_bytes);

// Bases over a whole measured table's keys (the loaders' axes).
TableBase GemmTableBase(const KernelRates& r, const GpuSpec& gpu,
                        double in_bytes);
// Keys heads, kv heads, batch, context (decode) or length (prefill).
TableBase DecodeTableBase(const KernelRates& r, const GpuSpec& gpu,
                          double head_dim, double kv_bytes);
TableBase PrefillTableBase(const KernelRates& r, const GpuSpec& gpu,
                           double head_dim, double kv_bytes);

// All-reduce of bf16 over `gpus` GPUs along message bytes: latency + bus
// bytes / (link x efficiency), one piece per backend (vLLM's custom
// all-reduce below max_bytes, NCCL from there), each fitted (minimum mean
// squared log error) to the rows of `t` on its side. Empty when a side has
// fewer than two rows and the whole table has fewer than two.
GridBase FitAllReduceBase(const MeasuredTable& t, const GpuSpec& gpu,
                          int gpus, double max_bytes);

}  // namespace servesim::calibrate
