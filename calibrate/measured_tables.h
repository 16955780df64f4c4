// Public measured kernel tables (aiconfigurator's vLLM timings, read in
// place from ../shared/calibration-data/, never copied): CSV reading (a
// column the conversion dropped as constant comes from manifest.json,
// data_manifest.h), the physical-limits filter, and log-space
// interpolation along the measured grid.
//
// A table is a set of rows on a (possibly incomplete) rectilinear grid:
// each row has one coordinate per axis and a measured time. Interpolation
// is nested, one axis at a time in a chosen order: along the outermost
// axis take the grid value itself when rows exist there, else the nearest
// values below and above that have rows and interpolate linearly in
// (log coordinate, log time); inner axes likewise within the outer choice.
// So a grid point returns its measurement exactly, and a missing point is
// bracketed by its measured neighbours along the innermost axis.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/model/model_spec.h"

namespace servesim::calibrate {

struct MeasuredTable {
  std::vector<std::string> axes;               // e.g. {"m", "n", "k"}
  std::map<std::vector<double>, double> rows;  // coordinates -> seconds
  int dropped_physical = 0;  // rows faster than the GPU's datasheet peaks
  // Sorted distinct coordinates per axis over `rows` (IndexAxes fills it).
  std::vector<std::vector<double>> axis_values;
};
void IndexAxes(MeasuredTable* t);

// Which rows of the source tables an import reads.
struct TableFilter {
  int head_dim = 128;
  std::string kv_cache_dtype = "bfloat16";
  int num_gpus = 0;  // all-reduce: GPUs taking part
  // vLLM's custom all-reduce handles messages below this many bytes, NCCL
  // the rest (vLLM's default custom all-reduce max_size, 8 MiB; SGLang's
  // is the same).
  double custom_allreduce_max_bytes = 8.0 * 1024 * 1024;
  // kernel_source of the attention rows read; "" every row (engine_kernels.h).
  std::string attention_kernel;
  // Prefill rows only: attn_dtype must be this ("" any).
  std::string prefill_attn_dtype;
  // kernel_source of the custom all-reduce rows read.
  std::string custom_allreduce_kernel = "vLLM_custom_graph";
  // Whether the engine keeps messages above custom_allreduce_max_bytes off
  // NCCL with symmetric memory where its GPU allows (vLLM: yes; SGLang: no,
  // opt-in there). Its range is priced by the custom all-reduce's rows,
  // which public H100 timings put within ~10% of symmetric memory's
  // (kernel_time.h, docs/cost-models.md).
  bool symm_mem = true;
};

// Each throws std::runtime_error naming the file and line on bad input.
// GEMM ("bfloat16", or "fp8": vLLM's W8A8 CUTLASS kernel, 1-byte inputs
// and weights, bf16 output): axes m, n, k.
// kernel_source: only that kernel's rows ("" every row).
MeasuredTable LoadGemmTable(const std::string& gpu_dir, const GpuSpec& gpu,
                            const std::string& dtype = "bfloat16",
                            const std::string& kernel_source = "");
// Decode attention (window 0): axes heads, kv_heads, batch, context.
MeasuredTable LoadDecodeTable(const std::string& gpu_dir, const GpuSpec& gpu,
                              const TableFilter& f);
// Prefill attention from an empty cache (window 0): axes heads, kv_heads,
// batch, isl.
MeasuredTable LoadPrefillTable(const std::string& gpu_dir, const GpuSpec& gpu,
                               const TableFilter& f);
// Fused MoE (moe.csv, bf16, expert parallelism 1, balanced routing) of one
// model's expert shape: axes moe_tp (the expert MLPs' tensor-parallel
// split), tokens.
MeasuredTable LoadMoeTable(const std::string& gpu_dir, const GpuSpec& gpu,
                           const ModelSpec& model);
// Fused MoE rows of every expert shape in one moe_dtype (e.g.
// "w4a16_mxfp4"), expert parallelism 1, balanced routing: axes hidden,
// inter, topk, experts, moe_tp, tokens. `weight_bytes` per expert
// parameter sets the physical-limits filter.
MeasuredTable LoadMoeDtypeTable(const std::string& gpu_dir, const GpuSpec& gpu,
                                const std::string& moe_dtype, double weight_bytes);
// Where the engine switches from its own all-reduce (custom, or symmetric
// memory when f.symm_mem) to NCCL at f.num_gpus GPUs: OwnAllReduceMaxBytes
// (kernel_time.h), or 0 where the custom all-reduce does not run (more
// than two PCIe-only GPUs).
double CustomAllReduceMaxBytes(const GpuSpec& gpu, const TableFilter& f);
// All-reduce of bf16 at f.num_gpus GPUs: axis bytes; CUDA-graph custom
// all-reduce below CustomAllReduceMaxBytes, NCCL all_reduce above (from
// nccl_dir's nccl.csv; empty: gpu_dir's).
MeasuredTable LoadAllReduceTable(const std::string& gpu_dir, const GpuSpec& gpu,
                                 const TableFilter& f,
                                 const std::string& nccl_dir = "");

// A physical model of a table's times over its keys (residual_base.h);
// empty: none.
using TableBase = std::function<double(const std::vector<double>& key)>;

// Interpolated seconds at `point` (one coordinate per axis), nesting the
// axes in `order` (outermost first); `*extrapolated` is set when some axis
// had measurements on one side only. nullopt: no rows at all. With a
// base, each axis interpolates the residual log(t / base) by the rule of
// GridTable (GridLogBetween, GridLogBeyond), the base taken at the
// neighbour's coordinate on this axis and the point's on inner axes.
std::optional<double> InterpolateTable(const MeasuredTable& t,
                                       const std::vector<double>& point,
                                       const std::vector<int>& order,
                                       bool* extrapolated,
                                       const TableBase& base = TableBase());

// The rows of `t` in a seeded random order, first `fraction` held out:
// training keeps the rest. Deterministic for a given seed.
void SplitTable(const MeasuredTable& t, uint64_t seed, double fraction,
                MeasuredTable* train, MeasuredTable* heldout);

}  // namespace servesim::calibrate
