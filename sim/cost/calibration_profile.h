// A calibration profile: per-op timing models fitted on one GPU for one
// model at one tensor-parallel degree (written by servesim-calibrate, read
// here so the simulator does not depend on calibrate/). The JSON layout is
// what ParseCalibrationProfile accepts; calibrate/profile.cc writes it.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "sim/core/json_view.h"
#include "sim/cost/op_features.h"

namespace servesim {

// The shapes a fitted per-op model can take:
//   kSum:    t = c0 + sum_i c_i x_i                (non-negative c)
//   kMax:    t = c0 + max(c1 x1, c2 x2)            (roofline with a launch
//                                                   constant; 2 features)
//   kInterp: log t piecewise linear and non-decreasing in log size.
//   kGrid:   measured times looked up along a table (imported from public
//            kernel measurements): see GridTable.
enum class FitForm { kSum, kMax, kInterp, kGrid };
const char* FitFormName(FitForm form);

// A measured table in log space: lines at increasing `at` (the outer
// coordinate: batch for decode attention, 1 for one-dimensional tables),
// each with increasing x (the inner coordinate: tokens, context, bytes) and
// measured seconds. Evaluation is piecewise linear in (log x, log t) along
// a line and linear in (log at, log t) between the two lines around the
// outer coordinate, so a point on the grid returns its measured time
// exactly. Outside the grid: below the first x (or line) the first value
// holds (a kernel's floor); above the last the last segment's log-log slope
// continues, clamped to [1, 2]: every op here does at least linearly more
// work per unit of its coordinates (tokens, context, batch, bytes), and the
// measured grids stop where a kernel is still leaving its floor (decode at
// batch 256 ends at context 1023, slope 0.6), so a shallower slope would
// extrapolate to faster than HBM bandwidth. Both are flagged as
// extrapolation. Values need not be monotone (they are measurements).
//
// With a base (GridBase, optional), what is interpolated is the residual
// log(t / base) instead of log t, so the curvature a physical model of the
// kernel already explains (a launch floor giving way to linear work, a
// quadratic prefill, a compute/memory crossover) is not flattened by a
// straight line in log-log between neighbours a factor 2 apart. The
// result is then clamped to the range of its two neighbours, so it stays
// between them and monotone along the interval (the base is convex in
// log-log, so the unclamped curve can only dip below the lower
// neighbour). Outside the grid the residual of the nearest measurement is
// held (the base's growth continues) instead of the rules above.
struct GridLine {
  double at = 1;
  std::vector<double> x, t_s;
};
// One kernel's roofline over the grid's coordinates (outer o, inner x):
//   base = floor_s + s_per_item I + ((s_per_flop F)^p + (s_per_byte B)^p)^(1/p)
//   F, B, I = o (c0 + c1 x + c2 x^2)      (work per unit of outer)
// p <= 0 means max. Pieces apply from their `from` (inner coordinate)
// upward, in increasing order, the first from 0 (the all-reduce switches
// from vLLM's custom kernel to NCCL at 8 MiB).
struct GridBasePiece {
  double from = 0;
  double floor_s = 0, s_per_flop = 0, s_per_byte = 0, s_per_item = 0;
  double crossover_p = 0;
  std::array<double, 3> flops{}, bytes{}, items{};
};
// Seconds of one piece at (outer, inner).
double PieceSeconds(const GridBasePiece& p, double outer, double inner);
struct GridBase {
  std::vector<GridBasePiece> pieces;
  std::string source;  // where its constants come from
  bool empty() const { return pieces.empty(); }
  // Seconds at (outer, inner); > 0 whenever some piece has a floor or work.
  double Seconds(double outer, double inner) const;
};
struct GridTable {
  std::vector<GridLine> lines;
  GridBase base;  // empty: plain log-log interpolation of the times
  bool empty() const { return lines.empty(); }
};
// Seconds at (outer, inner); `*extrapolated` (if given) is set when the
// point lies outside the measured grid along either coordinate.
double EvalGrid(const GridTable& g, double outer, double inner,
                bool* extrapolated = nullptr);

// The one-axis rule of GridTable in log space, shared with the importer's
// table lookups (calibrate/measured_tables.cc) so that its held-out errors
// measure what a profile does. A point: log coordinate, log seconds and
// the base's log seconds there (0, unused, without a base).
struct GridLogPoint {
  double lx = 0, ly = 0, lbase = 0;
};
// Between measured neighbours a.lx < lx < b.lx (the neighbours' own values
// at their coordinates exactly); `lbase` is the base at lx.
double GridLogBetween(const GridLogPoint& a, const GridLogPoint& b, double lx,
                      double lbase, bool has_base);
// Beyond the grid, from its edge point `e` (`next`: the measured point
// after it, inward, or null). With a base: e's residual held. Without:
// below the grid e's value; above it the slope from `next` to e clamped
// to [1, 2] (e's value when there is no next).
double GridLogBeyond(const GridLogPoint& e, const GridLogPoint* next,
                     double lx, double lbase, bool has_base, bool above);

struct OpFit {
  ProfileOp op = ProfileOp::kGemmQkv;
  FitForm form = FitForm::kSum;
  std::vector<double> coefficients;  // kSum, kMax: c0 first
  // kInterp knots: strictly increasing x, non-decreasing y (natural logs).
  std::vector<double> knots_log_x, knots_log_y;
  // Mean absolute percentage error on grid points held out of the fit, for
  // the chosen form and for every form tried (by FitFormName).
  double heldout_mape_pct = 0;
  std::map<std::string, double> candidate_mape_pct;
  int fit_points = 0;
  int heldout_points = 0;
  GridTable grid;         // kGrid
  bool measured = true;   // false: a model form with no measurement behind it
  std::string note;       // how the op was obtained, when not plain fitting
};

// Predicted seconds for one op with features f. Below the first knot an
// interpolated model stays at the first knot (the kernel is latency-bound
// there); above the last it continues the last segment's slope, clamped to
// [0, 2] in log-log.
double PredictOp(const OpFit& fit, const OpFeatures& f);
// Whether PredictOp leaves the measured grid (kGrid only; false otherwise).
bool OpExtrapolates(const OpFit& fit, const OpFeatures& f);

struct ProfileDevice {
  std::string name, driver;
  int sm_count = 0;
  double memory_bytes = 0, sm_clock_mhz = 0, mem_clock_mhz = 0;
  double copy_bytes_per_s = 0, gemm_bf16_flops = 0;  // 0: not measured
};

struct ProfileTiming {
  ProfileOp op = ProfileOp::kGemmQkv;
  OpShape shape;
  double median_s = 0, p10_s = 0, p90_s = 0;
  int repetitions = 0;
};

struct CalibrationProfile {
  ProfileDevice device;
  bool synthetic = false;  // true: dry run, not a measurement
  std::string gpu;         // models/gpu name of the device, e.g. "h200"
  std::string date;        // ISO 8601, UTC
  std::string model;       // models/llm name
  std::string dtype = "bf16";           // weights: bf16 | fp8 (W8A8 GEMMs)
  std::string kv_cache_dtype = "bf16";  // bf16 | fp8
  int tp = 1;
  double step_overhead_s = 3e-4;
  std::string step_overhead_source;
  int holdout_every = 4;
  std::vector<OpFit> ops;  // one per ProfileOp, in ProfileOp order
  std::vector<ProfileTiming> timings;
  // Optional measured all-reduce at tp GPUs (one line over message bytes);
  // empty: the cost model uses the roofline's ring all-reduce.
  GridTable allreduce;
  double allreduce_heldout_mape_pct = 0;
  std::string allreduce_source;
  // Provenance and validation of an imported profile; informational (kept
  // for reports, not used to price steps).
  nlohmann::json import_info;

  const OpFit& Fit(ProfileOp op) const { return ops[static_cast<int>(op)]; }
  // Largest held-out MAPE over the measured ops (and the all-reduce when
  // present): the error band we quote.
  double WorstHeldoutMapePct() const;
};

// Strict reading: unknown keys, missing ops, malformed fits are ConfigErrors
// naming the file and JSON path.
CalibrationProfile ParseCalibrationProfile(const JsonView& v);
CalibrationProfile LoadCalibrationProfile(const std::string& path);

}  // namespace servesim
